// Package index holds everything derived from items: chunking (index/chunk),
// tokenization (index/tokenize), embedding (index/embed), the BM25 and
// substring index (index/lexical), the vector index (index/vector), the
// search engine that keeps both in step with the store's outbox and fuses
// them (index/search), the background chunk and embed passes
// (index/indexer), and the read-side views built on them: an agent's
// context (index/assemble) and the optional question enricher
// (index/enrich). Nothing here is a source of truth: all of it can be
// rebuilt from the vfs store (assemble's Init and Update write context files
// as items, through the store, like any client).
package index
