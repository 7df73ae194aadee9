import datetime

from ctxd.v1 import types_pb2 as _types_pb2
from ctxd.v1 import watch_pb2 as _watch_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BackupRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BackupResponse(_message.Message):
    __slots__ = ("data", "summary")
    DATA_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    summary: BackupSummary
    def __init__(self, data: _Optional[bytes] = ..., summary: _Optional[_Union[BackupSummary, _Mapping]] = ...) -> None: ...

class BackupSummary(_message.Message):
    __slots__ = ("size", "sha256", "outbox_seq", "items", "taken_at", "source_store")
    SIZE_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    OUTBOX_SEQ_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    TAKEN_AT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_STORE_FIELD_NUMBER: _ClassVar[int]
    size: int
    sha256: str
    outbox_seq: int
    items: int
    taken_at: _timestamp_pb2.Timestamp
    source_store: str
    def __init__(self, size: _Optional[int] = ..., sha256: _Optional[str] = ..., outbox_seq: _Optional[int] = ..., items: _Optional[int] = ..., taken_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., source_store: _Optional[str] = ...) -> None: ...

class WhoAmIRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WhoAmIResponse(_message.Message):
    __slots__ = ("name", "scopes", "owner", "agent", "drives", "paths")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    DRIVES_FIELD_NUMBER: _ClassVar[int]
    PATHS_FIELD_NUMBER: _ClassVar[int]
    name: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    owner: bool
    agent: bool
    drives: _containers.RepeatedScalarFieldContainer[str]
    paths: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., owner: _Optional[bool] = ..., agent: _Optional[bool] = ..., drives: _Optional[_Iterable[str]] = ..., paths: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateSignInLinkRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CreateSignInLinkResponse(_message.Message):
    __slots__ = ("code", "url", "expires_at")
    CODE_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    code: str
    url: str
    expires_at: _timestamp_pb2.Timestamp
    def __init__(self, code: _Optional[str] = ..., url: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PruneRequest(_message.Message):
    __slots__ = ("unretrieved_seconds", "dry_run", "path_prefixes", "limit")
    UNRETRIEVED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    PATH_PREFIXES_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    unretrieved_seconds: int
    dry_run: bool
    path_prefixes: _containers.RepeatedScalarFieldContainer[str]
    limit: int
    def __init__(self, unretrieved_seconds: _Optional[int] = ..., dry_run: _Optional[bool] = ..., path_prefixes: _Optional[_Iterable[str]] = ..., limit: _Optional[int] = ...) -> None: ...

class PrunedItem(_message.Message):
    __slots__ = ("ref", "last_retrieved_at", "updated_at", "size", "delete_rev")
    REF_FIELD_NUMBER: _ClassVar[int]
    LAST_RETRIEVED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    DELETE_REV_FIELD_NUMBER: _ClassVar[int]
    ref: str
    last_retrieved_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    size: int
    delete_rev: int
    def __init__(self, ref: _Optional[str] = ..., last_retrieved_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., size: _Optional[int] = ..., delete_rev: _Optional[int] = ...) -> None: ...

class PruneResponse(_message.Message):
    __slots__ = ("items", "more", "deleted")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MORE_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[PrunedItem]
    more: bool
    deleted: bool
    def __init__(self, items: _Optional[_Iterable[_Union[PrunedItem, _Mapping]]] = ..., more: _Optional[bool] = ..., deleted: _Optional[bool] = ...) -> None: ...

class ReindexRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReindexResponse(_message.Message):
    __slots__ = ("lexical_chunks", "vector_chunks", "applied_sequence", "seconds")
    LEXICAL_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    VECTOR_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    APPLIED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    lexical_chunks: int
    vector_chunks: int
    applied_sequence: int
    seconds: float
    def __init__(self, lexical_chunks: _Optional[int] = ..., vector_chunks: _Optional[int] = ..., applied_sequence: _Optional[int] = ..., seconds: _Optional[float] = ...) -> None: ...

class DoctorRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DoctorResponse(_message.Message):
    __slots__ = ("ok", "problems", "store_chunks", "lexical_chunks", "store_vectors", "vector_chunks", "outbox_sequence", "applied_sequence")
    OK_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    STORE_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    STORE_VECTORS_FIELD_NUMBER: _ClassVar[int]
    VECTOR_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    OUTBOX_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    APPLIED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    problems: _containers.RepeatedScalarFieldContainer[str]
    store_chunks: int
    lexical_chunks: int
    store_vectors: int
    vector_chunks: int
    outbox_sequence: int
    applied_sequence: int
    def __init__(self, ok: _Optional[bool] = ..., problems: _Optional[_Iterable[str]] = ..., store_chunks: _Optional[int] = ..., lexical_chunks: _Optional[int] = ..., store_vectors: _Optional[int] = ..., vector_chunks: _Optional[int] = ..., outbox_sequence: _Optional[int] = ..., applied_sequence: _Optional[int] = ...) -> None: ...

class StatusRequest(_message.Message):
    __slots__ = ("disk",)
    DISK_FIELD_NUMBER: _ClassVar[int]
    disk: bool
    def __init__(self, disk: _Optional[bool] = ...) -> None: ...

class DiskComponent(_message.Message):
    __slots__ = ("name", "bytes", "used_bytes", "keys")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    USED_BYTES_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    name: str
    bytes: int
    used_bytes: int
    keys: int
    def __init__(self, name: _Optional[str] = ..., bytes: _Optional[int] = ..., used_bytes: _Optional[int] = ..., keys: _Optional[int] = ...) -> None: ...

class EmbeddingStatus(_message.Message):
    __slots__ = ("available", "unavailable_reason", "model_id", "dimensions", "embedded_chunks", "pending_chunks", "chunks_per_second", "pending_items", "chunks_with_questions", "chunks_without_questions", "pending_questions", "enricher", "loading", "embedded_here", "provider", "endpoint", "text_sent_to", "provider_error")
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_REASON_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    PENDING_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    PENDING_ITEMS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_WITH_QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_WITHOUT_QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    PENDING_QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    ENRICHER_FIELD_NUMBER: _ClassVar[int]
    LOADING_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_HERE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    TEXT_SENT_TO_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ERROR_FIELD_NUMBER: _ClassVar[int]
    available: bool
    unavailable_reason: str
    model_id: str
    dimensions: int
    embedded_chunks: int
    pending_chunks: int
    chunks_per_second: float
    pending_items: int
    chunks_with_questions: int
    chunks_without_questions: int
    pending_questions: int
    enricher: EnricherStatus
    loading: bool
    embedded_here: int
    provider: str
    endpoint: str
    text_sent_to: str
    provider_error: str
    def __init__(self, available: _Optional[bool] = ..., unavailable_reason: _Optional[str] = ..., model_id: _Optional[str] = ..., dimensions: _Optional[int] = ..., embedded_chunks: _Optional[int] = ..., pending_chunks: _Optional[int] = ..., chunks_per_second: _Optional[float] = ..., pending_items: _Optional[int] = ..., chunks_with_questions: _Optional[int] = ..., chunks_without_questions: _Optional[int] = ..., pending_questions: _Optional[int] = ..., enricher: _Optional[_Union[EnricherStatus, _Mapping]] = ..., loading: _Optional[bool] = ..., embedded_here: _Optional[int] = ..., provider: _Optional[str] = ..., endpoint: _Optional[str] = ..., text_sent_to: _Optional[str] = ..., provider_error: _Optional[str] = ...) -> None: ...

class EnricherStatus(_message.Message):
    __slots__ = ("endpoint", "model", "pending_chunks", "enriched_chunks", "failed_calls", "last_error", "last_error_at")
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PENDING_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    ENRICHED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    FAILED_CALLS_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_AT_FIELD_NUMBER: _ClassVar[int]
    endpoint: str
    model: str
    pending_chunks: int
    enriched_chunks: int
    failed_calls: int
    last_error: str
    last_error_at: _timestamp_pb2.Timestamp
    def __init__(self, endpoint: _Optional[str] = ..., model: _Optional[str] = ..., pending_chunks: _Optional[int] = ..., enriched_chunks: _Optional[int] = ..., failed_calls: _Optional[int] = ..., last_error: _Optional[str] = ..., last_error_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class IndexStatus(_message.Message):
    __slots__ = ("available", "unavailable_reason", "chunk_count", "outbox_sequence", "applied_sequence", "lexical_segments", "compacting")
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_REASON_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    OUTBOX_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    APPLIED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_SEGMENTS_FIELD_NUMBER: _ClassVar[int]
    COMPACTING_FIELD_NUMBER: _ClassVar[int]
    available: bool
    unavailable_reason: str
    chunk_count: int
    outbox_sequence: int
    applied_sequence: int
    lexical_segments: int
    compacting: bool
    def __init__(self, available: _Optional[bool] = ..., unavailable_reason: _Optional[str] = ..., chunk_count: _Optional[int] = ..., outbox_sequence: _Optional[int] = ..., applied_sequence: _Optional[int] = ..., lexical_segments: _Optional[int] = ..., compacting: _Optional[bool] = ...) -> None: ...

class StatusResponse(_message.Message):
    __slots__ = ("version", "started_at", "data_dir", "item_count", "size_bytes", "store_file_bytes", "drives", "embedding", "index", "disk", "store", "watches", "subscriptions", "last_doctor", "writes_per_second", "searches_per_second")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    DATA_DIR_FIELD_NUMBER: _ClassVar[int]
    ITEM_COUNT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    STORE_FILE_BYTES_FIELD_NUMBER: _ClassVar[int]
    DRIVES_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    DISK_FIELD_NUMBER: _ClassVar[int]
    STORE_FIELD_NUMBER: _ClassVar[int]
    WATCHES_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    LAST_DOCTOR_FIELD_NUMBER: _ClassVar[int]
    WRITES_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    SEARCHES_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    version: str
    started_at: _timestamp_pb2.Timestamp
    data_dir: str
    item_count: int
    size_bytes: int
    store_file_bytes: int
    drives: _containers.RepeatedCompositeFieldContainer[_types_pb2.DriveInfo]
    embedding: EmbeddingStatus
    index: IndexStatus
    disk: _containers.RepeatedCompositeFieldContainer[DiskComponent]
    store: StoreStatus
    watches: _containers.RepeatedCompositeFieldContainer[_watch_pb2.Watch]
    subscriptions: SubscriptionCounts
    last_doctor: DoctorRun
    writes_per_second: float
    searches_per_second: float
    def __init__(self, version: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., data_dir: _Optional[str] = ..., item_count: _Optional[int] = ..., size_bytes: _Optional[int] = ..., store_file_bytes: _Optional[int] = ..., drives: _Optional[_Iterable[_Union[_types_pb2.DriveInfo, _Mapping]]] = ..., embedding: _Optional[_Union[EmbeddingStatus, _Mapping]] = ..., index: _Optional[_Union[IndexStatus, _Mapping]] = ..., disk: _Optional[_Iterable[_Union[DiskComponent, _Mapping]]] = ..., store: _Optional[_Union[StoreStatus, _Mapping]] = ..., watches: _Optional[_Iterable[_Union[_watch_pb2.Watch, _Mapping]]] = ..., subscriptions: _Optional[_Union[SubscriptionCounts, _Mapping]] = ..., last_doctor: _Optional[_Union[DoctorRun, _Mapping]] = ..., writes_per_second: _Optional[float] = ..., searches_per_second: _Optional[float] = ...) -> None: ...

class DoctorRun(_message.Message):
    __slots__ = ("finished_at", "seconds", "result")
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    finished_at: _timestamp_pb2.Timestamp
    seconds: float
    result: DoctorResponse
    def __init__(self, finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., seconds: _Optional[float] = ..., result: _Optional[_Union[DoctorResponse, _Mapping]] = ...) -> None: ...

class SubscriptionCounts(_message.Message):
    __slots__ = ("durable", "streams", "cut_off")
    DURABLE_FIELD_NUMBER: _ClassVar[int]
    STREAMS_FIELD_NUMBER: _ClassVar[int]
    CUT_OFF_FIELD_NUMBER: _ClassVar[int]
    durable: int
    streams: int
    cut_off: int
    def __init__(self, durable: _Optional[int] = ..., streams: _Optional[int] = ..., cut_off: _Optional[int] = ...) -> None: ...

class StoreStatus(_message.Message):
    __slots__ = ("location", "shared", "reachable", "unreachable_reason", "unreachable_since", "replica_id", "outbox_sequence", "replicas")
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    SHARED_FIELD_NUMBER: _ClassVar[int]
    REACHABLE_FIELD_NUMBER: _ClassVar[int]
    UNREACHABLE_REASON_FIELD_NUMBER: _ClassVar[int]
    UNREACHABLE_SINCE_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    OUTBOX_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    location: str
    shared: bool
    reachable: bool
    unreachable_reason: str
    unreachable_since: _timestamp_pb2.Timestamp
    replica_id: str
    outbox_sequence: int
    replicas: _containers.RepeatedCompositeFieldContainer[ReplicaStatus]
    def __init__(self, location: _Optional[str] = ..., shared: _Optional[bool] = ..., reachable: _Optional[bool] = ..., unreachable_reason: _Optional[str] = ..., unreachable_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., replica_id: _Optional[str] = ..., outbox_sequence: _Optional[int] = ..., replicas: _Optional[_Iterable[_Union[ReplicaStatus, _Mapping]]] = ...) -> None: ...

class ReplicaStatus(_message.Message):
    __slots__ = ("id", "host", "applied_sequence", "lag_changes", "lag_seconds", "reported_at", "gone", "self")
    ID_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    APPLIED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    LAG_CHANGES_FIELD_NUMBER: _ClassVar[int]
    LAG_SECONDS_FIELD_NUMBER: _ClassVar[int]
    REPORTED_AT_FIELD_NUMBER: _ClassVar[int]
    GONE_FIELD_NUMBER: _ClassVar[int]
    SELF_FIELD_NUMBER: _ClassVar[int]
    id: str
    host: str
    applied_sequence: int
    lag_changes: int
    lag_seconds: float
    reported_at: _timestamp_pb2.Timestamp
    gone: bool
    self: bool
    def __init__(self_, id: _Optional[str] = ..., host: _Optional[str] = ..., applied_sequence: _Optional[int] = ..., lag_changes: _Optional[int] = ..., lag_seconds: _Optional[float] = ..., reported_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., gone: _Optional[bool] = ..., self: _Optional[bool] = ...) -> None: ...
