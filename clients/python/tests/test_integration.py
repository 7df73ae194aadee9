"""Integration tests: the Python client against the real ctxd daemon."""

from __future__ import annotations

import hashlib
import time

import grpc
import pytest

import ctxd
from ctxd.v1 import errors_pb2, ingest_pb2, search_pb2, types_pb2, vfs_pb2


def _refs(node: types_pb2.TreeNode) -> list[str]:
    out = [node.ref]
    for child in node.children:
        out.extend(_refs(child))
    return out


def test_write_read_tree_delete_then_not_found(client: ctxd.Client) -> None:
    keep, gone = "agent:/it/notes/a.md", "agent:/it/notes/b.md"
    text = "# B\n\nsecond note, with ünïcode ✓\n"

    w = client.write(keep, "first note\n")
    assert w.created
    assert w.item.ref == keep
    w = client.write(gone, text, tags=["t2", "t1", "t2"])
    assert w.created and not w.skipped
    assert w.item.ref == gone
    assert w.item.is_text
    assert list(w.item.tags) == ["t1", "t2"]
    assert w.item.size_bytes == len(text.encode())
    assert w.item.content_hash == hashlib.sha256(text.encode()).hexdigest()
    assert gone in _refs(w.tree.root), w.tree.rendered

    r = client.read(gone)
    assert r.content == text
    assert r.item.ref == gone
    assert r.total_lines == 3
    assert (r.start_line, r.end_line, r.has_more) == (1, 3, False)

    # Also reachable by id, and as a bare /path on the agent drive.
    assert client.read(w.item.id).content == text
    assert client.read("/it/notes/b.md").content == text

    t = client.tree("agent:/it/notes")
    refs = _refs(t.root)
    assert keep in refs and gone in refs
    assert "b.md" in t.rendered and "a.md" in t.rendered
    assert client.exists(gone) is True

    d = client.rm(gone)
    assert d.deleted_count == 1
    assert client.exists(gone) is False

    with pytest.raises(ctxd.NotFoundError) as ei:
        client.read(gone)
    e = ei.value
    assert isinstance(e, ctxd.CtxdError)
    assert e.type == "NOT_FOUND"
    assert e.code == grpc.StatusCode.NOT_FOUND
    assert gone in e.message
    assert e.ref == gone
    assert e.hint, "NOT_FOUND must carry a next_action_hint"
    assert keep in e.hint, e.hint
    assert keep in e.nearby
    assert gone not in e.nearby
    assert e.detail is not None
    assert "NOT_FOUND" in str(e) and e.hint in str(e)


@pytest.mark.parametrize("ref", ["Bad:/x", "9drive:/x", ""])
def test_bad_ref_is_invalid_argument(client: ctxd.Client, ref: str) -> None:
    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.write(ref, "x")
    e = ei.value
    assert e.type == "INVALID_ARGUMENT"
    assert e.code == grpc.StatusCode.INVALID_ARGUMENT
    assert e.message
    # Nothing was stored under any spelling of it.
    with pytest.raises(ctxd.CtxdError) as ei2:
        client.read(ref)
    assert ei2.value.type in ("INVALID_ARGUMENT", "NOT_FOUND")


def test_binary_round_trip(client: ctxd.Client) -> None:
    ref = "agent:/it/bin/blob.bin"
    data = bytes(range(256)) + b"\x00\xff\xfe" * 100
    w = client.write(ref, data)
    assert w.created
    assert not w.item.is_text
    assert w.item.size_bytes == len(data)
    assert w.item.content_hash == hashlib.sha256(data).hexdigest()

    r = client.read(ref, raw=True)
    assert r.data == data
    assert client.info(ref).item.size_bytes == len(data)

    with pytest.raises(ctxd.NoTextContentError) as ei:
        client.read(ref)
    assert ei.value.type == "NO_TEXT_CONTENT"
    assert ei.value.code == grpc.StatusCode.FAILED_PRECONDITION


