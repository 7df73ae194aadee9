// Package enrich generates, in the background, the questions each stored
// chunk answers (the Knowledge Hive's hypothetical prompt embeddings): it
// asks an OpenAI-compatible chat endpoint the user configures (a local
// llama.cpp or Ollama server, or a hosted one) and stores the answer with
// vfs.Store.SetGeneratedQuestions, keyed by the chunk's text hash, so that
// the indexer embeds the questions as question vectors of every chunk with
// that text.
//
// One goroutine (Enricher.Run) scans the store for chunks whose text was
// never asked about, asks about each in turn, and after a full pass sleeps
// before scanning again; it never holds the store while it waits for the
// endpoint, so writes and searches go on. Calls are rate-limited; a 429, a
// 5xx or a transport error is retried with backoff (honouring Retry-After)
// a bounded number of times, and a call that still fails ends the pass, so
// a down endpoint is tried again at the next pass rather than for every
// chunk. An answer without a usable question is recorded as such (an empty
// list) and not asked again. Status reports the counts and the last failure.
//
// The client is plain net/http speaking POST {endpoint}/chat/completions
// with the documented request and response JSON, not the official
// github.com/openai/openai-go SDK: the SDK builds with our Go, but linked
// for this one call it adds about 27 MB to the binary (a 42 MB daemon
// would grow by two thirds), and its retry loop would hide from Status the
// failed attempts it retries.
package enrich
