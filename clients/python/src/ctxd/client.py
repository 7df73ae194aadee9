"""A small, synchronous client for the ctxd daemon."""

from __future__ import annotations

import datetime
import os
from typing import (
    Any,
    Callable,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

import grpc

from ctxd.errors import from_rpc_error
from ctxd.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    context_pb2,
    context_pb2_grpc,
    ingest_pb2,
    ingest_pb2_grpc,
    search_pb2,
    search_pb2_grpc,
    types_pb2,
    vfs_pb2,
    vfs_pb2_grpc,
)

__all__ = ["Client", "default_socket_path", "PatchLike", "OnConflictLike"]

DEFAULT_TIMEOUT = 30.0

# A patch as a message, a (start_line, end_line, content) tuple, or a mapping
# with those keys.
PatchLike = Union[vfs_pb2.Patch, Tuple[int, int, str], Mapping[str, Any]]
# "error", "overwrite", "skip" (any case), a types_pb2.OnConflict value, or None.
OnConflictLike = Union[str, int, None]
SearchModeLike = Union[str, int, None]

T = TypeVar("T")


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


def _on_conflict(value: OnConflictLike) -> int:
    if value is None:
        return types_pb2.ON_CONFLICT_UNSPECIFIED
    if isinstance(value, str):
        return types_pb2.OnConflict.Value("ON_CONFLICT_" + value.upper())
    return int(value)


def _search_mode(value: SearchModeLike) -> int:
    if value is None:
        return search_pb2.SEARCH_MODE_UNSPECIFIED
    if isinstance(value, str):
        return search_pb2.SearchMode.Value("SEARCH_MODE_" + value.upper())
    return int(value)


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


class _MetadataInterceptor(
    grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor
):
    """Adds fixed metadata (the bearer token) to every call on the channel."""

    def __init__(self, metadata: Sequence[Tuple[str, str]]) -> None:
        self._metadata = list(metadata)

    def _details(self, details: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        md = list(details.metadata or []) + self._metadata
        return details._replace(metadata=md)  # type: ignore[attr-defined]

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)


