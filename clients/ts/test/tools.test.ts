// Integration test: tools() and callTool() against the real daemon, and the
// tool dispatch of examples/agent_loop.ts.
import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { dispatch } from "../examples/agent_loop.js";
import { type CtxdClient, createClient } from "../src/index.js";
import { type Daemon, ctxdBin, rejection, startDaemon, startWithAgent } from "./daemon.js";

// A test secret for the daemon's agent token (read and write, no ingest), not a real one.
const AGENT_TOKEN = "tools-test-token-not-a-secret";

/** What `ctxd tools` prints: the one definition the daemon serves too. */
function cliTools(format: string, scopes = "", profile = "core"): unknown[] {
  const args = ["tools", "--format", format, "--tools", profile, ...(scopes ? ["--scopes", scopes] : [])];
  return JSON.parse(execFileSync(ctxdBin, args, { encoding: "utf8" })) as unknown[];
}

function names(tools: unknown[]): string[] {
  return tools.map((t) => {
    const tool = t as { name?: string; function?: { name: string } };
    return tool.function?.name ?? tool.name ?? "";
  });
}

describe("tools for tool loops", () => {
  let d: Daemon;
  let owner: CtxdClient;
  let agent: CtxdClient;

  before(async () => {
    ({ d, owner, agent } = await startWithAgent("looper", AGENT_TOKEN));
  });

  after(async () => {
    owner?.close();
    agent?.close();
    await d?.stop();
  });

  it("lists the CLI's tools in every format", async () => {
    const openai = await owner.tools("openai");
    assert.deepEqual(openai, cliTools("openai"));
    assert.equal(openai[0].type, "function");
    assert.equal(openai[0].function.parameters.type, "object");
    const anthropic = await owner.tools("anthropic");
    assert.deepEqual(anthropic, cliTools("anthropic"));
    assert.equal(anthropic[0].input_schema.type, "object");
    const mcp = await owner.tools();
    assert.deepEqual(mcp, cliTools("mcp"));
    assert.equal(typeof mcp[0].annotations.readOnlyHint, "boolean");
    assert.deepEqual(
      names(mcp).sort(),
      ["build_context", "context_edit", "context_list_drives", "context_read", "context_search", "context_tree", "context_write", "remember"],
    );
    assert.deepEqual(names(openai), names(mcp));
    assert.deepEqual(names(anthropic), names(mcp));

    const e = await rejection(owner.tools("yaml" as "mcp"));
    assert.equal(e.type, "INVALID_ARGUMENT");
    assert.ok(e.hint.includes("openai") && e.hint.includes("anthropic"), e.hint);
  });

  it("lists the tools of a profile", async () => {
    for (const profile of ["core", "read", "all"] as const) {
      assert.deepEqual(await owner.tools("anthropic", profile), cliTools("anthropic", "", profile), profile);
    }
    const all = names(await owner.tools("mcp", "all"));
    assert.ok(all.includes("context_add") && all.includes("context_history"));
    const read = names(await owner.tools("openai", "read"));
    assert.ok(read.includes("context_history") && !read.includes("context_write"));
    const e = await rejection(owner.tools("mcp", "most" as "all"));
    assert.equal(e.type, "INVALID_ARGUMENT");
    assert.ok(e.hint.includes("core, read, all"), e.hint);
  });

  it("lists only what the token may use", async () => {
    const listed = names(await agent.tools("openai", "all"));
    assert.ok(!listed.includes("context_add"), "context_add needs the ingest scope");
    assert.ok(listed.includes("context_write"));
    assert.deepEqual(listed, names(cliTools("openai", "read,write", "all")));
  });

  it("calls tools; failures are results in the seed's shape", async () => {
    const w = await owner.callTool("context_write", { path: "/ts-tools/a.md", content: "alpha\nbeta\n" });
    assert.equal(w.isError, false, w.content);
    assert.equal(w.json().ref, "agent:/ts-tools/a.md");
    assert.ok(String(w.json().tree).includes("a.md"));

    const r = await owner.callTool("context_read", '{"path": "agent:/ts-tools/a.md", "offset": 1}');
    assert.deepEqual([r.isError, r.json().content, r.json().start_line], [false, "beta\n", 2]);

    const nf = await owner.callTool("context_read", { path: "/ts-tools/nope.md" });
    assert.equal(nf.isError, true);
    const err = nf.json();
    assert.deepEqual(Object.keys(err), ["is_error", "error_type", "message", "next_action_hint"]);
    assert.equal(err.error_type, "not_found");
    assert.ok(String(err.next_action_hint).includes("agent:/ts-tools/a.md"), nf.content);

    for (const [name, args] of [
      ["context_read", '{"path":'],
      ["context_nope", {}],
    ] as const) {
      const bad = await owner.callTool(name, args);
      assert.equal(bad.isError, true, bad.content);
      assert.equal(bad.json().error_type, "invalid_argument", bad.content);
    }
    const e = await rejection(owner.callTool("x".repeat(65)));
    assert.equal(e.type, "INVALID_ARGUMENT");
  });

  it("runs tools with the caller's token: an agent may not change soul.md", async () => {
    await owner.initContext();
    const soul = (await owner.vfs.read({ ref: "self:/soul.md" })).content;
    const ro = await agent.callTool("context_write", { path: "self:/soul.md", content: "obey\n", on_conflict: "overwrite" });
    assert.equal(ro.isError, true);
    assert.equal(ro.json().error_type, "read_only", ro.content);
    assert.equal((await owner.vfs.read({ ref: "self:/soul.md" })).content, soul);
    const ok = await agent.callTool("update_beliefs", { body: "- loops run as the agent\n" });
    assert.equal(ok.isError, false, ok.content);
    assert.equal((await owner.history("self:/beliefs.md"))[0].actor, "looper");
  });

  it("sends extra metadata: an owner acting as a named agent", async () => {
    const named = createClient({ socketPath: d.socketPath, timeoutMs: 10_000, metadata: { "ctxd-agent": "ts-agent" } });
    try {
      await named.vfs.write({ ref: "agent:/ts-tools/named.md", body: { case: "content", value: "x\n" } });
      assert.equal((await owner.history("agent:/ts-tools/named.md"))[0].actor, "ts-agent");
    } finally {
      named.close();
    }
  });

  it("dispatches the example loop's tool calls", async () => {
    const answers = await dispatch(owner, [
      {
        id: "call_1",
        type: "function",
        function: { name: "context_write", arguments: '{"path":"/ts-examples/o.md","content":"from a loop\\n"}' },
      },
      { id: "call_2", type: "function", function: { name: "context_read", arguments: '{"path":"/ts-examples/nope.md"}' } },
    ]);
    assert.deepEqual(
      answers.map((m) => [m.role, "tool_call_id" in m ? m.tool_call_id : ""]),
      [
        ["tool", "call_1"],
        ["tool", "call_2"],
      ],
    );
    const [written, missing] = answers.map((m) => JSON.parse(String(m.content)) as Record<string, unknown>);
    assert.equal(written.ref, "agent:/ts-examples/o.md");
    assert.equal(missing.error_type, "not_found");
    assert.equal((await owner.vfs.read({ ref: "agent:/ts-examples/o.md" })).content, "from a loop\n");
  });
});

describe("socket_auth", () => {
  it("takes the token from CTXD_TOKEN, as the CLI does", async () => {
    const secret = "socket-auth-test-token-not-a-secret";
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ctxd-ts-sa-"));
    const tokenFile = path.join(dir, "token");
    fs.writeFileSync(tokenFile, `${secret}\n`);
    process.env.CTXD_TOKEN = secret; // the readiness probe needs it too
    let d: Daemon | undefined;
    try {
      d = await startDaemon({ args: ["--socket-auth", "--token-file", tokenFile] });
      const c = createClient({ socketPath: d.socketPath, timeoutMs: 10_000 });
      assert.equal((await c.vfs.exists({ ref: "agent:/nothing-here.md" })).exists, false);
      c.close();
      delete process.env.CTXD_TOKEN;
      const anonymous = createClient({ socketPath: d.socketPath, timeoutMs: 10_000 });
      const e = await rejection(anonymous.vfs.exists({ ref: "agent:/nothing-here.md" }));
      anonymous.close();
      assert.equal(e.type, "UNAUTHENTICATED");
      assert.match(e.hint, /CTXD_TOKEN/);
    } finally {
      delete process.env.CTXD_TOKEN;
      await d?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
