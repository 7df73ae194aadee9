"""A synchronous client for the ctxd daemon."""

from __future__ import annotations

import time
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple, TypeVar

import grpc

from ctxd._api import (
    DEFAULT_TIMEOUT,
    OnConflictLike,
    PatchLike,
    WriteItemLike,
    _Api,
    _batches,
    _Call,
    _call_error,
    _call_metadata,
    _channel_options,
    _target,
    default_socket_path,
)
from ctxd._context import _ContextApi
from ctxd._sessions import _SessionsApi
from ctxd._watches import _WatchesApi
from ctxd._subscriptions import _SubscriptionsApi
from ctxd.v1 import vfs_pb2

__all__ = ["Client", "default_socket_path", "PatchLike", "OnConflictLike", "WriteItemLike"]

T = TypeVar("T")


class _MetadataInterceptor(
    grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor
):
    """Adds fixed metadata (the bearer token) to every call on the channel."""

    def __init__(self, metadata: Sequence[Tuple[str, str]]) -> None:
        self._metadata = list(metadata)

    def _details(self, details: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        md = list(details.metadata or []) + self._metadata
        return details._replace(metadata=md)  # type: ignore[attr-defined, no-any-return]

    def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return continuation(self._details(client_call_details), request)


class Client(_Api, _ContextApi, _SessionsApi, _WatchesApi, _SubscriptionsApi):
    """A connection to a ctxd daemon.

    With no arguments it connects to the unix socket at
    :func:`default_socket_path`. ``target`` (``"127.0.0.1:7079"``, the daemon's
    ``--grpc-tcp`` address) connects over TCP instead; the daemon requires a
    ``token`` there (default ``$CTXD_TOKEN``; on the socket too when the daemon
    sets ``socket_auth``), sent as ``authorization: Bearer <token>``. ``timeout`` is
    the deadline in seconds for each unary call (``None`` for none).
    ``metadata`` is sent with every call, for example
    ``[("ctxd-agent", "researcher")]`` to act as an agent of that name;
    ``options`` are grpc channel options.

    Methods return the generated response messages (``ctxd.v1.*_pb2``), or a
    plain value where that is all the response holds (``exists`` -> bool,
    ``wc`` -> int, ``list_drives``, ``write_batch`` and ``list_sessions`` -> list,
    ``digest_session`` -> the digest, ``tools`` -> list of dicts,
    ``call_tool`` -> :class:`ctxd.ToolResult`). Failures raise
    :class:`ctxd.CtxdError` subclasses. The raw stubs are ``vfs``,
    ``search_stub``, ``ingest``, ``admin``, ``context``, ``tools_stub``,
    ``sessions`` and ``watches``.
    :class:`ctxd.AsyncClient` has the same methods for asyncio.

    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        socket: Optional[str] = None,
        target: Optional[str] = None,
        token: Optional[str] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        *,
        options: Optional[Sequence[Tuple[str, Any]]] = None,
        metadata: Optional[Sequence[Tuple[str, str]]] = None,
    ) -> None:
        self.target = _target(socket, target)
        self.timeout = timeout
        channel = grpc.insecure_channel(self.target, options=_channel_options(options))
        self._base_channel = channel
        md = _call_metadata(token, metadata)
        if md:
            channel = grpc.intercept_channel(channel, _MetadataInterceptor(md))
        self.channel: grpc.Channel = channel
        self._set_stubs(channel)

    # ---- lifecycle ----

    def close(self) -> None:
        """Closes the channel."""
        self._base_channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(target={self.target!r})"

    # ---- bulk ----

    def write_batches(self, items: Iterable[WriteItemLike], batch_size: int = 256) -> List[vfs_pb2.WriteResponse]:
        """Writes ``items`` (any iterable, consumed lazily) with
        :meth:`write_batch` in batches of at most ``batch_size`` and returns
        all their results in order. Each batch is atomic, the whole is not:
        when one fails, the batches before it stay written and the error
        names the item by its index within its batch and its ref."""
        results: List[vfs_pb2.WriteResponse] = []
        for batch in _batches(items, batch_size):
            results.extend(self.write_batch(batch))
        return results

    # ---- how calls are made ----

    def _invoke(self, call: _Call[T]) -> T:
        timeout, started = self._timeout(call), time.monotonic()
        try:
            response = self._stub_method(call)(call.request, timeout=timeout)
        except grpc.RpcError as e:
            raise _call_error(e, timeout, started) from e
        return call.shape(response)

    def _invoke_stream(self, call: _Call[T]) -> Iterator[T]:
        timeout, started = self._timeout(call), time.monotonic()
        stream = self._stub_method(call)(call.request, timeout=timeout)
        try:
            for event in stream:
                yield call.shape(event)
        except grpc.RpcError as e:
            raise _call_error(e, timeout, started) from e
        finally:
            stream.cancel()  # a no-op once the stream ended; stops it when closed early
