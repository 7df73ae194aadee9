// Integration test: watches through the TypeScript client, against the real
// daemon: add, list, follow an edit, remove.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { Code, type CtxdClient, SearchMode, WatchMode, createClient } from "../src/index.js";
import { type Daemon, rejection, startDaemon } from "./daemon.js";

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((ok) => setTimeout(ok, 20));
  }
}

describe("watches", () => {
  let d: Daemon;
  let c: CtxdClient;
  before(async () => {
    d = await startDaemon();
    c = createClient({ socketPath: d.socketPath, timeoutMs: 10_000 });
  });
  after(async () => {
    c.close();
    await d.stop();
  });

  const found = async (text: string, tree: string) =>
    (
      await c.search.search({
        queries: [{ text }],
        mode: SearchMode.BM25,
        filter: { pathPrefixes: [`disk:${tree}`] },
      })
    ).results.map((r) => r.ref);

  it("adds, lists, follows and removes a watch", async () => {
    const tree = path.join(d.workDir, "watched");
    fs.mkdirSync(tree);
    fs.writeFileSync(path.join(tree, "stork.md"), "# Stork\n\nA white stork nests on the chimney.\n");

    const resp = await c.addWatch(tree, { debounceMs: 50, tags: ["birds"] });
    const w = resp.watch;
    assert.ok(w && !resp.existed);
    assert.equal(w.path, tree);
    assert.equal(w.status?.mode, WatchMode.EVENTS);
    assert.equal(w.status?.files, 1n);
    assert.equal(w.status?.lastReconcile?.added, 1n);
    // addWatch resolves once the tree is searchable.
    assert.deepEqual(await found("white stork", tree), [`disk:${tree}/stork.md`]);
    assert.equal((await c.addWatch(tree)).existed, true);

    fs.writeFileSync(path.join(tree, "stork.md"), "# Stork\n\nA white stork clatters its bill.\n");
    await waitFor(async () => (await found("clatters bill", tree)).length === 1, "the edit searchable");

    const listed = (await c.listWatches()).find((x) => x.id === w.id);
    assert.ok(listed?.status?.lastEventAt, "no last event after the edit");
    assert.deepEqual(listed?.tags, ["birds"]);

    const removed = await c.removeWatch(tree);
    assert.equal(removed?.id, w.id);
    assert.ok(!(await c.listWatches()).some((x) => x.id === w.id));
    assert.equal((await c.vfs.exists({ ref: `disk:${tree}/stork.md` })).exists, true, "items are kept");

    const e = await rejection(c.removeWatch(w.id));
    assert.equal(e.code, Code.NotFound);
    assert.match(e.hint, /watch list/);
  });

  it("refuses a file", async () => {
    const f = path.join(d.workDir, "file.md");
    fs.writeFileSync(f, "x");
    const e = await rejection(c.addWatch(f));
    assert.equal(e.code, Code.InvalidArgument);
    assert.match(e.hint, /directory/);
  });
});
