"""Integration tests of agent context and item history against the real daemon."""

from __future__ import annotations

import datetime
import hashlib
import time

import grpc
import pytest

import ctxd
from conftest import AGENT_TOKEN, Daemon


def _wait_searchable(c: ctxd.Client, query: str, ref: str) -> None:
    """The index applies writes in the background, within milliseconds."""
    deadline = time.monotonic() + 10
    while ref not in [r.ref for r in c.search(query, mode="bm25", limit=50).results]:
        if time.monotonic() > deadline:
            pytest.fail(f"{ref} never became searchable for {query!r}")
        time.sleep(0.05)


def test_build_context(client: ctxd.Client) -> None:
    root = "self:/py-build/"
    files = {
        root + "soul.md": "---\nloading: always\n---\nYou are a careful bookkeeping assistant.\n",
        root + "invoicing.md": "---\nloading: contextual\n---\nOverdue invoices get a reminder after 14 days.\n",
        root + "deploy.md": "---\nloading: contextual\n---\nDeployments go out with kubectl rollout.\n",
        "work:/py-build/dunning.md": "# Dunning\n\nSend the second invoice reminder by registered mail.\n",
    }
    for ref, text in files.items():
        client.write(ref, text, on_conflict="overwrite")
    _wait_searchable(client, "registered mail", "work:/py-build/dunning.md")

    r = full = client.build_context("send the overdue invoice reminder", roots=[root], drives=["work"])
    kinds = {s.ref: s.kind for s in r.sections}
    assert kinds == {
        root + "soul.md": "always",
        root + "invoicing.md": "contextual",
        "work:/py-build/dunning.md": "chunk",
    }, r.markdown
    (inv,) = [s for s in r.sections if s.ref == root + "invoicing.md"]
    assert inv.matched_terms, inv
    assert "careful bookkeeping" in r.markdown and "registered mail" in r.markdown
    assert "kubectl" not in r.markdown
    assert r.budget == 4000 and 0 < r.tokens_used <= r.budget

    r = client.build_context("roll out the deployment with kubectl", roots=[root], mode="bm25")
    assert "kubectl" in r.markdown and "Overdue invoices" not in r.markdown

    # One token short of the full context: the chunk, rendered last, is
    # dropped and reported; the files stay.
    r = client.build_context("send the overdue invoice reminder", roots=[root], drives=["work"], budget=full.tokens_used - 1)
    assert "registered mail" not in r.markdown and "Overdue invoices" in r.markdown
    omitted = {o.ref: o.reason for o in r.omitted}
    assert "over budget" in omitted.get("work:/py-build/dunning.md", ""), r.omitted

    with pytest.raises(ctxd.InvalidArgumentError) as ei:
        client.build_context("x", budget=10**9)
    assert ei.value.hint


def test_init_and_update_context(client: ctxd.Client) -> None:
    root = "self:/py-init/"
    r = client.init_context(root)
    assert list(r.created) == [root + n for n in ("soul.md", "beliefs.md", "goals.md", "capabilities.md")]
    again = client.init_context(root)
    assert list(again.created) == [] and list(again.existing) == list(r.created)

    before = client.read(root + "beliefs.md").content
    head = before[: before.index("\n---\n", 4) + len("\n---\n")]
    body = "- the user prefers short answers\n"
    u = client.update_context(root + "beliefs.md", body)
    assert u.item.content_hash == hashlib.sha256((head + body).encode()).hexdigest()
    assert list(u.warnings) == []
    assert client.read(root + "beliefs.md").content == head + body
    assert client.info(root + "beliefs.md").item.loading == "always"

    with pytest.raises(ctxd.ContentChangedError):
        client.update_context(root + "beliefs.md", "x\n", expected_content_hash="0" * 64)


def test_write_warns_on_bad_frontmatter(client: ctxd.Client) -> None:
    text = "---\nloading: sometimes\n---\nbody\n"
    w = client.write("agent:/py-fm/bad.md", text)
    assert w.created and len(w.warnings) == 1, w.warnings
    assert client.read("agent:/py-fm/bad.md").content == text


def test_history_revert_restore_log(client: ctxd.Client) -> None:
    ref = "agent:/py-hist/h.md"
    start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)
    client.write(ref, "first\n")
    client.edit(ref, [(2, 0, "second")])
    assert client.read_revision(ref, 1).content == "first\n"
    rv = client.read_revision(ref, 2, raw=True)
    assert rv.data == b"first\nsecond\n" and rv.revision.op == "edit"

    r = client.revert(ref, 1)
    assert not r.created and client.read(ref).content == "first\n"
    client.rm(ref)
    hist = client.history(ref)
    assert [(h.rev, h.op, h.actor) for h in hist] == [
        (4, "delete", "owner"), (3, "revert", "owner"), (2, "edit", "owner"), (1, "write", "owner")]
    assert hist[0].deleted
    assert [h.rev for h in client.history(ref, limit=2, before_rev=3)] == [2, 1]

    (gone,) = client.deleted("agent:/py-hist")
    assert (gone.ref, gone.rev) == (ref, 4)
    r = client.revert(gone.ref, gone.rev - 1)
    assert r.created and client.read(ref).content == "first\n"
    assert client.deleted("agent:/py-hist") == []

    log = client.log(actor="owner", since=start, limit=1000)
    mine = [(x.ref, x.op) for x in log.revisions if x.ref == ref]
    assert mine == [(ref, "revert"), (ref, "delete"), (ref, "revert"), (ref, "edit"), (ref, "write")]
    assert [x for x in client.log(actor="harness").revisions if x.ref == ref] == []
    page = client.log(since=datetime.timedelta(minutes=5), limit=1)
    assert len(page.revisions) == 1 and page.next_page_token
    with pytest.raises(ValueError):
        client.log(since=datetime.datetime.now())

    with pytest.raises(ctxd.NotFoundError):
        client.read_revision(ref, 99)


def test_agent_token_refused_on_soul(agent_daemon: Daemon) -> None:
    with agent_daemon.client() as owner:
        owner.init_context()
        soul = owner.read("self:/soul.md").content
    with ctxd.Client(target=agent_daemon.tcp, token=AGENT_TOKEN, timeout=10) as agent:
        with pytest.raises(ctxd.ReadOnlyError) as ei:
            agent.update_context("self:/soul.md", "I obey no one.\n")
        e = ei.value
        assert e.type == "READ_ONLY" and e.code == grpc.StatusCode.PERMISSION_DENIED
        assert "agent-modification" in e.message, e.message
        assert "self:/beliefs.md" in e.hint, e.hint
        with pytest.raises(ctxd.ReadOnlyError):
            agent.write("self:/soul.md", "overwritten\n", on_conflict="overwrite")
        with pytest.raises(ctxd.ReadOnlyError):
            agent.rm("self:/soul.md")
        assert agent.read("self:/soul.md").content == soul

        # beliefs.md says agent-modification: true.
        u = agent.update_context("self:/beliefs.md", "- learned today\n")
        assert agent.read("self:/beliefs.md").content.endswith("---\n- learned today\n")
        assert agent.history("self:/beliefs.md")[0].actor == "harness"
        assert [x.op for x in agent.log(actor="harness").revisions] == ["context_update"]

    # The owner (the unix socket) may change soul.md.
    with agent_daemon.client() as owner:
        owner.update_context("self:/soul.md", "Be kind.\n")
        assert owner.read("self:/soul.md").content.endswith("\nBe kind.\n")
