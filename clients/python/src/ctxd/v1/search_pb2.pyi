from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SearchMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEARCH_MODE_UNSPECIFIED: _ClassVar[SearchMode]
    SEARCH_MODE_HYBRID: _ClassVar[SearchMode]
    SEARCH_MODE_BM25: _ClassVar[SearchMode]
    SEARCH_MODE_VECTOR: _ClassVar[SearchMode]

class SearchLeg(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEARCH_LEG_UNSPECIFIED: _ClassVar[SearchLeg]
    SEARCH_LEG_BM25: _ClassVar[SearchLeg]
    SEARCH_LEG_SUBSTRING: _ClassVar[SearchLeg]
    SEARCH_LEG_VECTOR: _ClassVar[SearchLeg]

class SearchGroupBy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEARCH_GROUP_BY_UNSPECIFIED: _ClassVar[SearchGroupBy]
    SEARCH_GROUP_BY_CHUNK: _ClassVar[SearchGroupBy]
    SEARCH_GROUP_BY_ITEM: _ClassVar[SearchGroupBy]

class SearchToggle(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEARCH_TOGGLE_UNSPECIFIED: _ClassVar[SearchToggle]
    SEARCH_TOGGLE_ON: _ClassVar[SearchToggle]
    SEARCH_TOGGLE_OFF: _ClassVar[SearchToggle]
SEARCH_MODE_UNSPECIFIED: SearchMode
SEARCH_MODE_HYBRID: SearchMode
SEARCH_MODE_BM25: SearchMode
SEARCH_MODE_VECTOR: SearchMode
SEARCH_LEG_UNSPECIFIED: SearchLeg
SEARCH_LEG_BM25: SearchLeg
SEARCH_LEG_SUBSTRING: SearchLeg
SEARCH_LEG_VECTOR: SearchLeg
SEARCH_GROUP_BY_UNSPECIFIED: SearchGroupBy
SEARCH_GROUP_BY_CHUNK: SearchGroupBy
SEARCH_GROUP_BY_ITEM: SearchGroupBy
SEARCH_TOGGLE_UNSPECIFIED: SearchToggle
SEARCH_TOGGLE_ON: SearchToggle
SEARCH_TOGGLE_OFF: SearchToggle

class SearchQuery(_message.Message):
    __slots__ = ("text", "vector")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    VECTOR_FIELD_NUMBER: _ClassVar[int]
    text: str
    vector: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, text: _Optional[str] = ..., vector: _Optional[_Iterable[float]] = ...) -> None: ...

class SearchFilter(_message.Message):
    __slots__ = ("drives", "path_prefixes", "mime_types", "tags")
    DRIVES_FIELD_NUMBER: _ClassVar[int]
    PATH_PREFIXES_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPES_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    drives: _containers.RepeatedScalarFieldContainer[str]
    path_prefixes: _containers.RepeatedScalarFieldContainer[str]
    mime_types: _containers.RepeatedScalarFieldContainer[str]
    tags: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, drives: _Optional[_Iterable[str]] = ..., path_prefixes: _Optional[_Iterable[str]] = ..., mime_types: _Optional[_Iterable[str]] = ..., tags: _Optional[_Iterable[str]] = ...) -> None: ...

