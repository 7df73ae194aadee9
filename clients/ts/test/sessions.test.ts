// Integration test: sessions, prune and compact through the TypeScript
// client, against the real daemon.
import { strict as assert } from "node:assert";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import type { Timestamp } from "@bufbuild/protobuf/wkt";

import {
  type AppendEventsResponse,
  Code,
  type CtxdClient,
  type EndSessionResponse,
  type SearchEventsResponse,
  SearchMode,
  SessionEventKind,
  createClient,
} from "../src/index.js";
import { type Daemon, rejection, startDaemon } from "./daemon.js";

/** Polls check until it returns something truthy: the index applies writes in the background, within milliseconds. */
async function waitFor<T>(check: () => Promise<T>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((ok) => setTimeout(ok, 20));
  }
}

function kindName(k: SessionEventKind): string {
  return SessionEventKind[k].toLowerCase();
}

/** Milliseconds since the epoch of a timestamp, cut to the millisecond. */
function millis(ts: Timestamp | undefined): number {
  assert.ok(ts, "no timestamp");
  return Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6);
}

/** "session:kind" of every hit, sorted, checking that each hit sits in its group's session. */
function found(r: SearchEventsResponse): string[] {
  const out = new Set<string>();
  for (const g of r.sessions) {
    const dir = g.session?.ref.replace(/session\.md$/, "") ?? "?";
    for (const h of g.hits) {
      assert.equal(h.result?.ref, h.event?.ref);
      assert.ok(h.event?.ref.startsWith(dir), `${h.event?.ref} outside ${dir}`);
      out.add(`${g.session?.id}:${kindName(h.event?.kind ?? SessionEventKind.UNSPECIFIED)}`);
    }
  }
  return [...out].sort();
}

