"""The SubscriptionService methods of :class:`ctxd.Client` and
:class:`ctxd.AsyncClient`: standing queries that push each item that newly
matches, live for a stream or durable (named, stored by the daemon, their
matches kept in an inbox until read).

``subscribe`` is an iterator (an async iterator on ``AsyncClient``) of
``SubscribeResponse`` events: ``ready`` first, then ``match`` (a search
result with the change that caused it and a ``resume_token``) and ``gap``
events. It runs until the iterator is closed. To resume after a dropped
stream, call it again with ``resume_token`` set to the last token received:
the daemon sends what matched meanwhile (a ``gap`` first when its outbox no
longer holds all of it).
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Union

from ctxd._api import SearchModeLike, _Call, _search_filter, _search_mode, _stream_method, _unary_method
from ctxd.v1 import search_pb2, subscription_pb2

__all__: List[str] = []


def _standing_query(
    queries: Union[str, Sequence[str]],
    mode: SearchModeLike,
    min_score: float,
    drives: Iterable[str],
    path_prefixes: Iterable[str],
    mime_types: Iterable[str],
    tags: Iterable[str],
    snippet_length: int,
) -> subscription_pb2.StandingQuery:
    if isinstance(queries, str):
        queries = [queries]
    return subscription_pb2.StandingQuery(
        queries=[search_pb2.SearchQuery(text=q) for q in queries],
        filter=_search_filter(drives, path_prefixes, mime_types, tags),
        mode=_search_mode(mode),
        min_score=min_score,
        snippet_length=snippet_length,
    )


class _SubscriptionsApi:
    """Standing queries: streams and durable subscriptions."""

    @_stream_method
    def subscribe(
        self,
        queries: Union[str, Sequence[str], None] = None,
        *,
        name: str = "",
        mode: SearchModeLike = None,
        min_score: float = 0.0,
        drives: Iterable[str] = (),
        path_prefixes: Iterable[str] = (),
        mime_types: Iterable[str] = (),
        tags: Iterable[str] = (),
        snippet_length: int = 0,
        resume_token: str = "",
        timeout: Optional[float] = None,
    ) -> _Call[subscription_pb2.SubscribeResponse]:
        """Streams the items that newly match ``queries`` (live for the
        stream) or the durable subscription ``name``.

        ``mode`` is "bm25" (the default: every term, weighed by rarity),
        "hybrid" (or close in meaning) or "vector"; ``min_score`` in (0, 1]
        overrides the defaults (1 for the lexical leg, 0.5 for the vector
        leg). The stream has no deadline unless ``timeout`` is given.
        """
        req = subscription_pb2.SubscribeRequest(name=name, resume_token=resume_token)
        if queries is not None:
            req.query.CopyFrom(
                _standing_query(queries, mode, min_score, drives, path_prefixes, mime_types, tags, snippet_length)
            )
        return _Call("subscriptions_stub", "Subscribe", req, timeout=timeout)

    @_unary_method
    def create_subscription(
        self,
        name: str,
        queries: Union[str, Sequence[str]],
        *,
        mode: SearchModeLike = None,
        min_score: float = 0.0,
        drives: Iterable[str] = (),
        path_prefixes: Iterable[str] = (),
        mime_types: Iterable[str] = (),
        tags: Iterable[str] = (),
        snippet_length: int = 0,
        replace: bool = False,
    ) -> _Call[subscription_pb2.Subscription]:
        """Creates the durable subscription ``name``: its matches are kept in
        its inbox, across restarts, until read (``read_subscription``) or
        streamed (``subscribe(name=...)``)."""
        req = subscription_pb2.CreateSubscriptionRequest(
            name=name,
            query=_standing_query(queries, mode, min_score, drives, path_prefixes, mime_types, tags, snippet_length),
            replace=replace,
        )
        return _Call("subscriptions_stub", "CreateSubscription", req, lambda r: r.subscription)

    @_unary_method
    def list_subscriptions(self) -> _Call[List[subscription_pb2.Subscription]]:
        """The durable subscriptions this token may see, by name."""
        return _Call(
            "subscriptions_stub",
            "ListSubscriptions",
            subscription_pb2.ListSubscriptionsRequest(),
            lambda r: list(r.subscriptions),
        )

    @_unary_method
    def delete_subscription(self, name: str) -> _Call[subscription_pb2.Subscription]:
        """Deletes a durable subscription and its inbox; returns it as it was."""
        return _Call(
            "subscriptions_stub",
            "DeleteSubscription",
            subscription_pb2.DeleteSubscriptionRequest(name=name),
            lambda r: r.subscription,
        )

    @_unary_method
    def read_subscription(
        self, name: str, *, limit: int = 0, peek: bool = False
    ) -> _Call[subscription_pb2.ReadSubscriptionResponse]:
        """Reads the oldest matches of a durable subscription's inbox (at
        most ``limit``; 0 means 100) and acknowledges them unless ``peek``."""
        return _Call(
            "subscriptions_stub",
            "ReadSubscription",
            subscription_pb2.ReadSubscriptionRequest(name=name, limit=limit, peek=peek),
        )
