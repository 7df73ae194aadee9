package daemon

import (
	"errors"
	"fmt"
	"strconv"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/index/session"
	"github.com/ctxd/ctxd/index/standing"
	"github.com/ctxd/ctxd/ingest/watcher"
	"github.com/ctxd/ctxd/vfs"
)

// Limits bound every dimension of a request, so that no single call can
// take the daemon's CPU or memory: a value over its bound is refused with
// INVALID_ARGUMENT and a hint naming the limit. They are the [limits] table
// of the config file; each has a CTXD_* variable.
type Limits struct {
	// MaxQueries bounds the queries of one Search (CTXD_MAX_QUERIES).
	MaxQueries int `toml:"max_queries"`
	// MaxQueryBytes bounds the text of all queries of one Search together;
	// a longer request is refused (CTXD_MAX_QUERY_BYTES).
	MaxQueryBytes int `toml:"max_query_bytes"`
	// MaxQueryTerms is how many words a query may hold before the lexical
	// legs search only its most informative ones, at most this many; the
	// response reports the reduction (CTXD_MAX_QUERY_TERMS).
	MaxQueryTerms int `toml:"max_query_terms"`
	// MaxSearchLimit bounds a Search's limit (CTXD_MAX_SEARCH_LIMIT).
	MaxSearchLimit int `toml:"max_search_limit"`
	// MaxSnippetLength bounds a Search's snippet_length in characters
	// (CTXD_MAX_SNIPPET_LENGTH).
	MaxSnippetLength int `toml:"max_snippet_length"`
	// MaxTokenBudget bounds a Search's token_budget (CTXD_MAX_TOKEN_BUDGET).
	MaxTokenBudget int `toml:"max_token_budget"`
	// MaxChunksPerItem bounds a Search's max_chunks_per_item
	// (CTXD_MAX_CHUNKS_PER_ITEM).
	MaxChunksPerItem int `toml:"max_chunks_per_item"`
	// MaxFilterValues bounds each list of a Search's filter
	// (CTXD_MAX_FILTER_VALUES).
	MaxFilterValues int `toml:"max_filter_values"`
	// MaxListLimit bounds a List's limit (CTXD_MAX_LIST_LIMIT).
	MaxListLimit int `toml:"max_list_limit"`
	// MaxTreeDepth bounds a Tree's max_depth (CTXD_MAX_TREE_DEPTH).
	MaxTreeDepth int `toml:"max_tree_depth"`
	// MaxTreeItemsPerDir bounds a Tree's items_per_dir
	// (CTXD_MAX_TREE_ITEMS_PER_DIR).
	MaxTreeItemsPerDir int `toml:"max_tree_items_per_dir"`
	// MaxSimilarTextBytes bounds the text of a FindSimilar, which is
	// chunked and embedded while the caller waits
	// (CTXD_MAX_SIMILAR_TEXT_BYTES).
	MaxSimilarTextBytes int `toml:"max_similar_text_bytes"`
	// MaxQuestionsPerItem bounds the questions of one Write, each at most
	// 512 bytes; at most 64 (CTXD_MAX_QUESTIONS_PER_ITEM).
	MaxQuestionsPerItem int `toml:"max_questions_per_item"`
	// MaxBatchItems bounds the items of one WriteBatch; at most 10,000
	// (CTXD_MAX_BATCH_ITEMS).
	MaxBatchItems int `toml:"max_batch_items"`
	// MaxEventBytes bounds the text of one session event: longer text is
	// cut with a marker, never refused; at least 256
	// (CTXD_MAX_EVENT_BYTES).
	MaxEventBytes int `toml:"max_event_bytes"`
	// MaxWatches bounds the watches of the store, all replicas together
	// (CTXD_MAX_WATCHES).
	MaxWatches int `toml:"max_watches"`
	// MaxWatchExcludes bounds the exclude patterns of one watch, each at
	// most 1024 bytes (CTXD_MAX_WATCH_EXCLUDES).
	MaxWatchExcludes int `toml:"max_watch_excludes"`
	// MaxSubscriptionsPerToken bounds the standing queries one token holds:
	// open streams and durable subscriptions, each counted
	// (CTXD_MAX_SUBSCRIPTIONS_PER_TOKEN).
	MaxSubscriptionsPerToken int `toml:"max_subscriptions_per_token"`
	// MaxSubscriptions bounds the standing queries of all tokens together
	// (CTXD_MAX_SUBSCRIPTIONS).
	MaxSubscriptions int `toml:"max_subscriptions"`
	// MaxSubscriptionQueries bounds the query texts of one standing query
	// (CTXD_MAX_SUBSCRIPTION_QUERIES).
	MaxSubscriptionQueries int `toml:"max_subscription_queries"`
	// MaxSubscriptionPending bounds the pushes waiting for a stream's
	// client: past it the stream is cut off (RESOURCE_EXHAUSTED) rather
	// than slow anything down (CTXD_MAX_SUBSCRIPTION_PENDING).
	MaxSubscriptionPending int `toml:"max_subscription_pending"`
	// MaxSubscriptionInbox bounds the matches a durable subscription keeps
	// while nobody reads them; the oldest go first and are counted
	// (CTXD_MAX_SUBSCRIPTION_INBOX).
	MaxSubscriptionInbox int `toml:"max_subscription_inbox"`
	// MaxDiffLines bounds the lines of one Diff's unified output; past it
	// the diff is cut and marked truncated (CTXD_MAX_DIFF_LINES).
	MaxDiffLines int `toml:"max_diff_lines"`
}

