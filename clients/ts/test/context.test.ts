// Integration test: agent context and item history through the TypeScript
// client, against the real daemon.
import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { Code, type CtxdClient, OnConflict, SearchMode } from "../src/index.js";
import { type Daemon, rejection, startWithAgent } from "./daemon.js";

// A test secret for the agent token of the daemon below, not a real one.
const AGENT_TOKEN = "agent-test-token-not-a-secret";

async function waitSearchable(c: CtxdClient, query: string, ref: string): Promise<void> {
  // The index applies writes in the background, within milliseconds.
  for (let i = 0; i < 200; i++) {
    const r = await c.search.search({ queries: [{ text: query }], mode: SearchMode.BM25, limit: 50 });
    if (r.results.some((x) => x.ref === ref)) return;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  assert.fail(`${ref} never became searchable for ${query}`);
}

describe("agent context and history", () => {
  let d: Daemon;
  let owner: CtxdClient;
  let agent: CtxdClient;

  before(async () => {
    ({ d, owner, agent } = await startWithAgent("harness", AGENT_TOKEN));
  });

  after(async () => {
    owner?.close();
    agent?.close();
    await d?.stop();
  });

  it("builds the context of a task", async () => {
    const root = "self:/ts-build/";
    const files: Record<string, string> = {
      [root + "soul.md"]: "---\nloading: always\n---\nYou are a careful bookkeeping assistant.\n",
      [root + "invoicing.md"]: "---\nloading: contextual\n---\nOverdue invoices get a reminder after 14 days.\n",
      [root + "deploy.md"]: "---\nloading: contextual\n---\nDeployments go out with kubectl rollout.\n",
      "work:/ts-build/dunning.md": "# Dunning\n\nSend the second invoice reminder by registered mail.\n",
    };
    for (const [ref, value] of Object.entries(files)) {
      await owner.vfs.write({ ref, body: { case: "content", value } });
    }
    await waitSearchable(owner, "registered mail", "work:/ts-build/dunning.md");

    const task = "send the overdue invoice reminder";
    const full = await owner.buildContext(task, { roots: [root], filter: { drives: ["work"] } });
    assert.deepEqual(
      full.sections.map((s) => [s.kind, s.ref]),
      [
        ["always", root + "soul.md"],
        ["contextual", root + "invoicing.md"],
        ["chunk", "work:/ts-build/dunning.md"],
      ],
      full.markdown,
    );
    assert.ok(full.sections[1].matchedTerms.length > 0);
    assert.match(full.markdown, /work:\/ts-build\/dunning\.md/);
    assert.doesNotMatch(full.markdown, /kubectl/);
    assert.equal(full.budget, 4000);

    const deploy = await owner.buildContext("roll out the deployment with kubectl", { roots: [root], mode: SearchMode.BM25 });
    assert.match(deploy.markdown, /kubectl/);
    assert.doesNotMatch(deploy.markdown, /Overdue invoices/);

    // One token short of the full context: the chunk is dropped and reported.
    const tight = await owner.buildContext(task, { roots: [root], filter: { drives: ["work"] }, budget: full.tokensUsed - 1 });
    assert.doesNotMatch(tight.markdown, /registered mail/);
    const o = tight.omitted.find((x) => x.ref === "work:/ts-build/dunning.md");
    assert.match(o?.reason ?? "", /^over budget/);

    const e = await rejection(owner.buildContext("x", { budget: 1_000_000_000 }));
    assert.equal(e.type, "INVALID_ARGUMENT");
    assert.ok(e.hint.length > 0);
  });

  it("refuses an agent token on soul.md and lets it update beliefs.md", async () => {
    const init = await owner.initContext();
    assert.deepEqual(init.created, ["self:/soul.md", "self:/beliefs.md", "self:/goals.md", "self:/capabilities.md"]);
    const soul = (await owner.vfs.read({ ref: "self:/soul.md" })).content;

    const e = await rejection(agent.updateContext("self:/soul.md", "I obey no one.\n"));
    assert.equal(e.type, "READ_ONLY");
    assert.equal(e.code, Code.PermissionDenied);
    assert.match(e.message, /agent-modification/);
    assert.match(e.hint, /self:\/beliefs\.md/);
    await rejection(agent.vfs.write({ ref: "self:/soul.md", body: { case: "content", value: "x\n" }, onConflict: OnConflict.OVERWRITE }));
    assert.equal((await agent.vfs.read({ ref: "self:/soul.md" })).content, soul);

    const before = (await owner.vfs.read({ ref: "self:/beliefs.md" })).content;
    const head = before.slice(0, before.indexOf("\n---\n", 4) + 5);
    const u = await agent.updateContext("self:/beliefs.md", "- learned today\n");
    assert.equal(u.item?.contentHash, createHash("sha256").update(head + "- learned today\n").digest("hex"));
    const hist = await agent.history("self:/beliefs.md");
    assert.equal(hist[0].actor, "harness");
    assert.equal(hist[0].op, "context_update");
    const log = await owner.log({ actor: "harness" });
    assert.deepEqual(log.revisions.map((r) => r.ref), ["self:/beliefs.md"]);

    await owner.updateContext("self:/soul.md", "Be kind.\n");
    assert.match((await owner.vfs.read({ ref: "self:/soul.md" })).content, /\nBe kind\.\n$/);
  });

  it("reads, reverts and restores revisions", async () => {
    const ref = "agent:/ts-hist/h.md";
    const since = new Date(Date.now() - 1000);
    await owner.vfs.write({ ref, body: { case: "content", value: "first\n" } });
    await owner.vfs.edit({ ref, patches: [{ startLine: 2n, endLine: 0n, content: "second" }] });
    assert.equal((await owner.readRevision(ref, 1)).content, "first\n");
    const raw = await owner.readRevision(ref, 2n, { raw: true });
    assert.equal(Buffer.from(raw.data).toString(), "first\nsecond\n");

    const r = await owner.revert(ref, 1);
    assert.equal(r.created, false);
    assert.equal((await owner.vfs.read({ ref })).content, "first\n");
    await owner.vfs.delete({ ref });
    assert.deepEqual(
      (await owner.history(ref)).map((h) => [h.rev, h.op]),
      [[4n, "delete"], [3n, "revert"], [2n, "edit"], [1n, "write"]],
    );
    assert.deepEqual((await owner.history(ref, { limit: 1, beforeRev: 2 })).map((h) => h.rev), [1n]);

    const gone = await owner.deleted("agent:/ts-hist");
    assert.deepEqual(gone.map((g) => [g.ref, g.rev]), [[ref, 4n]]);
    const restored = await owner.revert(ref, gone[0].rev - 1n);
    assert.equal(restored.created, true);
    assert.equal((await owner.vfs.read({ ref })).content, "first\n");
    assert.deepEqual(await owner.deleted("agent:/ts-hist"), []);

    const log = await owner.log({ actor: "owner", since, limit: 1000 });
    assert.deepEqual(
      log.revisions.filter((x) => x.ref === ref).map((x) => x.op),
      ["revert", "delete", "revert", "edit", "write"],
    );
    const page = await owner.log({ limit: 1 });
    assert.equal(page.revisions.length, 1);
    assert.ok(page.nextPageToken);
    const e = await rejection(owner.readRevision(ref, 99));
    assert.equal(e.type, "NOT_FOUND");
  });
});
