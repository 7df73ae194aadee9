"""Structured errors raised by :class:`ctxd.Client` and :class:`ctxd.AsyncClient`.

Every error status the daemon returns carries one ``ctxd.v1.ErrorDetail`` in
the standard ``grpc-status-details-bin`` trailer. :func:`from_rpc_error` turns a
``grpc.RpcError`` (``grpc.aio.AioRpcError`` too) into the :class:`CtxdError`
subclass for its type, with the detail's fields flattened onto the exception.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Type

import grpc
from grpc_status import rpc_status

from ctxd.v1 import errors_pb2

__all__ = [
    "CtxdError",
    "NotFoundError",
    "PathConflictError",
    "NoTextContentError",
    "InvalidArgumentError",
    "InvalidPatchError",
    "IsDirectoryError",
    "NotDirectoryError",
    "ContentTooLargeError",
    "OutOfRangeError",
    "ContentChangedError",
    "DirectoryNotEmptyError",
    "UnauthenticatedError",
    "PermissionDeniedError",
    "ReadOnlyError",
    "UnavailableError",
    "UnimplementedError",
    "InternalError",
    "SourceRefusedError",
    "SourceUnreadableError",
    "CancelledError",
    "DeadlineExceededError",
    "from_rpc_error",
]

_TYPE_PREFIX = "ERROR_TYPE_"


class CtxdError(Exception):
    """An error returned by the ctxd daemon (or by the transport on the way).

    Attributes:
        code: the ``grpc.StatusCode`` of the failed call.
        type: the short error type, e.g. ``"NOT_FOUND"``. When the status has
            no ErrorDetail (transport failures, deadlines) it is derived from
            the gRPC code, e.g. ``"UNAVAILABLE"`` or ``"DEADLINE_EXCEEDED"``.
        message: the status message.
        hint: the detail's ``next_action_hint`` (a next step an agent can take),
            or ``""``.
        ref: the ref the error is about, or ``""``.
        nearby: existing refs near a missing one (for NOT_FOUND), else ``[]``.
        detail: the decoded ``ctxd.v1.ErrorDetail``, or ``None``.
    """

    #: The ErrorType (short name) this class stands for; ``""`` for the base.
    error_type: str = ""

    def __init__(
        self,
        message: str,
        *,
        code: grpc.StatusCode = grpc.StatusCode.UNKNOWN,
        type: str = "",
        hint: str = "",
        ref: str = "",
        nearby: Optional[List[str]] = None,
        detail: Optional[errors_pb2.ErrorDetail] = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.type = type or self.error_type or _code_name(code)
        self.message = message
        self.hint = hint
        self.ref = ref
        self.nearby = list(nearby or [])
        self.detail = detail

    def __str__(self) -> str:
        s = f"{self.type}: {self.message}"
        if self.hint:
            s += f" (hint: {self.hint})"
        return s

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(type={self.type!r}, message={self.message!r}, "
            f"hint={self.hint!r}, ref={self.ref!r}, nearby={self.nearby!r})"
        )


class NotFoundError(CtxdError):
    """No item or directory at the ref (gRPC NOT_FOUND)."""

    error_type = "NOT_FOUND"


class PathConflictError(CtxdError):
    """The destination exists, or a file stands where a directory is needed."""

    error_type = "PATH_CONFLICT"


class NoTextContentError(CtxdError):
    """The item is binary; its text cannot be read or edited."""

    error_type = "NO_TEXT_CONTENT"


class InvalidArgumentError(CtxdError):
    """A request field is malformed: a bad ref, drive name or path."""

    error_type = "INVALID_ARGUMENT"


class InvalidPatchError(CtxdError):
    """An edit patch is malformed, out of range or overlaps another."""

    error_type = "INVALID_PATCH"


class IsDirectoryError(CtxdError):
    """The ref names a directory where an item is expected."""

    error_type = "IS_DIRECTORY"


class NotDirectoryError(CtxdError):
    """The ref names an item where a directory is expected."""

    error_type = "NOT_DIRECTORY"


class ContentTooLargeError(CtxdError):
    """The content exceeds the daemon's size limit."""

    error_type = "CONTENT_TOO_LARGE"


class OutOfRangeError(CtxdError):
    """A line offset lies past the end of the item."""

    error_type = "OUT_OF_RANGE"


class ContentChangedError(CtxdError):
    """expected_content_hash did not match the stored content."""

    error_type = "CONTENT_CHANGED"


class DirectoryNotEmptyError(CtxdError):
    """A directory is not empty and recursive was not set."""

    error_type = "DIRECTORY_NOT_EMPTY"