// DefaultLimits are the limits when the config sets none.
func DefaultLimits() Limits {
	s := search.DefaultLimits()
	return Limits{
		MaxQueries: s.MaxQueries, MaxQueryBytes: s.MaxQueryBytes, MaxQueryTerms: s.MaxQueryTerms,
		MaxSearchLimit: s.MaxLimit, MaxSnippetLength: s.MaxSnippetChars, MaxTokenBudget: s.MaxTokenBudget,
		MaxChunksPerItem: s.MaxPerItem, MaxFilterValues: s.MaxFilterValues,
		MaxListLimit: 10_000, MaxTreeDepth: 16, MaxTreeItemsPerDir: 1000,
		MaxSimilarTextBytes: 64 << 10,
		MaxQuestionsPerItem: 32,
		MaxBatchItems:       1000,
		MaxEventBytes:       session.DefaultMaxEventBytes,
		MaxWatches:          watcher.DefaultMaxWatches,
		MaxWatchExcludes:    64,
		// A thousand standing queries cost ingest a few percent
		// (BenchmarkSubscriptions_BulkIngest); ten thousand leave room.
		MaxSubscriptionsPerToken: 100,
		MaxSubscriptions:         10_000,
		MaxSubscriptionQueries:   8,
		MaxSubscriptionPending:   standing.DefaultPending,
		MaxSubscriptionInbox:     10_000,
		MaxDiffLines:             20_000,
	}
}

// limitField describes one limit: its config key, environment variable and
// how a caller gets under it.
type limitField struct {
	key, env string
	value    func(*Limits) *int
	fix      string // what to do, naming the API field and the CLI flag
}

