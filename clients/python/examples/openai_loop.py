"""An OpenAI tool loop whose tools are ctxd's: the model reads, writes and
searches the agent's memory in a running ctxd daemon.

    pip install ./clients/python openai
    OPENAI_API_KEY=... python clients/python/examples/openai_loop.py "What do my notes say about the release?"

OPENAI_MODEL picks the model (any with tool calling; OPENAI_BASE_URL points
the SDK at another OpenAI-compatible server). The daemon is found like the
CLI finds it ($CTXD_SOCKET, else $XDG_RUNTIME_DIR/ctxd/ctxd.sock).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, Iterable, List

import ctxd

SYSTEM = (
    "You are an assistant with a persistent memory, reached through the context_* tools. "
    "Search it before answering from memory, and write down what is worth keeping. "
    "When a tool result has is_error, read its next_action_hint and act on it."
)


def dispatch(client: ctxd.Client, tool_calls: Iterable[Any]) -> List[Dict[str, Any]]:
    """Runs the tool calls of one assistant message and returns the "tool"
    messages that answer them. A failed tool is an answer too: its content
    is the JSON error (is_error, error_type, message, next_action_hint), for
    the model to correct course."""
    messages = []
    for call in tool_calls:
        # function.arguments is the model's JSON text; ctxd parses it, and
        # malformed JSON comes back as an is_error result.
        result = client.call_tool(call.function.name, call.function.arguments)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result.content})
    return messages


def main(question: str) -> None:
    # Imported here so that dispatch() is usable (and tested) without the SDK.
    from openai import OpenAI

    llm = OpenAI()  # OPENAI_API_KEY, OPENAI_BASE_URL
    model = os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")
    with ctxd.Client(metadata=[("ctxd-agent", "openai-loop")]) as memory:
        tools = memory.tools("openai")
        messages: List[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
        for _ in range(20):  # a bound on the turns, in case the model keeps calling tools
            reply = llm.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
            messages.append(reply)
            if not reply.tool_calls:
                print(reply.content)
                return
            messages.extend(dispatch(memory, reply.tool_calls))
        print("stopped after 20 turns", file=sys.stderr)


if __name__ == "__main__":
    main(" ".join(sys.argv[1:]) or "What is in my memory? Summarise it in three lines.")
