"""What :class:`ctxd.Client` and :class:`ctxd.AsyncClient` share: every API
method, written once.

A method here builds its request and returns a :class:`_Call`: which stub
method takes the request and how to shape the response. The decorators turn
it into a method of the client that makes the call, and the client decides
how: ``Client`` blocks and returns the value (streams: an iterator),
``AsyncClient`` returns an awaitable (streams: an async iterator).
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import inspect
import itertools
import json
import os
import time
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Concatenate,
    Dict,
    Generic,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    ParamSpec,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    cast,
    overload,
)

import grpc
from google.protobuf import timestamp_pb2
from google.protobuf.message import Message

from ctxd.errors import CancelledError, CtxdError, DeadlineExceededError, from_rpc_error

from ctxd.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    context_pb2_grpc,
    ingest_pb2,
    ingest_pb2_grpc,
    search_pb2,
    search_pb2_grpc,
    session_pb2_grpc,
    subscription_pb2_grpc,
    tools_pb2,
    tools_pb2_grpc,
    types_pb2,
    vfs_pb2,
    vfs_pb2_grpc,
    watch_pb2_grpc,
)

if TYPE_CHECKING:
    from ctxd.aio import AsyncClient
    from ctxd.client import Client

__all__ = [
    "PatchLike",
    "WriteItemLike",
    "OnConflictLike",
    "SearchModeLike",
    "GroupByLike",
    "TimeLike",
    "ToolResult",
    "default_socket_path",
]

#: The default deadline of a unary call, in seconds.
DEFAULT_TIMEOUT = 30.0

# A write_batch item: a message, a (ref, content) tuple, or a mapping of
# write's arguments.
WriteItemLike = Union[vfs_pb2.WriteRequest, Tuple[str, Union[str, bytes]], Mapping[str, Any]]
# A patch as a message, a (start_line, end_line, content) tuple, or a mapping
# with those keys.
PatchLike = Union[vfs_pb2.Patch, Tuple[int, int, str], Mapping[str, Any]]
# "error", "overwrite", "skip" (any case), a types_pb2.OnConflict value, or None.
OnConflictLike = Union[str, int, None]
# "hybrid", "bm25", "vector" (any case), a search_pb2.SearchMode value, or None.
SearchModeLike = Union[str, int, None]
# "chunk", "item" (any case), a search_pb2.SearchGroupBy value, or None.
GroupByLike = Union[str, int, None]
# A timezone-aware datetime, a timedelta back from now, or None (unset).
TimeLike = Union[datetime.datetime, datetime.timedelta, None]

T = TypeVar("T")
P = ParamSpec("P")


def default_socket_path() -> str:
    """The daemon's default socket: $CTXD_SOCKET, else $XDG_RUNTIME_DIR/ctxd/ctxd.sock.

    Without XDG_RUNTIME_DIR it is $TMPDIR/ctxd-<uid>/ctxd/ctxd.sock (TMPDIR
    defaulting to /tmp), the same fallback the daemon uses.
    """
    env = os.environ.get("CTXD_SOCKET")
    if env:
        return env
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if not runtime:
        runtime = os.path.join(os.environ.get("TMPDIR") or "/tmp", f"ctxd-{os.getuid()}")
    return os.path.join(runtime, "ctxd", "ctxd.sock")


def _target(socket: Optional[str], target: Optional[str]) -> str:
    if socket and target:
        raise ValueError("pass either socket or target, not both")
    return target or "unix:" + (socket or default_socket_path())


def _channel_options(options: Optional[Sequence[Tuple[str, Any]]]) -> List[Tuple[str, Any]]:
    # The daemon enforces its own size limits, with precise errors.
    return [
        ("grpc.max_receive_message_length", -1),
        ("grpc.max_send_message_length", -1),
        *(options or []),
    ]


def _call_metadata(
    token: Optional[str], metadata: Optional[Sequence[Tuple[str, str]]]
) -> List[Tuple[str, str]]:
    md = list(metadata or [])
    token = token or os.environ.get("CTXD_TOKEN")  # as the CLI: needed on a socket_auth daemon's socket
    if token:
        md.append(("authorization", f"Bearer {token}"))
    return md


def _on_conflict(value: OnConflictLike) -> types_pb2.OnConflict:
    if value is None:
        return types_pb2.ON_CONFLICT_UNSPECIFIED
    if isinstance(value, str):
        return cast(types_pb2.OnConflict, types_pb2.OnConflict.Value("ON_CONFLICT_" + value.upper()))
    return cast(types_pb2.OnConflict, int(value))


def _search_mode(value: SearchModeLike) -> search_pb2.SearchMode:
    if value is None:
        return search_pb2.SEARCH_MODE_UNSPECIFIED
    if isinstance(value, str):
        return cast(search_pb2.SearchMode, search_pb2.SearchMode.Value("SEARCH_MODE_" + value.upper()))
    return cast(search_pb2.SearchMode, int(value))


def _group_by(value: GroupByLike) -> search_pb2.SearchGroupBy:
    if value is None:
        return search_pb2.SEARCH_GROUP_BY_UNSPECIFIED
    if isinstance(value, str):
        return cast(search_pb2.SearchGroupBy, search_pb2.SearchGroupBy.Value("SEARCH_GROUP_BY_" + value.upper()))
    return cast(search_pb2.SearchGroupBy, int(value))


def _timestamp(value: TimeLike, name: str) -> Optional[timestamp_pb2.Timestamp]:
    """The Timestamp of a time argument called name; None when unset."""
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        value = datetime.datetime.now(datetime.timezone.utc) - value
    if value.tzinfo is None:
        raise ValueError(f"{name} must be timezone-aware (e.g. datetime.now(timezone.utc))")
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(value)
    return ts


def _toggle(value: Optional[bool]) -> search_pb2.SearchToggle:
    if value is None:
        return search_pb2.SEARCH_TOGGLE_UNSPECIFIED
    return search_pb2.SEARCH_TOGGLE_ON if value else search_pb2.SEARCH_TOGGLE_OFF


def _search_filter(
    drives: Iterable[str],
    path_prefixes: Iterable[str],
    mime_types: Iterable[str],
    tags: Iterable[str],
) -> search_pb2.SearchFilter:
    return search_pb2.SearchFilter(
        drives=list(drives),
        path_prefixes=list(path_prefixes),
        mime_types=list(mime_types),
        tags=list(tags),
    )


def _patch(p: PatchLike) -> vfs_pb2.Patch:
    if isinstance(p, vfs_pb2.Patch):
        return p
    if isinstance(p, Mapping):
        return vfs_pb2.Patch(**p)
    start, end, content = p
    return vfs_pb2.Patch(start_line=start, end_line=end, content=content)


def _write_request(
    ref: str,
    content: Union[str, bytes],
    *,
    mime_type: str = "",
    title: str = "",
    description: str = "",
    tags: Iterable[str] = (),
    importance: float = 0.0,
    source_url: str = "",
    on_conflict: OnConflictLike = None,
    expected_content_hash: str = "",
    questions: Iterable[str] = (),
) -> vfs_pb2.WriteRequest:
    """The WriteRequest of write's arguments."""
    req = vfs_pb2.WriteRequest(
        ref=ref,
        mime_type=mime_type,
        title=title,
        description=description,
        tags=list(tags),
        importance=importance,
        source_url=source_url,
        on_conflict=_on_conflict(on_conflict),
        expected_content_hash=expected_content_hash,
        questions=list(questions),
    )
    if isinstance(content, str):
        req.content = content
    elif isinstance(content, (bytes, bytearray, memoryview)):
        req.data = bytes(content)
    else:
        raise TypeError(f"content must be str or bytes, not {type(content).__name__}")
    return req


