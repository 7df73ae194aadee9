package assemble

import (
	"context"
	"fmt"

	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// DefaultBudget is the token budget of a Request that sets none.
const DefaultBudget = 4000

// Kind says why a section is part of a context.
type Kind string

// Kinds of sections, in the order they are filled.
const (
	KindAlways     Kind = "always"     // a file with loading: always, verbatim
	KindContextual Kind = "contextual" // a file with loading: contextual the task matched
	KindChunk      Kind = "chunk"      // a search result for the task
	// KindGoals and KindDigest are sections a caller supplies
	// (Request.Extra): what earlier sessions left open, and an earlier
	// session's digest (index/session).
	KindGoals  Kind = "goals"
	KindDigest Kind = "digest"
)

// Reasons an Omission gives; each is followed by ": " and the particulars.
const (
	ReasonBudget      = "over budget"           // it did not fit in what was left
	ReasonWholeFile   = "file included whole"   // a chunk of a file that is already a section
	ReasonContextFile = "context file"          // a chunk of a context file that is not a section
	ReasonNoMatch     = "no match for the task" // a contextual file (or, with Request.MatchChunks, a chunk) that holds too little of the task (package doc: Relevance)
	ReasonEmpty       = "empty"                 // a context file with no body
)

// Request describes one task's context.
type Request struct {
	// Task is the task in words. It selects the contextual files and is
	// the query of the chunk search; empty, the context holds the always
	// files only. At most Limits.MaxQueryBytes bytes.
	Task string
	// Budget is the most model tokens the rendered Markdown may take; 0
	// means DefaultBudget, at most Limits.MaxTokenBudget.
	Budget int
	// Roots are the directory refs whose context files take part; empty
	// means the Builder's roots. At most Limits.MaxFilterValues of them.
	Roots []string
	// Search holds the options of the chunk search: Mode, Filter, Limit
	// (chunks, 0 meaning search.DefaultLimit), MaxPerItem, RRFK, Weights
	// and EmbedQuery. Build sets Queries to the task and keeps the budget
	// itself, so TokenBudget, SnippetChars and CountTokens are ignored.
	Search search.Request
	// Extra are sections the caller supplies (KindGoals, KindDigest),
	// added in order after the always files and before the contextual
	// files, each whole or not at all like any other.
	Extra []Section
	// SkipAlways leaves the always files out: a caller that gave them
	// earlier (at a session's start) and now asks only what a prompt
	// adds.
	SkipAlways bool
	// MatchChunks keeps only the search chunks that match the task by the
	// rule contextual files must meet (see Relevance: the task's words they
	// hold carry a quarter of its weight, or a rare word's), and lists the
	// others as omitted: a task nothing matches then adds nothing.
	MatchChunks bool
	// Exclude, when set, drops the search results of the items (by drive
	// and path) it reports: items outside the caller's scope (another
	// project's sessions), which are not listed as omitted.
	Exclude func(drive, path string) bool
	// StatsExcept, when set, names a path prefix ("drive:/dir", or "" for
	// none) whose chunks the term statistics of the relevance rule leave
	// out: the caller's own documents that echo the task (a session's
	// recorded prompt), which would otherwise weigh down the task's own
	// words. It is called right before the statistics are read, so that it
	// sees what they see.
	StatsExcept func(context.Context) (string, error)
}

// Section is one part of an assembled context.
type Section struct {
	Kind Kind
	Ref  string // the item as drive:/path
	// Heading is a chunk's heading breadcrumb ("Guide > Install"), or a
	// file's title.
	Heading string
	// Text is a file's body (its content without the frontmatter block),
	// or a chunk's text.
	Text string
	// Tokens is what the section takes of the budget as rendered.
	Tokens int
	// MatchedTerms are the task's words that matched a contextual file,
	// in the task's order.
	MatchedTerms []string
	// Score is a contextual file's BM25 score or a chunk's fused search
	// score; 0 for always files.
	Score float64
	Item  vfs.Item
	// StartLine and EndLine are a chunk's 1-based, inclusive lines.
	StartLine, EndLine int
}

// Omission is something that would have been part of the context but is not.
type Omission struct {
	Kind Kind
	Ref  string
	// Heading is a chunk's heading breadcrumb, "" for files.
	Heading string
	// Reason starts with one of the Reason constants.
	Reason string
	// Tokens is what it would have taken as rendered.
	Tokens int
}

// Result is an assembled context.
type Result struct {
	// Sections in the order rendered: always files (soul, beliefs, goals,
	// capabilities, then by path), contextual files best match first, then
	// chunks best first.
	Sections []Section
	// Markdown renders the sections as one block for a prompt.
	Markdown string
	// Omitted lists what was left out, in the order it was considered.
	Omitted []Omission
	// TokensUsed is the model tokens of Markdown, headers included.
	TokensUsed int
	// Budget is the budget applied.
	Budget int
	// Warnings say what the caller should know: tokens estimated without a
	// model, a root without context files, a search that fell back to BM25.
	Warnings []string
	// Stale says why the chunk search may have missed writes acknowledged
	// before it (search.Response.Stale); "" when it cannot have. Context
	// files come from the store and are always current.
	Stale string
}

// Limit names a bound of a Request.
type Limit int

// The bounds a LimitError can name.
const (
	LimitBudget    Limit = iota // Request.Budget over search.Limits.MaxTokenBudget
	LimitTaskBytes              // Request.Task over search.Limits.MaxQueryBytes
	LimitRoots                  // Request.Roots over search.Limits.MaxFilterValues
)

// LimitError reports a request value over its bound. It matches
// vfs.ErrInvalid with errors.Is.
type LimitError struct {
	Limit    Limit
	Got, Max int
	Message  string
	// Hint says how the caller gets under the bound; the daemon adds which
	// setting raises it.
	Hint string
}

func (e *LimitError) Error() string { return e.Message }

// Unwrap makes a LimitError a vfs.ErrInvalid.
func (e *LimitError) Unwrap() error { return vfs.ErrInvalid }

// check returns a *LimitError for the first dimension of req over lim, or
// a *vfs.Error for a negative budget.
func check(req Request, lim search.Limits) error {
	if req.Budget < 0 {
		return &vfs.Error{Kind: vfs.ErrInvalid, Message: fmt.Sprintf("The token budget %d is negative.", req.Budget),
			Hint: fmt.Sprintf("pass a budget between 1 and %d tokens, or 0 for the default of %d", lim.MaxTokenBudget, DefaultBudget)}
	}
	switch {
	case req.Budget > lim.MaxTokenBudget:
		return &LimitError{Limit: LimitBudget, Got: req.Budget, Max: lim.MaxTokenBudget,
			Message: fmt.Sprintf("The token budget %d is over the maximum of %d tokens.", req.Budget, lim.MaxTokenBudget),
			Hint:    "pass a smaller budget (budget, `ctxd context build --budget`)"}
	case len(req.Task) > lim.MaxQueryBytes:
		return &LimitError{Limit: LimitTaskBytes, Got: len(req.Task), Max: lim.MaxQueryBytes,
			Message: fmt.Sprintf("The task is %d bytes; at most %d are allowed.", len(req.Task), lim.MaxQueryBytes),
			Hint:    "describe the task in fewer words: a long task is searched by its most informative words anyway"}
	case len(req.Roots) > lim.MaxFilterValues:
		return &LimitError{Limit: LimitRoots, Got: len(req.Roots), Max: lim.MaxFilterValues,
			Message: fmt.Sprintf("The request names %d context roots; at most %d are allowed.", len(req.Roots), lim.MaxFilterValues),
			Hint:    "name a common parent directory as the root (roots, `ctxd context build --root`)"}
	}
	return nil
}

// withDefaults fills the zero fields of l that Build uses from search.DefaultLimits.
func withDefaults(l search.Limits) search.Limits {
	d := search.DefaultLimits()
	for _, f := range []struct {
		v   *int
		def int
	}{
		{&l.MaxTokenBudget, d.MaxTokenBudget}, {&l.MaxQueryBytes, d.MaxQueryBytes},
		{&l.MaxFilterValues, d.MaxFilterValues}, {&l.MaxLimit, d.MaxLimit},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return l
}
