// Package llmtokens counts text the way a hosted LLM does: with OpenAI's
// o200k_base byte-pair encoding (GPT-4o, GPT-4.1, o-series), through
// github.com/pkoukk/tiktoken-go. It measures what ctxd costs a model before
// the model does any work, such as the tool definitions every conversation
// loads (`ctxd tools --stats`, and the test that holds the default tool list
// to its budget).
//
// The encoding's ranks are compiled into the binary
// (github.com/pkoukk/tiktoken-go-loader embeds them), so counting never
// reaches the network; they are parsed on the first Count, once per
// process (about 0.15 s and 22 MB of heap here), which is why the daemon
// itself never calls it. The embedding model's WordPiece tokenizer
// (index/tokenize) counts what ctxd's own budgets bound; this package counts
// what a hosted model is billed and limited by.
//
// No hosted model family shares one tokenizer: Anthropic's is not published,
// and counts for the same JSON differ by some percent between encodings
// (cl100k_base, o200k_base's predecessor, counts ctxd's tool list within 2%
// of it). Budgets counted here are approximations with that margin.
package llmtokens
