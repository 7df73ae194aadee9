"""find_similar and add(dedupe_threshold=) against the real daemon with the real model."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

import ctxd
from conftest import REPO_ROOT, Daemon, _run_daemon

NOTE = "# Deployment\n\nRun the canary release in staging before rolling out to production, and watch the error rate for an hour.\n"


@pytest.fixture(scope="module")
def model_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon with the embedding model (the repo's .cache, as make setup installs it)."""
    args = [
        "--model-dir", str(REPO_ROOT / ".cache/models/all-MiniLM-L6-v2"),
        "--onnxruntime-lib", str(REPO_ROOT / ".cache/onnxruntime/libonnxruntime.so"),
    ]
    with _run_daemon(tmp_path_factory, args) as d:
        yield d


def test_find_similar_and_dedupe(model_daemon: Daemon, tmp_path_factory: pytest.TempPathFactory) -> None:
    with model_daemon.client() as client:
        client.write("agent:/sim/deploy.md", NOTE)
        client.write("agent:/sim/copy.md", NOTE)
        client.write("agent:/sim/bread.md", "# Bread\n\nKnead the dough for ten minutes and bake it at 220 degrees.\n")
        # Embedded in the background: until then the item's chunks have no vectors.
        deadline = time.monotonic() + 60
        while True:
            try:
                r = client.find_similar("agent:/sim/deploy.md")
                if r.items:
                    break
            except ctxd.UnavailableError:
                pass
            assert time.monotonic() < deadline, "agent:/sim/deploy.md was not embedded in time"
            time.sleep(0.05)
        assert [x.ref for x in r.items] == ["agent:/sim/copy.md"]
        assert r.items[0].coverage == 1 and r.items[0].similarity > 0.999 and r.target_chunks == 1

        r = client.find_similar(text=NOTE, threshold=0.95, path_prefixes=["agent:/sim/"])
        assert sorted(x.ref for x in r.items) == ["agent:/sim/copy.md", "agent:/sim/deploy.md"]
        with pytest.raises(ValueError):
            client.find_similar("agent:/sim/deploy.md", text=NOTE)
        with pytest.raises(ctxd.InvalidArgumentError) as ei:
            client.find_similar(text=NOTE, threshold=1.5)
        assert "--threshold" in ei.value.hint

        src = tmp_path_factory.mktemp("inbox")
        (src / "copy.md").write_text(NOTE)
        (src / "new.md").write_text("# Lumber\n\nA solar kiln dries lumber in a few weeks.\n")
        items = {
            ev.item.source.rsplit("/", 1)[-1]: ev.item
            for ev in client.add(str(src), dedupe_threshold=0.9)
            if ev.HasField("item")
        }
        assert items["copy.md"].duplicate_of in ("agent:/sim/deploy.md", "agent:/sim/copy.md")
        assert items["copy.md"].action == ctxd.v1.ingest_pb2.INGEST_ACTION_SKIPPED
        assert items["new.md"].action == ctxd.v1.ingest_pb2.INGEST_ACTION_ADDED and items["new.md"].duplicate_of == ""
