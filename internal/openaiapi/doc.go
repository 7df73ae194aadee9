// Package openaiapi holds what the clients of OpenAI-compatible HTTP APIs
// share: the question enricher's chat completions (index/enrich) and the
// remote embedding provider (index/embed/openai). It reads error answers
// ({"error": {"message": ...}}), Retry-After (seconds, an HTTP date, or
// OpenAI's retry-after-ms), decides which failures a retry may cure (429,
// 408, 409, 5xx and transport errors, not 4xx nor an answer of the wrong
// shape) and how long to wait before it, and checks base URLs.
//
// The clients are plain net/http rather than the openai-go SDK: linked for
// these two calls the SDK adds about 27 MB to the binary, and its own
// retry loop would hide from Status the attempts it retries.
package openaiapi
