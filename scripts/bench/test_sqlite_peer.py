"""Runs sqlite_peer.py on a tiny dataset in the Go bench's format and checks what it reports."""

import json

import pytest

import conftest
from peerutil import percentile


def run_peer(data, db, results=None, serve=False):
    return conftest.run_peer("sqlite_peer.py", data, db, results, serve)


def test_sqlite_peer_reports_and_ranks(dataset, tmp_path):
    data, text_ref, vec_ref = dataset
    db, results = tmp_path / "peer.db", tmp_path / "results.jsonl"
    proc = run_peer(data, db, results)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])

    assert out["peer"] == "sqlite-fts5+sqlite-vec"
    assert out["synchronous"] == "FULL"
    assert out["chunks"] == 300
    assert out["queries"] == 8
    assert out["sqlite_vec_version"] == "v0.1.9"
    assert out["ingest_s"] > 0 and out["ingest_chunks_per_s"] > 0
    assert out["bytes_per_chunk"] * 300 >= db.stat().st_size > 0
    assert out["peak_rss_bytes"] >= out["dataset_rss_bytes"] > 0
    for mode in ("bm25", "vector", "hybrid"):
        assert out[mode]["p50_ms"] <= out[mode]["p95_ms"] <= out[mode]["p99_ms"]
    # Only the query of missing words finds nothing, and only by BM25.
    assert (out["bm25"]["empty"], out["vector"]["empty"], out["hybrid"]["empty"]) == (1, 0, 0)

    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(lines) == 8  # measured queries only
    planted, missing = lines[0], lines[1]
    assert planted["bm25"][0] == text_ref and len(planted["bm25"]) == 5
    assert planted["vector"][0] == vec_ref and len(planted["vector"]) == 5
    # Each leg's first scores 1/61; only chunks that both legs find can beat that.
    assert {text_ref, vec_ref} <= set(planted["hybrid"]) and len(planted["hybrid"]) == 5
    assert missing["bm25"] == [] and missing["hybrid"] == missing["vector"]


def test_sqlite_peer_serves_in_a_process_of_its_own(dataset, tmp_path):
    data, text_ref, _ = dataset
    db, results = tmp_path / "peer.db", tmp_path / "served.jsonl"
    assert run_peer(data, db).returncode == 0
    proc = run_peer(data, db, results, serve=True)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["phase"] == "serve" and out["queries"] == 8
    assert out["peak_rss_bytes"] >= out["rss_anon_bytes"] > 0 and out["rss_file_bytes"] > 0
    assert (out["bm25"]["empty"], out["vector"]["empty"], out["hybrid"]["empty"]) == (1, 0, 0)
    assert json.loads(results.read_text().splitlines()[0])["bm25"][0] == text_ref


def test_sqlite_peer_serve_needs_a_db(dataset, tmp_path):
    data, _, _ = dataset
    proc = run_peer(data, tmp_path / "none.db", serve=True)
    assert proc.returncode != 0
    assert "--serve opens a database an earlier run made" in proc.stderr


def test_sqlite_peer_refuses_existing_db(dataset, tmp_path):
    data, _, _ = dataset
    db = tmp_path / "taken.db"
    db.write_bytes(b"")
    proc = run_peer(data, db)
    assert proc.returncode != 0
    assert f"{db} exists; --db must name a new database" in proc.stderr
    assert db.stat().st_size == 0


@pytest.mark.parametrize("values,p,want", [
    ([5.0], 99, 5.0),
    ([float(i) for i in range(1, 101)], 50, 50.0),
    ([float(i) for i in range(1, 101)], 95, 95.0),
    ([float(i) for i in range(1, 11)], 95, 10.0),
    ([float(i) for i in range(1, 11)], 50, 5.0),
])
def test_percentile_nearest_rank(values, p, want):
    assert percentile(values, p) == want
