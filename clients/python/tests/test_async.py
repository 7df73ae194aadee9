"""Integration tests of ctxd.AsyncClient (grpc.aio) against the real daemon."""

from __future__ import annotations

import asyncio
import http.server
import threading
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator, List, TypeVar

import grpc
import pytest

import ctxd
from conftest import AGENT_TOKEN, Daemon, _run_daemon
from ctxd.v1 import ingest_pb2

T = TypeVar("T")


def run(daemon: Daemon, body: Callable[[ctxd.AsyncClient], Awaitable[T]], **kwargs: Any) -> T:
    """Runs body with an AsyncClient on the daemon's socket, in a fresh event loop."""

    async def main() -> T:
        async with ctxd.AsyncClient(socket=daemon.socket, **{"timeout": 10.0, **kwargs}) as c:
            return await body(c)

    return asyncio.run(main())


def test_write_read_edit_search(daemon: Daemon) -> None:
    ref = "agent:/py-async/kiln.md"

    async def body(c: ctxd.AsyncClient) -> None:
        w = await c.write(ref, "# Kiln\n\nA solar kiln dries oak in six weeks.\n", on_conflict="overwrite")
        assert w.item.ref == ref and "kiln.md" in w.tree.rendered
        r = await c.read(ref, offset=2)
        assert r.content == "A solar kiln dries oak in six weeks.\n" and r.start_line == 3
        e = await c.edit(ref, [(3, 3, "A solar kiln dries walnut in eight weeks.")])
        assert (e.lines_before, e.lines_after) == (3, 3)
        assert "walnut" in (await c.read(ref)).content
        assert await c.exists(ref) is True and await c.wc(ref) == 3
        assert "agent" in [d.name for d in await c.list_drives()]
        # Several calls at once on one channel, as asyncio code makes them.
        infos = await asyncio.gather(*(c.info(ref) for _ in range(8)))
        assert {i.item.ref for i in infos} == {ref}
        # The index applies writes in the background, within milliseconds.
        for _ in range(200):
            found = [x.ref for x in (await c.search("walnut kiln", mode="bm25")).results]
            if ref in found:
                break
            await asyncio.sleep(0.05)
        assert found[:1] == [ref]
        assert [rev.op for rev in await c.history(ref)][:1] == ["edit"]

    run(daemon, body)


def test_not_found_is_typed_with_hint(daemon: Daemon) -> None:
    async def body(c: ctxd.AsyncClient) -> None:
        await c.write("agent:/py-async/nf/there.md", "here\n", on_conflict="overwrite")
        with pytest.raises(ctxd.NotFoundError) as ei:
            await c.read("agent:/py-async/nf/nope.md")
        e = ei.value
        assert e.type == "NOT_FOUND" and e.code == grpc.StatusCode.NOT_FOUND
        assert e.ref == "agent:/py-async/nf/nope.md"
        assert "agent:/py-async/nf/there.md" in e.nearby
        assert "agent:/py-async/nf/there.md" in e.hint
        assert isinstance(e.__cause__, grpc.aio.AioRpcError)
        with pytest.raises(ctxd.PathConflictError):
            await c.write("agent:/py-async/nf/there.md", "again\n")

    run(daemon, body)


def test_streams_are_async_iterators(daemon: Daemon, tmp_path_factory: pytest.TempPathFactory) -> None:
    tree = tmp_path_factory.mktemp("async-tree")
    (tree / "a.md").write_text("# A\n\nfirst\n")
    (tree / "b.md").write_text("# B\n\nsecond\n")

    async def body(c: ctxd.AsyncClient) -> None:
        events = [ev async for ev in c.add(tree)]
        assert events[-1].WhichOneof("event") == "summary"
        assert (events[-1].summary.added, events[-1].summary.failed) == (2, 0)
        added = sorted(ev.item.ref for ev in events if ev.WhichOneof("event") == "item")
        assert added == [f"disk:{tree}/a.md", f"disk:{tree}/b.md"]

        (tree / "b.md").write_text("# B\n\nchanged\n")
        events = [ev async for ev in c.refresh([f"disk:{tree}"])]
        s = events[-1].summary
        assert (s.updated, s.unchanged, s.missing) == (1, 1, 0)
        assert (await c.read(f"disk:{tree}/b.md")).content.endswith("changed\n")

        # A stream failing before its first event raises the typed error
        # from the iteration.
        with pytest.raises(ctxd.InvalidArgumentError):
            async for _ in c.add([]):
                pass

    run(daemon, body)


