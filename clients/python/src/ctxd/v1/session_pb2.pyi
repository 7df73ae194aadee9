import datetime

from ctxd.v1 import context_pb2 as _context_pb2
from ctxd.v1 import search_pb2 as _search_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SessionEventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_EVENT_KIND_UNSPECIFIED: _ClassVar[SessionEventKind]
    SESSION_EVENT_KIND_PROMPT: _ClassVar[SessionEventKind]
    SESSION_EVENT_KIND_TOOL_USE: _ClassVar[SessionEventKind]
    SESSION_EVENT_KIND_DECISION: _ClassVar[SessionEventKind]
    SESSION_EVENT_KIND_ERROR: _ClassVar[SessionEventKind]
    SESSION_EVENT_KIND_NOTE: _ClassVar[SessionEventKind]
    SESSION_EVENT_KIND_FILE_CHANGE: _ClassVar[SessionEventKind]
    SESSION_EVENT_KIND_SUMMARY: _ClassVar[SessionEventKind]
SESSION_EVENT_KIND_UNSPECIFIED: SessionEventKind
SESSION_EVENT_KIND_PROMPT: SessionEventKind
SESSION_EVENT_KIND_TOOL_USE: SessionEventKind
SESSION_EVENT_KIND_DECISION: SessionEventKind
SESSION_EVENT_KIND_ERROR: SessionEventKind
SESSION_EVENT_KIND_NOTE: SessionEventKind
SESSION_EVENT_KIND_FILE_CHANGE: SessionEventKind
SESSION_EVENT_KIND_SUMMARY: SessionEventKind

class Session(_message.Message):
    __slots__ = ("id", "project", "actor", "started_at", "ended_at", "cwd", "event_count", "digest_ref", "ref")
    ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    EVENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    DIGEST_REF_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    id: str
    project: str
    actor: str
    started_at: _timestamp_pb2.Timestamp
    ended_at: _timestamp_pb2.Timestamp
    cwd: str
    event_count: int
    digest_ref: str
    ref: str
    def __init__(self, id: _Optional[str] = ..., project: _Optional[str] = ..., actor: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ended_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., cwd: _Optional[str] = ..., event_count: _Optional[int] = ..., digest_ref: _Optional[str] = ..., ref: _Optional[str] = ...) -> None: ...

class SessionEvent(_message.Message):
    __slots__ = ("ref", "time", "kind", "text", "refs", "tool", "truncated")
    REF_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REFS_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    ref: str
    time: _timestamp_pb2.Timestamp
    kind: SessionEventKind
    text: str
    refs: _containers.RepeatedScalarFieldContainer[str]
    tool: str
    truncated: bool
    def __init__(self, ref: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., kind: _Optional[_Union[SessionEventKind, str]] = ..., text: _Optional[str] = ..., refs: _Optional[_Iterable[str]] = ..., tool: _Optional[str] = ..., truncated: _Optional[bool] = ...) -> None: ...

class StartSessionRequest(_message.Message):
    __slots__ = ("id", "project", "actor", "cwd")
    ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    id: str
    project: str
    actor: str
    cwd: str
    def __init__(self, id: _Optional[str] = ..., project: _Optional[str] = ..., actor: _Optional[str] = ..., cwd: _Optional[str] = ...) -> None: ...

class StartSessionResponse(_message.Message):
    __slots__ = ("session", "created")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    session: Session
    created: bool
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class AppendEventsRequest(_message.Message):
    __slots__ = ("session_id", "project", "cwd", "events")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    project: str
    cwd: str
    events: _containers.RepeatedCompositeFieldContainer[SessionEvent]
    def __init__(self, session_id: _Optional[str] = ..., project: _Optional[str] = ..., cwd: _Optional[str] = ..., events: _Optional[_Iterable[_Union[SessionEvent, _Mapping]]] = ...) -> None: ...

class AppendEventsResponse(_message.Message):
    __slots__ = ("session", "events")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    session: Session
    events: _containers.RepeatedCompositeFieldContainer[SessionEvent]
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., events: _Optional[_Iterable[_Union[SessionEvent, _Mapping]]] = ...) -> None: ...

class EndSessionRequest(_message.Message):
    __slots__ = ("session_id", "project", "wait_for_enricher")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_ENRICHER_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    project: str
    wait_for_enricher: bool
    def __init__(self, session_id: _Optional[str] = ..., project: _Optional[str] = ..., wait_for_enricher: _Optional[bool] = ...) -> None: ...

class EndSessionResponse(_message.Message):
    __slots__ = ("session", "digest")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    session: Session
    digest: SessionDigest
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., digest: _Optional[_Union[SessionDigest, _Mapping]] = ...) -> None: ...

class DigestSessionRequest(_message.Message):
    __slots__ = ("session_id", "project", "wait_for_enricher")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_ENRICHER_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    project: str
    wait_for_enricher: bool
    def __init__(self, session_id: _Optional[str] = ..., project: _Optional[str] = ..., wait_for_enricher: _Optional[bool] = ...) -> None: ...

class DigestSessionResponse(_message.Message):
    __slots__ = ("digest",)
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    digest: SessionDigest
    def __init__(self, digest: _Optional[_Union[SessionDigest, _Mapping]] = ...) -> None: ...

