package search

import (
	"context"

	"github.com/ctxd/ctxd/index/lexical"
)

// TermStats returns the number of chunks in the lexical index and how many
// of them hold each of terms in their text (lexical.Index.TermStats), for a
// caller that weighs terms by how common they are across the store. Terms
// are analysed ones: lower case and stemmed by the English analyzer
// (bleve's "en") that the lexical index uses. except, unless "", is a path
// prefix ("drive:/dir") whose chunks the statistics leave out.
func (e *Engine) TermStats(ctx context.Context, terms []string, except string) (lexical.TermStats, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.lex.TermStats(ctx, terms, except)
}