def test_token_and_metadata(agent_daemon: Daemon) -> None:
    async def body() -> None:
        async with ctxd.AsyncClient(socket=agent_daemon.socket) as owner:
            await owner.init_context()
        async with ctxd.AsyncClient(target=agent_daemon.tcp, token=AGENT_TOKEN, timeout=10) as agent:
            with pytest.raises(ctxd.ReadOnlyError) as ei:
                await agent.update_context("self:/soul.md", "I obey no one.\n")
            assert ei.value.type == "READ_ONLY" and "self:/beliefs.md" in ei.value.hint
            await agent.update_context("self:/beliefs.md", "- async agents exist\n")
            assert (await agent.history("self:/beliefs.md"))[0].actor == "harness"
        async with ctxd.AsyncClient(target=agent_daemon.tcp, timeout=10) as anonymous:
            with pytest.raises(ctxd.UnauthenticatedError):
                await anonymous.exists("self:/soul.md")
        # Extra metadata goes with every call: here the owner acts as an agent.
        async with ctxd.AsyncClient(socket=agent_daemon.socket, metadata=[("ctxd-agent", "py-async")]) as c:
            await c.write("agent:/py-async/md.md", "by an agent\n", on_conflict="overwrite")
            assert (await c.history("agent:/py-async/md.md"))[0].actor == "py-async"
            with pytest.raises(ctxd.ReadOnlyError):
                await c.update_context("self:/soul.md", "I obey no one.\n")

    asyncio.run(body())


class _Hanging(http.server.BaseHTTPRequestHandler):
    """Answers nothing until the client goes away, then records that it did."""

    started = threading.Event()
    abandoned = threading.Event()

    def do_GET(self) -> None:
        type(self).started.set()
        self.connection.settimeout(30)
        try:
            while self.connection.recv(1):
                pass
        except OSError:
            return
        type(self).abandoned.set()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def hanging_url() -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hanging)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/slow"
    srv.shutdown()


@pytest.fixture(scope="module")
def fetching_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon that may fetch URLs on loopback, like the hanging server."""
    with _run_daemon(tmp_path_factory, ["--allow-private-network"]) as d:
        yield d


def _wait(event: threading.Event, what: str) -> None:
    if not event.wait(10):
        pytest.fail(f"the daemon's fetch was never {what}")


def test_deadline_is_honoured(fetching_daemon: Daemon, hanging_url: str) -> None:
    # A stream's timeout: the daemon stops fetching when it passes.
    _Hanging.started.clear()
    _Hanging.abandoned.clear()

    async def stream(c: ctxd.AsyncClient) -> List[ingest_pb2.AddResponse]:
        return [ev async for ev in c.add(hanging_url, timeout=0.5)]

    with pytest.raises(ctxd.DeadlineExceededError) as ei:
        run(fetching_daemon, stream)
    assert ei.value.type == "DEADLINE_EXCEEDED" and ei.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    _wait(_Hanging.started, "started")
    _wait(_Hanging.abandoned, "abandoned")

    # The client's timeout bounds unary calls, a tool's too.
    _Hanging.started.clear()
    _Hanging.abandoned.clear()

    async def tool(c: ctxd.AsyncClient) -> ctxd.ToolResult:
        return await c.call_tool("context_add", {"sources": [hanging_url]})

    with pytest.raises(ctxd.DeadlineExceededError):
        run(fetching_daemon, tool, timeout=0.5)
    _wait(_Hanging.started, "started")
    _wait(_Hanging.abandoned, "abandoned")


def test_unreachable_socket_is_unavailable(tmp_path: Path) -> None:
    async def body() -> None:
        async with ctxd.AsyncClient(socket=str(tmp_path / "nobody.sock"), timeout=5) as c:
            with pytest.raises(ctxd.UnavailableError):
                await c.exists("/x")

    asyncio.run(body())


def test_same_methods_as_the_sync_client() -> None:
    public = lambda cls: {n for n in dir(cls) if not n.startswith("_")}  # noqa: E731
    assert public(ctxd.AsyncClient) == public(ctxd.Client)
    for name in ("read", "add", "call_tool", "tools"):
        assert getattr(ctxd.AsyncClient, name).__doc__ == getattr(ctxd.Client, name).__doc__


def test_socket_auth_token_from_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a socket_auth daemon both clients take the token from CTXD_TOKEN, as the CLI does."""
    secret = "socket-auth-test-token-not-a-secret"
    token_file = tmp_path_factory.mktemp("ctxd-socket-auth") / "token"
    token_file.write_text(secret + "\n")
    monkeypatch.setenv("CTXD_TOKEN", secret)
    with _run_daemon(tmp_path_factory, ["--socket-auth", "--token-file", str(token_file)]) as d:
        with ctxd.Client(socket=d.socket) as c:
            assert c.exists("agent:/nothing-here.md") is False
        assert run(d, lambda c: c.exists("agent:/nothing-here.md")) is False
        monkeypatch.delenv("CTXD_TOKEN")
        with ctxd.Client(socket=d.socket) as c:
            with pytest.raises(ctxd.UnauthenticatedError) as e:
                c.exists("agent:/nothing-here.md")
            assert "CTXD_TOKEN" in e.value.hint
