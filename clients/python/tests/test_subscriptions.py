"""Standing queries from Python: the async iterator of pushes, resuming with
a token, and durable subscriptions, against the real daemon."""

from __future__ import annotations

import asyncio
import time
import uuid

import ctxd
from conftest import Daemon
from ctxd.v1 import subscription_pb2
from test_async import run


def test_async_subscribe_resume(daemon: Daemon) -> None:
    word = "zq" + uuid.uuid4().hex[:8]  # a term only this test writes

    async def body(c: ctxd.AsyncClient) -> None:
        stream = c.subscribe(f"{word} heron", mode="bm25")
        events = stream.__aiter__()
        ready = await events.__anext__()
        assert ready.WhichOneof("event") == "ready" and ready.ready.resume_token
        await c.write(f"agent:/py-sub/{word}-other.md", f"{word} only", on_conflict="overwrite")  # one term: no push
        await c.write(f"agent:/py-sub/{word}-a.md", f"A {word} heron.", on_conflict="overwrite")
        first = await asyncio.wait_for(events.__anext__(), 30)
        assert first.match.result.ref == f"agent:/py-sub/{word}-a.md"
        assert first.match.change.kind == subscription_pb2.CHANGE_KIND_WRITE
        await events.aclose()  # the stream drops

        await c.write(f"agent:/py-sub/{word}-b.md", f"Another {word} heron.", on_conflict="overwrite")
        resumed = c.subscribe(f"{word} heron", resume_token=first.match.resume_token).__aiter__()
        assert (await resumed.__anext__()).WhichOneof("event") == "ready"
        missed = await asyncio.wait_for(resumed.__anext__(), 30)
        assert missed.match.result.ref == f"agent:/py-sub/{word}-b.md"
        await resumed.aclose()

    run(daemon, body)


def test_durable_subscription(daemon: Daemon) -> None:
    word = "zq" + uuid.uuid4().hex[:8]
    name = "py-" + word
    with daemon.client() as c:
        sub = c.create_subscription(name, f"{word} kingfisher")
        assert sub.name == name and sub.resource_uri == f"ctxd-subscription://{name}"
        assert name in [s.name for s in c.list_subscriptions()]
        c.write(f"agent:/py-sub/{word}.md", f"The {word} kingfisher dives.", on_conflict="overwrite")
        for _ in range(600):
            peeked = c.read_subscription(name, peek=True)
            if peeked.matches:
                break
            time.sleep(0.05)
        got = c.read_subscription(name)
        assert [m.result.ref for m in got.matches] == [f"agent:/py-sub/{word}.md"] and got.remaining == 0
        assert not c.read_subscription(name).matches
        assert c.delete_subscription(name).name == name
        try:
            c.read_subscription(name)
        except ctxd.NotFoundError as e:
            assert e.hint
        else:
            raise AssertionError("read of a deleted subscription succeeded")
