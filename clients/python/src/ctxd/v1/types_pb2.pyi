import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class OnConflict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ON_CONFLICT_UNSPECIFIED: _ClassVar[OnConflict]
    ON_CONFLICT_ERROR: _ClassVar[OnConflict]
    ON_CONFLICT_OVERWRITE: _ClassVar[OnConflict]
    ON_CONFLICT_SKIP: _ClassVar[OnConflict]
ON_CONFLICT_UNSPECIFIED: OnConflict
ON_CONFLICT_ERROR: OnConflict
ON_CONFLICT_OVERWRITE: OnConflict
ON_CONFLICT_SKIP: OnConflict

class Item(_message.Message):
    __slots__ = ("id", "ref", "drive", "path", "title", "description", "mime_type", "is_text", "is_dir", "size_bytes", "content_hash", "source_url", "tags", "importance", "created_at", "updated_at", "indexed_at", "retrieval_count", "last_retrieved_at", "line_count", "origin", "loading", "agent_modification")
    ID_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    DRIVE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    IS_TEXT_FIELD_NUMBER: _ClassVar[int]
    IS_DIR_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URL_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    INDEXED_AT_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_RETRIEVED_AT_FIELD_NUMBER: _ClassVar[int]
    LINE_COUNT_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    LOADING_FIELD_NUMBER: _ClassVar[int]
    AGENT_MODIFICATION_FIELD_NUMBER: _ClassVar[int]
    id: str
    ref: str
    drive: str
    path: str
    title: str
    description: str
    mime_type: str
    is_text: bool
    is_dir: bool
    size_bytes: int
    content_hash: str
    source_url: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    importance: float
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    indexed_at: _timestamp_pb2.Timestamp
    retrieval_count: int
    last_retrieved_at: _timestamp_pb2.Timestamp
    line_count: int
    origin: ItemOrigin
    loading: str
    agent_modification: bool
    def __init__(self, id: _Optional[str] = ..., ref: _Optional[str] = ..., drive: _Optional[str] = ..., path: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., mime_type: _Optional[str] = ..., is_text: _Optional[bool] = ..., is_dir: _Optional[bool] = ..., size_bytes: _Optional[int] = ..., content_hash: _Optional[str] = ..., source_url: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., importance: _Optional[float] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., indexed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., retrieval_count: _Optional[int] = ..., last_retrieved_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., line_count: _Optional[int] = ..., origin: _Optional[_Union[ItemOrigin, _Mapping]] = ..., loading: _Optional[str] = ..., agent_modification: _Optional[bool] = ...) -> None: ...

class ItemOrigin(_message.Message):
    __slots__ = ("modified_at", "size_bytes", "etag", "last_modified", "checked_at", "ttl_seconds", "title")
    MODIFIED_AT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    LAST_MODIFIED_FIELD_NUMBER: _ClassVar[int]
    CHECKED_AT_FIELD_NUMBER: _ClassVar[int]
    TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    modified_at: _timestamp_pb2.Timestamp
    size_bytes: int
    etag: str
    last_modified: str
    checked_at: _timestamp_pb2.Timestamp
    ttl_seconds: int
    title: str
    def __init__(self, modified_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., size_bytes: _Optional[int] = ..., etag: _Optional[str] = ..., last_modified: _Optional[str] = ..., checked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ttl_seconds: _Optional[int] = ..., title: _Optional[str] = ...) -> None: ...

class Embedding(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class TreeNode(_message.Message):
    __slots__ = ("name", "ref", "is_dir", "size_bytes", "mime_type", "children", "omitted_children", "depth_truncated")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    IS_DIR_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    OMITTED_CHILDREN_FIELD_NUMBER: _ClassVar[int]
    DEPTH_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    name: str
    ref: str
    is_dir: bool
    size_bytes: int
    mime_type: str
    children: _containers.RepeatedCompositeFieldContainer[TreeNode]
    omitted_children: int
    depth_truncated: bool
    def __init__(self, name: _Optional[str] = ..., ref: _Optional[str] = ..., is_dir: _Optional[bool] = ..., size_bytes: _Optional[int] = ..., mime_type: _Optional[str] = ..., children: _Optional[_Iterable[_Union[TreeNode, _Mapping]]] = ..., omitted_children: _Optional[int] = ..., depth_truncated: _Optional[bool] = ...) -> None: ...

class DriveInfo(_message.Message):
    __slots__ = ("name", "item_count", "size_bytes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ITEM_COUNT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    name: str
    item_count: int
    size_bytes: int
    def __init__(self, name: _Optional[str] = ..., item_count: _Optional[int] = ..., size_bytes: _Optional[int] = ...) -> None: ...
