"""The MCP server through the Python `mcp` package: `ctxd mcp` over stdio,
against the real daemon."""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

import anyio
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import Daemon, _run_daemon, ctxd_bin

PLAN = "# Plan\n\nShip the zebrafish importer.\nThen rest.\n"


@pytest.fixture(scope="module")
def mcp_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon of its own, with the context files created (init)."""
    with _run_daemon(tmp_path_factory) as d:
        with d.client() as c:
            c.init_context()
        yield d


async def _call(s: ClientSession, name: str, args: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Calls a tool; returns its JSON text decoded and isError."""
    r = await s.call_tool(name, args)
    assert len(r.content) == 1 and r.content[0].type == "text", r
    out = json.loads(r.content[0].text)
    assert r.structured_content is None, "the JSON comes once, as text"
    return out, bool(r.is_error)


def _want_error(out: dict[str, Any], is_error: bool, error_type: str, hint_has: str = "") -> None:
    assert is_error, out
    assert list(out) == ["is_error", "error_type", "message", "next_action_hint"], out
    assert out["is_error"] is True and out["error_type"] == error_type and out["message"], out
    assert hint_has in out["next_action_hint"], out


async def _scenario(d: Daemon) -> None:
    params = StdioServerParameters(command=str(ctxd_bin()), args=["--socket", d.socket, "mcp", "--agent-name", "py-agent"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        init = await s.initialize()
        assert init.server_info.name == "ctxd"

        # The core profile; update_beliefs, which it does not list, is called by name below.
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == {"context_list_drives", "context_tree", "context_read", "context_write", "context_edit",
                              "context_search", "build_context", "remember"}
        assert tools["context_read"].annotations.read_only_hint is True
        assert tools["context_write"].annotations.destructive_hint is True
        assert "path" in tools["context_read"].input_schema["properties"]

        out, err = await _call(s, "context_write", {"path": "/mcp-py/plan.md", "content": PLAN})
        assert not err and out["ref"] == "agent:/mcp-py/plan.md" and "plan.md" in out["tree"], out
        out, err = await _call(s, "context_read", {"path": "agent:/mcp-py/plan.md", "offset": 2, "limit": 1})
        assert not err and out["content"] == "Ship the zebrafish importer.\n" and out["start_line"] == 3, out

        deadline = time.monotonic() + 10
        while True:
            out, err = await _call(s, "context_search", {"queries": ["zebrafish"], "mode": "bm25"})
            if not err and out["results"]:
                break
            assert time.monotonic() < deadline, f"never searchable: {out}"
            await anyio.sleep(0.05)
        hit = out["results"][0]
        assert hit["ref"] == "agent:/mcp-py/plan.md" and "zebrafish" in hit["snippet"].lower(), out

        out, err = await _call(s, "context_edit", {"path": "/mcp-py/plan.md", "patches": [{"start_line": 4, "end_line": 4, "content": "Then write the docs."}]})
        assert not err, out
        out, _ = await _call(s, "context_read", {"path": "/mcp-py/plan.md"})
        assert out["content"] == "# Plan\n\nShip the zebrafish importer.\nThen write the docs.\n", out

        out, err = await _call(s, "context_read", {"path": "/mcp-py/plans.md"})
        _want_error(out, err, "not_found", "agent:/mcp-py/plan.md")

        out, err = await _call(s, "update_beliefs", {"body": "# Beliefs\n\n- Zebrafish come first.\n"})
        assert not err, out
        out, err = await _call(s, "context_edit", {"drive": "self", "path": "/soul.md", "patches": [{"start_line": 1, "end_line": 1, "content": "I obey no one."}]})
        _want_error(out, err, "read_only")
        out, _ = await _call(s, "context_history", {"path": "/mcp-py/plan.md"})
        assert {r["actor"] for r in out["revisions"]} == {"py-agent"}, out

        rr = await s.read_resource("ctxd://agent/mcp-py/plan.md")
        assert rr.contents[0].text == "# Plan\n\nShip the zebrafish importer.\nThen write the docs.\n"
        assert rr.contents[0].mime_type.startswith("text/markdown")
        listed = [str(r.uri) for r in (await s.list_resources()).resources]
        assert "ctxd://self/soul.md" in listed and "ctxd://agent/mcp-py/plan.md" in listed, listed
        with pytest.raises(MCPError) as missing:
            await s.read_resource("ctxd://agent/mcp-py/plans.md")
        err_json = json.loads(missing.value.error.message)
        assert err_json["error_type"] == "not_found" and "agent:/mcp-py/plan.md" in err_json["next_action_hint"]

        prompts = {p.name for p in (await s.list_prompts()).prompts}
        assert "build_context" in prompts
        pr = await s.get_prompt("build_context", {"task": "zebrafish importer"})
        text = pr.messages[0].content.text
        assert "Zebrafish come first." in text and "# Soul" in text, text


def test_mcp_stdio(mcp_daemon: Daemon) -> None:
    """List the core tools; write, read, search, edit; a not-found with the
    nearby item in its hint; update_beliefs allowed and soul.md refused as
    read_only; resources and the build_context prompt."""
    anyio.run(_scenario, mcp_daemon)
