import datetime

from ctxd.v1 import search_pb2 as _search_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ChangeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHANGE_KIND_UNSPECIFIED: _ClassVar[ChangeKind]
    CHANGE_KIND_WRITE: _ClassVar[ChangeKind]
    CHANGE_KIND_EDIT: _ClassVar[ChangeKind]
    CHANGE_KIND_REFRESH: _ClassVar[ChangeKind]
    CHANGE_KIND_INGEST: _ClassVar[ChangeKind]
    CHANGE_KIND_MOVE: _ClassVar[ChangeKind]
    CHANGE_KIND_REVERT: _ClassVar[ChangeKind]
    CHANGE_KIND_OTHER: _ClassVar[ChangeKind]
CHANGE_KIND_UNSPECIFIED: ChangeKind
CHANGE_KIND_WRITE: ChangeKind
CHANGE_KIND_EDIT: ChangeKind
CHANGE_KIND_REFRESH: ChangeKind
CHANGE_KIND_INGEST: ChangeKind
CHANGE_KIND_MOVE: ChangeKind
CHANGE_KIND_REVERT: ChangeKind
CHANGE_KIND_OTHER: ChangeKind

class StandingQuery(_message.Message):
    __slots__ = ("queries", "filter", "mode", "min_score", "snippet_length")
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_LENGTH_FIELD_NUMBER: _ClassVar[int]
    queries: _containers.RepeatedCompositeFieldContainer[_search_pb2.SearchQuery]
    filter: _search_pb2.SearchFilter
    mode: _search_pb2.SearchMode
    min_score: float
    snippet_length: int
    def __init__(self, queries: _Optional[_Iterable[_Union[_search_pb2.SearchQuery, _Mapping]]] = ..., filter: _Optional[_Union[_search_pb2.SearchFilter, _Mapping]] = ..., mode: _Optional[_Union[_search_pb2.SearchMode, str]] = ..., min_score: _Optional[float] = ..., snippet_length: _Optional[int] = ...) -> None: ...

class ItemChange(_message.Message):
    __slots__ = ("kind", "op", "actor", "rev", "time", "replica_id", "remote", "sequence")
    KIND_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    REV_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    REMOTE_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    kind: ChangeKind
    op: str
    actor: str
    rev: int
    time: _timestamp_pb2.Timestamp
    replica_id: str
    remote: bool
    sequence: int
    def __init__(self, kind: _Optional[_Union[ChangeKind, str]] = ..., op: _Optional[str] = ..., actor: _Optional[str] = ..., rev: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., replica_id: _Optional[str] = ..., remote: _Optional[bool] = ..., sequence: _Optional[int] = ...) -> None: ...

class SubscribeRequest(_message.Message):
    __slots__ = ("query", "name", "resume_token")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    query: StandingQuery
    name: str
    resume_token: str
    def __init__(self, query: _Optional[_Union[StandingQuery, _Mapping]] = ..., name: _Optional[str] = ..., resume_token: _Optional[str] = ...) -> None: ...

class SubscribeResponse(_message.Message):
    __slots__ = ("ready", "match", "gap")
    READY_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    GAP_FIELD_NUMBER: _ClassVar[int]
    ready: SubscriptionReady
    match: SubscriptionMatch
    gap: SubscriptionGap
    def __init__(self, ready: _Optional[_Union[SubscriptionReady, _Mapping]] = ..., match: _Optional[_Union[SubscriptionMatch, _Mapping]] = ..., gap: _Optional[_Union[SubscriptionGap, _Mapping]] = ...) -> None: ...

class SubscriptionReady(_message.Message):
    __slots__ = ("resume_token", "subscription")
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    resume_token: str
    subscription: str
    def __init__(self, resume_token: _Optional[str] = ..., subscription: _Optional[str] = ...) -> None: ...

class SubscriptionMatch(_message.Message):
    __slots__ = ("result", "change", "resume_token")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    result: _search_pb2.SearchResult
    change: ItemChange
    resume_token: str
    def __init__(self, result: _Optional[_Union[_search_pb2.SearchResult, _Mapping]] = ..., change: _Optional[_Union[ItemChange, _Mapping]] = ..., resume_token: _Optional[str] = ...) -> None: ...

class SubscriptionGap(_message.Message):
    __slots__ = ("from_sequence", "to_sequence", "dropped", "reason")
    FROM_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    TO_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    from_sequence: int
    to_sequence: int
    dropped: int
    reason: str
    def __init__(self, from_sequence: _Optional[int] = ..., to_sequence: _Optional[int] = ..., dropped: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Subscription(_message.Message):
    __slots__ = ("name", "query", "owner", "created_at", "pending", "dropped", "last_match_at", "resource_uri")
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    LAST_MATCH_AT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_URI_FIELD_NUMBER: _ClassVar[int]
    name: str
    query: StandingQuery
    owner: str
    created_at: _timestamp_pb2.Timestamp
    pending: int
    dropped: int
    last_match_at: _timestamp_pb2.Timestamp
    resource_uri: str
    def __init__(self, name: _Optional[str] = ..., query: _Optional[_Union[StandingQuery, _Mapping]] = ..., owner: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., pending: _Optional[int] = ..., dropped: _Optional[int] = ..., last_match_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resource_uri: _Optional[str] = ...) -> None: ...

class CreateSubscriptionRequest(_message.Message):
    __slots__ = ("name", "query", "replace")
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    name: str
    query: StandingQuery
    replace: bool
    def __init__(self, name: _Optional[str] = ..., query: _Optional[_Union[StandingQuery, _Mapping]] = ..., replace: _Optional[bool] = ...) -> None: ...

class CreateSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: Subscription
    def __init__(self, subscription: _Optional[_Union[Subscription, _Mapping]] = ...) -> None: ...

class ListSubscriptionsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListSubscriptionsResponse(_message.Message):
    __slots__ = ("subscriptions",)
    SUBSCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    subscriptions: _containers.RepeatedCompositeFieldContainer[Subscription]
    def __init__(self, subscriptions: _Optional[_Iterable[_Union[Subscription, _Mapping]]] = ...) -> None: ...

class DeleteSubscriptionRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: Subscription
    def __init__(self, subscription: _Optional[_Union[Subscription, _Mapping]] = ...) -> None: ...

class ReadSubscriptionRequest(_message.Message):
    __slots__ = ("name", "limit", "peek")
    NAME_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PEEK_FIELD_NUMBER: _ClassVar[int]
    name: str
    limit: int
    peek: bool
    def __init__(self, name: _Optional[str] = ..., limit: _Optional[int] = ..., peek: _Optional[bool] = ...) -> None: ...

class ReadSubscriptionResponse(_message.Message):
    __slots__ = ("matches", "gap", "remaining")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    GAP_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[SubscriptionMatch]
    gap: SubscriptionGap
    remaining: int
    def __init__(self, matches: _Optional[_Iterable[_Union[SubscriptionMatch, _Mapping]]] = ..., gap: _Optional[_Union[SubscriptionGap, _Mapping]] = ..., remaining: _Optional[int] = ...) -> None: ...
