"""Unit tests of error decoding and token metadata, against an in-process fake
server (no daemon needed)."""

from __future__ import annotations

from concurrent import futures
from typing import Iterator, List, Tuple

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import status_pb2
from grpc_status import rpc_status

import ctxd
from ctxd.v1 import errors_pb2, vfs_pb2, vfs_pb2_grpc


def _abort(context: grpc.ServicerContext, code: grpc.StatusCode, msg: str,
           detail: errors_pb2.ErrorDetail | None) -> None:
    st = status_pb2.Status(code=code.value[0], message=msg)
    if detail is not None:
        a = any_pb2.Any()
        a.Pack(detail)
        st.details.append(a)
    context.abort_with_status(rpc_status.to_status(st))


class FakeVfs(vfs_pb2_grpc.VfsServiceServicer):
    def __init__(self) -> None:
        self.metadata: List[Tuple[str, str]] = []

    def Read(self, request, context):
        self.metadata = list(context.invocation_metadata())
        if request.ref == "agent:/notes/x.md":
            _abort(context, grpc.StatusCode.NOT_FOUND, "no item at agent:/notes/x.md",
                   errors_pb2.ErrorDetail(
                       type=errors_pb2.ERROR_TYPE_NOT_FOUND,
                       next_action_hint="Nearby items under agent:/notes: agent:/notes/a.md.",
                       ref="agent:/notes/x.md",
                       nearby_refs=["agent:/notes/a.md"]))
        if request.ref == "patch":
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "bad patch",
                   errors_pb2.ErrorDetail(type=errors_pb2.ERROR_TYPE_INVALID_PATCH))
        if request.ref == "future":
            _abort(context, grpc.StatusCode.FAILED_PRECONDITION, "new kind",
                   errors_pb2.ErrorDetail(type=999, next_action_hint="h"))
        if request.ref == "plain":
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no detail here")
        if request.ref == "plain-nf":
            context.abort(grpc.StatusCode.NOT_FOUND, "no detail here")
        return vfs_pb2.ReadResponse(content="ok:" + request.ref)


@pytest.fixture(scope="module")
def fake() -> Iterator[Tuple[FakeVfs, str]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    svc = FakeVfs()
    vfs_pb2_grpc.add_VfsServiceServicer_to_server(svc, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield svc, f"127.0.0.1:{port}"
    server.stop(None)


def test_not_found_detail_is_decoded(fake) -> None:
    _, target = fake
    with ctxd.Client(target=target) as c:
        with pytest.raises(ctxd.NotFoundError) as ei:
            c.read("agent:/notes/x.md")
    e = ei.value
    assert e.code == grpc.StatusCode.NOT_FOUND
    assert e.type == "NOT_FOUND"
    assert e.message == "no item at agent:/notes/x.md"
    assert e.hint == "Nearby items under agent:/notes: agent:/notes/a.md."
    assert e.ref == "agent:/notes/x.md"
    assert e.nearby == ["agent:/notes/a.md"]
    assert isinstance(e.detail, errors_pb2.ErrorDetail)


def test_type_wins_over_code(fake) -> None:
    _, target = fake
    with ctxd.Client(target=target) as c:
        with pytest.raises(ctxd.InvalidPatchError) as ei:
            c.read("patch")
    assert not isinstance(ei.value, ctxd.InvalidArgumentError)
    assert ei.value.type == "INVALID_PATCH"
    assert ei.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_unknown_type_and_missing_detail(fake) -> None:
    _, target = fake
    with ctxd.Client(target=target) as c:
        with pytest.raises(ctxd.CtxdError) as ei:
            c.read("future")
        assert type(ei.value) is ctxd.CtxdError
        assert ei.value.type == "UNKNOWN_999"
        assert ei.value.hint == "h"

        with pytest.raises(ctxd.CtxdError) as ei:
            c.read("plain")
        assert type(ei.value) is ctxd.CtxdError
        assert ei.value.type == "FAILED_PRECONDITION"
        assert ei.value.message == "no detail here"
        assert ei.value.detail is None and ei.value.hint == "" and ei.value.nearby == []

        with pytest.raises(ctxd.NotFoundError) as ei:
            c.read("plain-nf")
        assert ei.value.type == "NOT_FOUND"


def test_token_is_sent_as_bearer(fake) -> None:
    svc, target = fake
    with ctxd.Client(target=target, token="s3cret") as c:
        assert c.read("a").content == "ok:a"
        assert ("authorization", "Bearer s3cret") in svc.metadata
        # The raw stubs go through the same channel, token included.
        svc.metadata = []
        assert c.vfs.Read(vfs_pb2.ReadRequest(ref="b")).content == "ok:b"
        assert ("authorization", "Bearer s3cret") in svc.metadata
    with ctxd.Client(target=target) as c:
        c.read("a")
        assert not any(k == "authorization" for k, _ in svc.metadata)


def test_default_socket(monkeypatch) -> None:
    monkeypatch.setenv("CTXD_SOCKET", "/x/y.sock")
    assert ctxd.default_socket_path() == "/x/y.sock"
    with ctxd.Client() as c:
        assert c.target == "unix:/x/y.sock"
    monkeypatch.delenv("CTXD_SOCKET")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/7")
    assert ctxd.default_socket_path() == "/run/user/7/ctxd/ctxd.sock"
    with pytest.raises(ValueError):
        ctxd.Client(socket="/a", target="b:1")