var limitFields = []limitField{
	{"max_queries", "CTXD_MAX_QUERIES", func(l *Limits) *int { return &l.MaxQueries },
		"split the batch into several requests (each `ctxd search` argument is one query)"},
	{"max_query_bytes", "CTXD_MAX_QUERY_BYTES", func(l *Limits) *int { return &l.MaxQueryBytes },
		"shorten the query text: a long text is reduced to its most informative words anyway, so a part of it finds the same"},
	{"max_query_terms", "CTXD_MAX_QUERY_TERMS", func(l *Limits) *int { return &l.MaxQueryTerms }, ""},
	{"max_search_limit", "CTXD_MAX_SEARCH_LIMIT", func(l *Limits) *int { return &l.MaxSearchLimit },
		"ask for fewer results (limit, `ctxd search --limit`)"},
	{"max_snippet_length", "CTXD_MAX_SNIPPET_LENGTH", func(l *Limits) *int { return &l.MaxSnippetLength },
		"ask for shorter snippets (snippet_length, `ctxd search --snippet-length`) and read the item for more"},
	{"max_token_budget", "CTXD_MAX_TOKEN_BUDGET", func(l *Limits) *int { return &l.MaxTokenBudget },
		"pass a smaller token_budget (`ctxd search --token-budget`)"},
	{"max_chunks_per_item", "CTXD_MAX_CHUNKS_PER_ITEM", func(l *Limits) *int { return &l.MaxChunksPerItem },
		"pass a smaller max_chunks_per_item (`ctxd search --per-item`), or read the item"},
	{"max_filter_values", "CTXD_MAX_FILTER_VALUES", func(l *Limits) *int { return &l.MaxFilterValues },
		"filter by a common parent directory (path_prefixes, `ctxd search --path`) instead of listing many values"},
	{"max_list_limit", "CTXD_MAX_LIST_LIMIT", func(l *Limits) *int { return &l.MaxListLimit },
		"pass a smaller limit (`ctxd ls --limit`) and page with next_page_token"},
	{"max_tree_depth", "CTXD_MAX_TREE_DEPTH", func(l *Limits) *int { return &l.MaxTreeDepth },
		"pass a smaller max_depth (`ctxd tree --depth`), or ask for the tree of a subdirectory"},
	{"max_tree_items_per_dir", "CTXD_MAX_TREE_ITEMS_PER_DIR", func(l *Limits) *int { return &l.MaxTreeItemsPerDir },
		"pass a smaller items_per_dir (`ctxd tree --per-dir`), or list the directory page by page (`ctxd ls --limit`)"},
	{"max_similar_text_bytes", "CTXD_MAX_SIMILAR_TEXT_BYTES", func(l *Limits) *int { return &l.MaxSimilarTextBytes },
		"compare a shorter text (`ctxd similar --text`), or write it and compare by ref (`ctxd similar REF`)"},
	{"max_questions_per_item", "CTXD_MAX_QUESTIONS_PER_ITEM", func(l *Limits) *int { return &l.MaxQuestionsPerItem },
		"send fewer questions (questions, `ctxd write --question`): keep those the item answers best"},
	{"max_batch_items", "CTXD_MAX_BATCH_ITEMS", func(l *Limits) *int { return &l.MaxBatchItems },
		"send the items in several WriteBatch calls (`ctxd import --batch N`, Python write_batches)"},
	{"max_event_bytes", "CTXD_MAX_EVENT_BYTES", func(l *Limits) *int { return &l.MaxEventBytes }, ""},
	{"max_watches", "CTXD_MAX_WATCHES", func(l *Limits) *int { return &l.MaxWatches },
		"watch a common parent directory, or remove watches no longer needed (`ctxd watch rm`)"},
	{"max_watch_excludes", "CTXD_MAX_WATCH_EXCLUDES", func(l *Limits) *int { return &l.MaxWatchExcludes },
		"put the patterns in the tree's .gitignore, or use broader globs (`ctxd watch add --exclude`)"},
	{"max_subscriptions_per_token", "CTXD_MAX_SUBSCRIPTIONS_PER_TOKEN", func(l *Limits) *int { return &l.MaxSubscriptionsPerToken },
		"close a stream or delete a durable subscription no longer needed (`ctxd subscription rm`)"},
	{"max_subscriptions", "CTXD_MAX_SUBSCRIPTIONS", func(l *Limits) *int { return &l.MaxSubscriptions },
		"close streams or delete durable subscriptions no longer needed (`ctxd subscription list`)"},
	{"max_subscription_queries", "CTXD_MAX_SUBSCRIPTION_QUERIES", func(l *Limits) *int { return &l.MaxSubscriptionQueries },
		"split the queries over several subscriptions"},
	{"max_subscription_pending", "CTXD_MAX_SUBSCRIPTION_PENDING", func(l *Limits) *int { return &l.MaxSubscriptionPending }, ""},
	{"max_subscription_inbox", "CTXD_MAX_SUBSCRIPTION_INBOX", func(l *Limits) *int { return &l.MaxSubscriptionInbox }, ""},
	{"max_diff_lines", "CTXD_MAX_DIFF_LINES", func(l *Limits) *int { return &l.MaxDiffLines }, ""},
}

