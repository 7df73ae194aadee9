package lexical

import (
	"bytes"
	"context"
	"fmt"

	index "github.com/blevesearch/bleve_index_api"
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
// except, unless "", is a path prefix ("/dir" or "drive:/dir", as
// Filter.PathPrefixes) whose documents neither count nor hold terms: a
// caller's own documents that echo the terms it weighs. The cost is one
// dictionary lookup per term, and with except a walk of its documents plus
// one posting lookup per term and document. TermStats stops with ctx's
// error once ctx ends.
func (x *Index) TermStats(ctx context.Context, terms []string, except string) (TermStats, error) {
	prefix := ""
	if except != "" {
		var err error
		if prefix, err = prefixTerm(except); err != nil {
			return TermStats{}, err
		}
	}
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
	var left []index.IndexInternalID
	if prefix != "" {
		if left, err = postings(ctx, r, fieldDirs, prefix); err != nil {
			return TermStats{}, fmt.Errorf("term stats: %w", err)
		}
		st.Docs -= min(st.Docs, uint64(len(left)))
	}
	for i, t := range terms {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return TermStats{}, err
			}
		}
		if len(left) == 0 {
			st.DF[i], err = docFreq(ctx, r, fieldText, t)
		} else {
			st.DF[i], err = docFreqExcept(ctx, r, fieldText, t, left)
		}
		if err != nil {
			return TermStats{}, fmt.Errorf("term stats: %w", err)
		}
	}
	return st, nil
}

// postings returns the documents holding term in field, in index order.
func postings(ctx context.Context, r index.IndexReader, field, term string) ([]index.IndexInternalID, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), field, false, false, false)
	if err != nil {
		return nil, fmt.Errorf("term %s:%q: %w", field, term, err)
	}
	defer tfr.Close()
	var ids []index.IndexInternalID
	for {
		if len(ids)%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		d, err := tfr.Next(nil)
		if err != nil {
			return nil, fmt.Errorf("term %s:%q: %w", field, term, err)
		}
		if d == nil {
			return ids, nil
		}
		ids = append(ids, bytes.Clone(d.ID))
	}
}

// docFreqExcept is docFreq less the documents of ids (in index order):
// one postings reader counts the term's documents, then advances over ids
// rather than reading every posting.
func docFreqExcept(ctx context.Context, r index.IndexReader, field, term string, ids []index.IndexInternalID) (uint64, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), field, false, false, false)
	if err != nil {
		return 0, fmt.Errorf("term %s:%q: %w", field, term, err)
	}
	defer tfr.Close()
	df := tfr.Count()
	var at *index.TermFieldDoc
	for i, id := range ids {
		if df == 0 {
			break
		}
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if at != nil && at.ID.Compare(id) > 0 {
			continue // the postings are past id: id lacks the term
		}
		if at, err = tfr.Advance(id, nil); err != nil {
			return 0, fmt.Errorf("term %s:%q: %w", field, term, err)
		}
		if at == nil {
			break
		}
		if at.ID.Equals(id) {
			df--
		}
	}
	return df, nil
}
