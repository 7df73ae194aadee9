"""SQLite FTS5 + sqlite-vec peer for `make bench-ingest-compare` (issue 14).

Ingests a dataset written by ctxd's Go bench into a new SQLite database and searches it the
way ctxd does (BM25 OR query, vector KNN, hybrid by reciprocal rank fusion), so both run on
the same chunks, vectors and queries. Usage:

    python sqlite_peer.py --data DIR --db PATH [--results FILE]
    python sqlite_peer.py --serve --data DIR --db PATH [--results FILE]

DIR holds meta.json, chunks.jsonl, vectors.f32 and queries.jsonl (see the Go bench). PATH must
not exist, except with --serve, which only searches the database an earlier run made, in a
process that does nothing else, and reports that process's memory (peak RSS while serving).
--results writes one JSON line per measured query with each mode's refs in rank order. Progress goes to stderr; the last stdout line is one JSON object with the figures.

SQLite comes from the sqlean.py wheel, not the stdlib: Python builds without loadable
extension support (pyenv's default, as on this project's machines) cannot load sqlite-vec,
and the wheel also pins one SQLite version (with FTS5) on every machine.
"""

import json
import os
import sys
import time

import sqlean as sqlite3
import sqlite_vec

import peerutil

PEER = "sqlite_peer"
HYBRID_DEPTH = 4  # each hybrid leg fetches HYBRID_DEPTH * limit candidates
VEC_MAX_K = 4096  # sqlite-vec's largest k for a KNN query


def log(msg):
    print(f"{PEER}: {msg}", file=sys.stderr, flush=True)


def fail(msg):
    peerutil.fail(PEER, msg)


def check_limit(meta):
    if HYBRID_DEPTH * meta["limit"] > VEC_MAX_K:
        fail(f"meta.json: limit {meta['limit']} is over {VEC_MAX_K // HYBRID_DEPTH}: hybrid's vector leg"
             f" asks for {HYBRID_DEPTH} * limit and sqlite-vec's k is at most {VEC_MAX_K}")


def create(path, dims):
    for p in (path, path + "-wal", path + "-shm"):
        if os.path.exists(p):
            fail(f"{p} exists; --db must name a new database")
    conn = sqlite3.connect(path, isolation_level=None)  # explicit BEGIN/COMMIT below
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    conn.execute("PRAGMA journal_mode=WAL")
    # ctxd acknowledges a write only once it is durable, so every commit fsyncs the WAL here too.
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE chunks(rowid INTEGER PRIMARY KEY, ref TEXT NOT NULL)")
    # porter over unicode61 is the closest FTS5 tokenizer to ctxd's English analysis (Unicode
    # word split, lower case, Porter stemming). FTS5 keeps the text, as ctxd's store does.
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(title, text, tokenize='porter unicode61')")
    # L2, vec0's default: vectors are unit length, so L2 ranks exactly as cosine does
    # (|a-b|^2 = 2 - 2cos) without cosine's two norms per distance.
    conn.execute(f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{dims}])")
    return conn


def ingest(conn, chunks, vectors, batch):
    n = len(chunks)
    start = time.perf_counter()
    for lo in range(0, n, batch):
        rows = range(lo, min(lo + batch, n))
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO chunks(rowid, ref) VALUES (?, ?)",
                         ((i + 1, chunks[i]["ref"]) for i in rows))
        conn.executemany("INSERT INTO fts(rowid, title, text) VALUES (?, ?, ?)",
                         ((i + 1, chunks[i]["title"], chunks[i]["text"]) for i in rows))
        conn.executemany("INSERT INTO vec(rowid, embedding) VALUES (?, ?)",
                         ((i + 1, vectors[i]) for i in rows))
        conn.execute("COMMIT")
        if rows.stop * 10 // n > lo * 10 // n:  # about every tenth of the chunks
            log(f"ingested {rows.stop}/{n}")
    return time.perf_counter() - start


