"""Python client for ctxd, a local memory layer for AI agents.

    import ctxd

    with ctxd.Client() as c:                      # $CTXD_SOCKET or $XDG_RUNTIME_DIR/ctxd/ctxd.sock
        c.write("agent:/notes/todo.md", "- buy milk\n")
        print(c.read("agent:/notes/todo.md").content)
        try:
            c.read("agent:/notes/nope.md")
        except ctxd.NotFoundError as e:
            print(e.type, e.hint, e.nearby)

The generated messages and stubs are in ``ctxd.v1`` (``ctxd.v1.vfs_pb2`` ...).
"""

from ctxd.client import Client, default_socket_path
from ctxd.errors import (
    ContentChangedError,
    ContentTooLargeError,
    CtxdError,
    DirectoryNotEmptyError,
    InternalError,
    InvalidArgumentError,
    InvalidPatchError,
    IsDirectoryError,
    NoTextContentError,
    NotDirectoryError,
    NotFoundError,
    OutOfRangeError,
    PathConflictError,
    PermissionDeniedError,
    UnauthenticatedError,
    UnavailableError,
    UnimplementedError,
    from_rpc_error,
)

__version__ = "0.1.0"

__all__ = [
    "Client",
    "default_socket_path",
    "from_rpc_error",
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
    "UnavailableError",
    "UnimplementedError",
    "InternalError",
]
