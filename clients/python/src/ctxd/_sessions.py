"""The SessionService methods of :class:`ctxd.Client` and
:class:`ctxd.AsyncClient`: sessions, their events, digests and recall.

A session is one agent's work on one project; its events (prompts, tool
uses, decisions, errors, notes, file changes, summaries) are items of the
``session`` drive, searched with the same engine as every item, digested
when the session ends and recalled when the next one starts.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, List, Mapping, Optional, Tuple, Union, cast

from ctxd._api import SearchModeLike, TimeLike, _Call, _search_mode, _timestamp, _unary_method
from ctxd.v1 import session_pb2

__all__ = ["EventKindLike", "SessionEventLike"]

# "prompt", "tool_use" (or "tool-use"), "decision", "error", "note",
# "file_change", "summary" (any case), or a session_pb2.SessionEventKind value.
EventKindLike = Union[str, int]
# An event: a message, a (kind, text) tuple, or a mapping with "kind" and
# "text" and optionally "tool" and "refs".
SessionEventLike = Union[session_pb2.SessionEvent, Tuple[EventKindLike, str], Mapping[str, Any]]

_KIND_PREFIX = "SESSION_EVENT_KIND_"
# The kind names, as the daemon and the CLI spell them.
_EVENT_KINDS = ("prompt", "tool_use", "decision", "error", "note", "file_change", "summary")


def _event_kind(value: EventKindLike) -> session_pb2.SessionEventKind:
    if isinstance(value, str):
        name = value.strip().lower().replace("-", "_")
        if name not in _EVENT_KINDS:
            raise ValueError(f"unknown event kind {value!r}; use one of {', '.join(_EVENT_KINDS)}")
        return cast(session_pb2.SessionEventKind, session_pb2.SessionEventKind.Value(_KIND_PREFIX + name.upper()))
    return cast(session_pb2.SessionEventKind, int(value))


def _event(e: SessionEventLike) -> session_pb2.SessionEvent:
    if isinstance(e, session_pb2.SessionEvent):
        return e
    if isinstance(e, Mapping):
        fields = dict(e)
        if "kind" in fields:
            fields["kind"] = _event_kind(fields["kind"])
        return session_pb2.SessionEvent(**fields)
    kind, text = e
    return session_pb2.SessionEvent(kind=_event_kind(kind), text=text)


def _cwd(cwd: Optional[str]) -> str:
    """cwd, or this process's working directory (as the CLI sends it)."""
    if cwd is not None:
        return cwd
    try:
        return os.getcwd()
    except OSError:  # removed under us: let the daemon use its default
        return ""


