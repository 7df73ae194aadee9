"""Runs sqlite_peer.py on a tiny dataset in the Go bench's format and checks what it reports."""

import json
import math
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from sqlite_peer import percentile

SCRIPT = Path(__file__).with_name("sqlite_peer.py")
DIMS = 16
WORDS = [f"word{i}" for i in range(50)]
UNIQUE = "zyxquorblat"  # in one chunk only
MISSING = "nowhereword"  # in no chunk


def unit(v):
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


def write_dataset(d, chunks, vectors, queries, warmup, limit, batch):
    meta = {"dims": DIMS, "chunks": len(chunks), "warmup": warmup, "limit": limit, "batch": batch}
    (d / "meta.json").write_text(json.dumps(meta))
    (d / "chunks.jsonl").write_text("".join(json.dumps(c) + "\n" for c in chunks))
    (d / "vectors.f32").write_bytes(b"".join(struct.pack(f"<{DIMS}f", *v) for v in vectors))
    (d / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))


def run_peer(data, db, results=None):
    cmd = [sys.executable, str(SCRIPT), "--data", str(data), "--db", str(db)]
    if results:
        cmd += ["--results", str(results)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.fixture
def dataset(tmp_path):
    """300 chunks of random words over 120 refs of 1-4 consecutive chunks; one chunk holds UNIQUE.
    Queries: 2 warm-up, then text aimed at the UNIQUE chunk with a vector near another chunk's,
    one that no chunk matches by words, and random ones."""
    rng = random.Random(14)
    chunks, vectors = [], []
    page = 0
    while len(chunks) < 300:
        for part in range(rng.randint(1, 4)):
            words = rng.choices(WORDS, k=rng.randint(5, 30))
            chunks.append({"ref": f"wiki:/{page}/{part}", "title": f"Page {page}", "text": " ".join(words)})
            vectors.append(unit([rng.gauss(0, 1) for _ in range(DIMS)]))
        page += 1
    chunks, vectors = chunks[:300], vectors[:300]
    planted_text, planted_vec = 137, 211
    chunks[planted_text]["text"] += f" {UNIQUE}."
    near = unit([x + rng.gauss(0, 0.01) for x in vectors[planted_vec]])

    def random_query():
        return {"text": " ".join(rng.choices(WORDS, k=rng.randint(3, 8))),
                "vector": unit([rng.gauss(0, 1) for _ in range(DIMS)])}

    # The quote must be stripped (FTS5 rejects it unbalanced) and the words OR-ed (as an AND
    # this finds nothing), and the rare word must outrank the common one.
    queries = [random_query(), random_query(),
               {"text": f'{UNIQUE[:3]}"{UNIQUE[3:]} {MISSING} {WORDS[3]}', "vector": near},
               {"text": f"{MISSING} also-nowhere", "vector": near}]
    queries += [random_query() for _ in range(6)]
    write_dataset(tmp_path, chunks, vectors, queries, warmup=2, limit=5, batch=64)
    return tmp_path, chunks[planted_text]["ref"], chunks[planted_vec]["ref"]


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