// searchLimitKeys maps the engine's limits to their config keys.
var searchLimitKeys = map[search.Limit]string{
	search.LimitQueries:      "max_queries",
	search.LimitQueryBytes:   "max_query_bytes",
	search.LimitResults:      "max_search_limit",
	search.LimitSnippetChars: "max_snippet_length",
	search.LimitTokenBudget:  "max_token_budget",
	search.LimitPerItem:      "max_chunks_per_item",
	search.LimitFilterValues: "max_filter_values",
}

// search returns the engine's view of l.
func (l Limits) search() search.Limits {
	return search.Limits{
		MaxQueries: l.MaxQueries, MaxQueryBytes: l.MaxQueryBytes, MaxQueryTerms: l.MaxQueryTerms,
		MaxLimit: l.MaxSearchLimit, MaxSnippetChars: l.MaxSnippetLength, MaxTokenBudget: l.MaxTokenBudget,
		MaxPerItem: l.MaxChunksPerItem, MaxFilterValues: l.MaxFilterValues,
	}
}

// applyEnv overlays the CTXD_* variables of the limits.
func (l *Limits) applyEnv(lookupEnv func(string) (string, bool)) error {
	for _, f := range limitFields {
		v, ok := lookupEnv(f.env)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s: %q is not a whole number", f.env, v)
		}
		*f.value(l) = n
	}
	return nil
}

// validate names the first limit that is not positive.
func (l *Limits) validate() error {
	for _, f := range limitFields {
		if n := *f.value(l); n <= 0 {
			return fmt.Errorf("config: limits.%s must be positive, got %d", f.key, n)
		}
	}
	if l.MaxQuestionsPerItem > vfs.MaxQuestionsPerItem {
		return fmt.Errorf("config: limits.max_questions_per_item must be at most %d, got %d", vfs.MaxQuestionsPerItem, l.MaxQuestionsPerItem)
	}
	if l.MaxBatchItems > vfs.MaxBatchItems {
		return fmt.Errorf("config: limits.max_batch_items must be at most %d, got %d", vfs.MaxBatchItems, l.MaxBatchItems)
	}
	if l.MaxEventBytes < session.MinMaxEventBytes {
		return fmt.Errorf("config: limits.max_event_bytes must be at least %d, got %d", session.MinMaxEventBytes, l.MaxEventBytes)
	}
	return nil
}

// overLimit is the INVALID_ARGUMENT error for a request value over the limit
// with config key key: msg says what is over, the hint how to get under it
// and which setting raises it.
func overLimit(key, msg string) error { return limitError(key, msg, "") }

// limitError is overLimit with the caller's own fix, for a domain package
// that knows better how the caller gets under the limit; "" uses the
// limit's usual fix.
func limitError(key, msg, fix string) error {
	hint := "see the [limits] table of the daemon's config"
	for _, f := range limitFields {
		if f.key == key {
			if fix == "" {
				fix = f.fix
			}
			hint = fmt.Sprintf("%s; the daemon's owner can raise the limit with limits.%s in the config file or %s.", fix, f.key, f.env)
		}
	}
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, msg, hint)
}

// searchLimitError converts an engine *search.LimitError, if err is one.
func searchLimitError(err error) (error, bool) {
	var le *search.LimitError
	if !errors.As(err, &le) {
		return nil, false
	}
	return overLimit(searchLimitKeys[le.Limit], le.Error()), true
}