class SessionDigest(_message.Message):
    __slots__ = ("ref", "markdown", "method", "event_count", "enricher_error", "enricher_pending")
    REF_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    EVENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    ENRICHER_ERROR_FIELD_NUMBER: _ClassVar[int]
    ENRICHER_PENDING_FIELD_NUMBER: _ClassVar[int]
    ref: str
    markdown: str
    method: str
    event_count: int
    enricher_error: str
    enricher_pending: bool
    def __init__(self, ref: _Optional[str] = ..., markdown: _Optional[str] = ..., method: _Optional[str] = ..., event_count: _Optional[int] = ..., enricher_error: _Optional[str] = ..., enricher_pending: _Optional[bool] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id", "project", "limit", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    project: str
    limit: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., project: _Optional[str] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("session", "events", "next_page_token", "digest")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    session: Session
    events: _containers.RepeatedCompositeFieldContainer[SessionEvent]
    next_page_token: str
    digest: str
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., events: _Optional[_Iterable[_Union[SessionEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., digest: _Optional[str] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("project", "limit", "since")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    project: str
    limit: int
    since: _timestamp_pb2.Timestamp
    def __init__(self, project: _Optional[str] = ..., limit: _Optional[int] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[Session]
    def __init__(self, sessions: _Optional[_Iterable[_Union[Session, _Mapping]]] = ...) -> None: ...

class SearchEventsRequest(_message.Message):
    __slots__ = ("query", "project", "session_ids", "kinds", "after", "before", "limit", "mode")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    query: str
    project: str
    session_ids: _containers.RepeatedScalarFieldContainer[str]
    kinds: _containers.RepeatedScalarFieldContainer[SessionEventKind]
    after: _timestamp_pb2.Timestamp
    before: _timestamp_pb2.Timestamp
    limit: int
    mode: _search_pb2.SearchMode
    def __init__(self, query: _Optional[str] = ..., project: _Optional[str] = ..., session_ids: _Optional[_Iterable[str]] = ..., kinds: _Optional[_Iterable[_Union[SessionEventKind, str]]] = ..., after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ..., mode: _Optional[_Union[_search_pb2.SearchMode, str]] = ...) -> None: ...

class SessionHit(_message.Message):
    __slots__ = ("result", "event")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    result: _search_pb2.SearchResult
    event: SessionEvent
    def __init__(self, result: _Optional[_Union[_search_pb2.SearchResult, _Mapping]] = ..., event: _Optional[_Union[SessionEvent, _Mapping]] = ...) -> None: ...

class SessionResults(_message.Message):
    __slots__ = ("session", "hits", "score")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    HITS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    session: Session
    hits: _containers.RepeatedCompositeFieldContainer[SessionHit]
    score: float
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., hits: _Optional[_Iterable[_Union[SessionHit, _Mapping]]] = ..., score: _Optional[float] = ...) -> None: ...

class SearchEventsResponse(_message.Message):
    __slots__ = ("sessions", "mode_used", "mode_reason", "stale", "stale_reason")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    MODE_USED_FIELD_NUMBER: _ClassVar[int]
    MODE_REASON_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    STALE_REASON_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionResults]
    mode_used: _search_pb2.SearchMode
    mode_reason: str
    stale: bool
    stale_reason: str
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionResults, _Mapping]]] = ..., mode_used: _Optional[_Union[_search_pb2.SearchMode, str]] = ..., mode_reason: _Optional[str] = ..., stale: _Optional[bool] = ..., stale_reason: _Optional[str] = ...) -> None: ...

class RecallRequest(_message.Message):
    __slots__ = ("project", "cwd", "session_id", "prompt", "budget", "digests", "roots")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    DIGESTS_FIELD_NUMBER: _ClassVar[int]
    ROOTS_FIELD_NUMBER: _ClassVar[int]
    project: str
    cwd: str
    session_id: str
    prompt: str
    budget: int
    digests: int
    roots: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, project: _Optional[str] = ..., cwd: _Optional[str] = ..., session_id: _Optional[str] = ..., prompt: _Optional[str] = ..., budget: _Optional[int] = ..., digests: _Optional[int] = ..., roots: _Optional[_Iterable[str]] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("markdown", "sections", "omitted", "tokens_used", "project", "warnings", "stale", "stale_reason")
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    SECTIONS_FIELD_NUMBER: _ClassVar[int]
    OMITTED_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    STALE_REASON_FIELD_NUMBER: _ClassVar[int]
    markdown: str
    sections: _containers.RepeatedCompositeFieldContainer[_context_pb2.ContextSection]
    omitted: _containers.RepeatedCompositeFieldContainer[_context_pb2.ContextOmission]
    tokens_used: int
    project: str
    warnings: _containers.RepeatedScalarFieldContainer[str]
    stale: bool
    stale_reason: str
    def __init__(self, markdown: _Optional[str] = ..., sections: _Optional[_Iterable[_Union[_context_pb2.ContextSection, _Mapping]]] = ..., omitted: _Optional[_Iterable[_Union[_context_pb2.ContextOmission, _Mapping]]] = ..., tokens_used: _Optional[int] = ..., project: _Optional[str] = ..., warnings: _Optional[_Iterable[str]] = ..., stale: _Optional[bool] = ..., stale_reason: _Optional[str] = ...) -> None: ...
