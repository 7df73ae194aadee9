"""The ContextService methods of :class:`ctxd.Client` and
:class:`ctxd.AsyncClient`: an agent's context files, the context of a task,
and the compaction of oversized memory files.
"""

from __future__ import annotations

from typing import Iterable, Optional

from ctxd._api import SearchModeLike, _Call, _search_filter, _search_mode, _unary_method
from ctxd.v1 import context_pb2


class _ContextApi:
    """ContextService calls; mixed into Client and AsyncClient."""

    @_unary_method
    def init_context(self, root: str = "") -> _Call[context_pb2.InitResponse]:
        """Creates soul.md, beliefs.md, goals.md and capabilities.md under
        ``root`` (default: the daemon's first context root, "self:/") where
        absent; ``.created`` and ``.existing`` list the refs."""
        return _Call("context", "Init", context_pb2.InitRequest(root=root))

    @_unary_method
    def update_context(
        self, ref: str, body: str, *, expected_content_hash: str = ""
    ) -> _Call[context_pb2.UpdateResponse]:
        """Replaces a context file's body, keeping its frontmatter byte for
        byte. An agent token may update only files that say
        ``agent-modification: true`` (:class:`ctxd.ReadOnlyError` otherwise)."""
        req = context_pb2.UpdateRequest(ref=ref, body=body, expected_content_hash=expected_content_hash)
        return _Call("context", "Update", req)

    @_unary_method
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
    ) -> _Call[context_pb2.BuildContextResponse]:
        """The context for one task within ``budget`` model tokens (0: 4000):
        the ``always`` files, the ``contextual`` files the task matches, then
        search chunks (``mode``, ``limit`` and the filters apply to these).
        ``.markdown`` is ready for a prompt, ``.sections`` are the parts and
        ``.omitted`` says what did not fit and why."""
        return _Call(
            "context",
            "BuildContext",
            context_pb2.BuildContextRequest(
                task=task,
                budget=budget,
                roots=list(roots),
                mode=_search_mode(mode),
                limit=limit,
                filter=_search_filter(drives, path_prefixes, mime_types, tags),
            ),
        )

    @_unary_method
    def compact(
        self,
        ref: str,
        *,
        min_tokens: Optional[int] = None,
        target_tokens: Optional[int] = None,
        dry_run: bool = False,
        expected_content_hash: Optional[str] = None,
    ) -> _Call[context_pb2.CompactResponse]:
        """Rewrites an oversized memory file shorter: a text item of more than
        ``min_tokens`` model tokens (None: 8000; a smaller one is left alone,
        ``.compacted`` false), aiming at ``target_tokens`` (None: half of
        ``min_tokens``). Repeated entries are dropped, headings kept and the
        newest entries of each section kept (or the daemon's enricher writes
        it); the frontmatter is kept. ``revert(ref, r.previous_rev)`` undoes
        it. ``dry_run`` returns the ``.body`` without writing."""
        req = context_pb2.CompactRequest(
            ref=ref,
            min_tokens=min_tokens,
            target_tokens=target_tokens,
            dry_run=dry_run,
            expected_content_hash=expected_content_hash,
        )
        return _Call("context", "Compact", req)
