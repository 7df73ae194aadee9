// Package index holds everything derived from items: chunking (index/chunk),
// tokenization (index/tokenize), embedding (index/embed), the BM25 and
// substring index (index/lexical), the vector index (index/vector), the
// search engine that keeps both in step with the store's outbox and fuses
// them (index/search), and the background chunk and embed passes
// (index/indexer). Nothing here is a source of truth: all of it can be
// rebuilt from the vfs store.
package index
