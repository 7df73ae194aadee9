// Package vector is the vector leg of search: an in-memory index of
// L2-normalised float32 vectors answering cosine top-k queries, keyed by the
// caller's uint64 ids. It owns nothing durable: the search engine
// (index/search) fills it from the vfs store or its snapshot at start-up,
// keeps it current from the store's outbox, and can always rebuild it.
//
// # Memory layout
//
// All vectors live in one contiguous row-major []float32 matrix (row i is
// vector i, dims floats), with a row→id slice and an id→row map beside it:
// 4·dims + ~40 bytes per vector (≈1.6 KB at 384 dims, 1.6 GB per million).
// Upsert normalises a copy of the caller's vector into its row; Delete moves
// the last row into the hole (swap-with-last), so deletes cost O(dims), leave
// no tombstones and never rebuild. Row order is therefore not insertion order.
//
// A quantized index (Options.Quantize, NewQuantized) also keeps an int8 copy
// of every row, scaled per vector by its largest |component| and padded to a
// multiple of 32 bytes, plus one float32 scale per row: dims+4 more bytes per
// vector. On Unix the int8 rows live in an anonymous memory map outside the
// Go heap (offheap.go), so the collector's headroom does not double them. Its search scans the int8 matrix (a quarter of the bytes; an AVX2
// int8 dot product in dot_amd64.s, a portable loop elsewhere), keeps the best
// k·Rescore candidates, and rescores those exactly from the float32 matrix,
// so returned scores are always exact cosines. SearchExact on the same index
// is the exact reference its recall is measured against.
//
// With Options.Exact the index keeps only the int8 copy (dims+4 bytes and
// the id, ≈0.45 KB per vector at 384 dims) and reads the float32 vectors of
// the k·Rescore candidates from the ExactSource to rescore them. The search
// engine runs it that way, with the store as the source: a million vectors
// then take 0.4 GB of memory and of snapshot to load at start-up, not 2 GB.
//
// # Search
//
// A search scans the rows in up to runtime.NumCPU() contiguous shards, one
// goroutine each, with vek32.Dot (AVX2/FMA) per row; every shard keeps its own
// bounded min-heap and the heaps are merged at the end. The scan allocates
// nothing per row. A Filter is consulted inside the scan, before a row can
// enter a heap, so a scoped search returns its matches even when they rank
// far below the global top-k. Results are ordered by score, then by id.
//
// # Concurrency
//
// An Index is safe for concurrent use behind one sync.RWMutex: searches run
// in parallel under the read lock, Upsert, Delete and Reserve take the write
// lock. Filters are called from several goroutines at once.
//
// # Caveats
//
//   - A search holds the read lock for its whole scan (tens of ms at 1M
//     exact), so a writer waits for searches in flight and searches arriving
//     behind a waiting writer wait for it: bulk loads should happen before
//     serving or in modest batches.
//   - Deletes do not shrink capacity; a rebuild (new Index) returns memory.
//   - Quantization is per vector, not per dimension: fine for normalised
//     sentence embeddings, weaker if a few dimensions carry outsized values.
//     Recall@10 against exact, 50k×384 clustered vectors: 0.987 with Rescore 1,
//     1.000 from Rescore 2 (the default is 8); see TestIndex_quantizedRecall
//     and BenchmarkIndex_Search.
//   - The scan is linear in the corpus; there is no graph (ANN) index. At 1M×384
//     on 2 loaded cores the quantized search takes ~14 ms p50 (recall@10 1.000),
//     the exact one 33–50 ms, bound by memory bandwidth (1.5 GB per query).
package vector
