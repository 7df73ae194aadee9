// Package index holds everything derived from items: chunking
// (index/chunk), tokenization (index/tokenize), embedding (index/embed), and
// later the BM25 and vector indexes and fusion. Nothing here is a source of
// truth: all of it can be rebuilt from the vfs store.
package index
