// writeBatch against the real ctxd daemon.
import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { Code, OnConflict, type CtxdClient, type WriteItem, createClient } from "../src/index.js";
import { type Daemon, rejection, startDaemon } from "./daemon.js";

/** limits.max_batch_items of the second daemon, so that a test can go over it. */
const SMALL_LIMIT = 3;

const text = (ref: string, value: string): WriteItem => ({ ref, body: { case: "content", value } });

describe("writeBatch", () => {
  let d: Daemon;
  let small: Daemon;
  let c: CtxdClient;
  let cs: CtxdClient;

  before(async () => {
    d = await startDaemon();
    small = await startDaemon({ config: `[limits]\nmax_batch_items = ${SMALL_LIMIT}\n` });
    c = createClient({ socketPath: d.socketPath, timeoutMs: 10_000 });
    cs = createClient({ socketPath: small.socketPath, timeoutMs: 10_000 });
  });

  after(async () => {
    c?.close();
    cs?.close();
    await d?.stop();
    await small?.stop();
  });

  const exists = async (client: CtxdClient, ref: string) => (await client.vfs.exists({ ref })).exists;

  it("writes every item, text and binary, with results in order", async () => {
    const base = "agent:/ts-batch/ok";
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10]);
    const results = await c.writeBatch([
      text(`${base}/a.md`, "# A\n\nfirst\n"),
      { ref: `${base}/b.md`, body: { case: "content", value: "second\n" }, title: "Bee", tags: ["y", "x", "y"] },
      { ref: `${base}/img.png`, body: { case: "data", value: png } },
    ]);

    assert.deepEqual(
      results.map((r) => [r.item?.ref, r.created, r.skipped, r.tree]),
      [
        [`${base}/a.md`, true, false, undefined],
        [`${base}/b.md`, true, false, undefined],
        [`${base}/img.png`, true, false, undefined],
      ],
    );
    assert.equal(results[0].item?.contentHash, createHash("sha256").update("# A\n\nfirst\n").digest("hex"));
    assert.equal(results[1].item?.title, "Bee");
    assert.deepEqual(results[1].item?.tags, ["x", "y"]);
    assert.equal(results[2].item?.isText, false);
    assert.equal(results[2].item?.sizeBytes, BigInt(png.length));

    assert.equal((await c.vfs.read({ ref: `${base}/a.md` })).content, "# A\n\nfirst\n");
    assert.equal((await c.vfs.read({ ref: `${base}/b.md` })).content, "second\n");
    assert.deepEqual(Buffer.from((await c.vfs.read({ ref: `${base}/img.png`, raw: true })).data), Buffer.from(png));
  });

  it("applies the items in order", async () => {
    const ref = "agent:/ts-batch/order/n.md";
    const results = await c.writeBatch([
      text(ref, "old\n"),
      { ...text(ref, "new\n"), onConflict: OnConflict.OVERWRITE },
    ]);
    assert.deepEqual(
      results.map((r) => r.created),
      [true, false],
    );
    assert.equal((await c.vfs.read({ ref })).content, "new\n");
  });

  for (const [name, badRef, type] of [
    ["an existing ref", "agent:/ts-batch/bad/taken.md", "PATH_CONFLICT"],
    ["a ref below an item", "agent:/ts-batch/bad/taken.md/below.md", "NOT_DIRECTORY"],
  ]) {
    it(`writes nothing when an item fails: ${name}`, async () => {
      const taken = "agent:/ts-batch/bad/taken.md";
      await c.vfs.write({ ...text(taken, "kept\n"), onConflict: OnConflict.OVERWRITE });
      const fresh = [0, 1, 2].map((i) => `agent:/ts-batch/bad/new${i}.md`);

      const e = await rejection(
        c.writeBatch([text(fresh[0], "0\n"), text(fresh[1], "1\n"), text(badRef, "x\n"), text(fresh[2], "2\n")]),
      );
      assert.equal(e.type, type);
      assert.ok(e.message.includes(`items[2] (${badRef}): `), e.message);
      for (const ref of fresh) {
        assert.equal(await exists(c, ref), false, `${ref} was written by a failed batch`);
      }
      assert.equal((await c.vfs.read({ ref: taken })).content, "kept\n");
    });
  }

  it("refuses more than limits.max_batch_items items", async () => {
    const base = "agent:/ts-batch/limit";
    const over = Array.from({ length: SMALL_LIMIT + 1 }, (_, i) => text(`${base}/${i}.md`, `${i}\n`));
    const e = await rejection(cs.writeBatch(over));
    assert.equal(e.type, "INVALID_ARGUMENT");
    assert.equal(e.code, Code.InvalidArgument);
    assert.ok(`${e.message} ${e.hint}`.includes("max_batch_items"), `${e.message} (hint: ${e.hint})`);
    assert.equal(await exists(cs, `${base}/0.md`), false);

    // At the limit the batch is taken.
    assert.equal((await cs.writeBatch(over.slice(0, SMALL_LIMIT))).length, SMALL_LIMIT);
    assert.equal((await cs.vfs.read({ ref: `${base}/2.md` })).content, "2\n");
  });
});
