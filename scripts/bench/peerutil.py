"""What the peers of `make bench-ingest-compare` share: the Go bench's dataset, the process's
memory as /proc reports it, and the latency percentile."""

import argparse
import json
import math
import os
import sys
import time


def parse_args(description, db_help):
    """The command line every peer takes."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data", required=True, help="dataset directory written by the Go bench")
    ap.add_argument("--db", required=True, help=db_help)
    ap.add_argument("--results", help="write each measured query's refs per mode here (JSON lines)")
    ap.add_argument("--serve", action="store_true",
                    help="only search the existing --db, in a process of its own (peak RSS while serving)")
    return ap.parse_args()


def fail(peer, msg):
    sys.exit(f"{peer}: {msg}")


def status_bytes(field):
    """A kB field of /proc/self/status in bytes: VmHWM (peak RSS), RssAnon, RssFile. Not
    getrusage's ru_maxrss: after fork and exec it reports the parent's peak when that was
    higher, and the Go bench that runs a peer holds the whole corpus."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def memory():
    """The serving figures every peer reports: peak RSS, and RSS now split into anonymous
    memory (heap) and file pages mapped (reclaimable, like the kernel's page cache)."""
    return {"peak_rss_bytes": status_bytes("VmHWM"), "rss_anon_bytes": status_bytes("RssAnon"),
            "rss_file_bytes": status_bytes("RssFile")}


def load_meta(peer, data):
    with open(os.path.join(data, "meta.json")) as f:
        meta = json.load(f)
    for key, least in (("dims", 1), ("chunks", 1), ("warmup", 0), ("limit", 1), ("batch", 1)):
        if not isinstance(meta.get(key), int) or meta[key] < least:
            fail(peer, f"meta.json: {key} must be an integer >= {least}, got {meta.get(key)!r}")
    return meta


def load_queries(peer, data, meta):
    with open(os.path.join(data, "queries.jsonl")) as f:
        queries = [json.loads(line) for line in f if line.strip()]
    for i, q in enumerate(queries):
        if len(q["vector"]) != meta["dims"]:
            fail(peer, f"queries.jsonl line {i + 1}: vector has {len(q['vector'])} floats, want {meta['dims']}")
    if len(queries) <= meta["warmup"]:
        fail(peer, f"queries.jsonl has {len(queries)} queries, need more than warmup = {meta['warmup']}")
    return queries


def load(peer, data):
    """Reads the whole dataset into memory and checks it against meta.json."""
    meta = load_meta(peer, data)
    dims, n = meta["dims"], meta["chunks"]
    with open(os.path.join(data, "chunks.jsonl")) as f:
        chunks = [json.loads(line) for line in f if line.strip()]
    if len(chunks) != n:
        fail(peer, f"chunks.jsonl has {len(chunks)} chunks, meta.json says {n}")
    with open(os.path.join(data, "vectors.f32"), "rb") as f:
        blob = f.read()
    row = dims * 4
    if len(blob) != n * row:
        fail(peer, f"vectors.f32 has {len(blob)} bytes, want chunks*dims*4 = {n * row}")
    whole = memoryview(blob)  # rows are views: no second copy of the vectors
    vectors = [whole[i * row:(i + 1) * row] for i in range(n)]
    return meta, chunks, vectors, load_queries(peer, data, meta)


def percentile(sorted_ms, p):
    """Nearest-rank percentile: the smallest value with at least p% of the values at or below it."""
    return sorted_ms[max(1, math.ceil(p / 100 * len(sorted_ms))) - 1]


def rrf(legs, limit, k=60):
    """Reciprocal rank fusion (k as in ctxd's hybrid search) of legs of (rowid, ref) in rank
    order; ties keep the first leg's order."""
    scores, refs = {}, {}
    for leg in legs:
        for rank, (rowid, ref) in enumerate(leg, 1):
            scores[rowid] = scores.get(rowid, 0.0) + 1.0 / (k + rank)
            refs[rowid] = ref
    top = sorted(scores, key=scores.get, reverse=True)[:limit]
    return [(rowid, refs[rowid]) for rowid in top]


def measure(modes, queries, warmup, results_path, vector_of):
    """Runs every query in every mode (mode -> run(text, vector) returning (rowid, ref) in rank
    order), one at a time, and returns each mode's p50/p95/p99 in ms and its queries without
    results, over the queries after warmup. vector_of(list of floats) is the vector as the mode
    takes it. results_path, when set, gets one JSON line per measured query with each mode's
    refs in rank order."""
    times = {m: [] for m in modes}
    empty = {m: 0 for m in modes}
    out = open(results_path, "w") if results_path else None
    for i, q in enumerate(queries):
        vector = vector_of(q["vector"])
        measured = i >= warmup
        line = {}
        for mode, run in modes.items():
            t = time.perf_counter()
            rows = run(q["text"], vector)
            ms = (time.perf_counter() - t) * 1000
            if measured:
                times[mode].append(ms)
                empty[mode] += len(rows) == 0
                line[mode] = [ref for _, ref in rows]
        if out and measured:
            out.write(json.dumps(line) + "\n")
    if out:
        out.close()
    stats = {}
    for mode, ms in times.items():
        ms.sort()
        stats[mode] = {f"p{p}_ms": round(percentile(ms, p), 3) for p in (50, 95, 99)}
        stats[mode]["empty"] = empty[mode]
    return stats


def ingest_result(peer, meta, queries, ingest_s, disk, stats, dataset_rss, **extra):
    """The figures of an ingest run: ingest, disk and search, and peak RSS with the dataset's part
    (both include the interpreter; the peak also holds the whole dataset in memory)."""
    n = meta["chunks"]
    return {"peer": peer, **extra, "chunks": n, "queries": len(queries) - meta["warmup"],
            "ingest_s": round(ingest_s, 3), "ingest_chunks_per_s": round(n / ingest_s, 1),
            "bytes_per_chunk": round(disk / n, 1), **stats,
            "peak_rss_bytes": status_bytes("VmHWM"), "dataset_rss_bytes": dataset_rss}