class Client:
    """A connection to a ctxd daemon.

    With no arguments it connects to the unix socket at
    :func:`default_socket_path`. ``target`` (``"127.0.0.1:7079"``, the daemon's
    ``--grpc-tcp`` address) connects over TCP instead; the daemon requires a
    ``token`` there, sent as ``authorization: Bearer <token>``. ``timeout`` is the deadline in seconds
    for each unary call (``None`` for none).

    Methods return the generated response messages (``ctxd.v1.*_pb2``), or a
    plain value where that is all the response holds (``exists`` -> bool,
    ``wc`` -> int, ``list_drives`` -> list). Failures raise
    :class:`ctxd.CtxdError` subclasses. The raw stubs are ``vfs``,
    ``search_stub``, ``ingest``, ``admin`` and ``context``.

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
    ) -> None:
        if socket and target:
            raise ValueError("pass either socket or target, not both")
        if target:
            self.target = target
        else:
            self.target = "unix:" + (socket or default_socket_path())
        self.timeout = timeout
        opts = [
            ("grpc.max_receive_message_length", -1),
            ("grpc.max_send_message_length", -1),
        ]
        opts.extend(options or [])
        channel = grpc.insecure_channel(self.target, options=opts)
        self._base_channel = channel
        if token:
            channel = grpc.intercept_channel(
                channel, _MetadataInterceptor([("authorization", f"Bearer {token}")])
            )
        self.channel: grpc.Channel = channel
        self.vfs = vfs_pb2_grpc.VfsServiceStub(channel)
        self.search_stub = search_pb2_grpc.SearchServiceStub(channel)
        self.ingest = ingest_pb2_grpc.IngestServiceStub(channel)
        self.admin = admin_pb2_grpc.AdminServiceStub(channel)
        self.context = context_pb2_grpc.ContextServiceStub(channel)

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

    def _call(self, method: Callable[..., T], request: Any) -> T:
        try:
            return method(request, timeout=self.timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from e

    # ---- VfsService ----

    def list_drives(self) -> List[types_pb2.DriveInfo]:
        """Every drive that holds items, sorted by name."""
        return list(self._call(self.vfs.ListDrives, vfs_pb2.ListDrivesRequest()).drives)

    def tree(
        self, ref: str = "", max_depth: int = 0, items_per_dir: int = 0
    ) -> vfs_pb2.TreeResponse:
        """A directory (or, with no ref, every drive) as a tree; ``.rendered`` is text."""
        return self._call(
            self.vfs.Tree,
            vfs_pb2.TreeRequest(ref=ref, max_depth=max_depth, items_per_dir=items_per_dir),
        )

    def ls(
        self, ref: str, recursive: bool = False, limit: int = 0, page_token: str = ""
    ) -> vfs_pb2.ListResponse:
        """One page of a directory's children (or everything below it)."""
        return self._call(
            self.vfs.List,
            vfs_pb2.ListRequest(
                ref=ref, recursive=recursive, limit=limit, page_token=page_token
            ),
        )

    def read(
        self, ref: str, offset: int = 0, limit: int = 0, *, raw: bool = False
    ) -> vfs_pb2.ReadResponse:
        """An item's text (``.content``), from line ``offset`` (0-based), at most
        ``limit`` lines (0: all). With ``raw=True`` the bytes are in ``.data``."""
        return self._call(
            self.vfs.Read,
            vfs_pb2.ReadRequest(ref=ref, line_offset=offset, line_limit=limit, raw=raw),
        )

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
    ) -> vfs_pb2.WriteResponse:
        """Creates an item, or replaces it with ``on_conflict="overwrite"``.

        ``str`` content is stored as text, ``bytes`` as a binary blob.
        """
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
        )
        if isinstance(content, str):
            req.content = content
        elif isinstance(content, (bytes, bytearray, memoryview)):
            req.data = bytes(content)
        else:
            raise TypeError(f"content must be str or bytes, not {type(content).__name__}")
        return self._call(self.vfs.Write, req)

    def edit(
        self,
        ref: str,
        patches: Iterable[PatchLike],
        *,
        expected_content_hash: str = "",
    ) -> vfs_pb2.EditResponse:
        """Applies 1-based, inclusive line-range patches atomically.

        A patch is a ``vfs_pb2.Patch``, a ``(start_line, end_line, content)``
        tuple or a dict with those keys; ``end_line`` 0 inserts before
        ``start_line`` and empty content deletes the range.
        """
        return self._call(
            self.vfs.Edit,
            vfs_pb2.EditRequest(
                ref=ref,
                patches=[_patch(p) for p in patches],
                expected_content_hash=expected_content_hash,
            ),
        )

    def rm(self, ref: str, recursive: bool = False) -> vfs_pb2.DeleteResponse:
        """Deletes an item, or with ``recursive`` a directory and all below it."""
        return self._call(self.vfs.Delete, vfs_pb2.DeleteRequest(ref=ref, recursive=recursive))

    delete = rm

    def cp(
        self,
        source: str,
        destination: str,
        recursive: bool = False,
        on_conflict: OnConflictLike = None,
    ) -> vfs_pb2.CopyResponse:
        """Copies an item, or with ``recursive`` a subtree, possibly across drives."""
        return self._call(
            self.vfs.Copy,
            vfs_pb2.CopyRequest(
                source_ref=source,
                destination_ref=destination,
                recursive=recursive,
                on_conflict=_on_conflict(on_conflict),
            ),
        )

    copy = cp

    def mv(
        self, source: str, destination: str, on_conflict: OnConflictLike = None
    ) -> vfs_pb2.MoveResponse:
        """Moves an item or a subtree, possibly across drives; ids are kept."""
        return self._call(
            self.vfs.Move,
            vfs_pb2.MoveRequest(
                source_ref=source,
                destination_ref=destination,
                on_conflict=_on_conflict(on_conflict),
            ),
        )

    move = mv

    def info(self, ref: str) -> vfs_pb2.InfoResponse:
        """An item's metadata, or a directory's summary."""
        return self._call(self.vfs.Info, vfs_pb2.InfoRequest(ref=ref))

    def exists(self, ref: str) -> bool:
        """Whether an item or a directory is at ``ref``."""
        return self._call(self.vfs.Exists, vfs_pb2.ExistsRequest(ref=ref)).exists

    def mkdir(self, ref: str) -> vfs_pb2.MakeDirResponse:
        """Creates an explicit, empty directory (idempotent)."""
        return self._call(self.vfs.MakeDir, vfs_pb2.MakeDirRequest(ref=ref))

    def du(self, ref: str) -> vfs_pb2.DirSizeResponse:
        """Total content bytes and item count below a directory."""
        return self._call(self.vfs.DirSize, vfs_pb2.DirSizeRequest(ref=ref))

    def wc(self, ref: str) -> int:
        """The number of lines in a text item."""
        return self._call(self.vfs.CountLines, vfs_pb2.CountLinesRequest(ref=ref)).lines

    # ---- VfsService: history ----

    def history(self, ref: str, *, limit: int = 0, before_rev: int = 0) -> List[vfs_pb2.Revision]:
        """An item's revisions, newest first (a deleted item's last ref works
        too). ``limit`` 0 means 50 (at most 1000); pass the last ``rev`` as ``before_rev``
        for older ones."""
        return list(
            self._call(
                self.vfs.History, vfs_pb2.HistoryRequest(ref=ref, limit=limit, before_rev=before_rev)
            ).revisions
        )

    def read_revision(self, ref: str, rev: int, *, raw: bool = False) -> vfs_pb2.ReadRevisionResponse:
        """One revision: ``.revision`` and its ``.content`` (``.data`` with ``raw=True``)."""
        return self._call(self.vfs.ReadRevision, vfs_pb2.ReadRevisionRequest(ref=ref, rev=rev, raw=raw))

    def revert(self, ref: str, rev: int) -> vfs_pb2.RevertResponse:
        """Makes revision ``rev`` current again as a new revision; restores a
        deleted item at its ref (``.created`` is then true)."""
        return self._call(self.vfs.Revert, vfs_pb2.RevertRequest(ref=ref, rev=rev))

    def deleted(self, ref: str = "", *, limit: int = 0) -> List[vfs_pb2.Revision]:
        """Deleted items below directory ``ref`` (all when empty), newest
        first, each as its deletion revision: ``revert(r.ref, r.rev - 1)``
        restores one."""
        return list(self._call(self.vfs.ListDeleted, vfs_pb2.ListDeletedRequest(ref=ref, limit=limit)).revisions)

    def log(
        self,
        *,
        actor: str = "",
        since: Union[datetime.datetime, datetime.timedelta, None] = None,
        limit: int = 0,
        page_token: str = "",
    ) -> vfs_pb2.LogResponse:
        """Revisions across the store, newest first: ``actor`` (a token name
        or "owner") filters, ``since`` is a time or a timedelta back from now.
        Pass ``next_page_token`` back as ``page_token`` for the next page."""
        req = vfs_pb2.LogRequest(actor=actor, limit=limit, page_token=page_token)
        if isinstance(since, datetime.timedelta):
            since = datetime.datetime.now(datetime.timezone.utc) - since
        if since is not None:
            if since.tzinfo is None:
                raise ValueError("since must be timezone-aware (e.g. datetime.now(timezone.utc))")
            req.since.FromDatetime(since)
        return self._call(self.vfs.Log, req)

    # ---- ContextService ----

    def init_context(self, root: str = "") -> context_pb2.InitResponse:
        """Creates soul.md, beliefs.md, goals.md and capabilities.md under
        ``root`` (default: the daemon's first context root, "self:/") where
        absent; ``.created`` and ``.existing`` list the refs."""
        return self._call(self.context.Init, context_pb2.InitRequest(root=root))

    def update_context(
        self, ref: str, body: str, *, expected_content_hash: str = ""
    ) -> context_pb2.UpdateResponse:
        """Replaces a context file's body, keeping its frontmatter byte for
        byte. An agent token may update only files that say
        ``agent-modification: true`` (:class:`ctxd.ReadOnlyError` otherwise)."""
        return self._call(
            self.context.Update,
            context_pb2.UpdateRequest(ref=ref, body=body, expected_content_hash=expected_content_hash),
        )

    def build_context(
        self,
        task: str,
        *,
        budget: int = 0,
        roots: Iterable[str] = (),
        mode: SearchModeLike = None,
        limit: int = 0,
        drives: Iterable[str] = (),
        path_prefixes: Iterable[str] = (),
        mime_types: Iterable[str] = (),
        tags: Iterable[str] = (),
    ) -> context_pb2.BuildContextResponse:
        """The context for one task within ``budget`` model tokens (0: 4000):
        the ``always`` files, the ``contextual`` files the task matches, then
        search chunks (``mode``, ``limit`` and the filters apply to these).
        ``.markdown`` is ready for a prompt, ``.sections`` are the parts and
        ``.omitted`` says what did not fit and why."""
        return self._call(
            self.context.BuildContext,
            context_pb2.BuildContextRequest(
                task=task,
                budget=budget,
                roots=list(roots),
                mode=_search_mode(mode),
                limit=limit,
                filter=_search_filter(drives, path_prefixes, mime_types, tags),
            ),
        )

    # ---- AdminService ----

    def status(self) -> admin_pb2.StatusResponse:
        """A snapshot of the daemon: store, indexes, embedding model."""
        return self._call(self.admin.Status, admin_pb2.StatusRequest())

    # ---- SearchService ----

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
    ) -> search_pb2.SearchResponse:
        """Runs one query or a batch; ``mode`` is "hybrid", "bm25" or "vector".

        A query is text, or a sequence of floats: a query embedding from the
        store's model. ``leg_weights`` maps "bm25", "substring" or "vector"
        to a fusion weight (0 turns the leg off).
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
        )
        return self._call(self.search_stub.Search, req)

    # ---- IngestService (streams) ----

    def _stream(
        self, method: Callable[..., Any], request: Any, timeout: Optional[float]
    ) -> Iterator[Any]:
        try:
            for event in method(request, timeout=timeout):
                yield event
        except grpc.RpcError as e:
            raise from_rpc_error(e) from e

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
        timeout: Optional[float] = None,
    ) -> Iterator[ingest_pb2.AddResponse]:
        """Ingests files, trees and URLs; yields progress, item and summary events.

        Paths are made absolute against this process's working directory
        (the daemon's is another). With ``watch`` the stream goes on after the
        summary with an item event per file created, changed or removed,
        until the iterator is closed or ``timeout`` passes.
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
        )
        return self._stream(self.ingest.Add, req, timeout)

    def refresh(
        self,
        refs: Iterable[str] = (),
        *,
        all: bool = False,
        force: bool = False,
        stale_only: bool = False,
        timeout: Optional[float] = None,
    ) -> Iterator[ingest_pb2.RefreshResponse]:
        """Re-reads the sources of stored items (files by size and mtime, then
        hash; URLs by conditional GET); yields events. Only changed chunks are
        embedded again; a missing source is reported, and its item kept."""
        req = ingest_pb2.RefreshRequest(refs=list(refs), all=all, force=force, stale_only=stale_only)
        return self._stream(self.ingest.Refresh, req, timeout)

    def reembed(
        self,
        refs: Iterable[str] = (),
        *,
        all: bool = False,
        timeout: Optional[float] = None,
    ) -> Iterator[ingest_pb2.ReembedResponse]:
        """Recomputes embeddings with the current model; yields events."""
        req = ingest_pb2.ReembedRequest(refs=list(refs), all=all)
        return self._stream(self.ingest.Reembed, req, timeout)

