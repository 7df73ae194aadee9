"""An asyncio client for the ctxd daemon, on ``grpc.aio``."""

from __future__ import annotations

import time
from typing import Any, AsyncIterator, Iterable, List, Optional, Sequence, Tuple, TypeVar

import grpc
import grpc.aio

from ctxd._api import (
    DEFAULT_TIMEOUT,
    WriteItemLike,
    _Api,
    _batches,
    _Call,
    _call_error,
    _call_metadata,
    _channel_options,
    _target,
)
from ctxd._context import _ContextApi
from ctxd._sessions import _SessionsApi
from ctxd._watches import _WatchesApi
from ctxd._subscriptions import _SubscriptionsApi
from ctxd.v1 import vfs_pb2

__all__ = ["AsyncClient"]

T = TypeVar("T")


class _MetadataInterceptor(
    grpc.aio.UnaryUnaryClientInterceptor, grpc.aio.UnaryStreamClientInterceptor
):
    """Adds fixed metadata (the bearer token) to every call on the channel."""

    def __init__(self, metadata: Sequence[Tuple[str, str]]) -> None:
        self._metadata = list(metadata)

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        return grpc.aio.ClientCallDetails(
            method=details.method,
            timeout=details.timeout,
            metadata=grpc.aio.Metadata(*(details.metadata or ()), *self._metadata),
            credentials=details.credentials,
            wait_for_ready=details.wait_for_ready,
        )

    async def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await continuation(self._details(client_call_details), request)

    async def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await continuation(self._details(client_call_details), request)


class AsyncClient(_Api, _ContextApi, _SessionsApi, _WatchesApi, _SubscriptionsApi):
    """A connection to a ctxd daemon for asyncio code, with the methods and
    options of :class:`ctxd.Client`: unary methods are coroutines, and the
    streams (``add``, ``refresh``, ``reembed``) async iterators. Failures
    raise the same :class:`ctxd.CtxdError` subclasses.

    Create it inside a running event loop; use it as an async context
    manager, or await :meth:`close`::

        async with ctxd.AsyncClient() as c:
            await c.write("agent:/notes/a.md", "hi\\n")
            print((await c.read("agent:/notes/a.md")).content)
            async for event in c.add(["docs/"]):
                print(event)

    Leaving an ``async for`` over a stream early (``break``) closes the
    stream when the iterator is garbage-collected; wrap it in
    ``contextlib.aclosing`` to cancel the call at once.
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
        md = _call_metadata(token, metadata)
        self.channel: grpc.aio.Channel = grpc.aio.insecure_channel(
            self.target,
            options=_channel_options(options),
            interceptors=[_MetadataInterceptor(md)] if md else None,
        )
        self._set_stubs(self.channel)

    # ---- lifecycle ----

    async def close(self) -> None:
        """Closes the channel, cancelling the calls still running on it."""
        await self.channel.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncClient(target={self.target!r})"

    # ---- bulk ----

    async def write_batches(
        self, items: Iterable[WriteItemLike], batch_size: int = 256
    ) -> List[vfs_pb2.WriteResponse]:
        """:meth:`ctxd.Client.write_batches`: ``write_batch`` per batch of at
        most ``batch_size`` items, one after the other. Each batch is atomic,
        the whole is not."""
        results: List[vfs_pb2.WriteResponse] = []
        for batch in _batches(items, batch_size):
            results.extend(await self.write_batch(batch))
        return results

    # ---- how calls are made ----

    async def _invoke(self, call: _Call[T]) -> T:
        timeout, started = self._timeout(call), time.monotonic()
        try:
            response = await self._stub_method(call)(call.request, timeout=timeout)
        except grpc.RpcError as e:  # grpc.aio.AioRpcError is one
            raise _call_error(e, timeout, started) from e
        return call.shape(response)

    async def _invoke_stream(self, call: _Call[T]) -> AsyncIterator[T]:
        timeout, started = self._timeout(call), time.monotonic()
        stream = self._stub_method(call)(call.request, timeout=timeout)
        try:
            async for event in stream:
                yield call.shape(event)
        except grpc.RpcError as e:
            raise _call_error(e, timeout, started) from e
        finally:
            stream.cancel()  # a no-op once the stream ended; stops it when closed early
