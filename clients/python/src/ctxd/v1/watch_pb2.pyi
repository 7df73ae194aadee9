import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WatchMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WATCH_MODE_UNSPECIFIED: _ClassVar[WatchMode]
    WATCH_MODE_STARTING: _ClassVar[WatchMode]
    WATCH_MODE_EVENTS: _ClassVar[WatchMode]
    WATCH_MODE_SCANNING: _ClassVar[WatchMode]
    WATCH_MODE_REMOTE: _ClassVar[WatchMode]
    WATCH_MODE_FAILED: _ClassVar[WatchMode]
WATCH_MODE_UNSPECIFIED: WatchMode
WATCH_MODE_STARTING: WatchMode
WATCH_MODE_EVENTS: WatchMode
WATCH_MODE_SCANNING: WatchMode
WATCH_MODE_REMOTE: WatchMode
WATCH_MODE_FAILED: WatchMode

class Watch(_message.Message):
    __slots__ = ("id", "path", "drive", "exclude", "include_hidden", "tags", "debounce_ms", "delete_missing", "replica_id", "created_at", "status")
    ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    DRIVE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_HIDDEN_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    DEBOUNCE_MS_FIELD_NUMBER: _ClassVar[int]
    DELETE_MISSING_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    path: str
    drive: str
    exclude: _containers.RepeatedScalarFieldContainer[str]
    include_hidden: bool
    tags: _containers.RepeatedScalarFieldContainer[str]
    debounce_ms: int
    delete_missing: bool
    replica_id: str
    created_at: _timestamp_pb2.Timestamp
    status: WatchStatus
    def __init__(self, id: _Optional[str] = ..., path: _Optional[str] = ..., drive: _Optional[str] = ..., exclude: _Optional[_Iterable[str]] = ..., include_hidden: _Optional[bool] = ..., tags: _Optional[_Iterable[str]] = ..., debounce_ms: _Optional[int] = ..., delete_missing: _Optional[bool] = ..., replica_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status: _Optional[_Union[WatchStatus, _Mapping]] = ...) -> None: ...

class WatchStatus(_message.Message):
    __slots__ = ("mode", "reason", "files", "last_event_at", "last_reconcile_at", "last_reconcile_ms", "last_reconcile", "lag_ms", "pending", "error_count", "last_error", "last_error_at", "watched_dirs")
    MODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    LAST_EVENT_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_RECONCILE_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_RECONCILE_MS_FIELD_NUMBER: _ClassVar[int]
    LAST_RECONCILE_FIELD_NUMBER: _ClassVar[int]
    LAG_MS_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    ERROR_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_AT_FIELD_NUMBER: _ClassVar[int]
    WATCHED_DIRS_FIELD_NUMBER: _ClassVar[int]
    mode: WatchMode
    reason: str
    files: int
    last_event_at: _timestamp_pb2.Timestamp
    last_reconcile_at: _timestamp_pb2.Timestamp
    last_reconcile_ms: int
    last_reconcile: WatchReconcile
    lag_ms: int
    pending: int
    error_count: int
    last_error: str
    last_error_at: _timestamp_pb2.Timestamp
    watched_dirs: int
    def __init__(self, mode: _Optional[_Union[WatchMode, str]] = ..., reason: _Optional[str] = ..., files: _Optional[int] = ..., last_event_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_reconcile_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_reconcile_ms: _Optional[int] = ..., last_reconcile: _Optional[_Union[WatchReconcile, _Mapping]] = ..., lag_ms: _Optional[int] = ..., pending: _Optional[int] = ..., error_count: _Optional[int] = ..., last_error: _Optional[str] = ..., last_error_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., watched_dirs: _Optional[int] = ...) -> None: ...

class WatchReconcile(_message.Message):
    __slots__ = ("added", "updated", "moved", "missing", "unchanged", "failed")
    ADDED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    MOVED_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    added: int
    updated: int
    moved: int
    missing: int
    unchanged: int
    failed: int
    def __init__(self, added: _Optional[int] = ..., updated: _Optional[int] = ..., moved: _Optional[int] = ..., missing: _Optional[int] = ..., unchanged: _Optional[int] = ..., failed: _Optional[int] = ...) -> None: ...

class AddWatchRequest(_message.Message):
    __slots__ = ("path", "drive", "exclude", "include_hidden", "tags", "debounce_ms", "delete_missing")
    PATH_FIELD_NUMBER: _ClassVar[int]
    DRIVE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_HIDDEN_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    DEBOUNCE_MS_FIELD_NUMBER: _ClassVar[int]
    DELETE_MISSING_FIELD_NUMBER: _ClassVar[int]
    path: str
    drive: str
    exclude: _containers.RepeatedScalarFieldContainer[str]
    include_hidden: bool
    tags: _containers.RepeatedScalarFieldContainer[str]
    debounce_ms: int
    delete_missing: bool
    def __init__(self, path: _Optional[str] = ..., drive: _Optional[str] = ..., exclude: _Optional[_Iterable[str]] = ..., include_hidden: _Optional[bool] = ..., tags: _Optional[_Iterable[str]] = ..., debounce_ms: _Optional[int] = ..., delete_missing: _Optional[bool] = ...) -> None: ...

class AddWatchResponse(_message.Message):
    __slots__ = ("watch", "existed")
    WATCH_FIELD_NUMBER: _ClassVar[int]
    EXISTED_FIELD_NUMBER: _ClassVar[int]
    watch: Watch
    existed: bool
    def __init__(self, watch: _Optional[_Union[Watch, _Mapping]] = ..., existed: _Optional[bool] = ...) -> None: ...

class ListWatchesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListWatchesResponse(_message.Message):
    __slots__ = ("watches",)
    WATCHES_FIELD_NUMBER: _ClassVar[int]
    watches: _containers.RepeatedCompositeFieldContainer[Watch]
    def __init__(self, watches: _Optional[_Iterable[_Union[Watch, _Mapping]]] = ...) -> None: ...

class RemoveWatchRequest(_message.Message):
    __slots__ = ("watch",)
    WATCH_FIELD_NUMBER: _ClassVar[int]
    watch: str
    def __init__(self, watch: _Optional[str] = ...) -> None: ...

class RemoveWatchResponse(_message.Message):
    __slots__ = ("watch",)
    WATCH_FIELD_NUMBER: _ClassVar[int]
    watch: Watch
    def __init__(self, watch: _Optional[_Union[Watch, _Mapping]] = ...) -> None: ...
