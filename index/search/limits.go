package search

import "fmt"

// Limits bound every dimension of a Request, so that no request's cost is
// unbounded. A zero field takes its DefaultLimits value.
type Limits struct {
	// MaxQueries bounds the queries of one request.
	MaxQueries int
	// MaxQueryBytes bounds the text of all queries of one request together.
	MaxQueryBytes int
	// MaxQueryTerms is how many words a query's text may hold before the
	// lexical legs search only its most informative ones, at most
	// MaxQueryTerms of them (lexical.Index.KeyTerms); the response reports
	// the reduction.
	MaxQueryTerms int
	// MaxLimit bounds Request.Limit.
	MaxLimit int
	// MaxSnippetChars bounds Request.SnippetChars.
	MaxSnippetChars int
	// MaxTokenBudget bounds Request.TokenBudget.
	MaxTokenBudget int
	// MaxPerItem bounds Request.MaxPerItem.
	MaxPerItem int
	// MaxFilterValues bounds each list of Request.Filter.
	MaxFilterValues int
}

// DefaultLimits are the limits of an Engine whose Options set none.
func DefaultLimits() Limits {
	return Limits{
		MaxQueries:      32,
		MaxQueryBytes:   1 << 20,
		MaxQueryTerms:   32,
		MaxLimit:        1000,
		MaxSnippetChars: 4000,
		MaxTokenBudget:  100_000,
		MaxPerItem:      100,
		MaxFilterValues: 64,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	or := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	or(&l.MaxQueries, d.MaxQueries)
	or(&l.MaxQueryBytes, d.MaxQueryBytes)
	or(&l.MaxQueryTerms, d.MaxQueryTerms)
	or(&l.MaxLimit, d.MaxLimit)
	or(&l.MaxSnippetChars, d.MaxSnippetChars)
	or(&l.MaxTokenBudget, d.MaxTokenBudget)
	or(&l.MaxPerItem, d.MaxPerItem)
	or(&l.MaxFilterValues, d.MaxFilterValues)
	return l
}

// Limit names one field of Limits, for callers that explain a LimitError.
type Limit int

// The limits a LimitError can name.
const (
	LimitQueries Limit = iota
	LimitQueryBytes
	LimitResults
	LimitSnippetChars
	LimitTokenBudget
	LimitPerItem
	LimitFilterValues
)

// LimitError reports a request value over its bound. It matches
// ErrInvalidQuery with errors.Is.
type LimitError struct {
	Limit    Limit
	Got, Max int
	msg      string
}

func (e *LimitError) Error() string { return e.msg }

// Unwrap makes a LimitError an ErrInvalidQuery.
func (e *LimitError) Unwrap() error { return ErrInvalidQuery }

// check returns a *LimitError for the first dimension of req over its bound.
func (l Limits) check(req Request) error {
	over := func(lim Limit, got, max int, format string) error {
		if got <= max {
			return nil
		}
		return &LimitError{Limit: lim, Got: got, Max: max, msg: fmt.Sprintf(format, got, max)}
	}
	text := 0
	for _, q := range req.Queries {
		text += len(q.Text)
	}
	f := req.Filter
	for _, err := range []error{
		over(LimitQueries, len(req.Queries), l.MaxQueries, "The request has %d queries; at most %d are allowed."),
		over(LimitQueryBytes, text, l.MaxQueryBytes, "The query text is %d bytes; at most %d are allowed, all queries together."),
		over(LimitResults, req.Limit, l.MaxLimit, "The limit %d is over the maximum of %d results."),
		over(LimitSnippetChars, req.SnippetChars, l.MaxSnippetChars, "The snippet length %d is over the maximum of %d characters."),
		over(LimitTokenBudget, req.TokenBudget, l.MaxTokenBudget, "The token budget %d is over the maximum of %d tokens."),
		over(LimitPerItem, req.MaxPerItem, l.MaxPerItem, "The chunks per item %d are over the maximum of %d."),
		over(LimitFilterValues, max(len(f.Drives), len(f.PathPrefixes), len(f.Mimes), len(f.Tags)), l.MaxFilterValues,
			"A filter list has %d values; at most %d are allowed."),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
