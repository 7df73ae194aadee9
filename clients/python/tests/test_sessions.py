"""Integration tests of sessions, prune and compact against the real daemon."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import os
import time
from pathlib import Path
from typing import Callable, Dict, List, Set, Tuple, TypeVar

import grpc
import pytest

import ctxd
from conftest import Daemon
from ctxd.v1 import session_pb2

T = TypeVar("T")
UTC = datetime.timezone.utc


def _wait_for(check: Callable[[], T], what: str, timeout: float = 10.0) -> T:
    """Polls check until it returns something true. The index applies writes
    in the background, within milliseconds (until search waits for it)."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout}s")
        time.sleep(0.02)
    return value


def _kind(e: session_pb2.SessionEvent) -> str:
    return session_pb2.SessionEventKind.Name(e.kind).removeprefix("SESSION_EVENT_KIND_").lower()


def _found(r: session_pb2.SearchEventsResponse) -> Set[Tuple[str, str]]:
    """(session id, kind) of every hit, checking that each hit sits in its group's session."""
    out = set()
    for g in r.sessions:
        session_dir = g.session.ref.removesuffix("session.md")
        for h in g.hits:
            assert h.result.ref == h.event.ref and h.event.ref.startswith(session_dir), (g.session.id, h.event.ref)
            out.add((g.session.id, _kind(h.event)))
    return out


@dataclasses.dataclass
class Recorded:
    """Two sessions as a host records them: py-s1 of py-ops, in two appends
    either side of ``boundary`` and then ended, and py-s2 of py-web, open."""

    first: session_pb2.AppendEventsResponse
    second: session_pb2.AppendEventsResponse
    boundary: datetime.datetime
    end: session_pb2.EndSessionResponse
    refs: Dict[str, List[str]]