def _write_item(item: WriteItemLike) -> vfs_pb2.WriteRequest:
    if isinstance(item, vfs_pb2.WriteRequest):
        return item
    if isinstance(item, Mapping):
        return _write_request(**item)
    ref, content = item
    return _write_request(ref, content)


def _batches(items: Iterable[T], size: int) -> Iterator[List[T]]:
    """items in lists of at most size (itertools.batched, from Python 3.12)."""
    if size < 1:
        raise ValueError(f"batch_size must be at least 1, got {size}")
    it = iter(items)
    while batch := list(itertools.islice(it, size)):
        yield batch


@dataclasses.dataclass(frozen=True)
class ToolResult:
    """What a tool call returned: hand ``content`` to the model as the
    tool's output, marked as an error when ``is_error`` is true.

    ``content`` is JSON text: the tool's output, or on failure
    ``{"is_error": true, "error_type": "not_found", "message": ...,
    "next_action_hint": ...}``.
    """

    content: str
    is_error: bool = False

    def json(self) -> Any:
        """``content`` decoded: a dict."""
        return json.loads(self.content)


def _same(response: Any) -> Any:
    return response


# The timeout of a _Call that takes the client's (unary calls).
_CLIENT_TIMEOUT: Any = object()


class _Call(Generic[T]):
    """One call to make: the stub attribute of the client (``"vfs"``), its
    method (``"Read"``), the request, how to shape each response message into
    the method's result, and the deadline (the client's when not given)."""

    __slots__ = ("stub", "method", "request", "shape", "timeout")

    def __init__(
        self,
        stub: str,
        method: str,
        request: Message,
        shape: Callable[[Any], T] = _same,
        timeout: Optional[float] = _CLIENT_TIMEOUT,
    ) -> None:
        self.stub = stub
        self.method = method
        self.request = request
        self.shape = shape
        self.timeout = timeout


