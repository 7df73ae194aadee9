"""LanceDB peer for `make bench-ingest-compare` (issue 31), beside sqlite_peer.py.

Ingests the same dataset written by ctxd's Go bench into a new LanceDB database and searches it
the way ctxd does: BM25 with LanceDB's native full-text index (an OR of the query's words over
title and text, English stemming and stop words), exact vector search (no ANN index, as ctxd's
scan and sqlite-vec are exact), and hybrid by reciprocal rank fusion. Usage:

    python lancedb_peer.py --data DIR --db PATH [--results FILE]
    python lancedb_peer.py --serve --data DIR --db PATH [--results FILE]

DIR is the Go bench's dataset (see sqlite_peer.py). PATH, a directory, must not exist, except
with --serve, which only searches the database an earlier run made, in a process that does
nothing else, and reports that process's memory (peak RSS while serving). Ingest is timed from
the first write until the full-text indexes are built and every row is searchable. Progress
goes to stderr; the last stdout line is one JSON object with the figures.
"""

import json
import os
import sys
import time
import warnings

import lancedb
import pyarrow as pa

import peerutil

PEER = "lancedb_peer"
TABLE = "chunks"
HYBRID_DEPTH = 4  # each hybrid leg fetches HYBRID_DEPTH * limit candidates, as in sqlite_peer.py


def log(msg):
    print(f"{PEER}: {msg}", file=sys.stderr, flush=True)


def fail(msg):
    peerutil.fail(PEER, msg)


def schema(dims):
    return pa.schema([("rowid", pa.int64()), ("ref", pa.string()), ("title", pa.string()),
                      ("text", pa.string()), ("vector", pa.list_(pa.float32(), dims))])


def ingest(db, chunks, vectors, dims, batch):
    """One commit per batch (a new table version), then the full-text indexes."""
    sch = schema(dims)
    n = len(chunks)
    start = time.perf_counter()
    table = db.create_table(TABLE, schema=sch)
    for lo in range(0, n, batch):
        rows = range(lo, min(lo + batch, n))
        flat = pa.array(memoryview(b"".join(vectors[i] for i in rows)).cast("f"), type=pa.float32())
        table.add(pa.Table.from_arrays([
            pa.array([i + 1 for i in rows], type=pa.int64()),
            pa.array([chunks[i]["ref"] for i in rows]),
            pa.array([chunks[i]["title"] for i in rows]),
            pa.array([chunks[i]["text"] for i in rows]),
            pa.FixedSizeListArray.from_arrays(flat, dims),
        ], schema=sch))
        if rows.stop * 10 // n > lo * 10 // n:
            log(f"ingested {rows.stop}/{n}")
    # LanceDB's own full-text index (not tantivy): English stemming and stop words, as ctxd's.
    # The synchronous table has no other way to build it; its deprecation notice is noise here.
    warnings.filterwarnings("ignore", message="create_fts_index is deprecated")
    for column in ("title", "text"):
        table.create_fts_index(column, use_tantivy=False, language="English", stem=True, remove_stop_words=True)
    return table, time.perf_counter() - start


def rows_of(result):
    return list(zip(result["rowid"].to_pylist(), result["ref"].to_pylist()))


def bm25(table, text, k):
    """The query's words OR-ed (the native full-text query's default) over both indexed columns;
    quotes are dropped, as sqlite_peer.py drops them."""
    text = " ".join(w.replace('"', "") for w in text.split())
    if not text.strip():
        return []
    return rows_of(table.search(text, query_type="fts", fts_columns=["title", "text"])
                   .select(["rowid", "ref", "_score"]).limit(k).to_arrow())


def knn(table, vector, k):
    # L2 on unit vectors ranks as cosine does, as in sqlite_peer.py.
    return rows_of(table.search(vector, query_type="vector").metric("l2")
                   .select(["rowid", "ref", "_distance"]).limit(k).to_arrow())


def search(table, queries, meta, results_path):
    limit = meta["limit"]
    modes = {
        "bm25": lambda text, vector: bm25(table, text, limit),
        "vector": lambda text, vector: knn(table, vector, limit),
        "hybrid": lambda text, vector: peerutil.rrf(
            (bm25(table, text, HYBRID_DEPTH * limit), knn(table, vector, HYBRID_DEPTH * limit)), limit),
    }
    return peerutil.measure(modes, queries, meta["warmup"], results_path, lambda v: v)


def disk_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def serve(args):
    meta = peerutil.load_meta(PEER, args.data)
    queries = peerutil.load_queries(PEER, args.data, meta)
    if not os.path.isdir(args.db):
        fail(f"{args.db} is not a directory; --serve opens a database an earlier run made")
    table = lancedb.connect(args.db).open_table(TABLE)
    stats = search(table, queries, meta, args.results)
    log(f"served {len(queries) - meta['warmup']} queries")
    print(json.dumps({"peer": "lancedb", "phase": "serve", "queries": len(queries) - meta["warmup"],
                      **stats, **peerutil.memory()}), flush=True)


def main():
    args = peerutil.parse_args(__doc__.split("\n")[0], "directory of the new LanceDB database")
    if args.serve:
        serve(args)
        return
    if os.path.exists(args.db):
        fail(f"{args.db} exists; --db must name a new database")

    meta, chunks, vectors, queries = peerutil.load(PEER, args.data)
    dataset_rss = peerutil.status_bytes("VmHWM")
    n = meta["chunks"]
    log(f"loaded {n} chunks, {len(queries)} queries ({meta['warmup']} warm-up)")
    db = lancedb.connect(args.db)
    table, ingest_s = ingest(db, chunks, vectors, meta["dims"], meta["batch"])
    log(f"ingest {ingest_s:.2f}s, {n / ingest_s:.0f} chunks/s")
    disk = disk_bytes(args.db)
    log(f"disk {disk} bytes, {disk / n:.0f} per chunk")
    stats = search(table, queries, meta, args.results)
    print(json.dumps(peerutil.ingest_result("lancedb", meta, queries, ingest_s, disk, stats, dataset_rss,
                                            lancedb_version=lancedb.__version__)), flush=True)


if __name__ == "__main__":
    main()