@pytest.fixture(scope="module")
def recorded(daemon: Daemon) -> Recorded:
    with daemon.client() as c:
        st = c.start_session("py-s1", project="py-ops", actor="pytest")
        assert st.created and (st.session.id, st.session.project, st.session.actor) == ("py-s1", "py-ops", "pytest")
        first = c.append_events(
            [
                ("prompt", "Make the nightly backup job retry when rsync times out"),
                {"kind": "tool_use", "tool": "Bash", "text": "systemctl --user status backup.timer"},
                {"kind": session_pb2.SESSION_EVENT_KIND_ERROR, "tool": "Bash", "text": "rsync: connection timed out after 30 seconds"},
            ],
            session_id="py-s1",
            project="py-ops",
        )
        # Event times are the daemon's, filtered to the millisecond: the
        # second append must come after the first one's millisecond.
        t = first.events[-1].time.ToDatetime(tzinfo=UTC)
        boundary = t.replace(microsecond=t.microsecond // 1000 * 1000) + datetime.timedelta(milliseconds=1)
        _wait_for(lambda: datetime.datetime.now(UTC) > boundary + datetime.timedelta(milliseconds=1), "the clock")
        second = c.append_events(
            [
                session_pb2.SessionEvent(kind=session_pb2.SESSION_EVENT_KIND_DECISION, text="Retry rsync three times with exponential backoff before paging anyone."),
                {"kind": "file-change", "tool": "Edit", "text": "Edit backup.sh", "refs": ["/home/me/ops/backup.sh"]},
                {"kind": "TOOL_USE", "tool": "TodoWrite", "text": "- [x] add the retry loop\n- [ ] alert after the third failure"},
            ],
            session_id="py-s1",
            project="py-ops",
        )
        web = c.append_events(
            [("error", "the deploy timed out on rsync"), ("note", "rsync mirrors the static site to the CDN")],
            session_id="py-s2",
            project="py-web",
        )
        end = c.end_session("py-s1")
        refs = {
            "py-s1": [e.ref for e in [*first.events, *second.events]],
            "py-s2": [e.ref for e in web.events],
        }
        # Everything the tests search for is indexed: the events with
        # "rsync" and the digest, the last write.
        want = {refs["py-s1"][0], refs["py-s1"][2], refs["py-s1"][3], *refs["py-s2"], end.digest.ref}
        _wait_for(
            lambda: want <= {h.event.ref for g in c.search_events("rsync", limit=50, mode="bm25").sessions for h in g.hits},
            "the recorded events searchable",
        )
        return Recorded(first, second, boundary, end, refs)


def test_start_append_and_the_stored_events(client: ctxd.Client, recorded: Recorded, tmp_path: Path) -> None:
    assert [_kind(e) for e in [*recorded.first.events, *recorded.second.events]] == [
        "prompt", "tool_use", "error", "decision", "file_change", "tool_use"]
    assert recorded.second.session.event_count == 6
    (change,) = [e for e in recorded.second.events if _kind(e) == "file_change"]
    assert (change.tool, list(change.refs)) == ("Edit", ["/home/me/ops/backup.sh"])
    for e in recorded.first.events:
        assert e.ref.startswith("session:/py-ops/") and e.time.ToDatetime(tzinfo=UTC) < recorded.boundary

    # A host starts its session again on resume: the same session, unchanged.
    again = client.start_session("py-s1", project="py-ops")
    assert not again.created and again.session.ref == recorded.end.session.ref
    # The working directory: this process's by default, and the project
    # derives from it.
    s = client.start_session(project="py-cwd").session
    assert s.cwd == os.getcwd() and s.id
    s = client.start_session(cwd=str(tmp_path / "Billing Service")).session
    assert s.project == "billing-service", s


def test_search_events_filters_and_groups(client: ctxd.Client, recorded: Recorded) -> None:
    r = client.search_events("rsync", kinds=["error"], mode="bm25")
    assert _found(r) == {("py-s1", "error"), ("py-s2", "error")}
    assert [g.score for g in r.sessions] == sorted((g.score for g in r.sessions), reverse=True)
    for g in r.sessions:
        assert g.score == max(h.result.score for h in g.hits)
        assert g.session.project == {"py-s1": "py-ops", "py-s2": "py-web"}[g.session.id]

    assert _found(client.search_events("rsync", project="py-web")) == {("py-s2", "error"), ("py-s2", "note")}
    # Summary includes the digest.
    r = client.search_events("rsync backoff", session_ids=["py-s1"], kinds=["decision", session_pb2.SESSION_EVENT_KIND_SUMMARY])
    assert _found(r) == {("py-s1", "decision"), ("py-s1", "summary")}
    (digest,) = [h for g in r.sessions for h in g.hits if _kind(h.event) == "summary"]
    assert digest.event.ref == recorded.end.digest.ref and "exponential backoff" in digest.event.text

    # Time: the first append is before the boundary, the second after it.
    kinds = ["prompt", "error", "decision"]
    assert _found(client.search_events("rsync", session_ids=["py-s1"], kinds=kinds, before=recorded.boundary)) == {
        ("py-s1", "prompt"), ("py-s1", "error")}
    assert _found(client.search_events("rsync", session_ids=["py-s1"], kinds=kinds, after=recorded.boundary)) == {
        ("py-s1", "decision")}
    assert _found(client.search_events("rsync", project="py-ops", after=datetime.timedelta(minutes=10))) >= {
        ("py-s1", "prompt"), ("py-s1", "error"), ("py-s1", "decision")}
    assert client.search_events("rsync", after=datetime.datetime.now(UTC)).sessions == []
    # The limit counts events over all sessions.
    assert sum(len(g.hits) for g in client.search_events("rsync", limit=2).sessions) == 2

    with pytest.raises(ValueError, match="unknown event kind"):
        client.search_events("rsync", kinds=["mistake"])
    with pytest.raises(ValueError, match="timezone-aware"):
        client.search_events("rsync", after=datetime.datetime.now())


def test_get_session_pages_and_list(client: ctxd.Client, recorded: Recorded) -> None:
    refs, token, pages = [], None, 0
    while True:
        page = client.get_session("py-s1", limit=2, page_token=token)
        assert len(page.events) <= 2
        refs += [e.ref for e in page.events]
        pages += 1
        token = page.next_page_token
        if not token:
            break
        assert pages < 5, "paging does not end"
    assert refs == recorded.refs["py-s1"] and pages >= 3
    assert page.session.id == "py-s1" and page.digest == recorded.end.digest.markdown
    assert client.get_session("py-s1", project="py-ops").session.digest_ref == recorded.end.digest.ref

    ops = client.list_sessions(project="py-ops")
    assert "py-s1" in [s.id for s in ops] and {s.project for s in ops} == {"py-ops"}
    assert [s.id for s in client.list_sessions(project="py-web", limit=1)] == ["py-s2"]
    recent = {s.id for s in client.list_sessions(since=datetime.timedelta(minutes=10), limit=100)}
    assert {"py-s1", "py-s2"} <= recent
    assert client.list_sessions(since=datetime.datetime.now(UTC) + datetime.timedelta(minutes=1)) == []

    with pytest.raises(ctxd.NotFoundError) as ei:
        client.get_session("py-nope")
    assert "ctxd session list" in ei.value.hint
    with pytest.raises(ctxd.InvalidArgumentError) as ei2:
        client.list_sessions(limit=10**6)
    assert "max_list_limit" in ei2.value.hint


def test_end_writes_the_digest(client: ctxd.Client, recorded: Recorded) -> None:
    end = recorded.end
    assert end.session.HasField("ended_at") and end.session.digest_ref == end.digest.ref
    d = end.digest
    assert (d.method, d.event_count, d.enricher_pending) == ("extractive", 6, False)
    md = d.markdown
    for part in (
        "# Session py-s1 on py-ops",
        "## Prompts (1)", "Make the nightly backup job retry when rsync times out",
        "## Decisions and notes (1)", "Retry rsync three times with exponential backoff",
        "## Errors (1)", "Bash: rsync: connection timed out",
        "## Files changed (1)", "/home/me/ops/backup.sh",
        "## Commands run (1)", "systemctl --user status backup.timer",
        "## Open goals (1)", "- [ ] alert after the third failure",
    ):
        assert part in md, (part, md)
    assert "add the retry loop" not in md  # checked: done, not open

    # A digest without an end: the session stays open.
    client.remember("The backup host is nas-2.", session_id="py-digest", project="py-notes")
    dg = client.digest_session("py-digest", project="py-notes")
    assert isinstance(dg, session_pb2.SessionDigest) and "The backup host is nas-2." in dg.markdown
    assert not client.get_session("py-digest").session.HasField("ended_at")


def test_recall(client: ctxd.Client, recorded: Recorded) -> None:
    # At a session's start: the open goals and the last sessions' digests.
    start = client.recall(project="py-ops", session_id="py-s3")
    assert start.project == "py-ops" and 0 < start.tokens_used <= 2000
    assert "- [ ] alert after the third failure" in start.markdown
    assert "exponential backoff" in start.markdown
    assert {"goals", "digest"} <= {s.kind for s in start.sections}, start.sections
    assert "the deploy timed out" not in start.markdown  # another project's

    # For a prompt: the memory that matches it, this project's only.
    r = client.recall("How should the backup job retry when rsync times out?", project="py-ops", session_id="py-s3")
    assert "exponential backoff" in r.markdown and "the deploy timed out" not in r.markdown, r.markdown
    # Nothing matches: nothing at all.
    r = client.recall("Which watercolour palette suits a ferret portrait?", project="py-ops")
    assert (r.markdown, list(r.sections)) == ("", [])

    with pytest.raises(ctxd.InvalidArgumentError):
        client.recall(project="py-ops", digests=21)


def test_bad_events_are_refused_whole(client: ctxd.Client, recorded: Recorded) -> None:
    before = client.get_session("py-s1").session.event_count
    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.append_events([("note", "fine"), ("note", "   ")], session_id="py-s1", project="py-ops")
    e = ei.value
    assert e.type == "INVALID_ARGUMENT" and e.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "events[1]" in e.message and "no text" in e.message, e.message
    assert "kind" in e.hint and "text" in e.hint, e.hint
    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.remember("x", session_id="a/b", project="py-ops")
    assert "session id" in ei.value.message and ei.value.hint
    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.append_events([], session_id="py-s1", project="py-ops")
    assert ei.value.hint
    with pytest.raises(ValueError, match="unknown event kind"):
        client.remember("x", kind="thought", session_id="py-s1", project="py-ops")
    assert client.get_session("py-s1").session.event_count == before

    # Long text is cut with a marker, never refused.
    r = client.remember("y" * 100_000, session_id="py-long", project="py-notes")
    (ev,) = r.events
    assert ev.truncated and ev.text.endswith("bytes]") and len(ev.text.encode()) <= 8 << 10


def test_prune_dry_run_and_bounds(client: ctxd.Client) -> None:
    ref = "agent:/py-prune/fresh.md"
    client.write(ref, "written just now\n", on_conflict="overwrite")
    r = client.prune(datetime.timedelta(days=1), dry_run=True)
    assert (list(r.items), r.more, r.deleted) == ([], False, False)
    # Not a dry run: nothing qualifies, nothing is deleted.
    r = client.prune(datetime.timedelta(days=90), paths=["agent:/py-prune"], limit=10)
    assert (list(r.items), r.deleted) == ([], True) and client.exists(ref)

    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.prune(datetime.timedelta(hours=23), dry_run=True)
    assert "day" in ei.value.hint, ei.value
    with pytest.raises(TypeError):
        client.prune(90, dry_run=True)  # type: ignore[arg-type]


def test_compact_and_revert(client: ctxd.Client) -> None:
    ref = "agent:/py-compact/kiln.md"
    head = "---\ntitle: Kiln log\ntags: [kiln]\n---\n"
    body = "# Kiln log\n\n" + "\n".join(
        f"- Batch {i}: oak dried in {i % 7 + 3} weeks at {i % 30 + 40}% humidity.\n" for i in range(200))
    client.write(ref, head + body, on_conflict="overwrite")

    dry = client.compact(ref, min_tokens=500, dry_run=True)
    assert dry.compacted and dry.tokens_after < dry.tokens_before and not dry.HasField("item")
    assert client.read(ref).content == head + body

    r = client.compact(ref, min_tokens=500)
    assert r.compacted and r.method == "extractive" and r.tokens_after < r.tokens_before
    assert len(r.body) < len(body) and "Batch 199" in r.body and "Batch 0:" not in r.body
    assert r.item.ref == ref and r.previous_rev > 0
    assert client.read(ref).content == head + r.body  # the frontmatter kept
    assert client.history(ref)[0].op == "compact"

    client.revert(ref, r.previous_rev)
    assert client.read(ref).content == head + body

    small = client.compact(ref)  # under the default 8000 tokens: left alone
    assert not small.compacted and small.tokens_after == small.tokens_before
    with pytest.raises(ctxd.NotFoundError):
        client.compact("agent:/py-compact/nope.md")


def test_async_client_sessions(daemon: Daemon) -> None:
    async def main() -> None:
        async with ctxd.AsyncClient(socket=daemon.socket, timeout=10.0) as c:
            st = await c.start_session("py-a1", project="py-async")
            assert st.created
            await c.remember("Keep backups for 35 days.", kind="decision", session_id="py-a1", project="py-async")
            app = await c.append_events([("prompt", "How long are backups kept?")], session_id="py-a1", project="py-async")
            assert app.session.event_count == 2
            got = await c.get_session("py-a1")
            assert [_kind(e) for e in got.events] == ["decision", "prompt"]
            assert [s.id for s in await c.list_sessions(project="py-async")] == ["py-a1"]
            d = await c.digest_session("py-a1")
            assert "Keep backups for 35 days." in d.markdown
            for _ in range(500):
                found = _found(await c.search_events("backups kept", project="py-async", kinds=["decision"]))
                if found:
                    break
                await asyncio.sleep(0.02)
            assert found == {("py-a1", "decision")}
            r = await c.recall("How many days are backups kept?", project="py-async")
            assert "35 days" in r.markdown
            end = await c.end_session("py-a1")
            assert end.session.HasField("ended_at")
            assert (await c.prune(datetime.timedelta(days=1), dry_run=True)).items == []
            with pytest.raises(ctxd.InvalidArgumentError):
                await c.append_events([("note", "")], session_id="py-a1")

    asyncio.run(main())