class _SessionsApi:
    """The SessionService methods, on the ``sessions`` stub the client sets."""

    @_unary_method
    def start_session(
        self,
        id: Optional[str] = None,
        *,
        project: Optional[str] = None,
        actor: Optional[str] = None,
        cwd: Optional[str] = None,
    ) -> _Call[session_pb2.StartSessionResponse]:
        """Starts a session, or returns the one with that ``id`` unchanged
        (``.created`` is then false: a host starts its session again on
        resume). No ``id`` generates one. ``project`` defaults to the base
        name of ``cwd``'s repository root; ``cwd`` defaults to this
        process's working directory (``""`` sends none), ``actor`` to the
        caller's token name."""
        req = session_pb2.StartSessionRequest(id=id, project=project, actor=actor, cwd=_cwd(cwd))
        return _Call("sessions", "StartSession", req)

    @_unary_method
    def append_events(
        self,
        events: Iterable[SessionEventLike],
        *,
        session_id: Optional[str] = None,
        project: Optional[str] = None,
        cwd: Optional[str] = None,
    ) -> _Call[session_pb2.AppendEventsResponse]:
        """Appends 1 to 256 events to a session, starting it when absent,
        in one transaction; ``.events`` are as stored (ref, time, and
        ``truncated`` when a text over the daemon's ``limits.max_event_bytes``,
        default 8 KiB, was cut with a marker). An event is a
        ``(kind, text)`` tuple, a dict with ``kind``, ``text`` and
        optionally ``tool`` and ``refs``, or a ``session_pb2.SessionEvent``;
        a kind is a name (``"decision"``) or a ``SessionEventKind``.
        Without ``session_id`` the events go to the project's most recently
        started open session, or a new one."""
        req = session_pb2.AppendEventsRequest(
            session_id=session_id, project=project, cwd=_cwd(cwd), events=[_event(e) for e in events]
        )
        return _Call("sessions", "AppendEvents", req)

    @_unary_method
    def remember(
        self,
        text: str,
        kind: EventKindLike = "note",
        *,
        tool: str = "",
        refs: Iterable[str] = (),
        session_id: Optional[str] = None,
        project: Optional[str] = None,
        cwd: Optional[str] = None,
    ) -> _Call[session_pb2.AppendEventsResponse]:
        """Records one event, a note by default (``kind="decision"`` for a
        decision, or any other kind): :meth:`append_events` of one."""
        event = session_pb2.SessionEvent(kind=_event_kind(kind), text=text, tool=tool, refs=list(refs))
        req = session_pb2.AppendEventsRequest(session_id=session_id, project=project, cwd=_cwd(cwd), events=[event])
        return _Call("sessions", "AppendEvents", req)

    @_unary_method
    def end_session(
        self, session_id: str, *, project: Optional[str] = None, wait_for_enricher: bool = False
    ) -> _Call[session_pb2.EndSessionResponse]:
        """Ends a session and writes its digest (``.digest``): its prompts,
        decisions and notes, errors, files changed, commands run and open
        goals. With an enricher configured on the daemon its digest replaces
        the extractive one in the background (``digest.enricher_pending``),
        or now with ``wait_for_enricher`` (within the call's timeout).
        Ending an ended session writes the digest again."""
        req = session_pb2.EndSessionRequest(session_id=session_id, project=project, wait_for_enricher=wait_for_enricher)
        return _Call("sessions", "EndSession", req)

    @_unary_method
    def digest_session(
        self, session_id: str, *, project: Optional[str] = None, wait_for_enricher: bool = False
    ) -> _Call[session_pb2.SessionDigest]:
        """Writes a session's digest without ending it (before a host
        compacts its context) and returns it."""
        req = session_pb2.DigestSessionRequest(session_id=session_id, project=project, wait_for_enricher=wait_for_enricher)
        return _Call("sessions", "DigestSession", req, lambda r: r.digest)

    @_unary_method
    def get_session(
        self,
        session_id: str,
        *,
        project: Optional[str] = None,
        limit: Optional[int] = None,
        page_token: Optional[str] = None,
    ) -> _Call[session_pb2.GetSessionResponse]:
        """A session, a page of its events (oldest first; ``limit`` 0 or
        None means 100) and its digest's markdown (``.digest``, empty
        before the first). Pass ``next_page_token`` back as ``page_token``
        for the next page. ``project`` None finds the id in any project."""
        req = session_pb2.GetSessionRequest(session_id=session_id, project=project, limit=limit, page_token=page_token)
        return _Call("sessions", "GetSession", req)

    @_unary_method
    def list_sessions(
        self,
        *,
        project: Optional[str] = None,
        limit: Optional[int] = None,
        since: TimeLike = None,
    ) -> _Call[List[session_pb2.Session]]:
        """Sessions, most recently started first (``limit`` None: 20): of
        one project, or every project's; ``since`` (a timezone-aware
        datetime, or a timedelta back from now) keeps those started then or
        later."""
        req = session_pb2.ListSessionsRequest(project=project, limit=limit, since=_timestamp(since, "since"))
        return _Call("sessions", "ListSessions", req, lambda r: list(r.sessions))

    @_unary_method
    def search_events(
        self,
        query: str,
        *,
        project: Optional[str] = None,
        session_ids: Optional[Iterable[str]] = None,
        kinds: Optional[Iterable[EventKindLike]] = None,
        after: TimeLike = None,
        before: TimeLike = None,
        limit: Optional[int] = None,
        mode: SearchModeLike = None,
    ) -> _Call[session_pb2.SearchEventsResponse]:
        """Searches events and digests with the hybrid engine (``mode``
        "hybrid", "bm25" or "vector"); the filters run inside every leg.
        ``kinds`` are kind names or values ("summary" includes digests);
        ``after`` and ``before`` are timezone-aware datetimes or timedeltas
        back from now. ``.sessions`` groups the hits by session, the best
        session first; each hit has the search ``result`` and the whole
        ``event``. ``limit`` (None: 10) counts events over all sessions."""
        req = session_pb2.SearchEventsRequest(
            query=query,
            project=project,
            session_ids=list(session_ids or ()),
            kinds=[_event_kind(k) for k in kinds or ()],
            after=_timestamp(after, "after"),
            before=_timestamp(before, "before"),
            limit=limit,
            mode=_search_mode(mode),
        )
        return _Call("sessions", "SearchEvents", req)

    @_unary_method
    def recall(
        self,
        prompt: Optional[str] = None,
        *,
        project: Optional[str] = None,
        cwd: Optional[str] = None,
        session_id: Optional[str] = None,
        budget: Optional[int] = None,
        digests: Optional[int] = None,
        roots: Optional[Iterable[str]] = None,
    ) -> _Call[session_pb2.RecallResponse]:
        """What an agent should know, within ``budget`` tokens (None: 2000).
        Without a prompt (a session's start): the always-loaded context
        files, the open goals and the last ``digests`` (None: 3) sessions'
        digests of the project. With a prompt: the contextual files and the
        memory that match it, or nothing (``.markdown`` empty). The asking
        ``session_id``'s own events are left out; ``project`` and ``cwd``
        as in :meth:`start_session`."""
        req = session_pb2.RecallRequest(
            prompt=prompt,
            project=project,
            cwd=_cwd(cwd),
            session_id=session_id,
            budget=budget,
            digests=digests,
            roots=list(roots or ()),
        )
        return _Call("sessions", "Recall", req)

