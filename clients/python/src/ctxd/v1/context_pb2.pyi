from ctxd.v1 import search_pb2 as _search_pb2
from ctxd.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InitRequest(_message.Message):
    __slots__ = ("root",)
    ROOT_FIELD_NUMBER: _ClassVar[int]
    root: str
    def __init__(self, root: _Optional[str] = ...) -> None: ...

class InitResponse(_message.Message):
    __slots__ = ("created", "existing")
    CREATED_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    created: _containers.RepeatedScalarFieldContainer[str]
    existing: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, created: _Optional[_Iterable[str]] = ..., existing: _Optional[_Iterable[str]] = ...) -> None: ...

class UpdateRequest(_message.Message):
    __slots__ = ("ref", "body", "expected_content_hash")
    REF_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    ref: str
    body: str
    expected_content_hash: str
    def __init__(self, ref: _Optional[str] = ..., body: _Optional[str] = ..., expected_content_hash: _Optional[str] = ...) -> None: ...

class UpdateResponse(_message.Message):
    __slots__ = ("item", "warnings")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    item: _types_pb2.Item
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, item: _Optional[_Union[_types_pb2.Item, _Mapping]] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class BuildContextRequest(_message.Message):
    __slots__ = ("task", "budget", "roots", "filter", "limit", "mode")
    TASK_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    ROOTS_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    task: str
    budget: int
    roots: _containers.RepeatedScalarFieldContainer[str]
    filter: _search_pb2.SearchFilter
    limit: int
    mode: _search_pb2.SearchMode
    def __init__(self, task: _Optional[str] = ..., budget: _Optional[int] = ..., roots: _Optional[_Iterable[str]] = ..., filter: _Optional[_Union[_search_pb2.SearchFilter, _Mapping]] = ..., limit: _Optional[int] = ..., mode: _Optional[_Union[_search_pb2.SearchMode, str]] = ...) -> None: ...

class ContextSection(_message.Message):
    __slots__ = ("kind", "ref", "heading", "text", "tokens", "matched_terms", "score", "item", "start_line", "end_line")
    KIND_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    HEADING_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    MATCHED_TERMS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    kind: str
    ref: str
    heading: str
    text: str
    tokens: int
    matched_terms: _containers.RepeatedScalarFieldContainer[str]
    score: float
    item: _types_pb2.Item
    start_line: int
    end_line: int
    def __init__(self, kind: _Optional[str] = ..., ref: _Optional[str] = ..., heading: _Optional[str] = ..., text: _Optional[str] = ..., tokens: _Optional[int] = ..., matched_terms: _Optional[_Iterable[str]] = ..., score: _Optional[float] = ..., item: _Optional[_Union[_types_pb2.Item, _Mapping]] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ...) -> None: ...

class ContextOmission(_message.Message):
    __slots__ = ("ref", "kind", "reason", "tokens", "heading")
    REF_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    HEADING_FIELD_NUMBER: _ClassVar[int]
    ref: str
    kind: str
    reason: str
    tokens: int
    heading: str
    def __init__(self, ref: _Optional[str] = ..., kind: _Optional[str] = ..., reason: _Optional[str] = ..., tokens: _Optional[int] = ..., heading: _Optional[str] = ...) -> None: ...

class BuildContextResponse(_message.Message):
    __slots__ = ("sections", "markdown", "omitted", "tokens_used", "budget", "warnings", "stale", "stale_reason")
    SECTIONS_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    OMITTED_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    STALE_REASON_FIELD_NUMBER: _ClassVar[int]
    sections: _containers.RepeatedCompositeFieldContainer[ContextSection]
    markdown: str
    omitted: _containers.RepeatedCompositeFieldContainer[ContextOmission]
    tokens_used: int
    budget: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    stale: bool
    stale_reason: str
    def __init__(self, sections: _Optional[_Iterable[_Union[ContextSection, _Mapping]]] = ..., markdown: _Optional[str] = ..., omitted: _Optional[_Iterable[_Union[ContextOmission, _Mapping]]] = ..., tokens_used: _Optional[int] = ..., budget: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ..., stale: _Optional[bool] = ..., stale_reason: _Optional[str] = ...) -> None: ...

class CompactRequest(_message.Message):
    __slots__ = ("ref", "min_tokens", "target_tokens", "dry_run", "expected_content_hash")
    REF_FIELD_NUMBER: _ClassVar[int]
    MIN_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TARGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    ref: str
    min_tokens: int
    target_tokens: int
    dry_run: bool
    expected_content_hash: str
    def __init__(self, ref: _Optional[str] = ..., min_tokens: _Optional[int] = ..., target_tokens: _Optional[int] = ..., dry_run: _Optional[bool] = ..., expected_content_hash: _Optional[str] = ...) -> None: ...

class CompactResponse(_message.Message):
    __slots__ = ("compacted", "tokens_before", "tokens_after", "body", "method", "item", "previous_rev", "enricher_error")
    COMPACTED_FIELD_NUMBER: _ClassVar[int]
    TOKENS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_AFTER_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_REV_FIELD_NUMBER: _ClassVar[int]
    ENRICHER_ERROR_FIELD_NUMBER: _ClassVar[int]
    compacted: bool
    tokens_before: int
    tokens_after: int
    body: str
    method: str
    item: _types_pb2.Item
    previous_rev: int
    enricher_error: str
    def __init__(self, compacted: _Optional[bool] = ..., tokens_before: _Optional[int] = ..., tokens_after: _Optional[int] = ..., body: _Optional[str] = ..., method: _Optional[str] = ..., item: _Optional[_Union[_types_pb2.Item, _Mapping]] = ..., previous_rev: _Optional[int] = ..., enricher_error: _Optional[str] = ...) -> None: ...
