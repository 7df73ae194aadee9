// Package search answers queries over a store's chunks with hybrid retrieval
// (DESIGN §3) and keeps the derived indexes it needs in step with the store
// (DESIGN §2).
//
// An Engine owns two derived indexes: a Bleve index (index/lexical) holding
// the BM25 and substring legs, and an in-memory vector matrix (index/vector)
// with a catalog of the items its rows belong to: a row per chunk text
// vector, and a row per question vector a chunk carries (vfs/questions.go),
// so that the vector leg scores a chunk by the best of them, each chunk
// once. Both are fed from the
// store's durable outbox by one goroutine: it reads outbox entries past the
// sequence an index has applied, re-reads those items' current state and
// applies it, so a crash at any point is repaired by applying again. Bleve
// records its applied sequence in every batch; the vector matrix is saved to
// a snapshot file with its sequence now and then and on Close, and the outbox
// is trimmed only below what both have made durable. Doctor compares the
// indexes with the store at one outbox sequence: on that goroutine, it pins
// a read of the store (vfs.Store.Pin) and applies entries up to exactly the
// pinned sequence from it before comparing; Doctor and Reindex stop when
// their caller's context ends.
//
// Searches read their writes: the run goroutine waits a moment after a write
// so that one Bleve batch carries many changes, and it publishes the
// sequence each index has applied (fresh.go). Search and FindSimilar first
// read the store's outbox sequence; when the indexes they use are behind
// it, they ask the run goroutine to apply at once and wait for it, at most
// Options.WriteWait and half the time left before their deadline, then
// answer and say they are stale (Response.Stale). With nothing pending the
// check is one read transaction of the store.
//
// A query runs the legs concurrently with every filter inside candidate
// generation, fuses them with weighted reciprocal rank fusion on chunk ids,
// caps chunks per item, cuts snippets around the real match positions and
// fills a token budget. Grouped by item (GroupItem), fusion runs over items
// instead: each leg ranks an item by its best chunk, so legs that agree on
// an item through different chunks all credit it, and each result is an
// item with its best chunks. Priors, when asked for, scale each fused score
// by its item's importance and usage (how often search returned it) before
// ranking. Then a rerank window (the first 2×limit results, at most 200
// chunks) is read once, for two signals judged on the chunks and for the
// presentation: the proximity rerank (proximity.go) scales a score by how
// closely the chunk holds the query's neighbouring terms, and Recency
// (recency.go) by the age of the items a caller's predicate picks (session
// events, in the daemon); the window grows while recency has lowered scores
// below what a result after it could score. MinScore drops results under
// the final score. A request's Within (the caller's access) narrows
// its filter before the legs run, so no leg, snippet or count sees past
// it. Scores and the key terms of a long query still come from whole-index
// statistics.
//
// A query whose text cannot be embedded (Request.EmbedQuery fails while
// the request's context is live: a remote embedding endpoint down or too
// slow) runs again in BM25 mode, and so do the request's later queries,
// with the failure in Response.ModeReason: the words still answer it.
//
// FindSimilar compares a target's chunk vectors (a stored item's, or a
// text's the caller embedded) with every other item's text vectors, one
// vector scan per target chunk, and reports per item the best pair and the
// share of the target's chunks it matches: near-duplicate detection for
// memory de-duplication.
//
// Every request is bounded (Limits, refused with a *LimitError). A long
// query text is searched by its key terms (lexical.Index.KeyTerms), so a
// pasted page costs about what a short query does, and every leg, the typo
// correction and the snippets stop once the request's context ends.
package search
