import datetime

from ctxd.v1 import types_pb2 as _types_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ChunksRequest(_message.Message):
    __slots__ = ("ref",)
    REF_FIELD_NUMBER: _ClassVar[int]
    ref: str
    def __init__(self, ref: _Optional[str] = ...) -> None: ...

class ChunkInfo(_message.Message):
    __slots__ = ("start_byte", "end_byte", "start_line", "end_line", "heading", "tokens", "embedded", "generated_questions")
    START_BYTE_FIELD_NUMBER: _ClassVar[int]
    END_BYTE_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    HEADING_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    GENERATED_QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    start_byte: int
    end_byte: int
    start_line: int
    end_line: int
    heading: str
    tokens: int
    embedded: bool
    generated_questions: _containers.RepeatedCompositeFieldContainer[QuestionInfo]
    def __init__(self, start_byte: _Optional[int] = ..., end_byte: _Optional[int] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., heading: _Optional[str] = ..., tokens: _Optional[int] = ..., embedded: _Optional[bool] = ..., generated_questions: _Optional[_Iterable[_Union[QuestionInfo, _Mapping]]] = ...) -> None: ...

class QuestionInfo(_message.Message):
    __slots__ = ("text", "embedded")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    text: str
    embedded: bool
    def __init__(self, text: _Optional[str] = ..., embedded: _Optional[bool] = ...) -> None: ...

class ChunksResponse(_message.Message):
    __slots__ = ("chunks", "questions")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[ChunkInfo]
    questions: _containers.RepeatedCompositeFieldContainer[QuestionInfo]
    def __init__(self, chunks: _Optional[_Iterable[_Union[ChunkInfo, _Mapping]]] = ..., questions: _Optional[_Iterable[_Union[QuestionInfo, _Mapping]]] = ...) -> None: ...

class DiffRequest(_message.Message):
    __slots__ = ("ref", "from_rev", "to_rev", "context_lines")
    REF_FIELD_NUMBER: _ClassVar[int]
    FROM_REV_FIELD_NUMBER: _ClassVar[int]
    TO_REV_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_LINES_FIELD_NUMBER: _ClassVar[int]
    ref: str
    from_rev: int
    to_rev: int
    context_lines: int
    def __init__(self, ref: _Optional[str] = ..., from_rev: _Optional[int] = ..., to_rev: _Optional[int] = ..., context_lines: _Optional[int] = ...) -> None: ...

class DiffResponse(_message.Message):
    __slots__ = ("from_rev", "to_rev", "unified", "added", "removed", "binary", "truncated")
    FROM_REV_FIELD_NUMBER: _ClassVar[int]
    TO_REV_FIELD_NUMBER: _ClassVar[int]
    UNIFIED_FIELD_NUMBER: _ClassVar[int]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    BINARY_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    from_rev: int
    to_rev: int
    unified: str
    added: int
    removed: int
    binary: bool
    truncated: bool
    def __init__(self, from_rev: _Optional[int] = ..., to_rev: _Optional[int] = ..., unified: _Optional[str] = ..., added: _Optional[int] = ..., removed: _Optional[int] = ..., binary: _Optional[bool] = ..., truncated: _Optional[bool] = ...) -> None: ...

class ListDrivesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListDrivesResponse(_message.Message):
    __slots__ = ("drives",)
    DRIVES_FIELD_NUMBER: _ClassVar[int]
    drives: _containers.RepeatedCompositeFieldContainer[_types_pb2.DriveInfo]
    def __init__(self, drives: _Optional[_Iterable[_Union[_types_pb2.DriveInfo, _Mapping]]] = ...) -> None: ...

class TreeRequest(_message.Message):
    __slots__ = ("ref", "max_depth", "items_per_dir")
    REF_FIELD_NUMBER: _ClassVar[int]
    MAX_DEPTH_FIELD_NUMBER: _ClassVar[int]
    ITEMS_PER_DIR_FIELD_NUMBER: _ClassVar[int]
    ref: str
    max_depth: int
    items_per_dir: int
    def __init__(self, ref: _Optional[str] = ..., max_depth: _Optional[int] = ..., items_per_dir: _Optional[int] = ...) -> None: ...

class TreeResponse(_message.Message):
    __slots__ = ("root", "rendered")
    ROOT_FIELD_NUMBER: _ClassVar[int]
    RENDERED_FIELD_NUMBER: _ClassVar[int]
    root: _types_pb2.TreeNode
    rendered: str
    def __init__(self, root: _Optional[_Union[_types_pb2.TreeNode, _Mapping]] = ..., rendered: _Optional[str] = ...) -> None: ...

