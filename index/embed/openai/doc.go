// Package openai embeds texts through an OpenAI-compatible embeddings
// endpoint (POST {url}/embeddings: Ollama, vLLM, text-embeddings-inference,
// LM Studio, OpenAI itself) instead of the local ONNX model. Client
// satisfies embed.Embedder, so the indexer and the daemon use it as they
// use the local Worker.
//
// # Requests
//
// A request carries {"input": [...], "model": ..., "dimensions"?: ...} for
// at most Config.BatchSize texts; the answer's data[i].embedding are put
// in the order of their index fields, checked (count, dimensions, finite)
// and L2-normalised, so that cosine is a dot product as with the local
// model (some servers do not normalise). The answer read is bounded by the
// batch's texts times the dimensions. The vectors' model id is
// "openai:<model>@<dimensions>" (ModelID): switching provider, model or
// dimensions changes it, so the store re-embeds every chunk, and vectors of
// other dimensions are never mixed with them.
//
// # Concurrency and priorities
//
// At most Config.MaxInFlight document requests are in flight, and queries
// may take one more slot, so a query waits behind other queries only,
// never behind the backlog; waiting requests are served Query, then
// Prompt, then Background. A query's request is not retried, and gives up
// after Config.QueryTimeout or half of the time its caller has left,
// whichever is shorter, with an error wrapping embed.ErrUnavailable: the
// search then answers in BM25 mode at once instead of waiting through
// backoffs.
//
// # Failures
//
// A document request failing with 429, 408, 409, a 5xx, a timeout or a
// transport error is retried up to Config.MaxRetries times, after the endpoint's
// Retry-After (seconds or an HTTP date, at most 30 s) or a jittered
// exponential backoff from 250 ms to 30 s; other 4xx answers and answers
// of the wrong shape are not retried. Config.BreakerFailures failed
// requests in a row open a circuit breaker: for Config.BreakerCooldown
// every call fails at once with embed.ErrUnavailable and Health says which
// endpoint failed and how, so searches fall back to BM25 and the indexer
// leaves the backlog queued in the store (nothing is lost) and looks
// again; then one request goes as a probe, and its success closes the
// breaker. A caller that goes away does not count as a failure.
//
// The API key is sent as a bearer token and appears in no error, log or
// status; the endpoint is shown without its URL's credentials.
//
// The client is plain net/http for the reasons in internal/openaiapi.
package openai
