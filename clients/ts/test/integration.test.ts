// Integration test: the TypeScript client against the real ctxd daemon.
import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import {
  Code,
  ErrorType,
  IngestAction,
  SearchGroupBy,
  SearchLeg,
  SearchMode,
  SearchToggle,
  type CtxdClient,
  type TreeNode,
  createClient,
} from "../src/index.js";
import { type Daemon, rejection, startDaemon } from "./daemon.js";

function refs(node: TreeNode | undefined): string[] {
  if (!node) return [];
  return [node.ref, ...node.children.flatMap(refs)];
}

describe("ctxd daemon", () => {
  let d: Daemon;
  let workDir: string;
  let c: CtxdClient;

  before(async () => {
    d = await startDaemon();
    workDir = d.workDir;
    c = createClient({ socketPath: d.socketPath, timeoutMs: 10_000 });
  });

  after(async () => {
    c?.close();
    await d?.stop();
  });

  it("write, read, tree, delete, then NOT_FOUND with a hint", async () => {
    const keep = "agent:/it/notes/a.md";
    const gone = "agent:/it/notes/b.md";
    const text = "# B\n\nsecond note, with ünïcode ✓\n";

    const w1 = await c.vfs.write({ ref: keep, body: { case: "content", value: "first note\n" } });
    assert.equal(w1.created, true);
    assert.equal(w1.item?.ref, keep);
    const w = await c.vfs.write({ ref: gone, body: { case: "content", value: text }, tags: ["t2", "t1", "t2"] });
    assert.equal(w.created, true);
    assert.equal(w.item?.ref, gone);
    assert.equal(w.item?.isText, true);
    assert.deepEqual(w.item?.tags, ["t1", "t2"]);
    assert.equal(w.item?.sizeBytes, BigInt(Buffer.byteLength(text)));
    assert.equal(w.item?.contentHash, createHash("sha256").update(text).digest("hex"));
    assert.ok(refs(w.tree?.root).includes(gone), w.tree?.rendered);

    const r = await c.vfs.read({ ref: gone });
    assert.equal(r.content, text);
    assert.equal(r.totalLines, 3n);
    assert.equal((await c.vfs.read({ ref: w.item!.id })).content, text);
    assert.equal((await c.vfs.read({ ref: "/it/notes/b.md" })).content, text);

    const t = await c.vfs.tree({ ref: "agent:/it/notes" });
    const treeRefs = refs(t.root);
    assert.ok(treeRefs.includes(keep) && treeRefs.includes(gone), treeRefs.join(", "));
    assert.match(t.rendered, /b\.md/);
    assert.equal((await c.vfs.exists({ ref: gone })).exists, true);

    const d = await c.vfs.delete({ ref: gone });
    assert.equal(d.deletedCount, 1n);
    assert.equal((await c.vfs.exists({ ref: gone })).exists, false);

    const e = await rejection(c.vfs.read({ ref: gone }));
    assert.equal(e.type, "NOT_FOUND");
    assert.equal(e.code, Code.NotFound);
    assert.ok(e.message.includes(gone), e.message);
    assert.equal(e.ref, gone);
    assert.ok(e.hint.length > 0, "NOT_FOUND must carry a next_action_hint");
    assert.ok(e.hint.includes(keep), e.hint);
    assert.ok(e.nearby.includes(keep), e.nearby.join(", "));
    assert.ok(!e.nearby.includes(gone));
  });

  for (const ref of ["Bad:/x", "9drive:/x", ""]) {
    it(`maps the invalid ref ${JSON.stringify(ref)} to INVALID_ARGUMENT`, async () => {
      const e = await rejection(c.vfs.write({ ref, body: { case: "content", value: "x" } }));
      assert.equal(e.type, "INVALID_ARGUMENT");
      assert.equal(e.code, Code.InvalidArgument);
      assert.ok(e.message.length > 0);
    });
  }

  it("searches in BM25 mode without a model and says so", async () => {
    await c.vfs.write({ ref: "agent:/it/search/otter.md", body: { case: "content", value: "# Otters\n\nSea otters hold hands while sleeping.\n" } });
    await c.vfs.write({ ref: "agent:/it/search/other.md", body: { case: "content", value: "Nothing about that animal.\n" } });
    const query = { queries: [{ text: "sea otters" }], filter: { pathPrefixes: ["agent:/it/search"] } };
    // The index applies writes in the background, within milliseconds.
    let r = await c.search.search(query);
    for (let i = 0; i < 200 && r.results.length === 0; i++) {
      await new Promise((ok) => setTimeout(ok, 50));
      r = await c.search.search(query);
    }
    assert.equal(r.modeUsed, SearchMode.BM25);
    assert.match(r.modeReason, /no embedding model/);
    assert.deepEqual(r.results.map((x) => x.ref), ["agent:/it/search/otter.md"]);
    assert.equal(r.results[0].score, 1);
    assert.match(r.results[0].snippet, /otters/i);
    // The proximity rerank: "sleeping" stands four words from "otters".
    const apart = { ...query, queries: [{ text: "sleeping otters" }] };
    assert.equal((await c.search.search({ ...apart, proximity: SearchToggle.OFF })).results[0].score, 1);
    const close = (await c.search.search({ ...apart, proximity: SearchToggle.ON })).results[0].score;
    assert.ok(Math.abs(close - (0.85 + 0.15 / 16)) < 1e-12, `score ${close}`);

    const e = await rejection(c.search.search({}));
    assert.equal(e.type, "INVALID_ARGUMENT");
  });

  it("groups search results by item and drops those under min_score", async () => {
    // Sections long enough that the chunker keeps each a chunk of its own.
    const filler = "Some words of plain description follow here. ".repeat(25);
    const content = `# Narwhals\n\n## Tusks\n\nNarwhal tusks are teeth. ${filler}\n\n## Diet\n\nNarwhal diet is fish. ${filler}\n`;
    await c.vfs.write({ ref: "agent:/it/items/many.md", body: { case: "content", value: content } });
    await c.vfs.write({ ref: "agent:/it/items/one.md", body: { case: "content", value: `A narwhal was seen. ${filler}\n` } });
    const base = { queries: [{ text: "narwhal" }], mode: SearchMode.BM25, filter: { pathPrefixes: ["agent:/it/items"] } };
    const indexed = async () => (await c.search.search(base)).results.some((x) => x.ref === "agent:/it/items/one.md");
    for (let i = 0; i < 200 && !(await indexed()); i++) {
      await new Promise((ok) => setTimeout(ok, 50));
    }
    const r = await c.search.search({ ...base, limit: 2, maxChunksPerItem: 2, groupBy: SearchGroupBy.ITEM });
    assert.deepEqual(r.results.map((x) => x.ref), ["agent:/it/items/many.md", "agent:/it/items/one.md"]);
    assert.equal(r.results[0].moreChunks.length, 1);
    assert.match(r.results[0].moreChunks[0].snippet, /Narwhal/);
    const minScore = (r.results[0].score + r.results[1].score) / 2;
    const top = await c.search.search({ ...base, groupBy: SearchGroupBy.ITEM, minScore });
    assert.deepEqual(top.results.map((x) => x.ref), ["agent:/it/items/many.md"]);
    const e = await rejection(c.search.search({ ...base, minScore: 1.5 }));
    assert.equal(e.type, "INVALID_ARGUMENT");
  });

  it("explains each search result when asked", async () => {
    await c.vfs.write({ ref: "agent:/it/explain/otters.md", body: { case: "content", value: "Sea otters hold hands while sleeping.\n" } });
    const query = { queries: [{ text: "sleeping otters" }], mode: SearchMode.BM25, filter: { pathPrefixes: ["agent:/it/explain"] } };
    for (let i = 0; i < 200 && (await c.search.search(query)).results.length === 0; i++) {
      await new Promise((ok) => setTimeout(ok, 50));
    }
    assert.equal((await c.search.search(query)).results[0].explanation, undefined);
    const r = await c.search.search({ ...query, explain: true, proximity: SearchToggle.ON });
    const x = r.results[0].explanation;
    assert.ok(x, "no explanation");
    assert.deepEqual(x.legs.map((l) => [l.leg, l.rank]), [[SearchLeg.BM25, 1], [SearchLeg.SUBSTRING, 1]]);
    assert.equal(x.rrfK, 60);
    assert.equal(x.fusedMax, 2 / 61);
    assert.deepEqual(x.factors.map((f) => f.name), ["proximity", "recency"]);
    assert.deepEqual(x.matchedTerms, ["sleep", "otter"]);
    // The score is fused / fused_max times the factors.
    const score = x.factors.reduce((s, f) => s * f.factor, x.fused / x.fusedMax);
    assert.ok(Math.abs(score - r.results[0].score) < 1e-12, `${score} != ${r.results[0].score}`);
  });

  it("adds a tree, searches it, and refreshes an edited file", async () => {
    const tree = fs.mkdtempSync(path.join(workDir, "tree-"));
    fs.writeFileSync(path.join(tree, "kiln.md"), "# Kiln\n\nA solar kiln dries oak in six weeks.\n");
    fs.writeFileSync(path.join(tree, ".gitignore"), "*.log\n");
    fs.writeFileSync(path.join(tree, "skip.log"), "ignored\n");
    const ref = `disk:${tree}/kiln.md`;

    const events = [];
    for await (const ev of c.ingest.add({ sources: [tree] })) events.push(ev);
    const last = events[events.length - 1].event;
    assert.equal(last.case, "summary");
    assert.equal(last.value?.added, 1n);
    const items = events.flatMap((e) => (e.event.case === "item" ? [e.event.value] : []));
    assert.deepEqual(items.map((i) => i.ref), [ref]);
    const r = await c.search.search({ queries: [{ text: "solar kiln" }], filter: { pathPrefixes: [`disk:${tree}`] } });
    assert.deepEqual(r.results.map((x) => x.ref), [ref]);

    fs.writeFileSync(path.join(tree, "kiln.md"), "# Kiln\n\nA solar kiln dries walnut in eight weeks.\n");
    fs.rmSync(path.join(tree, "skip.log"));
    let summary;
    for await (const ev of c.ingest.refresh({ refs: [`disk:${tree}`] })) {
      if (ev.event.case === "summary") summary = ev.event.value;
    }
    assert.equal(summary?.updated, 1n);
    const { content } = await c.vfs.read({ ref });
    assert.match(content, /walnut/);

    const refused = [];
    for await (const ev of c.ingest.add({ sources: ["/etc/hostname"] })) {
      if (ev.event.case === "item") refused.push(ev.event.value);
    }
    assert.equal(refused[0].action, IngestAction.FAILED);
    assert.equal(refused[0].error?.type, ErrorType.SOURCE_REFUSED);
  });

  it("round-trips binary content", async () => {
    const ref = "agent:/it/bin/blob.bin";
    const data = new Uint8Array(256 + 300);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7 + 3) % 256;
    data[0] = 0;
    data[1] = 0xff;
    const w = await c.vfs.write({ ref, body: { case: "data", value: data } });
    assert.equal(w.created, true);
    assert.equal(w.item?.isText, false);
    assert.equal(w.item?.sizeBytes, BigInt(data.length));
    assert.equal(w.item?.contentHash, createHash("sha256").update(data).digest("hex"));

    const r = await c.vfs.read({ ref, raw: true });
    assert.deepEqual(Buffer.from(r.data), Buffer.from(data));

    const e = await rejection(c.vfs.read({ ref }));
    assert.equal(e.type, "NO_TEXT_CONTENT");
    assert.equal(e.code, Code.FailedPrecondition);
  });
});