class LegWeight(_message.Message):
    __slots__ = ("leg", "weight")
    LEG_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    leg: SearchLeg
    weight: float
    def __init__(self, leg: _Optional[_Union[SearchLeg, str]] = ..., weight: _Optional[float] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("queries", "mode", "filter", "limit", "token_budget", "snippet_length", "max_chunks_per_item", "leg_weights", "rrf_k", "group_by", "min_score", "importance_weight", "usage_weight", "proximity", "recency", "explain")
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_LENGTH_FIELD_NUMBER: _ClassVar[int]
    MAX_CHUNKS_PER_ITEM_FIELD_NUMBER: _ClassVar[int]
    LEG_WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    GROUP_BY_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    USAGE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    PROXIMITY_FIELD_NUMBER: _ClassVar[int]
    RECENCY_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    queries: _containers.RepeatedCompositeFieldContainer[SearchQuery]
    mode: SearchMode
    filter: SearchFilter
    limit: int
    token_budget: int
    snippet_length: int
    max_chunks_per_item: int
    leg_weights: _containers.RepeatedCompositeFieldContainer[LegWeight]
    rrf_k: int
    group_by: SearchGroupBy
    min_score: float
    importance_weight: float
    usage_weight: float
    proximity: SearchToggle
    recency: SearchToggle
    explain: bool
    def __init__(self, queries: _Optional[_Iterable[_Union[SearchQuery, _Mapping]]] = ..., mode: _Optional[_Union[SearchMode, str]] = ..., filter: _Optional[_Union[SearchFilter, _Mapping]] = ..., limit: _Optional[int] = ..., token_budget: _Optional[int] = ..., snippet_length: _Optional[int] = ..., max_chunks_per_item: _Optional[int] = ..., leg_weights: _Optional[_Iterable[_Union[LegWeight, _Mapping]]] = ..., rrf_k: _Optional[int] = ..., group_by: _Optional[_Union[SearchGroupBy, str]] = ..., min_score: _Optional[float] = ..., importance_weight: _Optional[float] = ..., usage_weight: _Optional[float] = ..., proximity: _Optional[_Union[SearchToggle, str]] = ..., recency: _Optional[_Union[SearchToggle, str]] = ..., explain: _Optional[bool] = ...) -> None: ...

class LegRank(_message.Message):
    __slots__ = ("leg", "rank", "score")
    LEG_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    leg: SearchLeg
    rank: int
    score: float
    def __init__(self, leg: _Optional[_Union[SearchLeg, str]] = ..., rank: _Optional[int] = ..., score: _Optional[float] = ...) -> None: ...

class ByteSpan(_message.Message):
    __slots__ = ("start", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: int
    end: int
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class ChunkHit(_message.Message):
    __slots__ = ("chunk_id", "heading", "snippet", "span", "score", "leg_ranks", "token_count", "start_line", "end_line")
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    HEADING_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    SPAN_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    LEG_RANKS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    chunk_id: str
    heading: str
    snippet: str
    span: ByteSpan
    score: float
    leg_ranks: _containers.RepeatedCompositeFieldContainer[LegRank]
    token_count: int
    start_line: int
    end_line: int
    def __init__(self, chunk_id: _Optional[str] = ..., heading: _Optional[str] = ..., snippet: _Optional[str] = ..., span: _Optional[_Union[ByteSpan, _Mapping]] = ..., score: _Optional[float] = ..., leg_ranks: _Optional[_Iterable[_Union[LegRank, _Mapping]]] = ..., token_count: _Optional[int] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ...) -> None: ...

class SearchResult(_message.Message):
    __slots__ = ("ref", "item_id", "chunk_id", "title", "heading", "snippet", "span", "score", "leg_ranks", "query_indexes", "mime_type", "token_count", "start_line", "end_line", "more_chunks", "explanation")
    REF_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    HEADING_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    SPAN_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    LEG_RANKS_FIELD_NUMBER: _ClassVar[int]
    QUERY_INDEXES_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    MORE_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    ref: str
    item_id: str
    chunk_id: str
    title: str
    heading: str
    snippet: str
    span: ByteSpan
    score: float
    leg_ranks: _containers.RepeatedCompositeFieldContainer[LegRank]
    query_indexes: _containers.RepeatedScalarFieldContainer[int]
    mime_type: str
    token_count: int
    start_line: int
    end_line: int
    more_chunks: _containers.RepeatedCompositeFieldContainer[ChunkHit]
    explanation: SearchExplanation
    def __init__(self, ref: _Optional[str] = ..., item_id: _Optional[str] = ..., chunk_id: _Optional[str] = ..., title: _Optional[str] = ..., heading: _Optional[str] = ..., snippet: _Optional[str] = ..., span: _Optional[_Union[ByteSpan, _Mapping]] = ..., score: _Optional[float] = ..., leg_ranks: _Optional[_Iterable[_Union[LegRank, _Mapping]]] = ..., query_indexes: _Optional[_Iterable[int]] = ..., mime_type: _Optional[str] = ..., token_count: _Optional[int] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., more_chunks: _Optional[_Iterable[_Union[ChunkHit, _Mapping]]] = ..., explanation: _Optional[_Union[SearchExplanation, _Mapping]] = ...) -> None: ...

class SearchExplanation(_message.Message):
    __slots__ = ("legs", "rrf_k", "fused", "fused_max", "factors", "matched_terms", "missing_terms", "matched_question", "query_index")
    LEGS_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    FUSED_FIELD_NUMBER: _ClassVar[int]
    FUSED_MAX_FIELD_NUMBER: _ClassVar[int]
    FACTORS_FIELD_NUMBER: _ClassVar[int]
    MATCHED_TERMS_FIELD_NUMBER: _ClassVar[int]
    MISSING_TERMS_FIELD_NUMBER: _ClassVar[int]
    MATCHED_QUESTION_FIELD_NUMBER: _ClassVar[int]
    QUERY_INDEX_FIELD_NUMBER: _ClassVar[int]
    legs: _containers.RepeatedCompositeFieldContainer[LegContribution]
    rrf_k: float
    fused: float
    fused_max: float
    factors: _containers.RepeatedCompositeFieldContainer[ScoreFactor]
    matched_terms: _containers.RepeatedScalarFieldContainer[str]
    missing_terms: _containers.RepeatedScalarFieldContainer[str]
    matched_question: str
    query_index: int
    def __init__(self, legs: _Optional[_Iterable[_Union[LegContribution, _Mapping]]] = ..., rrf_k: _Optional[float] = ..., fused: _Optional[float] = ..., fused_max: _Optional[float] = ..., factors: _Optional[_Iterable[_Union[ScoreFactor, _Mapping]]] = ..., matched_terms: _Optional[_Iterable[str]] = ..., missing_terms: _Optional[_Iterable[str]] = ..., matched_question: _Optional[str] = ..., query_index: _Optional[int] = ...) -> None: ...

class LegContribution(_message.Message):
    __slots__ = ("leg", "rank", "score", "weight", "contribution")
    LEG_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    CONTRIBUTION_FIELD_NUMBER: _ClassVar[int]
    leg: SearchLeg
    rank: int
    score: float
    weight: float
    contribution: float
    def __init__(self, leg: _Optional[_Union[SearchLeg, str]] = ..., rank: _Optional[int] = ..., score: _Optional[float] = ..., weight: _Optional[float] = ..., contribution: _Optional[float] = ...) -> None: ...

class ScoreFactor(_message.Message):
    __slots__ = ("name", "factor", "detail")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    name: str
    factor: float
    detail: str
    def __init__(self, name: _Optional[str] = ..., factor: _Optional[float] = ..., detail: _Optional[str] = ...) -> None: ...

class QueryReport(_message.Message):
    __slots__ = ("text", "corrected_text", "candidate_count", "reduced_text")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CORRECTED_TEXT_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_COUNT_FIELD_NUMBER: _ClassVar[int]
    REDUCED_TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    corrected_text: str
    candidate_count: int
    reduced_text: str
    def __init__(self, text: _Optional[str] = ..., corrected_text: _Optional[str] = ..., candidate_count: _Optional[int] = ..., reduced_text: _Optional[str] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("results", "mode_used", "mode_reason", "queries", "tokens_used", "stale", "stale_reason")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    MODE_USED_FIELD_NUMBER: _ClassVar[int]
    MODE_REASON_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    STALE_REASON_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[SearchResult]
    mode_used: SearchMode
    mode_reason: str
    queries: _containers.RepeatedCompositeFieldContainer[QueryReport]
    tokens_used: int
    stale: bool
    stale_reason: str
    def __init__(self, results: _Optional[_Iterable[_Union[SearchResult, _Mapping]]] = ..., mode_used: _Optional[_Union[SearchMode, str]] = ..., mode_reason: _Optional[str] = ..., queries: _Optional[_Iterable[_Union[QueryReport, _Mapping]]] = ..., tokens_used: _Optional[int] = ..., stale: _Optional[bool] = ..., stale_reason: _Optional[str] = ...) -> None: ...

class FindSimilarRequest(_message.Message):
    __slots__ = ("ref", "text", "threshold", "limit", "filter")
    REF_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    ref: str
    text: str
    threshold: float
    limit: int
    filter: SearchFilter
    def __init__(self, ref: _Optional[str] = ..., text: _Optional[str] = ..., threshold: _Optional[float] = ..., limit: _Optional[int] = ..., filter: _Optional[_Union[SearchFilter, _Mapping]] = ...) -> None: ...

class SimilarItem(_message.Message):
    __slots__ = ("ref", "item_id", "title", "similarity", "chunk_id", "snippet", "coverage")
    REF_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    COVERAGE_FIELD_NUMBER: _ClassVar[int]
    ref: str
    item_id: str
    title: str
    similarity: float
    chunk_id: str
    snippet: str
    coverage: float
    def __init__(self, ref: _Optional[str] = ..., item_id: _Optional[str] = ..., title: _Optional[str] = ..., similarity: _Optional[float] = ..., chunk_id: _Optional[str] = ..., snippet: _Optional[str] = ..., coverage: _Optional[float] = ...) -> None: ...

class FindSimilarResponse(_message.Message):
    __slots__ = ("items", "target_chunks", "stale", "stale_reason")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    TARGET_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    STALE_REASON_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[SimilarItem]
    target_chunks: int
    stale: bool
    stale_reason: str
    def __init__(self, items: _Optional[_Iterable[_Union[SimilarItem, _Mapping]]] = ..., target_chunks: _Optional[int] = ..., stale: _Optional[bool] = ..., stale_reason: _Optional[str] = ...) -> None: ...
