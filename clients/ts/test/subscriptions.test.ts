// Integration test: standing queries through the TypeScript client, against
// the real daemon: the async iterator of pushes, resuming with a token, and
// durable subscriptions.
import { strict as assert } from "node:assert";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { ChangeKind, type CtxdClient, type SubscribeResponse, createClient } from "../src/index.js";
import { type Daemon, startDaemon } from "./daemon.js";

/** The next event of an iterator, failing after timeoutMs. */
async function next(it: AsyncIterator<SubscribeResponse>, timeoutMs = 30_000): Promise<SubscribeResponse> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const r = await Promise.race([it.next(), timeout]);
    assert.ok(!r.done, "the stream ended");
    return r.value;
  } finally {
    clearTimeout(timer);
  }
}

describe("standing queries", () => {
  let d: Daemon;
  let c: CtxdClient;
  before(async () => {
    d = await startDaemon();
    c = createClient({ socketPath: d.socketPath });
  });
  after(async () => {
    c.close();
    await d.stop();
  });

  it("pushes a matching write, resumes after a dropped stream", async () => {
    const word = "zq" + randomUUID().slice(0, 8);
    const it = c.subscribe(`${word} heron`)[Symbol.asyncIterator]();
    const ready = await next(it);
    assert.equal(ready.event.case, "ready");
    await c.vfs.write({ ref: `agent:/ts-sub/${word}-other.md`, body: { case: "content", value: `${word} only` } });
    await c.vfs.write({ ref: `agent:/ts-sub/${word}-a.md`, body: { case: "content", value: `A ${word} heron.` } });
    const first = await next(it);
    assert.equal(first.event.case, "match");
    if (first.event.case !== "match") return;
    assert.equal(first.event.value.result?.ref, `agent:/ts-sub/${word}-a.md`);
    assert.equal(first.event.value.change?.kind, ChangeKind.WRITE);
    await it.return?.(); // the stream drops

    await c.vfs.write({ ref: `agent:/ts-sub/${word}-b.md`, body: { case: "content", value: `Another ${word} heron.` } });
    const resumed = c.subscribe(`${word} heron`, { resumeToken: first.event.value.resumeToken })[Symbol.asyncIterator]();
    assert.equal((await next(resumed)).event.case, "ready");
    const missed = await next(resumed);
    assert.ok(missed.event.case === "match" && missed.event.value.result?.ref === `agent:/ts-sub/${word}-b.md`);
    await resumed.return?.();
  });

  it("keeps a durable subscription's matches until read", async () => {
    const word = "zq" + randomUUID().slice(0, 8);
    const name = `ts-${word}`;
    const sub = await c.createSubscription(name, `${word} kingfisher`);
    assert.equal(sub.resourceUri, `ctxd-subscription://${name}`);
    assert.ok((await c.listSubscriptions()).some((s) => s.name === name));
    await c.vfs.write({ ref: `agent:/ts-sub/${word}.md`, body: { case: "content", value: `The ${word} kingfisher dives.` } });
    const deadline = Date.now() + 30_000;
    while ((await c.readSubscription(name, { peek: true })).matches.length === 0) {
      assert.ok(Date.now() < deadline, "no match in the inbox");
      await new Promise((ok) => setTimeout(ok, 20));
    }
    const got = await c.readSubscription(name);
    assert.deepEqual(
      got.matches.map((m) => m.result?.ref),
      [`agent:/ts-sub/${word}.md`],
    );
    assert.equal((await c.readSubscription(name)).matches.length, 0);
    assert.equal((await c.deleteSubscription(name)).name, name);
    await assert.rejects(c.readSubscription(name), /durable subscription/);
  });
});
