package lexical

import (
	"context"
	"fmt"
)

// TermStats are the index-wide statistics BM25 weighs terms with.
type TermStats struct {
	// Docs is the number of indexed chunks.
	Docs uint64
	// DF holds, for each term asked about and in the same order, how many
	// of those chunks hold it in their text field.
	DF []uint64
}

// TermStats returns the document count and the document frequency in the
// text field of each term, from one snapshot of the index (live documents
// only, so both agree). Terms are looked up as given: pass terms as the
// text field's analyzer produces them (en: lower case, Porter stemmed).
// The cost is one dictionary lookup per term; TermStats stops with ctx's
// error once ctx ends.
func (x *Index) TermStats(ctx context.Context, terms []string) (TermStats, error) {
	bi, done, err := x.get()
	if err != nil {
		return TermStats{}, err
	}
	defer done()
	adv, err := bi.Advanced()
	if err != nil {
		return TermStats{}, fmt.Errorf("term stats: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return TermStats{}, fmt.Errorf("term stats: open reader: %w", err)
	}
	defer r.Close()
	st := TermStats{DF: make([]uint64, len(terms))}
	if st.Docs, err = r.DocCount(); err != nil {
		return TermStats{}, fmt.Errorf("term stats: count: %w", err)
	}
	for i, t := range terms {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return TermStats{}, err
			}
		}
		if st.DF[i], err = docFreq(ctx, r, fieldText, t); err != nil {
			return TermStats{}, fmt.Errorf("term stats: %w", err)
		}
	}
	return st, nil
}
