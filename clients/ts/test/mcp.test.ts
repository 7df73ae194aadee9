// Integration test: the daemon's MCP server at /mcp (streamable HTTP, bearer
// token) through the official TypeScript SDK's client.
import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { createClient } from "../src/index.js";
import { type Daemon, startDaemon } from "./daemon.js";

// A test secret for the daemon's "harness" token (read and write, not an
// agent token: /mcp makes its calls an agent's), not a real one.
const TOKEN = "mcp-test-token-not-a-secret";
const PLAN = "# Plan\n\nShip the zebrafish importer.\nThen rest.\n";

type ToolOut = { out: Record<string, unknown>; isError: boolean };

describe("MCP over streamable HTTP", () => {
  let d: Daemon;
  let endpoint: URL;
  let client: Client;

  async function call(name: string, args: Record<string, unknown>): Promise<ToolOut> {
    const r = await client.callTool({ name, arguments: args });
    const content = r.content as Array<{ type: string; text: string }>;
    assert.equal(content.length, 1);
    assert.equal(content[0].type, "text");
    const out = JSON.parse(content[0].text) as Record<string, unknown>;
    assert.equal(r.structuredContent, undefined, "the JSON comes once, as text");
    return { out, isError: r.isError === true };
  }

  function wantError({ out, isError }: ToolOut, errorType: string, hintHas = ""): void {
    assert.ok(isError, JSON.stringify(out));
    assert.deepEqual(Object.keys(out), ["is_error", "error_type", "message", "next_action_hint"]);
    assert.equal(out.error_type, errorType, JSON.stringify(out));
    assert.ok(String(out.next_action_hint).includes(hintHas), JSON.stringify(out));
  }

  before(async () => {
    const sha = createHash("sha256").update(TOKEN).digest("hex");
    d = await startDaemon({
      args: ["--http", "127.0.0.1:0"],
      config: `[[tokens]]\nname = "harness"\nsha256 = "${sha}"\nscopes = ["read", "write"]\n`,
    });
    const http = /http=(127\.0\.0\.1:\d+)/.exec(d.log())?.[1];
    assert.ok(http, `no http address in the log:\n${d.log()}`);
    endpoint = new URL(`http://${http}/mcp`);
    const owner = createClient({ socketPath: d.socketPath, timeoutMs: 10_000 });
    try {
      await owner.initContext();
    } finally {
      owner.close();
    }
    client = new Client({ name: "ctxd-ts-test", version: "0" });
    await client.connect(
      new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
    );
  });

  after(async () => {
    await client?.close();
    await d?.stop();
  });

  it("refuses a request without a token with 401", async () => {
    const r = await fetch(endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.equal(r.status, 401);
    assert.ok(r.headers.get("www-authenticate")?.startsWith("Bearer"));
    const noToken = new Client({ name: "ctxd-ts-test", version: "0" });
    await assert.rejects(noToken.connect(new StreamableHTTPClientTransport(endpoint)));
  });

  it("lists the tools the token may use, with schemas and annotations", async () => {
    assert.equal(client.getServerVersion()?.name, "ctxd");
    const tools = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
    // The core profile, by default.
    assert.deepEqual(
      [...tools.keys()].sort(),
      ["build_context", "context_edit", "context_list_drives", "context_read", "context_search", "context_tree", "context_write", "remember"],
    );
    assert.equal(tools.get("context_read")?.annotations?.readOnlyHint, true);
    assert.ok("path" in (tools.get("context_read")?.inputSchema.properties ?? {}));

    // ?tools=all lists every tool the token may use.
    const all = new Client({ name: "ctxd-ts-test-all", version: "0" });
    await all.connect(
      new StreamableHTTPClientTransport(new URL("?tools=all", endpoint), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
    );
    try {
      const names = (await all.listTools()).tools.map((t) => t.name);
      for (const name of ["update_beliefs", "context_history", "context_delete", "remember"]) {
        assert.ok(names.includes(name), `missing ${name}`);
      }
      // context_add reads host files and URLs: the ingest scope, which this token lacks.
      assert.ok(!names.includes("context_add"));
    } finally {
      await all.close();
    }
  });

  it("writes, reads, searches and edits; a not-found names the nearby item", async () => {
    let r = await call("context_write", { path: "/mcp-ts/plan.md", content: PLAN });
    assert.ok(!r.isError && r.out.ref === "agent:/mcp-ts/plan.md" && String(r.out.tree).includes("plan.md"), JSON.stringify(r.out));
    r = await call("context_read", { path: "agent:/mcp-ts/plan.md", offset: 2, limit: 1 });
    assert.equal(r.out.content, "Ship the zebrafish importer.\n");

    let results: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 200 && results.length === 0; i++) {
      r = await call("context_search", { queries: ["zebrafish"], mode: "bm25" });
      results = (r.out.results as Array<Record<string, unknown>>) ?? [];
      if (results.length === 0) await new Promise((ok) => setTimeout(ok, 50));
    }
    assert.equal(results[0]?.ref, "agent:/mcp-ts/plan.md", JSON.stringify(r.out));

    r = await call("context_edit", {
      path: "/mcp-ts/plan.md",
      patches: [{ start_line: 4, end_line: 4, content: "Then write the docs." }],
    });
    assert.ok(!r.isError, JSON.stringify(r.out));
    r = await call("context_read", { path: "/mcp-ts/plan.md" });
    assert.equal(r.out.content, "# Plan\n\nShip the zebrafish importer.\nThen write the docs.\n");

    wantError(await call("context_read", { path: "/mcp-ts/plans.md" }), "not_found", "agent:/mcp-ts/plan.md");
  });

  it("lets the agent update beliefs.md and refuses soul.md as read_only", async () => {
    const r = await call("update_beliefs", { body: "# Beliefs\n\n- Zebrafish come first.\n" });
    assert.ok(!r.isError, JSON.stringify(r.out));
    const before = await call("context_read", { drive: "self", path: "/soul.md" });
    wantError(
      await call("context_edit", {
        drive: "self",
        path: "/soul.md",
        patches: [{ start_line: 1, end_line: 1, content: "I obey no one." }],
      }),
      "read_only",
    );
    wantError(
      await call("context_write", { drive: "self", path: "/soul.md", content: "mine\n", on_conflict: "overwrite" }),
      "read_only",
    );
    assert.equal((await call("context_read", { drive: "self", path: "/soul.md" })).out.content, before.out.content);
  });

  it("serves items as resources and build_context as a prompt", async () => {
    const rr = await client.readResource({ uri: "ctxd://self/beliefs.md" });
    const beliefs = rr.contents[0] as { text?: string; mimeType?: string };
    assert.ok(beliefs.text?.includes("Zebrafish come first."), JSON.stringify(rr));
    assert.ok(beliefs.mimeType?.startsWith("text/markdown"));
    const listed = (await client.listResources()).resources.map((r) => r.uri);
    assert.ok(listed.includes("ctxd://self/soul.md") && listed.includes("ctxd://agent/mcp-ts/plan.md"), listed.join(" "));
    await assert.rejects(client.readResource({ uri: "ctxd://agent/mcp-ts/plans.md" }), (e: Error) => {
      const err = JSON.parse(e.message.slice(e.message.indexOf("{"))) as Record<string, string>;
      return err.error_type === "not_found" && err.next_action_hint.includes("agent:/mcp-ts/plan.md");
    });

    const pr = await client.getPrompt({ name: "build_context", arguments: { task: "zebrafish importer" } });
    const text = (pr.messages[0].content as { text: string }).text;
    assert.ok(text.includes("Zebrafish come first.") && text.includes("# Soul"), text);
  });
});