def bm25(conn, text, k):
    """ctxd's BM25 leg is an OR of the query's words; each word becomes a quoted FTS5 string."""
    words = [w.replace('"', "") for w in text.split()]
    expr = " OR ".join(f'"{w}"' for w in words if w)
    if not expr:
        return []
    return conn.execute(
        "SELECT f.rowid, c.ref FROM (SELECT rowid, rank FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?) f"
        " JOIN chunks c ON c.rowid = f.rowid ORDER BY f.rank", (expr, k)).fetchall()


def knn(conn, vector, k):
    return conn.execute(
        "SELECT v.rowid, c.ref FROM (SELECT rowid, distance FROM vec WHERE embedding MATCH ? AND k = ?) v"
        " JOIN chunks c ON c.rowid = v.rowid ORDER BY v.distance", (vector, k)).fetchall()


def hybrid(conn, text, vector, limit):
    """Reciprocal rank fusion of both legs over chunk rows; ties keep the BM25 leg's order."""
    return peerutil.rrf((bm25(conn, text, HYBRID_DEPTH * limit), knn(conn, vector, HYBRID_DEPTH * limit)), limit)


def search(conn, queries, meta, results_path):
    limit = meta["limit"]
    modes = {
        "bm25": lambda text, vector: bm25(conn, text, limit),
        "vector": lambda text, vector: knn(conn, vector, limit),
        "hybrid": lambda text, vector: hybrid(conn, text, vector, limit),
    }
    # float32 bytes, as vec0 stores them
    return peerutil.measure(modes, queries, meta["warmup"], results_path, sqlite_vec.serialize_float32)


def open_db(path):
    """Opens a database this script made, to serve."""
    if not os.path.exists(path):
        fail(f"{path} does not exist; --serve opens a database an earlier run made")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn


def serve(args):
    """Searches an existing database in a process that did nothing else, so that its peak RSS
    is what serving takes."""
    meta = peerutil.load_meta(PEER, args.data)
    check_limit(meta)
    queries = peerutil.load_queries(PEER, args.data, meta)
    conn = open_db(args.db)
    stats = search(conn, queries, meta, args.results)
    log(f"served {len(queries) - meta['warmup']} queries")
    result = {"peer": "sqlite-fts5+sqlite-vec", "phase": "serve", "queries": len(queries) - meta["warmup"],
              **stats, **peerutil.memory()}
    conn.close()
    print(json.dumps(result), flush=True)


def main():
    args = peerutil.parse_args(__doc__.split("\n")[0], "path of the new SQLite database")
    if args.serve:
        serve(args)
        return

    meta, chunks, vectors, queries = peerutil.load(PEER, args.data)
    check_limit(meta)
    dataset_rss = peerutil.status_bytes("VmHWM")  # the interpreter plus the dataset, before SQLite does anything
    n = meta["chunks"]
    log(f"loaded {n} chunks, {len(queries)} queries ({meta['warmup']} warm-up)")

    conn = create(args.db, meta["dims"])
    ingest_s = ingest(conn, chunks, vectors, meta["batch"])
    log(f"ingest {ingest_s:.2f}s, {n / ingest_s:.0f} chunks/s")

    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    disk = sum(os.path.getsize(p) for p in (args.db, args.db + "-wal", args.db + "-shm") if os.path.exists(p))
    log(f"disk {disk} bytes, {disk / n:.0f} per chunk")

    stats = search(conn, queries, meta, args.results)
    log(f"searched {len(queries) - meta['warmup']} queries")
    result = peerutil.ingest_result(
        "sqlite-fts5+sqlite-vec", meta, queries, ingest_s, disk, stats, dataset_rss,
        sqlite_version=sqlite3.sqlite_version,
        sqlite_vec_version=conn.execute("SELECT vec_version()").fetchone()[0], synchronous="FULL")
    conn.close()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
