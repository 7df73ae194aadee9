"""WriteBatch through ctxd.Client and ctxd.AsyncClient, against the real daemon."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Iterator, Type

import grpc
import pytest

import ctxd
from conftest import Daemon, _run_daemon
from ctxd.v1 import vfs_pb2

#: limits.max_batch_items of the `small_daemon`, so that a test can go over it.
SMALL_LIMIT = 3


@pytest.fixture(scope="module")
def small_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with _run_daemon(tmp_path_factory, config=f"[limits]\nmax_batch_items = {SMALL_LIMIT}\n") as d:
        yield d


def test_write_batch_writes_every_item_in_order(client: ctxd.Client) -> None:
    base = "agent:/py-batch/ok"
    png = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0x10])
    results = client.write_batch(
        [
            (f"{base}/a.md", "# A\n\nfirst\n"),
            {"ref": f"{base}/b.md", "content": "second\n", "title": "Bee", "tags": ["y", "x", "y"]},
            (f"{base}/img.png", png),
            vfs_pb2.WriteRequest(ref=f"{base}/c.txt", content="third\n", description="as a message"),
        ]
    )

    assert [r.item.ref for r in results] == [f"{base}/a.md", f"{base}/b.md", f"{base}/img.png", f"{base}/c.txt"]
    assert all(r.created and not r.skipped for r in results)
    assert not any(r.HasField("tree") for r in results)
    assert results[0].item.content_hash == hashlib.sha256(b"# A\n\nfirst\n").hexdigest()
    assert (results[1].item.title, list(results[1].item.tags)) == ("Bee", ["x", "y"])
    assert not results[2].item.is_text and results[2].item.size_bytes == len(png)
    assert results[3].item.description == "as a message"

    assert client.read(f"{base}/a.md").content == "# A\n\nfirst\n"
    assert client.read(f"{base}/b.md").content == "second\n"
    assert client.read(f"{base}/img.png", raw=True).data == png
    assert client.read(f"{base}/c.txt").content == "third\n"


def test_write_batch_applies_items_in_order(client: ctxd.Client) -> None:
    ref = "agent:/py-batch/order/n.md"
    results = client.write_batch(
        [(ref, "old\n"), {"ref": ref, "content": "new\n", "on_conflict": "overwrite"}]
    )
    assert [(r.created, r.item.ref) for r in results] == [(True, ref), (False, ref)]
    assert client.read(ref).content == "new\n"


@pytest.mark.parametrize(
    "bad_ref, error",
    [
        ("agent:/py-batch/bad/taken.md", ctxd.PathConflictError),  # exists; on_conflict defaults to error
        ("agent:/py-batch/bad/taken.md/below.md", ctxd.NotDirectoryError),  # below an item
    ],
)
def test_write_batch_with_a_bad_item_writes_nothing(
    client: ctxd.Client, bad_ref: str, error: Type[ctxd.CtxdError]
) -> None:
    taken = "agent:/py-batch/bad/taken.md"
    client.write(taken, "kept\n", on_conflict="overwrite")
    fresh = [f"agent:/py-batch/bad/new{i}.md" for i in range(3)]

    with pytest.raises(error) as ei:
        client.write_batch([(fresh[0], "0\n"), (fresh[1], "1\n"), (bad_ref, "x\n"), (fresh[2], "2\n")])
    assert ei.value.message.startswith(f"items[2] ({bad_ref}): "), ei.value.message

    for ref in fresh:
        assert not client.exists(ref), f"{ref} was written by a failed batch"
    assert client.read(taken).content == "kept\n"


def test_write_batch_over_the_limit_is_invalid_argument(small_daemon: Daemon) -> None:
    base = "agent:/py-batch/limit"
    with small_daemon.client() as c:
        over = [(f"{base}/{i}.md", f"{i}\n") for i in range(SMALL_LIMIT + 1)]
        with pytest.raises(ctxd.InvalidArgumentError) as ei:
            c.write_batch(over)
        assert ei.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert "max_batch_items" in str(ei.value), str(ei.value)
        assert not c.exists(f"{base}/0.md")

        # At the limit the batch is taken.
        assert len(c.write_batch(over[:SMALL_LIMIT])) == SMALL_LIMIT
        assert c.read(f"{base}/2.md").content == "2\n"


def test_write_batch_names_a_malformed_item(client: ctxd.Client) -> None:
    with pytest.raises(TypeError, match=r"^items\[1\]: content must be str or bytes"):
        client.write_batch([("agent:/py-batch/m/a.md", "a\n"), ("agent:/py-batch/m/b.md", 7)])
    with pytest.raises(TypeError, match=r"^items\[0\]: .*'colour'"):
        client.write_batch([{"ref": "agent:/py-batch/m/a.md", "content": "a\n", "colour": "red"}])
    with pytest.raises(ValueError, match=r"^items\[0\]: "):
        client.write_batch([{"ref": "agent:/py-batch/m/a.md", "content": "a\n", "on_conflict": "sometimes"}])
    assert not client.exists("agent:/py-batch/m/a.md")


def test_write_batches_splits_into_atomic_batches(small_daemon: Daemon) -> None:
    base = "agent:/py-batch/split"
    with small_daemon.client() as c:
        # 7 items are over the daemon's limit of 3 in one batch, not in
        # batches of at most 3; a generator works as well as a list.
        results = c.write_batches(((f"{base}/{i}.md", f"{i}\n") for i in range(7)), batch_size=SMALL_LIMIT)
        assert [r.item.ref for r in results] == [f"{base}/{i}.md" for i in range(7)]
        assert all(r.created for r in results)
        assert c.read(f"{base}/6.md").content == "6\n"

        # Each batch is atomic, the whole is not: the batch before the
        # failing one stays written, the failing one and those after are not.
        items = [(f"{base}/more{i}.md", f"{i}\n") for i in range(5)]
        items[3] = (f"{base}/0.md", "taken\n")
        with pytest.raises(ctxd.PathConflictError) as ei:
            c.write_batches(items, batch_size=2)
        assert ei.value.message.startswith(f"items[1] ({base}/0.md): "), ei.value.message
        assert [c.exists(f"{base}/more{i}.md") for i in (0, 1, 2, 4)] == [True, True, False, False]
        assert c.read(f"{base}/0.md").content == "0\n"

        with pytest.raises(ValueError, match="batch_size"):
            c.write_batches(items, batch_size=0)
        assert c.write_batches([]) == []


def test_async_write_batch(daemon: Daemon) -> None:
    base = "agent:/py-batch/async"

    async def main() -> None:
        async with ctxd.AsyncClient(socket=daemon.socket, timeout=10.0) as c:
            results = await c.write_batch([(f"{base}/a.md", "a\n"), (f"{base}/b.bin", b"\x00\x01")])
            assert [(r.item.ref, r.created) for r in results] == [(f"{base}/a.md", True), (f"{base}/b.bin", True)]
            assert (await c.read(f"{base}/b.bin", raw=True)).data == b"\x00\x01"

            results = await c.write_batches([(f"{base}/{i}.md", f"{i}\n") for i in range(5)], batch_size=2)
            assert [r.item.ref for r in results] == [f"{base}/{i}.md" for i in range(5)]
            assert (await c.read(f"{base}/4.md")).content == "4\n"

            with pytest.raises(ctxd.PathConflictError) as ei:
                await c.write_batch([(f"{base}/c.md", "c\n"), (f"{base}/a.md", "again\n")])
            assert ei.value.message.startswith(f"items[1] ({base}/a.md): ")
            assert not await c.exists(f"{base}/c.md")

    asyncio.run(main())
