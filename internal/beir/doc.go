// Package beir reads test collections in the BEIR layout used by ../shared/data:
// corpus.jsonl.gz ({"_id","title","text"} a line), queries.jsonl ({"_id","text"})
// and qrels.tsv (header, then query-id, corpus-id, score). The evaluation
// program and the benchmarks share it.
package beir
