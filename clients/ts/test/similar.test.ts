// findSimilar and add with dedupeThreshold against the real daemon with the real model.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { CtxdError, IngestAction, type CtxdClient, type FindSimilarResponse, createClient } from "../src/index.js";
import { type Daemon, rejection, repoRoot, startDaemon } from "./daemon.js";

const note =
  "# Deployment\n\nRun the canary release in staging before rolling out to production, and watch the error rate for an hour.\n";

describe("findSimilar", () => {
  let d: Daemon;
  let c: CtxdClient;

  before(async () => {
    d = await startDaemon({
      args: [
        "--model-dir",
        path.join(repoRoot, ".cache/models/all-MiniLM-L6-v2"),
        "--onnxruntime-lib",
        path.join(repoRoot, ".cache/onnxruntime/libonnxruntime.so"),
      ],
    });
    c = createClient({ socketPath: d.socketPath, timeoutMs: 10_000 });
  });

  after(async () => {
    c?.close();
    await d?.stop();
  });

  it("finds copies of an item and of a text, and add skips them with dedupeThreshold", async () => {
    for (const [ref, content] of [
      ["agent:/sim/deploy.md", note],
      ["agent:/sim/copy.md", note],
      ["agent:/sim/bread.md", "# Bread\n\nKnead the dough for ten minutes and bake it at 220 degrees.\n"],
    ]) {
      await c.vfs.write({ ref, body: { case: "content", value: content } });
    }
    // Embedded in the background: until then the item's chunks have no vectors.
    let r: FindSimilarResponse | undefined;
    for (const deadline = Date.now() + 60_000; ; await new Promise((res) => setTimeout(res, 50))) {
      try {
        r = await c.findSimilar("agent:/sim/deploy.md");
        if (r.items.length > 0) break;
      } catch (e) {
        if (!(e instanceof CtxdError) || e.type !== "UNAVAILABLE") throw e;
      }
      assert.ok(Date.now() < deadline, "agent:/sim/deploy.md was not embedded in time");
    }
    assert.deepEqual(
      r.items.map((x) => x.ref),
      ["agent:/sim/copy.md"],
    );
    assert.ok(r.items[0].coverage === 1 && r.items[0].similarity > 0.999 && r.targetChunks === 1);

    r = await c.findSimilar({ text: note }, { threshold: 0.95, filter: { pathPrefixes: ["agent:/sim/"] } });
    assert.deepEqual(r.items.map((x) => x.ref).sort(), ["agent:/sim/copy.md", "agent:/sim/deploy.md"]);
    const e = await rejection(c.findSimilar({ text: note }, { threshold: 1.5 }));
    assert.equal(e.type, "INVALID_ARGUMENT");
    assert.match(e.hint, /--threshold/);

    const src = path.join(d.workDir, "inbox");
    fs.mkdirSync(src);
    fs.writeFileSync(path.join(src, "copy.md"), note);
    fs.writeFileSync(path.join(src, "new.md"), "# Lumber\n\nA solar kiln dries lumber in a few weeks.\n");
    const items = new Map<string, { action: IngestAction; duplicateOf: string }>();
    for await (const ev of c.ingest.add({ sources: [src], dedupeThreshold: 0.9 })) {
      if (ev.event.case === "item") items.set(path.basename(ev.event.value.source), ev.event.value);
    }
    assert.equal(items.get("copy.md")?.action, IngestAction.SKIPPED);
    assert.match(items.get("copy.md")?.duplicateOf ?? "", /^agent:\/sim\/(deploy|copy)\.md$/);
    assert.equal(items.get("new.md")?.action, IngestAction.ADDED);
    assert.equal(items.get("new.md")?.duplicateOf, "");
  });
});