def test_other_vfs_calls(client: ctxd.Client) -> None:
    base = "agent:/it/misc"
    client.write(f"{base}/lines.txt", "one\ntwo\nthree\nfour\n")

    # read with a line window
    r = client.read(f"{base}/lines.txt", offset=1, limit=2)
    assert r.content == "two\nthree\n"
    assert (r.start_line, r.end_line, r.total_lines, r.has_more) == (2, 3, 4, True)
    with pytest.raises(ctxd.OutOfRangeError):
        client.read(f"{base}/lines.txt", offset=10)

    assert client.wc(f"{base}/lines.txt") == 4

    # edit: replace line 2, delete line 4, patches given out of order
    e = client.edit(f"{base}/lines.txt", [(4, 4, ""), {"start_line": 2, "end_line": 2, "content": "TWO"}])
    assert (e.lines_before, e.lines_after) == (4, 3)
    assert client.read(f"{base}/lines.txt").content == "one\nTWO\nthree\n"
    with pytest.raises(ctxd.InvalidPatchError) as ei:
        client.edit(f"{base}/lines.txt", [vfs_pb2.Patch(start_line=2, end_line=99, content="x")])
    assert ei.value.type == "INVALID_PATCH"

    # conflicts and overwrite
    with pytest.raises(ctxd.PathConflictError) as pc:
        client.write(f"{base}/lines.txt", "again\n")
    assert pc.value.code == grpc.StatusCode.ALREADY_EXISTS
    w = client.write(f"{base}/lines.txt", "again\n", on_conflict="overwrite")
    assert not w.created
    assert client.write(f"{base}/lines.txt", "ignored\n", on_conflict="skip").skipped
    assert client.read(f"{base}/lines.txt").content == "again\n"

    # copy and move
    c = client.cp(f"{base}/lines.txt", f"{base}/copy.txt")
    assert c.copied_count == 1
    m = client.mv(f"{base}/copy.txt", "scratch:/moved.txt")
    assert m.moved_count == 1
    assert client.read("scratch:/moved.txt").content == "again\n"
    assert not client.exists(f"{base}/copy.txt")

    # directories
    md = client.mkdir(f"{base}/empty")
    assert md.created and md.ref == f"{base}/empty"
    assert client.mkdir(f"{base}/empty").created is False
    names = {entry.name: entry.is_dir for entry in client.ls(base).entries}
    assert names == {"empty": True, "lines.txt": False}
    du = client.du(base)
    assert du.size_bytes == len("again\n")
    with pytest.raises(ctxd.DirectoryNotEmptyError):
        client.rm(base)

    drives = {d.name for d in client.list_drives()}
    assert {"agent", "scratch"} <= drives

    st = client.status()
    assert st.item_count >= 3
    assert st.version
    assert len(st.disk) == 0
    names = {c.name for c in client.status(disk=True).disk}
    assert {"store/items", "store/content", "index/lexical"} <= names


def test_unreachable_socket_is_unavailable(tmp_path) -> None:
    with ctxd.Client(socket=str(tmp_path / "nobody.sock"), timeout=5) as c:
        with pytest.raises(ctxd.UnavailableError) as ei:
            c.exists("/x")
    assert ei.value.code == grpc.StatusCode.UNAVAILABLE
    assert ei.value.type == "UNAVAILABLE"


def test_search_without_a_model_answers_bm25(client: ctxd.Client) -> None:
    client.write("agent:/it/search/otter.md", "# Otters\n\nSea otters hold hands while sleeping.\n")
    client.write("agent:/it/search/other.md", "Nothing about that animal.\n")
    # The index applies writes in the background, within milliseconds.
    deadline = time.monotonic() + 10
    while True:
        r = client.search("sea otters", path_prefixes=["agent:/it/search"])
        if r.results or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert r.mode_used == search_pb2.SEARCH_MODE_BM25
    assert "no embedding model" in r.mode_reason
    assert [x.ref for x in r.results] == ["agent:/it/search/otter.md"]
    top = r.results[0]
    assert top.score == 1.0
    assert "otters" in top.snippet.lower()
    assert top.heading == "Otters"

    with pytest.raises(ctxd.InvalidArgumentError):
        client.search([])
    with pytest.raises(ValueError):
        client.search("x", leg_weights={"nope": 1})
    # Weights and the fusion constant reach the server: with BM25 off only
    # the substring leg answers.
    r = client.search("otters", path_prefixes=["agent:/it/search"], leg_weights={"bm25": 0}, rrf_k=10)
    assert [x.ref for x in r.results] == ["agent:/it/search/otter.md"]
    assert [lr.leg for lr in r.results[0].leg_ranks] == [search_pb2.SEARCH_LEG_SUBSTRING]


def test_search_group_by_item_and_min_score(client: ctxd.Client) -> None:
    # Sections long enough that the chunker keeps each a chunk of its own.
    filler = "Some words of plain description follow here. " * 25
    client.write(
        "agent:/it/items/many.md",
        f"# Narwhals\n\n## Tusks\n\nNarwhal tusks are teeth. {filler}\n\n## Diet\n\nNarwhal diet is fish. {filler}\n",
    )
    client.write("agent:/it/items/one.md", f"A narwhal was seen. {filler}\n")
    scope = {"mode": "bm25", "path_prefixes": ["agent:/it/items"]}
    def indexed() -> bool:
        return "agent:/it/items/one.md" in [x.ref for x in client.search("narwhal", **scope).results]

    deadline = time.monotonic() + 10
    while not indexed() and time.monotonic() < deadline:
        time.sleep(0.05)
    r = client.search("narwhal", limit=2, group_by="item", max_chunks_per_item=2, **scope)
    assert [x.ref for x in r.results] == ["agent:/it/items/many.md", "agent:/it/items/one.md"]
    assert len(r.results[0].more_chunks) == 1 and "Narwhal" in r.results[0].more_chunks[0].snippet
    floor = (r.results[0].score + r.results[1].score) / 2
    r = client.search("narwhal", group_by=search_pb2.SEARCH_GROUP_BY_ITEM, min_score=floor, **scope)
    assert [x.ref for x in r.results] == ["agent:/it/items/many.md"]
    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.search("narwhal", min_score=1.5)
    assert "--min-score" in ei.value.hint
    # A prior weight reaches the daemon: out of range it is refused.
    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.search("narwhal", usage_weight=2)
    assert "--usage-weight" in ei.value.hint
    r = client.search("narwhal", importance_weight=1, usage_weight=1, **scope)
    assert {x.ref for x in r.results} == {"agent:/it/items/many.md", "agent:/it/items/one.md"}


