"""The WatchService methods of :class:`ctxd.Client` and
:class:`ctxd.AsyncClient`: directory trees on the daemon's host kept in step
with their items for as long as the watch exists, across daemon restarts.
"""

from __future__ import annotations

import os
from typing import Iterable, List, Optional, Union

from ctxd._api import _Call, _unary_method
from ctxd.v1 import watch_pb2


class _WatchesApi:
    # ---- WatchService ----

    @_unary_method
    def add_watch(
        self,
        path: Union[str, "os.PathLike[str]"],
        *,
        drive: str = "",
        exclude: Iterable[str] = (),
        include_hidden: bool = False,
        tags: Iterable[str] = (),
        debounce_ms: int = 0,
        delete_missing: bool = False,
        timeout: Optional[float] = None,
    ) -> _Call[watch_pb2.AddWatchResponse]:
        """Watches the directory ``path`` (made absolute against this
        process's working directory) on the daemon's host: ingests it and
        keeps its items in step from now on, also across daemon restarts.
        Returns once the tree is ingested and searchable (no deadline unless
        ``timeout``; a caller that leaves earlier leaves the watch in place);
        a path already watched returns its watch with ``existed`` set."""
        req = watch_pb2.AddWatchRequest(
            path=os.path.abspath(os.fspath(path)),
            drive=drive,
            exclude=list(exclude),
            include_hidden=include_hidden,
            tags=list(tags),
            debounce_ms=debounce_ms,
            delete_missing=delete_missing,
        )
        return _Call("watches", "AddWatch", req, timeout=timeout)

    @_unary_method
    def list_watches(self) -> _Call[List[watch_pb2.Watch]]:
        """Lists the watches, by path, each with its ``status`` (mode, files,
        last event and reconcile, lag, errors)."""
        return _Call("watches", "ListWatches", watch_pb2.ListWatchesRequest(), lambda r: list(r.watches))

    @_unary_method
    def remove_watch(self, watch: Union[str, "os.PathLike[str]"]) -> _Call[watch_pb2.Watch]:
        """Stops the watch with id ``watch``, or of the directory ``watch``
        (an existing local directory is made absolute); its items are kept.
        Returns the watch as it was."""
        target = os.fspath(watch)
        if os.path.isdir(target):
            target = os.path.abspath(target)
        return _Call("watches", "RemoveWatch", watch_pb2.RemoveWatchRequest(watch=target), lambda r: r.watch)