class UnauthenticatedError(CtxdError):
    """No valid bearer token was presented."""

    error_type = "UNAUTHENTICATED"


class PermissionDeniedError(CtxdError):
    """The token lacks the scope the call needs."""

    error_type = "PERMISSION_DENIED"


class ReadOnlyError(CtxdError):
    """An agent token tried to change an item that is read-only to agents
    (``agent-modification: false``, or under a context root without it);
    the owner may change it (gRPC PERMISSION_DENIED)."""

    error_type = "READ_ONLY"


class UnavailableError(CtxdError):
    """The daemon is not reachable, starting or stopping; retry shortly."""

    error_type = "UNAVAILABLE"


class UnimplementedError(CtxdError):
    """The RPC is part of API v1 but not built yet."""

    error_type = "UNIMPLEMENTED"


class InternalError(CtxdError):
    """An unexpected failure; the daemon log has the details."""

    error_type = "INTERNAL"


class SourceRefusedError(CtxdError):
    """Policy forbids reading an ingest source: outside the allowed roots, a
    secret, a private network address."""

    error_type = "SOURCE_REFUSED"


class SourceUnreadableError(CtxdError):
    """An ingest source could not be read or fetched."""

    error_type = "SOURCE_UNREADABLE"


class CancelledError(CtxdError):
    """The call was cancelled before it finished (gRPC CANCELLED). Not
    :class:`asyncio.CancelledError`, which cancelling a task raises."""

    error_type = "CANCELLED"


class DeadlineExceededError(CtxdError):
    """The call's deadline (the client's ``timeout``) passed before it
    finished; the daemon stopped working on it."""

    error_type = "DEADLINE_EXCEEDED"


_BY_TYPE: Dict[str, Type[CtxdError]] = {
    cls.error_type: cls
    for cls in (
        NotFoundError,
        PathConflictError,
        NoTextContentError,
        InvalidArgumentError,
        InvalidPatchError,
        IsDirectoryError,
        NotDirectoryError,
        ContentTooLargeError,
        OutOfRangeError,
        ContentChangedError,
        DirectoryNotEmptyError,
        UnauthenticatedError,
        PermissionDeniedError,
        ReadOnlyError,
        UnavailableError,
        UnimplementedError,
        InternalError,
        SourceRefusedError,
        SourceUnreadableError,
        CancelledError,
        DeadlineExceededError,
    )
}

# Used only when a status carries no ErrorDetail (transport errors, or a
# daemon that did not attach one): codes that stand for exactly one type.
_BY_CODE: Dict[grpc.StatusCode, Type[CtxdError]] = {
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: PathConflictError,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.OUT_OF_RANGE: OutOfRangeError,
    grpc.StatusCode.ABORTED: ContentChangedError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.UNIMPLEMENTED: UnimplementedError,
    grpc.StatusCode.INTERNAL: InternalError,
    grpc.StatusCode.CANCELLED: CancelledError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
}


def _code_name(code: grpc.StatusCode) -> str:
    return code.name if isinstance(code, grpc.StatusCode) else str(code)


def _type_name(value: int) -> str:
    try:
        name = errors_pb2.ErrorType.Name(value)
    except ValueError:  # a type newer than these stubs
        return f"UNKNOWN_{value}"
    return name[len(_TYPE_PREFIX):] if name.startswith(_TYPE_PREFIX) else name


def _find_detail(err: grpc.RpcError) -> Optional[errors_pb2.ErrorDetail]:
    try:
        status = rpc_status.from_call(err)  # type: ignore[arg-type]
    except (ValueError, AttributeError, TypeError):
        return None
    if status is None:
        return None
    for any_ in status.details:
        if any_.Is(errors_pb2.ErrorDetail.DESCRIPTOR):
            detail = errors_pb2.ErrorDetail()
            any_.Unpack(detail)
            return detail
    return None


def from_rpc_error(err: grpc.RpcError) -> CtxdError:
    """Converts a ``grpc.RpcError`` into the matching :class:`CtxdError`."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    message = (err.details() if hasattr(err, "details") else None) or str(err)
    detail = _find_detail(err)
    if detail is not None and detail.type != errors_pb2.ERROR_TYPE_UNSPECIFIED:
        typ = _type_name(detail.type)
        cls = _BY_TYPE.get(typ, CtxdError)
        return cls(
            message,
            code=code,
            type=typ,
            hint=detail.next_action_hint,
            ref=detail.ref,
            nearby=list(detail.nearby_refs),
            detail=detail,
        )
    cls = _BY_CODE.get(code, CtxdError)
    return cls(message, code=code, detail=detail)
