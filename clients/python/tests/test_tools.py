"""Integration tests of tools() and call_tool() against the real daemon, and
of the tool loops in examples/."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import py_compile
import subprocess
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, Dict, List

import pytest

import ctxd
from conftest import AGENT_TOKEN, Daemon, ctxd_bin

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _names(tools: List[Dict[str, Any]], fmt: str) -> List[str]:
    return [t["function"]["name"] if fmt == "openai" else t["name"] for t in tools]


CORE = {"context_list_drives", "context_tree", "context_read", "context_write", "context_edit",
        "context_search", "build_context", "remember"}


def _cli_tools(fmt: str, *scopes: str, profile: str = "core") -> List[Dict[str, Any]]:
    args = [str(ctxd_bin()), "tools", "--format", fmt, "--tools", profile]
    if scopes:
        args += ["--scopes", ",".join(scopes)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def test_tools_are_the_cli_tools(client: ctxd.Client) -> None:
    # One definition: the daemon lists exactly what `ctxd tools` prints, per profile.
    core = _names(_cli_tools("mcp"), "mcp")
    assert set(core) == CORE
    everything = _names(_cli_tools("mcp", profile="all"), "mcp")
    assert {"context_add", "context_delete", "context_history"} <= set(everything) and set(core) < set(everything)
    for fmt in ("mcp", "openai", "anthropic"):
        tools = client.tools(fmt)
        assert tools == _cli_tools(fmt), fmt
        assert _names(tools, fmt) == core
        for profile in ("core", "read", "all"):
            assert client.tools(fmt, profile) == _cli_tools(fmt, profile=profile), (fmt, profile)
        assert _names(client.tools(fmt, profile="all"), fmt) == everything
    openai = client.tools("openai")[0]
    assert openai["type"] == "function" and openai["function"]["parameters"]["type"] == "object"
    anthropic = client.tools("anthropic")[0]
    assert anthropic["input_schema"]["type"] == "object" and anthropic["description"]
    mcp = client.tools()[0]
    assert mcp["inputSchema"]["type"] == "object" and "readOnlyHint" in mcp["annotations"]

    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.tools("yaml")
    assert "openai" in ei.value.hint and "anthropic" in ei.value.hint
    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.tools("mcp", "most")
    assert "core, read, all" in ei.value.hint


def test_call_tool(client: ctxd.Client) -> None:
    w = client.call_tool("context_write", {"path": "/py-tools/a.md", "content": "alpha\nbeta\n"})
    assert isinstance(w, ctxd.ToolResult) and not w.is_error, w
    assert w.json()["ref"] == "agent:/py-tools/a.md" and "a.md" in w.json()["tree"]

    # Arguments as the JSON text a model writes.
    r = client.call_tool("context_read", '{"path": "agent:/py-tools/a.md", "offset": 1}')
    assert not r.is_error and r.json()["content"] == "beta\n" and r.json()["start_line"] == 2

    # A failed tool is a result in the seed's shape, not an exception.
    nf = client.call_tool("context_read", {"path": "/py-tools/nope.md"})
    assert nf.is_error
    err = nf.json()
    assert err["is_error"] is True and err["error_type"] == "not_found" and err["message"]
    assert "agent:/py-tools/a.md" in err["next_action_hint"], err
    for name, args in [("context_read", '{"path":'), ("context_read", "[1]"), ("context_nope", {})]:
        bad = client.call_tool(name, args)
        assert bad.is_error and bad.json()["error_type"] == "invalid_argument", (name, args, bad)
        assert bad.json()["next_action_hint"]

    # Failures of the call itself raise.
    with pytest.raises(ctxd.InvalidArgumentError):
        client.call_tool("x" * 65, {})


def test_tools_follow_the_token(agent_daemon: Daemon) -> None:
    with agent_daemon.client() as owner:
        owner.init_context()
        assert "context_add" in _names(owner.tools("openai", "all"), "openai")
    # The harness token holds read and write but not ingest.
    with ctxd.Client(target=agent_daemon.tcp, token=AGENT_TOKEN, timeout=10) as agent:
        names = _names(agent.tools("openai", "all"), "openai")
        assert "context_add" not in names and "context_write" in names
        assert names == _names(_cli_tools("openai", "read", "write", profile="all"), "openai")
        # Tools run with the token: an agent's, which may not change soul.md.
        ro = agent.call_tool("context_write", {"path": "self:/soul.md", "content": "obey\n", "on_conflict": "overwrite"})
        assert ro.is_error and ro.json()["error_type"] == "read_only", ro
        ok = agent.call_tool("update_beliefs", {"body": "- tools run as the agent\n"})
        assert not ok.is_error, ok
        assert agent.history("self:/beliefs.md")[0].actor == "harness"


def test_async_tools(daemon: Daemon) -> None:
    async def body() -> None:
        async with ctxd.AsyncClient(socket=daemon.socket, timeout=10) as c:
            assert _names(await c.tools("anthropic"), "anthropic") == _names(_cli_tools("anthropic"), "anthropic")
            read = await c.tools("anthropic", profile="read")
            assert _names(read, "anthropic") == _names(_cli_tools("anthropic", profile="read"), "anthropic")
            # A name no profile lists any more still runs: context_info answers it now.
            res = await c.call_tool("context_exists", {"path": "/py-tools/async-nope.md"})
            assert not res.is_error and res.json()["exists"] is False

    asyncio.run(body())


def _example(name: str) -> ModuleType:
    path = EXAMPLES / f"{name}.py"
    py_compile.compile(str(path), doraise=True)
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_openai_example_dispatch(client: ctxd.Client) -> None:
    loop = _example("openai_loop")
    # Tool calls as the OpenAI SDK returns them: function.arguments is JSON text.
    calls = [
        SimpleNamespace(id="call_1", type="function", function=SimpleNamespace(
            name="context_write", arguments='{"path": "/py-examples/o.md", "content": "from openai\\n"}')),
        SimpleNamespace(id="call_2", type="function", function=SimpleNamespace(
            name="context_read", arguments='{"path": "/py-examples/missing.md"}')),
    ]
    messages = loop.dispatch(client, calls)
    assert [(m["role"], m["tool_call_id"]) for m in messages] == [("tool", "call_1"), ("tool", "call_2")]
    assert json.loads(messages[0]["content"])["ref"] == "agent:/py-examples/o.md"
    assert json.loads(messages[1]["content"])["error_type"] == "not_found"
    assert client.read("agent:/py-examples/o.md").content == "from openai\n"


def test_anthropic_example_dispatch(client: ctxd.Client) -> None:
    loop = _example("anthropic_loop")
    # Content blocks as the Anthropic SDK returns them: input is a dict.
    content = [
        SimpleNamespace(type="text", text="Let me write that down."),
        SimpleNamespace(type="tool_use", id="toolu_1", name="context_write",
                        input={"path": "/py-examples/a.md", "content": "from claude\n"}),
        SimpleNamespace(type="tool_use", id="toolu_2", name="context_read", input={"path": "/py-examples/nope.md"}),
    ]
    message = loop.dispatch(client, content)
    assert message["role"] == "user"
    results = message["content"]
    assert [(r["type"], r["tool_use_id"], r["is_error"]) for r in results] == [
        ("tool_result", "toolu_1", False),
        ("tool_result", "toolu_2", True),
    ]
    assert json.loads(results[1]["content"])["error_type"] == "not_found"
    assert client.read("agent:/py-examples/a.md").content == "from claude\n"
