// A minimal agent loop without a framework: the Chat Completions API of any
// OpenAI-compatible server, over fetch, with ctxd's tools as the agent's
// memory. The model's tool calls go straight to callTool; a failed tool is a
// JSON error (error_type, message, next_action_hint) the model reads and acts on.
//
//   cd clients/ts && npm ci && npm run build
//   OPENAI_API_KEY=... node dist/examples/agent_loop.js "What do my notes say about the release?"
//
// OPENAI_BASE_URL points it at another OpenAI-compatible server (a local one
// too), OPENAI_MODEL picks the model. The daemon is found like the CLI finds
// it ($CTXD_SOCKET, else $XDG_RUNTIME_DIR/ctxd/ctxd.sock). In your own project
// import from "@ctxd/client" instead of "../src/index.js".
import { pathToFileURL } from "node:url";

import { type CtxdClient, createClient } from "../src/index.js";

const SYSTEM =
  "You are an assistant with a persistent memory, reached through the context_* tools. " +
  "Search it before answering from memory, and write down what is worth keeping. " +
  "When a tool result has is_error, read its next_action_hint and act on it.";

/** A tool call as the API returns it: function.arguments is JSON text. */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** The messages of a Chat Completions conversation, as far as this loop uses them. */
export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

/**
 * Runs the tool calls of one assistant message and returns the "tool"
 * messages that answer them, failures included.
 */
export async function dispatch(ctxd: CtxdClient, calls: ToolCall[]): Promise<ChatMessage[]> {
  const answers: ChatMessage[] = [];
  for (const call of calls) {
    const result = await ctxd.callTool(call.function.name, call.function.arguments);
    answers.push({ role: "tool", tool_call_id: call.id, content: result.content });
  }
  return answers;
}

async function main(question: string): Promise<void> {
  const baseUrl = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
  const model = process.env.OPENAI_MODEL ?? "gpt-4.1-mini";
  const ctxd = createClient({ metadata: { "ctxd-agent": "ts-agent-loop" } });
  try {
    const tools = await ctxd.tools("openai");
    const messages: ChatMessage[] = [
      { role: "system", content: SYSTEM },
      { role: "user", content: question },
    ];
    for (let turn = 0; turn < 20; turn++) {
      const res = await fetch(`${baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ""}` },
        body: JSON.stringify({ model, messages, tools }),
      });
      if (!res.ok) {
        throw new Error(`chat completions: ${res.status} ${await res.text()}`);
      }
      const body = (await res.json()) as { choices: { message: Extract<ChatMessage, { role: "assistant" }> }[] };
      const reply = body.choices[0].message;
      messages.push(reply);
      if (!reply.tool_calls?.length) {
        console.log(reply.content);
        return;
      }
      messages.push(...(await dispatch(ctxd, reply.tool_calls)));
    }
    console.error("stopped after 20 turns");
  } finally {
    ctxd.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2).join(" ") || "What is in my memory? Summarise it in three lines.").catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
