"""The dataset both peers' tests run on: a tiny one in the Go bench's format."""

import json
import math
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

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


def run_peer(script, data, db, results=None, serve=False):
    """Runs a peer script of this directory on data and db, as the Go bench does."""
    cmd = [sys.executable, str(Path(__file__).with_name(script)), "--data", str(data), "--db", str(db)]
    cmd += ["--serve"] if serve else []
    if results:
        cmd += ["--results", str(results)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)