def test_add_tree_then_refresh(client: ctxd.Client, tmp_path_factory: pytest.TempPathFactory) -> None:
    tree = tmp_path_factory.mktemp("tree")
    (tree / "kiln.md").write_text("# Kiln\n\nA solar kiln dries oak in six weeks.\n")
    (tree / "skip.log").write_text("ignored\n")
    (tree / ".gitignore").write_text("*.log\n")

    events = list(client.add(tree))
    summary = events[-1].summary
    assert events[-1].WhichOneof("event") == "summary"
    assert (summary.added, summary.failed) == (1, 0)
    added = _items(events)
    assert [i.ref for i in added] == [f"disk:{tree}/kiln.md"]
    # Add returns once what it wrote is searchable.
    r = client.search("solar kiln", path_prefixes=[f"disk:{tree}"])
    assert [x.ref for x in r.results] == [f"disk:{tree}/kiln.md"]

    # Adding again skips; refresh after an edit updates only that file.
    assert list(client.add(tree))[-1].summary.skipped == 1
    (tree / "kiln.md").write_text("# Kiln\n\nA solar kiln dries walnut in eight weeks.\n")
    summary = list(client.refresh([f"disk:{tree}"]))[-1].summary
    assert (summary.updated, summary.unchanged, summary.missing) == (1, 0, 0)
    assert "walnut" in client.read(f"disk:{tree}/kiln.md").content

    (tree / "kiln.md").unlink()
    (item,) = _items(client.refresh([f"disk:{tree}/kiln.md"]))
    assert item.action == ingest_pb2.INGEST_ACTION_MISSING
    assert item.error.type == errors_pb2.ERROR_TYPE_SOURCE_UNREADABLE
    assert client.exists(f"disk:{tree}/kiln.md")


def test_add_refuses_paths_outside_allowed_roots(client: ctxd.Client) -> None:
    (item,) = _items(client.add("/etc/hostname"))
    assert item.action == ingest_pb2.INGEST_ACTION_FAILED
    assert item.error.type == errors_pb2.ERROR_TYPE_SOURCE_REFUSED
    assert "allowed_roots" in item.error.next_action_hint
    with pytest.raises(ctxd.InvalidArgumentError):
        list(client.add([]))


def test_search_explain(client: ctxd.Client) -> None:
    client.write("agent:/it/explain/otters.md", "Sea otters hold hands while sleeping.\n")
    scope = {"mode": "bm25", "path_prefixes": ["agent:/it/explain"]}
    deadline = time.monotonic() + 10
    while not client.search("sleeping otters", **scope).results and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not client.search("sleeping otters", **scope).results[0].HasField("explanation")
    r = client.search("sleeping otters", **scope, proximity=True, explain=True).results[0]
    x = r.explanation
    assert [(leg.leg, leg.rank) for leg in x.legs] == [(search_pb2.SEARCH_LEG_BM25, 1), (search_pb2.SEARCH_LEG_SUBSTRING, 1)]
    assert x.rrf_k == 60 and x.fused_max == 2 / 61
    assert [f.name for f in x.factors] == ["proximity", "recency"]
    assert list(x.matched_terms) == ["sleep", "otter"]
    # The score is fused / fused_max times the factors.
    score = x.fused / x.fused_max
    for f in x.factors:
        score *= f.factor
    assert abs(score - r.score) < 1e-12


def _items(events) -> list:
    """The item results of an ingest stream."""
    return [e.item for e in events if e.WhichOneof("event") == "item"]


def test_search_proximity_and_recency(client: ctxd.Client) -> None:
    # BM25 prefers the shorter note, where the words stand apart; the
    # proximity rerank the one holding them together.
    client.write("agent:/it/prox/scattered.md", "heat flows slowly outward before transfer\n")
    client.write("agent:/it/prox/tight.md", "heat transfer matters in pipes, vessels, engines, boilers, radiators and turbines\n")
    scope = {"mode": "bm25", "path_prefixes": ["agent:/it/prox"]}

    def refs(**kw: object) -> list:
        return [x.ref for x in client.search("heat transfer", **scope, **kw).results]

    deadline = time.monotonic() + 10
    while len(refs()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert refs(proximity=False) == ["agent:/it/prox/scattered.md", "agent:/it/prox/tight.md"]
    assert refs(proximity=True) == ["agent:/it/prox/tight.md", "agent:/it/prox/scattered.md"]
    # Nothing here is a session event: recency changes no score.
    on = client.search("heat transfer", **scope, recency=True)
    off = client.search("heat transfer", **scope, recency=False)
    assert [(x.ref, x.score) for x in on.results] == [(x.ref, x.score) for x in off.results]
