"""Python client for ctxd, a local memory layer for AI agents.

    import ctxd

    with ctxd.Client() as c:                      # $CTXD_SOCKET or $XDG_RUNTIME_DIR/ctxd/ctxd.sock
        c.write("agent:/notes/todo.md", "- buy milk\n")
        print(c.read("agent:/notes/todo.md").content)
        try:
            c.read("agent:/notes/nope.md")
        except ctxd.NotFoundError as e:
            print(e.type, e.hint, e.nearby)

``ctxd.AsyncClient`` has the same methods for asyncio (``await c.read(...)``,
``async for event in c.add(...)``). ``tools(format)`` and ``call_tool(name,
arguments)`` give an OpenAI or Anthropic tool loop ctxd's agent tools.
``start_session``, ``append_events``, ``remember``, ``end_session``,
``search_events`` and ``recall`` keep and recall what an agent did, session by
session.

The generated messages and stubs are in ``ctxd.v1`` (``ctxd.v1.vfs_pb2`` ...).
"""

from ctxd._api import ToolResult
from ctxd.aio import AsyncClient
from ctxd.client import Client, default_socket_path
from ctxd import errors
from ctxd.errors import *  # noqa: F403 - the error classes are part of the top-level API

__version__ = "0.1.0"

__all__ = ["AsyncClient", "Client", "ToolResult", "default_socket_path", *errors.__all__]