class ListRequest(_message.Message):
    __slots__ = ("ref", "recursive", "limit", "page_token")
    REF_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ref: str
    recursive: bool
    limit: int
    page_token: str
    def __init__(self, ref: _Optional[str] = ..., recursive: _Optional[bool] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListEntry(_message.Message):
    __slots__ = ("ref", "name", "is_dir", "item")
    REF_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    IS_DIR_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    ref: str
    name: str
    is_dir: bool
    item: _types_pb2.Item
    def __init__(self, ref: _Optional[str] = ..., name: _Optional[str] = ..., is_dir: _Optional[bool] = ..., item: _Optional[_Union[_types_pb2.Item, _Mapping]] = ...) -> None: ...

class ListResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[ListEntry]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[ListEntry, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ReadRequest(_message.Message):
    __slots__ = ("ref", "line_offset", "line_limit", "raw")
    REF_FIELD_NUMBER: _ClassVar[int]
    LINE_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LINE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    ref: str
    line_offset: int
    line_limit: int
    raw: bool
    def __init__(self, ref: _Optional[str] = ..., line_offset: _Optional[int] = ..., line_limit: _Optional[int] = ..., raw: _Optional[bool] = ...) -> None: ...

class ReadResponse(_message.Message):
    __slots__ = ("item", "content", "data", "start_line", "end_line", "total_lines", "has_more")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    item: _types_pb2.Item
    content: str
    data: bytes
    start_line: int
    end_line: int
    total_lines: int
    has_more: bool
    def __init__(self, item: _Optional[_Union[_types_pb2.Item, _Mapping]] = ..., content: _Optional[str] = ..., data: _Optional[bytes] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., total_lines: _Optional[int] = ..., has_more: _Optional[bool] = ...) -> None: ...

class WriteRequest(_message.Message):
    __slots__ = ("ref", "content", "data", "mime_type", "title", "description", "tags", "importance", "source_url", "on_conflict", "expected_content_hash", "chunk_embeddings", "embedding_model", "questions", "id")
    REF_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URL_FIELD_NUMBER: _ClassVar[int]
    ON_CONFLICT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    CHUNK_EMBEDDINGS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    ref: str
    content: str
    data: bytes
    mime_type: str
    title: str
    description: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    importance: float
    source_url: str
    on_conflict: _types_pb2.OnConflict
    expected_content_hash: str
    chunk_embeddings: _containers.RepeatedCompositeFieldContainer[_types_pb2.Embedding]
    embedding_model: str
    questions: _containers.RepeatedScalarFieldContainer[str]
    id: str
    def __init__(self, ref: _Optional[str] = ..., content: _Optional[str] = ..., data: _Optional[bytes] = ..., mime_type: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., importance: _Optional[float] = ..., source_url: _Optional[str] = ..., on_conflict: _Optional[_Union[_types_pb2.OnConflict, str]] = ..., expected_content_hash: _Optional[str] = ..., chunk_embeddings: _Optional[_Iterable[_Union[_types_pb2.Embedding, _Mapping]]] = ..., embedding_model: _Optional[str] = ..., questions: _Optional[_Iterable[str]] = ..., id: _Optional[str] = ...) -> None: ...

class WriteResponse(_message.Message):
    __slots__ = ("item", "created", "skipped", "tree", "warnings")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    TREE_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    item: _types_pb2.Item
    created: bool
    skipped: bool
    tree: TreeResponse
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, item: _Optional[_Union[_types_pb2.Item, _Mapping]] = ..., created: _Optional[bool] = ..., skipped: _Optional[bool] = ..., tree: _Optional[_Union[TreeResponse, _Mapping]] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class WriteBatchRequest(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[WriteRequest]
    def __init__(self, items: _Optional[_Iterable[_Union[WriteRequest, _Mapping]]] = ...) -> None: ...

class WriteBatchResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[WriteResponse]
    def __init__(self, results: _Optional[_Iterable[_Union[WriteResponse, _Mapping]]] = ...) -> None: ...

class Patch(_message.Message):
    __slots__ = ("start_line", "end_line", "content")
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    start_line: int
    end_line: int
    content: str
    def __init__(self, start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., content: _Optional[str] = ...) -> None: ...

class EditRequest(_message.Message):
    __slots__ = ("ref", "patches", "expected_content_hash")
    REF_FIELD_NUMBER: _ClassVar[int]
    PATCHES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    ref: str
    patches: _containers.RepeatedCompositeFieldContainer[Patch]
    expected_content_hash: str
    def __init__(self, ref: _Optional[str] = ..., patches: _Optional[_Iterable[_Union[Patch, _Mapping]]] = ..., expected_content_hash: _Optional[str] = ...) -> None: ...

class EditResponse(_message.Message):
    __slots__ = ("item", "lines_before", "lines_after", "warnings")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    LINES_BEFORE_FIELD_NUMBER: _ClassVar[int]
    LINES_AFTER_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    item: _types_pb2.Item
    lines_before: int
    lines_after: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, item: _Optional[_Union[_types_pb2.Item, _Mapping]] = ..., lines_before: _Optional[int] = ..., lines_after: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("ref", "recursive")
    REF_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    ref: str
    recursive: bool
    def __init__(self, ref: _Optional[str] = ..., recursive: _Optional[bool] = ...) -> None: ...

class DeleteResponse(_message.Message):
    __slots__ = ("deleted_count",)
    DELETED_COUNT_FIELD_NUMBER: _ClassVar[int]
    deleted_count: int
    def __init__(self, deleted_count: _Optional[int] = ...) -> None: ...

class CopyRequest(_message.Message):
    __slots__ = ("source_ref", "destination_ref", "recursive", "on_conflict")
    SOURCE_REF_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_REF_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    ON_CONFLICT_FIELD_NUMBER: _ClassVar[int]
    source_ref: str
    destination_ref: str
    recursive: bool
    on_conflict: _types_pb2.OnConflict
    def __init__(self, source_ref: _Optional[str] = ..., destination_ref: _Optional[str] = ..., recursive: _Optional[bool] = ..., on_conflict: _Optional[_Union[_types_pb2.OnConflict, str]] = ...) -> None: ...

class CopyResponse(_message.Message):
    __slots__ = ("copied_count", "skipped_count", "destination_ref")
    COPIED_COUNT_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_COUNT_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_REF_FIELD_NUMBER: _ClassVar[int]
    copied_count: int
    skipped_count: int
    destination_ref: str
    def __init__(self, copied_count: _Optional[int] = ..., skipped_count: _Optional[int] = ..., destination_ref: _Optional[str] = ...) -> None: ...

class MoveRequest(_message.Message):
    __slots__ = ("source_ref", "destination_ref", "on_conflict")
    SOURCE_REF_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_REF_FIELD_NUMBER: _ClassVar[int]
    ON_CONFLICT_FIELD_NUMBER: _ClassVar[int]
    source_ref: str
    destination_ref: str
    on_conflict: _types_pb2.OnConflict
    def __init__(self, source_ref: _Optional[str] = ..., destination_ref: _Optional[str] = ..., on_conflict: _Optional[_Union[_types_pb2.OnConflict, str]] = ...) -> None: ...

class MoveResponse(_message.Message):
    __slots__ = ("moved_count", "skipped_count", "destination_ref")
    MOVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_COUNT_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_REF_FIELD_NUMBER: _ClassVar[int]
    moved_count: int
    skipped_count: int
    destination_ref: str
    def __init__(self, moved_count: _Optional[int] = ..., skipped_count: _Optional[int] = ..., destination_ref: _Optional[str] = ...) -> None: ...

class InfoRequest(_message.Message):
    __slots__ = ("ref",)
    REF_FIELD_NUMBER: _ClassVar[int]
    ref: str
    def __init__(self, ref: _Optional[str] = ...) -> None: ...

class InfoResponse(_message.Message):
    __slots__ = ("item", "item_count")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    ITEM_COUNT_FIELD_NUMBER: _ClassVar[int]
    item: _types_pb2.Item
    item_count: int
    def __init__(self, item: _Optional[_Union[_types_pb2.Item, _Mapping]] = ..., item_count: _Optional[int] = ...) -> None: ...

class ExistsRequest(_message.Message):
    __slots__ = ("ref",)
    REF_FIELD_NUMBER: _ClassVar[int]
    ref: str
    def __init__(self, ref: _Optional[str] = ...) -> None: ...

class ExistsResponse(_message.Message):
    __slots__ = ("exists", "is_dir")
    EXISTS_FIELD_NUMBER: _ClassVar[int]
    IS_DIR_FIELD_NUMBER: _ClassVar[int]
    exists: bool
    is_dir: bool
    def __init__(self, exists: _Optional[bool] = ..., is_dir: _Optional[bool] = ...) -> None: ...

class MakeDirRequest(_message.Message):
    __slots__ = ("ref", "id")
    REF_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    ref: str
    id: str
    def __init__(self, ref: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class MakeDirResponse(_message.Message):
    __slots__ = ("created", "ref")
    CREATED_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    created: bool
    ref: str
    def __init__(self, created: _Optional[bool] = ..., ref: _Optional[str] = ...) -> None: ...

class DirSizeRequest(_message.Message):
    __slots__ = ("ref",)
    REF_FIELD_NUMBER: _ClassVar[int]
    ref: str
    def __init__(self, ref: _Optional[str] = ...) -> None: ...

class DirSizeResponse(_message.Message):
    __slots__ = ("size_bytes", "item_count")
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    ITEM_COUNT_FIELD_NUMBER: _ClassVar[int]
    size_bytes: int
    item_count: int
    def __init__(self, size_bytes: _Optional[int] = ..., item_count: _Optional[int] = ...) -> None: ...

class CountLinesRequest(_message.Message):
    __slots__ = ("ref",)
    REF_FIELD_NUMBER: _ClassVar[int]
    ref: str
    def __init__(self, ref: _Optional[str] = ...) -> None: ...

class CountLinesResponse(_message.Message):
    __slots__ = ("lines",)
    LINES_FIELD_NUMBER: _ClassVar[int]
    lines: int
    def __init__(self, lines: _Optional[int] = ...) -> None: ...

class Revision(_message.Message):
    __slots__ = ("item_id", "ref", "rev", "time", "actor", "op", "content_hash", "size_bytes", "deleted", "item")
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    REV_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    item_id: str
    ref: str
    rev: int
    time: _timestamp_pb2.Timestamp
    actor: str
    op: str
    content_hash: str
    size_bytes: int
    deleted: bool
    item: _types_pb2.Item
    def __init__(self, item_id: _Optional[str] = ..., ref: _Optional[str] = ..., rev: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., actor: _Optional[str] = ..., op: _Optional[str] = ..., content_hash: _Optional[str] = ..., size_bytes: _Optional[int] = ..., deleted: _Optional[bool] = ..., item: _Optional[_Union[_types_pb2.Item, _Mapping]] = ...) -> None: ...

class HistoryRequest(_message.Message):
    __slots__ = ("ref", "limit", "before_rev")
    REF_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    BEFORE_REV_FIELD_NUMBER: _ClassVar[int]
    ref: str
    limit: int
    before_rev: int
    def __init__(self, ref: _Optional[str] = ..., limit: _Optional[int] = ..., before_rev: _Optional[int] = ...) -> None: ...

class HistoryResponse(_message.Message):
    __slots__ = ("revisions",)
    REVISIONS_FIELD_NUMBER: _ClassVar[int]
    revisions: _containers.RepeatedCompositeFieldContainer[Revision]
    def __init__(self, revisions: _Optional[_Iterable[_Union[Revision, _Mapping]]] = ...) -> None: ...

class ReadRevisionRequest(_message.Message):
    __slots__ = ("ref", "rev", "raw")
    REF_FIELD_NUMBER: _ClassVar[int]
    REV_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    ref: str
    rev: int
    raw: bool
    def __init__(self, ref: _Optional[str] = ..., rev: _Optional[int] = ..., raw: _Optional[bool] = ...) -> None: ...

class ReadRevisionResponse(_message.Message):
    __slots__ = ("revision", "content", "data")
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    revision: Revision
    content: str
    data: bytes
    def __init__(self, revision: _Optional[_Union[Revision, _Mapping]] = ..., content: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class RevertRequest(_message.Message):
    __slots__ = ("ref", "rev")
    REF_FIELD_NUMBER: _ClassVar[int]
    REV_FIELD_NUMBER: _ClassVar[int]
    ref: str
    rev: int
    def __init__(self, ref: _Optional[str] = ..., rev: _Optional[int] = ...) -> None: ...

class RevertResponse(_message.Message):
    __slots__ = ("item", "created", "warnings")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    item: _types_pb2.Item
    created: bool
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, item: _Optional[_Union[_types_pb2.Item, _Mapping]] = ..., created: _Optional[bool] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class ListDeletedRequest(_message.Message):
    __slots__ = ("ref", "limit")
    REF_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    ref: str
    limit: int
    def __init__(self, ref: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ListDeletedResponse(_message.Message):
    __slots__ = ("revisions",)
    REVISIONS_FIELD_NUMBER: _ClassVar[int]
    revisions: _containers.RepeatedCompositeFieldContainer[Revision]
    def __init__(self, revisions: _Optional[_Iterable[_Union[Revision, _Mapping]]] = ...) -> None: ...

class LogRequest(_message.Message):
    __slots__ = ("actor", "since", "limit", "page_token")
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    actor: str
    since: _timestamp_pb2.Timestamp
    limit: int
    page_token: str
    def __init__(self, actor: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class LogResponse(_message.Message):
    __slots__ = ("revisions", "next_page_token")
    REVISIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    revisions: _containers.RepeatedCompositeFieldContainer[Revision]
    next_page_token: str
    def __init__(self, revisions: _Optional[_Iterable[_Union[Revision, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
