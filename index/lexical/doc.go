// Package lexical owns ctxd's two lexical search legs (DESIGN §3): a BM25
// leg with English analysis and stemming, and a substring leg for
// identifiers and partial words. Both live in one disk-backed Bleve index
// (Scorch) over chunks. The index is derived data: the caller feeds it
// from the bbolt outbox with Apply, reads back the last applied outbox
// sequence with AppliedSeq to catch up after a restart, and may delete the
// directory and rebuild at any time. The package knows nothing of bbolt,
// items or transport.
//
// # Mapping
//
// One static document mapping, no dynamic fields and no composite _all
// field; only lengths is stored (hits carry only the chunk id):
//
//	text, heading, title  analyzer "en" (possessive, lowercase, English stop
//	                      words, Porter stemmer)
//	stop_words            the English stop words of 3+ runes in text and
//	                      heading, each once (the "en" fields drop them)
//	drive, mime, tags     keyword (exact, case-sensitive)
//	lengths               stored only, not indexed: the token count of
//	                      text, heading and title under "en" ("42 3 5"),
//	                      which Apply subtracts from the field length sums
//	                      when it replaces or deletes the document
//	dirs                  keyword: "/", every ancestor directory and the
//	                      path itself, plain ("/notes/a") and
//	                      drive-qualified ("disk:/notes/a"), so a path
//	                      prefix filter is one term lookup
//
// Beside the Bleve index the directory holds the vocabulary's log
// (ctxd_vocabulary): every distinct word of the text and heading as
// written ("en" tokens lowercased, before stop words and stemming:
// "logo.png", "useeffect", "counters") with its term in the stemmed field
// ("counter"). Apply appends and syncs the words a batch brings before the
// batch; Open reads the log into memory, where a trigram index over the
// words serves SearchSubstring, and cuts off a record a crash left torn.
// The words were once indexed in fields of their own (unstemmed, and
// before that as every word's trigrams): those fields held as many
// postings as the stemmed ones, and dropping them made indexing about a
// third faster and the index a third smaller.
//
// The mapping version (MappingVersion) is stored as an internal key; Open
// refuses an index with another version, or one whose persisted scoring
// model is not BM25, with ErrMappingMismatch so the caller can rebuild.
// An index of this version without its vocabulary log is refused the same
// way. Change buildMapping, the analysis or the log's format only together
// with a MappingVersion bump.
//
// # Scoring
//
// SearchBM25 scores with its own Bleve query (bm25fQuery), not Bleve's:
// BM25F over text (boost TextBoost = 1), heading (HeadingBoost = 2) and
// title (TitleBoost = 2; the item's title and description, up to
// MaxTitleBytes), k1 0.9 and b 0.4 (BM25K1, BM25B), Lucene's idf. Each
// field's frequency is normalised against that field's mean length (sums
// of the live documents' token counts that every Apply updates in its
// batch, an internal key, over the document count) and weighted, and the
// fields' sum is saturated once per term: a title repeated on every chunk
// and in the text raises the frequency, not the number of saturated terms,
// and does not lengthen the text. Any query word may match; there is no
// coordination factor. With one field it is textbook BM25. Bleve's own
// BM25 (the mapping's ScoringModel, still "bm25") is left to the
// substring leg: it takes sqrt(tf), squares the idf, multiplies by a
// coordination factor and estimates the mean length from the term
// dictionary's size per segment, which together cost several nDCG points
// against textbook BM25 (issue 13). SearchSubstring is a disjunction, over
// the text and heading fields (heading boost 2), of a conjunction with one
// clause per query word of 3+ runes: the terms of any of the (at most
// MaxSubstringWords, shortest) indexed words containing it, found in the
// vocabulary, or its own stem, so that the leg agrees with BM25 on
// inflections; an English stop word matches only itself, in stop_words
// (make eval: tldr bm25 nDCG@10 0.911 with it against 0.897 leaving stop
// words out, and a looser match measured worse still). Filters are the non-scoring Filter
// clause of a Bleve boolean query: they are evaluated for every candidate
// before the top k are collected, so a scoped query finds its matches
// however far down the global ranking they are, and they do not change
// scores. Within a Filter field values are OR-ed, fields are AND-ed, and
// all listed tags are required.
//
// Query cost grows with the query's terms: a match query holds one term
// query per word, the substring leg up to MaxSubstringWords per word.
// KeyTerms reduces a
// long text to its rarest words first, and every search takes a context
// that Bleve's collector polls, so an abandoned search stops.
//
// # Caveats
//
//   - The substring leg scores with Bleve's BM25, whose "average field
//     length" is ceil(sum over segments of each segment's distinct terms in
//     the field / live doc count): its scores drift slightly as Scorch
//     merges segments; rankings within one snapshot are consistent. k1 =
//     1.2 and b = 0.75 there are Bleve package constants. SearchBM25's
//     scores do not depend on segmentation.
//   - A field length is Bleve's norm, 1/sqrt(tokens) kept as a float32, so
//     BM25F scores carry about seven significant digits.
//   - No field keeps term vectors (they took a quarter of the index and
//     every BM25 candidate's positions at query time): MatchSpans finds
//     where a shown result matched by analysing its text again.
//   - The substring leg matches within words: "use eff" matches "use" and
//     "effect" anywhere in the field, and a query with no word of 3+
//     characters returns nothing. A stop word counts in the text leg and
//     the heading leg wherever it is in the chunk. The vocabulary keeps the
//     words of deleted documents, in memory and in its log, until the index
//     is rebuilt.
//   - Apply returns once Scorch has persisted the batch, and the applied
//     sequence is written in the same batch, so the index on disk is never
//     ahead of or behind its recorded sequence.
//   - Bleve's scorch index keeps the directory locked while open: one
//     Index per directory per process.
package lexical
