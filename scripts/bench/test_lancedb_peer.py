"""Runs lancedb_peer.py on the tiny dataset of conftest.py and checks what it reports."""

import json

import conftest


def run_peer(data, db, results=None, serve=False):
    return conftest.run_peer("lancedb_peer.py", data, db, results, serve)


def test_lancedb_peer_reports_ranks_and_serves(dataset, tmp_path):
    data, text_ref, vec_ref = dataset
    db, results = tmp_path / "lance", tmp_path / "results.jsonl"
    proc = run_peer(data, db, results)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["peer"] == "lancedb" and out["chunks"] == 300 and out["queries"] == 8
    assert out["ingest_s"] > 0 and out["bytes_per_chunk"] > 0
    for mode in ("bm25", "vector", "hybrid"):
        assert out[mode]["p50_ms"] <= out[mode]["p95_ms"] <= out[mode]["p99_ms"]
    # Only the query of missing words finds nothing, and only by BM25.
    assert (out["bm25"]["empty"], out["vector"]["empty"], out["hybrid"]["empty"]) == (1, 0, 0)
    planted, missing = [json.loads(line) for line in results.read_text().splitlines()][:2]
    assert planted["bm25"][0] == text_ref and len(planted["bm25"]) == 5
    assert planted["vector"][0] == vec_ref and len(planted["vector"]) == 5
    assert {text_ref, vec_ref} <= set(planted["hybrid"])
    assert missing["bm25"] == [] and missing["hybrid"] == missing["vector"]

    served = run_peer(data, db, serve=True)
    assert served.returncode == 0, served.stderr
    s = json.loads(served.stdout.strip().splitlines()[-1])
    assert s["phase"] == "serve" and s["peak_rss_bytes"] >= s["rss_anon_bytes"] > 0
    assert s["bm25"]["empty"] == 1


def test_lancedb_peer_refuses_existing_db(dataset, tmp_path):
    data, _, _ = dataset
    db = tmp_path / "taken"
    db.mkdir()
    proc = run_peer(data, db)
    assert proc.returncode != 0
    assert f"{db} exists; --db must name a new database" in proc.stderr
