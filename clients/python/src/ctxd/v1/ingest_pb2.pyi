from ctxd.v1 import errors_pb2 as _errors_pb2
from ctxd.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class IngestAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INGEST_ACTION_UNSPECIFIED: _ClassVar[IngestAction]
    INGEST_ACTION_ADDED: _ClassVar[IngestAction]
    INGEST_ACTION_UPDATED: _ClassVar[IngestAction]
    INGEST_ACTION_UNCHANGED: _ClassVar[IngestAction]
    INGEST_ACTION_SKIPPED: _ClassVar[IngestAction]
    INGEST_ACTION_MISSING: _ClassVar[IngestAction]
    INGEST_ACTION_FAILED: _ClassVar[IngestAction]
INGEST_ACTION_UNSPECIFIED: IngestAction
INGEST_ACTION_ADDED: IngestAction
INGEST_ACTION_UPDATED: IngestAction
INGEST_ACTION_UNCHANGED: IngestAction
INGEST_ACTION_SKIPPED: IngestAction
INGEST_ACTION_MISSING: IngestAction
INGEST_ACTION_FAILED: IngestAction

class IngestProgress(_message.Message):
    __slots__ = ("phase", "items_done", "items_total", "chunks_done", "bytes_done", "bytes_total", "items_per_second", "eta_seconds")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_DONE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_DONE_FIELD_NUMBER: _ClassVar[int]
    BYTES_DONE_FIELD_NUMBER: _ClassVar[int]
    BYTES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    ITEMS_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    ETA_SECONDS_FIELD_NUMBER: _ClassVar[int]
    phase: str
    items_done: int
    items_total: int
    chunks_done: int
    bytes_done: int
    bytes_total: int
    items_per_second: float
    eta_seconds: float
    def __init__(self, phase: _Optional[str] = ..., items_done: _Optional[int] = ..., items_total: _Optional[int] = ..., chunks_done: _Optional[int] = ..., bytes_done: _Optional[int] = ..., bytes_total: _Optional[int] = ..., items_per_second: _Optional[float] = ..., eta_seconds: _Optional[float] = ...) -> None: ...

class IngestItemResult(_message.Message):
    __slots__ = ("ref", "source", "action", "chunks_queued", "chunks_reused", "error_message", "error", "duplicate_of")
    REF_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_QUEUED_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_REUSED_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_OF_FIELD_NUMBER: _ClassVar[int]
    ref: str
    source: str
    action: IngestAction
    chunks_queued: int
    chunks_reused: int
    error_message: str
    error: _errors_pb2.ErrorDetail
    duplicate_of: str
    def __init__(self, ref: _Optional[str] = ..., source: _Optional[str] = ..., action: _Optional[_Union[IngestAction, str]] = ..., chunks_queued: _Optional[int] = ..., chunks_reused: _Optional[int] = ..., error_message: _Optional[str] = ..., error: _Optional[_Union[_errors_pb2.ErrorDetail, _Mapping]] = ..., duplicate_of: _Optional[str] = ...) -> None: ...

class IngestSummary(_message.Message):
    __slots__ = ("added", "updated", "unchanged", "skipped", "missing", "failed", "chunks_queued", "chunks_reused", "bytes", "seconds")
    ADDED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_QUEUED_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_REUSED_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    added: int
    updated: int
    unchanged: int
    skipped: int
    missing: int
    failed: int
    chunks_queued: int
    chunks_reused: int
    bytes: int
    seconds: float
    def __init__(self, added: _Optional[int] = ..., updated: _Optional[int] = ..., unchanged: _Optional[int] = ..., skipped: _Optional[int] = ..., missing: _Optional[int] = ..., failed: _Optional[int] = ..., chunks_queued: _Optional[int] = ..., chunks_reused: _Optional[int] = ..., bytes: _Optional[int] = ..., seconds: _Optional[float] = ...) -> None: ...

class AddRequest(_message.Message):
    __slots__ = ("sources", "drive", "on_conflict", "exclude", "include_hidden", "tags", "watch", "ttl_seconds", "dedupe_threshold")
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    DRIVE_FIELD_NUMBER: _ClassVar[int]
    ON_CONFLICT_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_HIDDEN_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    WATCH_FIELD_NUMBER: _ClassVar[int]
    TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    DEDUPE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    sources: _containers.RepeatedScalarFieldContainer[str]
    drive: str
    on_conflict: _types_pb2.OnConflict
    exclude: _containers.RepeatedScalarFieldContainer[str]
    include_hidden: bool
    tags: _containers.RepeatedScalarFieldContainer[str]
    watch: bool
    ttl_seconds: int
    dedupe_threshold: float
    def __init__(self, sources: _Optional[_Iterable[str]] = ..., drive: _Optional[str] = ..., on_conflict: _Optional[_Union[_types_pb2.OnConflict, str]] = ..., exclude: _Optional[_Iterable[str]] = ..., include_hidden: _Optional[bool] = ..., tags: _Optional[_Iterable[str]] = ..., watch: _Optional[bool] = ..., ttl_seconds: _Optional[int] = ..., dedupe_threshold: _Optional[float] = ...) -> None: ...

class AddResponse(_message.Message):
    __slots__ = ("progress", "item", "summary")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    progress: IngestProgress
    item: IngestItemResult
    summary: IngestSummary
    def __init__(self, progress: _Optional[_Union[IngestProgress, _Mapping]] = ..., item: _Optional[_Union[IngestItemResult, _Mapping]] = ..., summary: _Optional[_Union[IngestSummary, _Mapping]] = ...) -> None: ...

class RefreshRequest(_message.Message):
    __slots__ = ("refs", "all", "force", "stale_only")
    REFS_FIELD_NUMBER: _ClassVar[int]
    ALL_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    STALE_ONLY_FIELD_NUMBER: _ClassVar[int]
    refs: _containers.RepeatedScalarFieldContainer[str]
    all: bool
    force: bool
    stale_only: bool
    def __init__(self, refs: _Optional[_Iterable[str]] = ..., all: _Optional[bool] = ..., force: _Optional[bool] = ..., stale_only: _Optional[bool] = ...) -> None: ...

class RefreshResponse(_message.Message):
    __slots__ = ("progress", "item", "summary")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    progress: IngestProgress
    item: IngestItemResult
    summary: IngestSummary
    def __init__(self, progress: _Optional[_Union[IngestProgress, _Mapping]] = ..., item: _Optional[_Union[IngestItemResult, _Mapping]] = ..., summary: _Optional[_Union[IngestSummary, _Mapping]] = ...) -> None: ...

class ReembedRequest(_message.Message):
    __slots__ = ("refs", "all")
    REFS_FIELD_NUMBER: _ClassVar[int]
    ALL_FIELD_NUMBER: _ClassVar[int]
    refs: _containers.RepeatedScalarFieldContainer[str]
    all: bool
    def __init__(self, refs: _Optional[_Iterable[str]] = ..., all: _Optional[bool] = ...) -> None: ...

class ReembedResponse(_message.Message):
    __slots__ = ("progress", "item", "summary")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    progress: IngestProgress
    item: IngestItemResult
    summary: IngestSummary
    def __init__(self, progress: _Optional[_Union[IngestProgress, _Mapping]] = ..., item: _Optional[_Union[IngestItemResult, _Mapping]] = ..., summary: _Optional[_Union[IngestSummary, _Mapping]] = ...) -> None: ...