class _method(Generic[P, T]):
    """A client method made from a request builder; subclasses say which of
    the client's _invoke methods makes the call."""

    _invoke = ""

    def __init__(self, build: Callable[Concatenate[Any, P], _Call[T]]) -> None:
        self._build = build
        functools.update_wrapper(self, build)
        # What help() and inspect show: the builder's parameters, without
        # self and without its _Call return type.
        sig = inspect.signature(build)
        self.__signature__ = sig.replace(
            parameters=list(sig.parameters.values())[1:], return_annotation=inspect.Signature.empty
        )

    def _bind(self, obj: Any) -> Callable[..., Any]:
        build, invoke = self._build, getattr(obj, self._invoke)

        def method(*args: Any, **kwargs: Any) -> Any:
            return invoke(build(obj, *args, **kwargs))

        functools.update_wrapper(method, self)
        return method

    def __call__(self, obj: Any, *args: Any, **kwargs: Any) -> Any:
        """Client.read(c, ...) is c.read(...)."""
        return self._bind(obj)(*args, **kwargs)


class _unary_method(_method[P, T]):
    """Makes a request builder a unary method: on a Client it returns the
    result, on an AsyncClient an awaitable of it."""

    _invoke = "_invoke"

    @overload
    def __get__(self, obj: None, owner: Any = None) -> _unary_method[P, T]: ...
    @overload
    def __get__(self, obj: AsyncClient, owner: Any = None) -> Callable[P, Awaitable[T]]: ...
    @overload
    def __get__(self, obj: Client, owner: Any = None) -> Callable[P, T]: ...
    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else self._bind(obj)


class _stream_method(_method[P, T]):
    """Makes a request builder a server-streaming method: on a Client it
    returns an iterator of the events, on an AsyncClient an async iterator.
    The call starts at the first step of the iteration; closing the iterator
    early cancels it."""

    _invoke = "_invoke_stream"

    @overload
    def __get__(self, obj: None, owner: Any = None) -> _stream_method[P, T]: ...
    @overload
    def __get__(self, obj: AsyncClient, owner: Any = None) -> Callable[P, AsyncIterator[T]]: ...
    @overload
    def __get__(self, obj: Client, owner: Any = None) -> Callable[P, Iterator[T]]: ...
    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else self._bind(obj)


def _call_error(err: grpc.RpcError, timeout: Optional[float], started: float) -> CtxdError:
    """from_rpc_error, except that a call the daemon reset as its deadline ran
    out is a DeadlineExceededError: grpc-go servers reset a call at its
    deadline (RST_STREAM CANCEL), and grpcio reports that as a bare CANCELLED
    when it arrives a moment before the client's own timer fires. The
    daemon's own CANCELLED errors carry an ErrorDetail and the clients never
    cancel a call they still wait on, so a bare CANCELLED once much of the
    timeout has passed is that reset."""
    e = from_rpc_error(err)
    if (
        type(e) is CancelledError
        and e.detail is None
        and timeout is not None
        and time.monotonic() - started >= timeout / 2
    ):
        return DeadlineExceededError(
            f"deadline of {timeout:g}s exceeded ({e.message})", code=grpc.StatusCode.DEADLINE_EXCEEDED
        )
    return e


