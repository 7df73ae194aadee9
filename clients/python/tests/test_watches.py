"""Watches against the real daemon: add, list, follow an edit, remove."""

from __future__ import annotations

import asyncio
import time
from typing import Callable

import pytest

import ctxd
from conftest import Daemon
from ctxd.v1 import watch_pb2


def _wait(what: str, cond: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 20
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"not within 20s: {what}")
        time.sleep(0.02)


def test_watch_add_list_follow_remove(client: ctxd.Client, tmp_path_factory: pytest.TempPathFactory) -> None:
    tree = tmp_path_factory.mktemp("watched")
    (tree / "heron.md").write_text("# Heron\n\nA grey heron fishes the shallows.\n")

    resp = client.add_watch(tree, debounce_ms=50, tags=["birds"])
    w = resp.watch
    assert not resp.existed
    assert w.path == str(tree)
    assert w.status.mode == watch_pb2.WATCH_MODE_EVENTS
    assert (w.status.files, w.status.last_reconcile.added) == (1, 1)
    # AddWatch answers once the tree is searchable.
    assert [r.ref for r in client.search("grey heron", path_prefixes=[f"disk:{tree}"]).results] == [f"disk:{tree}/heron.md"]
    assert client.add_watch(tree).existed

    (tree / "heron.md").write_text("# Heron\n\nA grey heron swallows an eel.\n")
    _wait("the edit searchable", lambda: len(client.search("swallows eel", path_prefixes=[f"disk:{tree}"]).results) == 1)

    (listed,) = [x for x in client.list_watches() if x.id == w.id]
    assert listed.status.last_event_at.seconds > 0
    assert list(listed.tags) == ["birds"]
    assert w.id in [x.id for x in client.status().watches]

    removed = client.remove_watch(w.id)
    assert removed.path == str(tree)
    assert w.id not in [x.id for x in client.list_watches()]
    assert client.exists(f"disk:{tree}/heron.md")  # items are kept

    with pytest.raises(ctxd.NotFoundError) as ei:
        client.remove_watch(w.id)
    assert "watch list" in ei.value.hint


def test_watch_add_refuses_a_file(client: ctxd.Client, tmp_path_factory: pytest.TempPathFactory) -> None:
    f = tmp_path_factory.mktemp("notadir") / "f.md"
    f.write_text("x")
    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.add_watch(f)
    assert "directory" in ei.value.hint


def test_async_watches(daemon: Daemon, tmp_path_factory: pytest.TempPathFactory) -> None:
    tree = tmp_path_factory.mktemp("async-watched")
    (tree / "ibis.md").write_text("# Ibis\n\nThe sacred ibis.\n")

    async def main() -> None:
        async with ctxd.AsyncClient(socket=daemon.socket, timeout=10) as c:
            resp = await c.add_watch(tree)
            assert resp.watch.status.files == 1
            assert resp.watch.id in [x.id for x in await c.list_watches()]
            assert (await c.remove_watch(str(tree))).id == resp.watch.id

    asyncio.run(main())