describe("sessions, prune and compact", () => {
  let d: Daemon;
  let c: CtxdClient;
  let first: AppendEventsResponse;
  let second: AppendEventsResponse;
  let boundary: Date;
  let end: EndSessionResponse;

  // Two sessions as a host records them: ts-s1 of ts-ops, in two appends
  // either side of boundary and then ended, and ts-s2 of ts-web, open.
  before(async () => {
    d = await startDaemon();
    c = createClient({ socketPath: d.socketPath, timeoutMs: 10_000 });
    const st = await c.startSession({ id: "ts-s1", project: "ts-ops", actor: "node-test" });
    assert.equal(st.created, true);
    first = await c.appendEvents(
      [
        { kind: "prompt", text: "Make the nightly backup job retry when rsync times out" },
        { kind: "tool_use", tool: "Bash", text: "systemctl --user status backup.timer" },
        { kind: SessionEventKind.ERROR, tool: "Bash", text: "rsync: connection timed out after 30 seconds" },
      ],
      { sessionId: "ts-s1", project: "ts-ops" },
    );
    // Event times are the daemon's, filtered to the millisecond: the second
    // append must come after the first one's millisecond.
    boundary = new Date(millis(first.events[2].time) + 1);
    await waitFor(async () => Date.now() > boundary.getTime() + 1, "the clock");
    second = await c.appendEvents(
      [
        { kind: "decision", text: "Retry rsync three times with exponential backoff before paging anyone." },
        { kind: "file_change", tool: "Edit", text: "Edit backup.sh", refs: ["/home/me/ops/backup.sh"] },
        { kind: "tool_use", tool: "TodoWrite", text: "- [x] add the retry loop\n- [ ] alert after the third failure" },
      ],
      { sessionId: "ts-s1", project: "ts-ops" },
    );
    const web = await c.appendEvents(
      [
        { kind: "error", text: "the deploy timed out on rsync" },
        { kind: "note", text: "rsync mirrors the static site to the CDN" },
      ],
      { sessionId: "ts-s2", project: "ts-web" },
    );
    end = await c.endSession("ts-s1");
    // Everything the tests search for is indexed: the events with "rsync"
    // and the digest, the last write.
    const want = [first.events[0], first.events[2], second.events[0], ...web.events].map((e) => e.ref);
    want.push(end.digest?.ref ?? "");
    await waitFor(async () => {
      const r = await c.searchEvents("rsync", { limit: 50, mode: SearchMode.BM25 });
      const got = new Set(r.sessions.flatMap((g) => g.hits.map((h) => h.event?.ref)));
      return want.every((ref) => got.has(ref));
    }, "the recorded events searchable");
  });

  after(async () => {
    c?.close();
    await d?.stop();
  });

  it("starts, resumes and appends", async () => {
    assert.deepEqual(
      [...first.events, ...second.events].map((e) => kindName(e.kind)),
      ["prompt", "tool_use", "error", "decision", "file_change", "tool_use"],
    );
    assert.equal(second.session?.eventCount, 6n);
    assert.deepEqual(second.events[1].refs, ["/home/me/ops/backup.sh"]);
    for (const e of first.events) {
      assert.ok(e.ref.startsWith("session:/ts-ops/") && millis(e.time) < boundary.getTime(), e.ref);
    }
    const again = await c.startSession({ id: "ts-s1", project: "ts-ops" });
    assert.equal(again.created, false);
    assert.equal(again.session?.ref, end.session?.ref);
    // The working directory: this process's by default, and the project
    // derives from it.
    const s = (await c.startSession({ project: "ts-cwd" })).session;
    assert.equal(s?.cwd, process.cwd());
    const billing = (await c.startSession({ cwd: path.join(d.workDir, "Billing Service") })).session;
    assert.equal(billing?.project, "billing-service");
  });

  it("searches events with filters, grouped by session", async () => {
    const errors = await c.searchEvents("rsync", { kinds: ["error"], mode: SearchMode.BM25 });
    assert.deepEqual(found(errors), ["ts-s1:error", "ts-s2:error"]);
    const scores = errors.sessions.map((g) => g.score);
    assert.deepEqual(scores, [...scores].sort((a, b) => b - a));
    for (const g of errors.sessions) {
      assert.equal(g.score, Math.max(...g.hits.map((h) => h.result?.score ?? 0)));
    }
    assert.deepEqual(found(await c.searchEvents("rsync", { project: "ts-web" })), ["ts-s2:error", "ts-s2:note"]);
    // Summary includes the digest.
    const mine = await c.searchEvents("rsync backoff", { sessionIds: ["ts-s1"], kinds: ["decision", SessionEventKind.SUMMARY] });
    assert.deepEqual(found(mine), ["ts-s1:decision", "ts-s1:summary"]);
    const digest = mine.sessions[0].hits.find((h) => h.event?.kind === SessionEventKind.SUMMARY);
    assert.equal(digest?.event?.ref, end.digest?.ref);

    // Time: the first append is before the boundary, the second after it.
    const kinds = ["prompt", "error", "decision"] as const;
    assert.deepEqual(found(await c.searchEvents("rsync", { sessionIds: ["ts-s1"], kinds: [...kinds], before: boundary })), [
      "ts-s1:error",
      "ts-s1:prompt",
    ]);
    assert.deepEqual(found(await c.searchEvents("rsync", { sessionIds: ["ts-s1"], kinds: [...kinds], after: boundary })), [
      "ts-s1:decision",
    ]);
    assert.deepEqual((await c.searchEvents("rsync", { after: new Date() })).sessions, []);
    const two = await c.searchEvents("rsync", { limit: 2 });
    assert.equal(two.sessions.reduce((n, g) => n + g.hits.length, 0), 2);

    await assert.rejects(c.searchEvents("rsync", { kinds: ["mistake" as "note"] }), TypeError);
  });

  it("gets a session page by page, and lists sessions", async () => {
    const refs: string[] = [];
    let pageToken = "";
    let pages = 0;
    for (;;) {
      const page = await c.getSession("ts-s1", { limit: 2, pageToken });
      assert.ok(page.events.length <= 2);
      refs.push(...page.events.map((e) => e.ref));
      pages++;
      assert.equal(page.digest, end.digest?.markdown);
      pageToken = page.nextPageToken;
      if (!pageToken) break;
      assert.ok(pages < 5, "paging does not end");
    }
    assert.deepEqual(refs, [...first.events, ...second.events].map((e) => e.ref));
    assert.ok(pages >= 3);

    const ops = await c.listSessions({ project: "ts-ops" });
    assert.ok(ops.some((s) => s.id === "ts-s1"));
    assert.deepEqual((await c.listSessions({ project: "ts-web", limit: 1 })).map((s) => s.id), ["ts-s2"]);
    const recent = await c.listSessions({ since: new Date(Date.now() - 600_000), limit: 100 });
    assert.ok(["ts-s1", "ts-s2"].every((id) => recent.some((s) => s.id === id)));
    assert.deepEqual(await c.listSessions({ since: new Date(Date.now() + 60_000) }), []);

    const e = await rejection(c.getSession("ts-nope"));
    assert.equal(e.type, "NOT_FOUND");
    assert.match(e.hint, /ctxd session list/);
  });

  it("ends with a digest of prompts, decisions and open goals", async () => {
    assert.ok(end.session?.endedAt);
    assert.equal(end.session?.digestRef, end.digest?.ref);
    assert.equal(end.digest?.method, "extractive");
    assert.equal(end.digest?.eventCount, 6n);
    const md = end.digest?.markdown ?? "";
    for (const part of [
      "## Prompts (1)",
      "Make the nightly backup job retry when rsync times out",
      "## Decisions and notes (1)",
      "Retry rsync three times with exponential backoff",
      "## Errors (1)",
      "## Files changed (1)",
      "## Open goals (1)",
      "- [ ] alert after the third failure",
    ]) {
      assert.ok(md.includes(part), `${part} not in\n${md}`);
    }
    assert.doesNotMatch(md, /add the retry loop/);

    await c.remember("The backup host is nas-2.", { sessionId: "ts-digest", project: "ts-notes" });
    const dg = await c.digestSession("ts-digest", { project: "ts-notes" });
    assert.match(dg.markdown, /The backup host is nas-2\./);
    assert.equal((await c.getSession("ts-digest")).session?.endedAt, undefined);
  });

  it("recalls at a start, for a prompt, and nothing for an unrelated prompt", async () => {
    const start = await c.recall({ project: "ts-ops", sessionId: "ts-s3" });
    assert.equal(start.project, "ts-ops");
    assert.match(start.markdown, /- \[ \] alert after the third failure/);
    assert.match(start.markdown, /exponential backoff/);
    assert.doesNotMatch(start.markdown, /the deploy timed out/);
    assert.ok(start.sections.some((s) => s.kind === "goals") && start.sections.some((s) => s.kind === "digest"));

    const r = await c.recall({ prompt: "How should the backup job retry when rsync times out?", project: "ts-ops", sessionId: "ts-s3" });
    assert.match(r.markdown, /exponential backoff/);
    assert.doesNotMatch(r.markdown, /the deploy timed out/);
    const none = await c.recall({ prompt: "Which watercolour palette suits a ferret portrait?", project: "ts-ops" });
    assert.equal(none.markdown, "");
    assert.deepEqual(none.sections, []);
  });

  it("refuses a bad event whole, with its type and hint, and cuts long text", async () => {
    const before = (await c.getSession("ts-s1")).session?.eventCount;
    const e = await rejection(
      c.appendEvents(
        [
          { kind: "note", text: "fine" },
          { kind: "note", text: "   " },
        ],
        { sessionId: "ts-s1", project: "ts-ops" },
      ),
    );
    assert.equal(e.type, "INVALID_ARGUMENT");
    assert.equal(e.code, Code.InvalidArgument);
    assert.match(e.message, /events\[1\].*no text/);
    assert.match(e.hint, /kind/);
    const bad = await rejection(c.remember("x", { sessionId: "a/b", project: "ts-ops" }));
    assert.equal(bad.type, "INVALID_ARGUMENT");
    assert.match(bad.message, /session id/);
    await assert.rejects(c.remember("x", { kind: "thought" as "note", sessionId: "ts-s1" }), TypeError);
    assert.equal((await c.getSession("ts-s1")).session?.eventCount, before);

    const long = await c.remember("y".repeat(100_000), { sessionId: "ts-long", project: "ts-notes" });
    assert.equal(long.events[0].truncated, true);
    assert.match(long.events[0].text, /bytes\]$/);
    assert.ok(Buffer.byteLength(long.events[0].text) <= 8 << 10);
  });

  it("prunes nothing fresh and refuses a cutoff under a day", async () => {
    const ref = "agent:/ts-prune/fresh.md";
    await c.vfs.write({ ref, body: { case: "content", value: "written just now\n" } });
    const dry = await c.prune(86_400_000, { dryRun: true });
    assert.deepEqual([dry.items, dry.more, dry.deleted], [[], false, false]);
    const real = await c.prune(90 * 86_400_000, { paths: ["agent:/ts-prune"], limit: 10 });
    assert.deepEqual([real.items, real.deleted], [[], true]);
    assert.equal((await c.vfs.exists({ ref })).exists, true);

    const e = await rejection(c.prune(23 * 3_600_000, { dryRun: true }));
    assert.equal(e.type, "INVALID_ARGUMENT");
    assert.match(e.hint, /day/);
    await assert.rejects(c.prune(Number.NaN), TypeError);
  });

  it("compacts a large note, and revert restores it", async () => {
    const ref = "agent:/ts-compact/kiln.md";
    const head = "---\ntitle: Kiln log\n---\n";
    let body = "# Kiln log\n\n";
    for (let i = 0; i < 200; i++) body += `- Batch ${i}: oak dried in ${(i % 7) + 3} weeks at ${(i % 30) + 40}% humidity.\n\n`;
    await c.vfs.write({ ref, body: { case: "content", value: head + body } });

    const dry = await c.compact(ref, { minTokens: 500, dryRun: true });
    assert.equal(dry.compacted, true);
    assert.equal(dry.item, undefined);
    assert.equal((await c.vfs.read({ ref })).content, head + body);

    const r = await c.compact(ref, { minTokens: 500 });
    assert.equal(r.compacted, true);
    assert.equal(r.method, "extractive");
    assert.ok(r.tokensAfter < r.tokensBefore && r.body.length < body.length, `${r.tokensBefore} -> ${r.tokensAfter}`);
    assert.match(r.body, /Batch 199:/);
    assert.doesNotMatch(r.body, /Batch 0:/);
    assert.equal((await c.vfs.read({ ref })).content, head + r.body);
    assert.ok(r.previousRev > 0n);

    await c.revert(ref, r.previousRev);
    assert.equal((await c.vfs.read({ ref })).content, head + body);
    const small = await c.compact(ref);
    assert.equal(small.compacted, false);
    assert.equal((await rejection(c.compact("agent:/ts-compact/nope.md"))).type, "NOT_FOUND");
  });
});
