"""An Anthropic (Claude) tool loop whose tools are ctxd's: the model reads,
writes and searches the agent's memory in a running ctxd daemon.

    pip install ./clients/python anthropic
    ANTHROPIC_API_KEY=... python clients/python/examples/anthropic_loop.py "What do my notes say about the release?"

ANTHROPIC_MODEL picks the model. The daemon is found like the CLI finds it
($CTXD_SOCKET, else $XDG_RUNTIME_DIR/ctxd/ctxd.sock).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, Iterable, List

import ctxd

SYSTEM = (
    "You are an assistant with a persistent memory, reached through the context_* tools. "
    "Search it before answering from memory, and write down what is worth keeping. "
    "When a tool result is an error, read its next_action_hint and act on it."
)


def dispatch(client: ctxd.Client, content: Iterable[Any]) -> Dict[str, Any]:
    """Runs the tool_use blocks of one assistant message and returns the
    user message of tool_result blocks that answers them. A failed tool is
    a tool_result with is_error, its content the JSON error (error_type,
    message, next_action_hint), for the model to correct course."""
    results = []
    for block in content:
        if block.type != "tool_use":
            continue
        result = client.call_tool(block.name, block.input)
        results.append(
            {"type": "tool_result", "tool_use_id": block.id, "content": result.content, "is_error": result.is_error}
        )
    return {"role": "user", "content": results}


def main(question: str) -> None:
    # Imported here so that dispatch() is usable (and tested) without the SDK.
    import anthropic

    llm = anthropic.Anthropic()  # ANTHROPIC_API_KEY
    model = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5")
    with ctxd.Client(metadata=[("ctxd-agent", "anthropic-loop")]) as memory:
        tools = memory.tools("anthropic")
        messages: List[Dict[str, Any]] = [{"role": "user", "content": question}]
        for _ in range(20):  # a bound on the turns, in case the model keeps calling tools
            reply = llm.messages.create(model=model, max_tokens=4096, system=SYSTEM, tools=tools, messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                print("".join(block.text for block in reply.content if block.type == "text"))
                return
            messages.append(dispatch(memory, reply.content))
        print("stopped after 20 turns", file=sys.stderr)


if __name__ == "__main__":
    main(" ".join(sys.argv[1:]) or "What is in my memory? Summarise it in three lines.")