class _Api:
    """The API methods of both clients. A subclass sets the stubs (on a sync
    or an asyncio channel) with _set_stubs and implements _invoke and
    _invoke_stream."""

    vfs: vfs_pb2_grpc.VfsServiceStub
    search_stub: search_pb2_grpc.SearchServiceStub
    ingest: ingest_pb2_grpc.IngestServiceStub
    admin: admin_pb2_grpc.AdminServiceStub
    context: context_pb2_grpc.ContextServiceStub
    tools_stub: tools_pb2_grpc.ToolServiceStub
    sessions: session_pb2_grpc.SessionServiceStub
    watches: watch_pb2_grpc.WatchServiceStub
    subscriptions_stub: subscription_pb2_grpc.SubscriptionServiceStub
    timeout: Optional[float]

    def _set_stubs(self, channel: Any) -> None:
        self.vfs = vfs_pb2_grpc.VfsServiceStub(channel)
        self.search_stub = search_pb2_grpc.SearchServiceStub(channel)
        self.ingest = ingest_pb2_grpc.IngestServiceStub(channel)
        self.admin = admin_pb2_grpc.AdminServiceStub(channel)
        self.context = context_pb2_grpc.ContextServiceStub(channel)
        self.tools_stub = tools_pb2_grpc.ToolServiceStub(channel)
        self.sessions = session_pb2_grpc.SessionServiceStub(channel)
        self.watches = watch_pb2_grpc.WatchServiceStub(channel)
        self.subscriptions_stub = subscription_pb2_grpc.SubscriptionServiceStub(channel)

    def _stub_method(self, call: _Call[Any]) -> Callable[..., Any]:
        """The stub method that makes call."""
        return cast(Callable[..., Any], getattr(getattr(self, call.stub), call.method))

    def _timeout(self, call: _Call[Any]) -> Optional[float]:
        return self.timeout if call.timeout is _CLIENT_TIMEOUT else call.timeout


    # ---- VfsService ----

    @_unary_method
    def list_drives(self) -> _Call[List[types_pb2.DriveInfo]]:
        """Every drive that holds items, sorted by name."""
        return _Call("vfs", "ListDrives", vfs_pb2.ListDrivesRequest(), lambda r: list(r.drives))

    @_unary_method
    def tree(
        self, ref: str = "", max_depth: int = 0, items_per_dir: int = 0
    ) -> _Call[vfs_pb2.TreeResponse]:
        """A directory (or, with no ref, every drive) as a tree; ``.rendered`` is text."""
        return _Call(
            "vfs", "Tree", vfs_pb2.TreeRequest(ref=ref, max_depth=max_depth, items_per_dir=items_per_dir)
        )

    @_unary_method
    def ls(
        self, ref: str, recursive: bool = False, limit: int = 0, page_token: str = ""
    ) -> _Call[vfs_pb2.ListResponse]:
        """One page of a directory's children (or everything below it)."""
        return _Call(
            "vfs",
            "List",
            vfs_pb2.ListRequest(
                ref=ref, recursive=recursive, limit=limit, page_token=page_token
            ),
        )

    @_unary_method
    def read(
        self, ref: str, offset: int = 0, limit: int = 0, *, raw: bool = False
    ) -> _Call[vfs_pb2.ReadResponse]:
        """An item's text (``.content``), from line ``offset`` (0-based), at most
        ``limit`` lines (0: all). With ``raw=True`` the bytes are in ``.data``."""
        return _Call(
            "vfs", "Read", vfs_pb2.ReadRequest(ref=ref, line_offset=offset, line_limit=limit, raw=raw)
        )

    @_unary_method
    def write(
        self,
        ref: str,
        content: Union[str, bytes],
        *,
        mime_type: str = "",
        title: str = "",
        description: str = "",
        tags: Iterable[str] = (),
        importance: float = 0.0,
        source_url: str = "",
        on_conflict: OnConflictLike = None,
        expected_content_hash: str = "",
        questions: Iterable[str] = (),
    ) -> _Call[vfs_pb2.WriteResponse]:
        """Creates an item, or replaces it with ``on_conflict="overwrite"``.

        ``str`` content is stored as text, ``bytes`` as a binary blob.
        ``questions`` are questions the content answers; vector search
        scores the passage that answers one by it. They replace the item's
        earlier questions (none removes them).
        """
        req = _write_request(
            ref,
            content,
            mime_type=mime_type,
            title=title,
            description=description,
            tags=tags,
            importance=importance,
            source_url=source_url,
            on_conflict=on_conflict,
            expected_content_hash=expected_content_hash,
            questions=questions,
        )
        return _Call("vfs", "Write", req)

    @_unary_method
    def write_batch(self, items: Iterable[WriteItemLike]) -> _Call[List[vfs_pb2.WriteResponse]]:
        """Writes many items in one transaction, all or none, in order (a
        later item may overwrite an earlier one); returns their results in
        that order, each without ``tree``.

        An item is a ``(ref, content)`` tuple, a dict of :meth:`write`'s
        arguments (``{"ref": ..., "content": ..., "tags": [...]}``) or a
        ``vfs_pb2.WriteRequest`` (for ``chunk_embeddings``). At most the
        daemon's ``limits.max_batch_items`` (default 1000) items, else
        :class:`ctxd.InvalidArgumentError`. When an item fails nothing is
        written and the error's message names it: ``items[2] (agent:/b.md): ...``.
        """
        reqs = []
        for i, item in enumerate(items):
            # Name the item as the daemon's errors do.
            try:
                reqs.append(_write_item(item))
            except TypeError as e:
                raise TypeError(f"items[{i}]: {e}") from e
            except ValueError as e:
                raise ValueError(f"items[{i}]: {e}") from e
        return _Call("vfs", "WriteBatch", vfs_pb2.WriteBatchRequest(items=reqs), lambda r: list(r.results))

    @_unary_method
    def edit(
        self,
        ref: str,
        patches: Iterable[PatchLike],
        *,
        expected_content_hash: str = "",
    ) -> _Call[vfs_pb2.EditResponse]:
        """Applies 1-based, inclusive line-range patches atomically.

        A patch is a ``vfs_pb2.Patch``, a ``(start_line, end_line, content)``
        tuple or a dict with those keys; ``end_line`` 0 inserts before
        ``start_line`` and empty content deletes the range.
        """
        return _Call(
            "vfs",
            "Edit",
            vfs_pb2.EditRequest(
                ref=ref,
                patches=[_patch(p) for p in patches],
                expected_content_hash=expected_content_hash,
            ),
        )

    @_unary_method
    def rm(self, ref: str, recursive: bool = False) -> _Call[vfs_pb2.DeleteResponse]:
        """Deletes an item, or with ``recursive`` a directory and all below it."""
        return _Call("vfs", "Delete", vfs_pb2.DeleteRequest(ref=ref, recursive=recursive))

    delete = rm

    @_unary_method
    def cp(
        self,
        source: str,
        destination: str,
        recursive: bool = False,
        on_conflict: OnConflictLike = None,
    ) -> _Call[vfs_pb2.CopyResponse]:
        """Copies an item, or with ``recursive`` a subtree, possibly across drives."""
        return _Call(
            "vfs",
            "Copy",
            vfs_pb2.CopyRequest(
                source_ref=source,
                destination_ref=destination,
                recursive=recursive,
                on_conflict=_on_conflict(on_conflict),
            ),
        )

    copy = cp

    @_unary_method
    def mv(
        self, source: str, destination: str, on_conflict: OnConflictLike = None
    ) -> _Call[vfs_pb2.MoveResponse]:
        """Moves an item or a subtree, possibly across drives; ids are kept."""
        return _Call(
            "vfs",
            "Move",
            vfs_pb2.MoveRequest(
                source_ref=source,
                destination_ref=destination,
                on_conflict=_on_conflict(on_conflict),
            ),
        )

    move = mv

    @_unary_method
    def info(self, ref: str) -> _Call[vfs_pb2.InfoResponse]:
        """An item's metadata, or a directory's summary."""
        return _Call("vfs", "Info", vfs_pb2.InfoRequest(ref=ref))

    @_unary_method
    def exists(self, ref: str) -> _Call[bool]:
        """Whether an item or a directory is at ``ref``."""
        return _Call("vfs", "Exists", vfs_pb2.ExistsRequest(ref=ref), lambda r: r.exists)

    @_unary_method
    def mkdir(self, ref: str) -> _Call[vfs_pb2.MakeDirResponse]:
        """Creates an explicit, empty directory (idempotent)."""
        return _Call("vfs", "MakeDir", vfs_pb2.MakeDirRequest(ref=ref))

    @_unary_method
    def du(self, ref: str) -> _Call[vfs_pb2.DirSizeResponse]:
        """Total content bytes and item count below a directory."""
        return _Call("vfs", "DirSize", vfs_pb2.DirSizeRequest(ref=ref))

    @_unary_method
    def wc(self, ref: str) -> _Call[int]:
        """The number of lines in a text item."""
        return _Call("vfs", "CountLines", vfs_pb2.CountLinesRequest(ref=ref), lambda r: r.lines)

    # ---- VfsService: history ----

    @_unary_method
    def history(self, ref: str, *, limit: int = 0, before_rev: int = 0) -> _Call[List[vfs_pb2.Revision]]:
        """An item's revisions, newest first (a deleted item's last ref works
        too). ``limit`` 0 means 50 (at most 1000); pass the last ``rev`` as ``before_rev``
        for older ones."""
        return _Call(
            "vfs",
            "History",
            vfs_pb2.HistoryRequest(ref=ref, limit=limit, before_rev=before_rev),
            lambda r: list(r.revisions),
        )

    @_unary_method
    def read_revision(self, ref: str, rev: int, *, raw: bool = False) -> _Call[vfs_pb2.ReadRevisionResponse]:
        """One revision: ``.revision`` and its ``.content`` (``.data`` with ``raw=True``)."""
        return _Call("vfs", "ReadRevision", vfs_pb2.ReadRevisionRequest(ref=ref, rev=rev, raw=raw))

    @_unary_method
    def revert(self, ref: str, rev: int) -> _Call[vfs_pb2.RevertResponse]:
        """Makes revision ``rev`` current again as a new revision; restores a
        deleted item at its ref (``.created`` is then true)."""
        return _Call("vfs", "Revert", vfs_pb2.RevertRequest(ref=ref, rev=rev))

    @_unary_method
    def deleted(self, ref: str = "", *, limit: int = 0) -> _Call[List[vfs_pb2.Revision]]:
        """Deleted items below directory ``ref`` (all when empty), newest
        first, each as its deletion revision: ``revert(r.ref, r.rev - 1)``
        restores one."""
        return _Call(
            "vfs", "ListDeleted", vfs_pb2.ListDeletedRequest(ref=ref, limit=limit), lambda r: list(r.revisions)
        )

    @_unary_method
    def log(
        self,
        *,
        actor: str = "",
        since: TimeLike = None,
        limit: int = 0,
        page_token: str = "",
    ) -> _Call[vfs_pb2.LogResponse]:
        """Revisions across the store, newest first: ``actor`` (a token name
        or "owner") filters, ``since`` is a time or a timedelta back from now.
        Pass ``next_page_token`` back as ``page_token`` for the next page."""
        req = vfs_pb2.LogRequest(actor=actor, since=_timestamp(since, "since"), limit=limit, page_token=page_token)
        return _Call("vfs", "Log", req)

    # ---- AdminService ----

    @_unary_method
    def status(self, *, disk: bool = False) -> _Call[admin_pb2.StatusResponse]:
        """A snapshot of the daemon: store, indexes, embedding model.

        ``disk=True`` also breaks disk use down by component (``disk``),
        which reads the whole store file once.
        """
        return _Call("admin", "Status", admin_pb2.StatusRequest(disk=disk))

    @_unary_method
    def prune(
        self,
        unretrieved: datetime.timedelta,
        *,
        dry_run: bool = False,
        paths: Optional[Iterable[str]] = None,
        limit: Optional[int] = None,
    ) -> _Call[admin_pb2.PruneResponse]:
        """Deletes (lists, with ``dry_run``) the items no search returned and
        nobody changed for ``unretrieved`` (a timedelta of at least a day),
        oldest activity first: never context files, items with importance
        set, sessions' records and digests, or directories. ``paths`` are
        directory refs to look under (None: the whole store); ``limit``
        (None: 1000) bounds the items, ``.more`` says more qualified. Each
        delete stays in history: ``revert(i.ref, i.delete_rev - 1)``
        restores one. Needs the admin scope."""
        if not isinstance(unretrieved, datetime.timedelta):
            raise TypeError(f"unretrieved must be a datetime.timedelta, not {type(unretrieved).__name__}")
        req = admin_pb2.PruneRequest(
            unretrieved_seconds=int(unretrieved.total_seconds()),
            dry_run=dry_run,
            path_prefixes=list(paths or ()),
            limit=limit,
        )
        return _Call("admin", "Prune", req)

    # ---- SearchService ----

    @_unary_method
    def search(
        self,
        queries: Union[str, Sequence[Union[str, Sequence[float]]]],
        *,
        mode: SearchModeLike = None,
        limit: int = 0,
        drives: Iterable[str] = (),
        path_prefixes: Iterable[str] = (),
        mime_types: Iterable[str] = (),
        tags: Iterable[str] = (),
        token_budget: int = 0,
        snippet_length: int = 0,
        max_chunks_per_item: int = 0,
        rrf_k: int = 0,
        leg_weights: Optional[Mapping[str, float]] = None,
        group_by: GroupByLike = None,
        min_score: float = 0.0,
        importance_weight: float = 0.0,
        usage_weight: float = 0.0,
        proximity: Optional[bool] = None,
        recency: Optional[bool] = None,
        explain: bool = False,
    ) -> _Call[search_pb2.SearchResponse]:
        """Runs one query or a batch; ``mode`` is "hybrid", "bm25" or "vector".

        A query is text, or a sequence of floats: a query embedding from the
        store's model. ``leg_weights`` maps "bm25", "substring" or "vector"
        to a fusion weight (0 turns the leg off). ``group_by="item"`` makes
        each result an item (``limit`` counts items) with its next best
        chunks in ``more_chunks``; ``min_score`` drops results scoring below
        it (scores are in [0, 1] and come from the legs' ranks).
        ``importance_weight`` and ``usage_weight`` (each in [0, 1], 0 = off)
        weigh items by their importance and by how often search returned
        them; see SearchRequest.importance_weight. ``proximity`` (True or
        False; None = the daemon's default) ranks chunks holding the
        query's words close together first; ``recency`` ranks fresh session
        events above stale ones (on by default); see SearchRequest.proximity
        and SearchRequest.recency. ``explain=True`` gives every result an
        ``explanation``: each leg's rank and share of the fusion, the fused
        score and its most, the factors applied after it and the query terms
        the chunk holds (see SearchExplanation).
        """
        if isinstance(queries, str):
            queries = [queries]
        legs = {
            "bm25": search_pb2.SEARCH_LEG_BM25,
            "substring": search_pb2.SEARCH_LEG_SUBSTRING,
            "vector": search_pb2.SEARCH_LEG_VECTOR,
        }
        weights = []
        for name, weight in (leg_weights or {}).items():
            if name not in legs:
                raise ValueError(f"unknown leg {name!r}; use one of {sorted(legs)}")
            weights.append(search_pb2.LegWeight(leg=legs[name], weight=weight))
        req = search_pb2.SearchRequest(
            queries=[
                search_pb2.SearchQuery(text=q) if isinstance(q, str) else search_pb2.SearchQuery(vector=list(q))
                for q in queries
            ],
            mode=_search_mode(mode),
            filter=_search_filter(drives, path_prefixes, mime_types, tags),
            limit=limit,
            token_budget=token_budget,
            snippet_length=snippet_length,
            max_chunks_per_item=max_chunks_per_item,
            rrf_k=rrf_k,
            leg_weights=weights,
            group_by=_group_by(group_by),
            min_score=min_score,
            importance_weight=importance_weight,
            usage_weight=usage_weight,
            proximity=_toggle(proximity),
            recency=_toggle(recency),
            explain=explain,
        )
        return _Call("search_stub", "Search", req)

    @_unary_method
    def find_similar(
        self,
        ref: Optional[str] = None,
        *,
        text: Optional[str] = None,
        threshold: float = 0.0,
        limit: int = 0,
        drives: Iterable[str] = (),
        path_prefixes: Iterable[str] = (),
        mime_types: Iterable[str] = (),
        tags: Iterable[str] = (),
    ) -> _Call[search_pb2.FindSimilarResponse]:
        """Finds stored items that are near-duplicates of the item at ``ref``
        (never returned itself) or of ``text`` (chunked and embedded the way a
        written item would be): give one of them.

        Each result has the best chunk pair's cosine ``similarity`` (at least
        ``threshold``; 0 means 0.9) and ``coverage``, the share of the
        target's chunks it matches (1: all of it is already stored).
        """
        if (ref is None) == (text is None):
            raise ValueError("give ref or text, not both")
        req = search_pb2.FindSimilarRequest(
            ref=ref,
            text=text,
            threshold=threshold,
            limit=limit,
            filter=_search_filter(drives, path_prefixes, mime_types, tags),
        )
        return _Call("search_stub", "FindSimilar", req)

    # ---- ToolService ----

    @_unary_method
    def tools(self, format: str = "mcp", profile: str = "core") -> _Call[List[Dict[str, Any]]]:
        """The agent tools of a profile this client's token may use, as
        JSON-ready dicts in a provider's format: ``"openai"`` (Chat
        Completions ``tools``), ``"anthropic"`` (Messages API ``tools``) or
        ``"mcp"`` (the default). ``profile`` is ``"core"`` (the default: the
        seeds' seven tools and ``remember``, within 4,000 tokens), ``"read"``
        (every tool that changes nothing) or ``"all"``; :meth:`call_tool`
        runs a tool of any profile. They are the tools of ``ctxd mcp`` and
        ``ctxd tools``: one definition, in the daemon."""
        return _Call(
            "tools_stub",
            "ListTools",
            tools_pb2.ListToolsRequest(format=format, profile=profile),
            lambda r: json.loads(r.tools_json),
        )

    @_unary_method
    def call_tool(
        self, name: str, arguments: Union[Mapping[str, Any], str, None] = None
    ) -> _Call[ToolResult]:
        """Runs the tool a model called, with its arguments: a dict, or the
        JSON text the model wrote (OpenAI's ``function.arguments``).

        A failing tool is a :class:`ToolResult` with ``is_error``, not an
        exception, so that the loop hands it to the model: an unknown tool,
        arguments that do not match its schema, and every error of the calls
        it makes (``{"error_type": "not_found", "next_action_hint": ...}``).
        Only failures of the call itself raise :class:`ctxd.CtxdError`
        (the daemon unreachable, a missing token, the deadline).
        """
        if arguments is None:
            text = ""
        elif isinstance(arguments, str):
            text = arguments
        else:
            text = json.dumps(dict(arguments))
        req = tools_pb2.CallToolRequest(name=name, arguments_json=text)
        return _Call("tools_stub", "CallTool", req, lambda r: ToolResult(r.content, r.is_error))

    # ---- IngestService (streams) ----

    @_stream_method
    def add(
        self,
        sources: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
        *,
        drive: str = "",
        on_conflict: OnConflictLike = None,
        exclude: Iterable[str] = (),
        include_hidden: bool = False,
        tags: Iterable[str] = (),
        ttl_seconds: int = 0,
        watch: bool = False,
        dedupe_threshold: float = 0.0,
        timeout: Optional[float] = None,
    ) -> _Call[ingest_pb2.AddResponse]:
        """Ingests files, trees and URLs; yields progress, item and summary events.

        Paths are made absolute against this process's working directory
        (the daemon's is another). With ``watch`` the stream goes on after the
        summary with an item event per file created, changed or removed,
        until the iterator is closed or ``timeout`` passes. With
        ``dedupe_threshold`` (e.g. 0.9) a new text source that a stored item
        already covers is skipped, its item event naming it in ``duplicate_of``.
        """
        if isinstance(sources, (str, os.PathLike)):
            sources = [sources]
        resolved = []
        for src in sources:
            src = os.fspath(src)
            resolved.append(src if src.startswith(("http://", "https://")) else os.path.abspath(src))
        req = ingest_pb2.AddRequest(
            sources=resolved,
            drive=drive,
            on_conflict=_on_conflict(on_conflict),
            exclude=list(exclude),
            include_hidden=include_hidden,
            tags=list(tags),
            ttl_seconds=ttl_seconds,
            watch=watch,
            dedupe_threshold=dedupe_threshold,
        )
        return _Call("ingest", "Add", req, timeout=timeout)

    @_stream_method
    def refresh(
        self,
        refs: Iterable[str] = (),
        *,
        all: bool = False,
        force: bool = False,
        stale_only: bool = False,
        timeout: Optional[float] = None,
    ) -> _Call[ingest_pb2.RefreshResponse]:
        """Re-reads the sources of stored items (files by size and mtime, then
        hash; URLs by conditional GET); yields events. Only changed chunks are
        embedded again; a missing source is reported, and its item kept."""
        req = ingest_pb2.RefreshRequest(refs=list(refs), all=all, force=force, stale_only=stale_only)
        return _Call("ingest", "Refresh", req, timeout=timeout)

    @_stream_method
    def reembed(
        self,
        refs: Iterable[str] = (),
        *,
        all: bool = False,
        timeout: Optional[float] = None,
    ) -> _Call[ingest_pb2.ReembedResponse]:
        """Recomputes embeddings with the current model; yields events."""
        req = ingest_pb2.ReembedRequest(refs=list(refs), all=all)
        return _Call("ingest", "Reembed", req, timeout=timeout)

