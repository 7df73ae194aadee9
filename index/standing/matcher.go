package standing

import (
	"math"
	"slices"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
	"github.com/viterin/vek/vek32"
)

// Default least scores of the legs when a Query's MinScore is 0.
const (
	DefaultLexicalMin = 1.0 // every term of the query
	DefaultVectorMin  = 0.5
)

// scoreSlack absorbs rounding in the sum of term weights, so that a chunk
// holding every term scores 1.
const scoreSlack = 1e-9

// slot is one query text of one subscription.
type slot struct {
	sub   *Sub
	si    int // the sub's index in matcher.subs
	qi    int
	terms []string
	total float64 // the sum of its terms' weights
}

// matcher matches changed chunks against every registered query at once:
// a posting list per analysed term names the query texts (slots) that hold
// it, so a chunk costs one analysis of the words that begin like some
// query term and one visit per posting of the terms it holds, however many
// queries are registered; the vector leg is a scan of the query vectors
// per chunk vector. It is built from the subscriptions and then only read.
type matcher struct {
	subs    []*Sub
	slots   []slot
	post    map[string][]int32
	terms   *lexical.Finder
	idf     map[string]float64
	vslots  []int32     // slots with a query vector
	vecs    [][]float32 // by vslots, unit length
	acc     []float64
	touched []int32
	found   map[string]bool
	title   map[string]bool
	// Per subscription, for the doc being matched (generation doc): its
	// best hit, and whether the doc passes its filter and access.
	doc      uint32
	best     []hit
	bestDoc  []uint32
	admitDoc []uint32
	admitted []bool
	hits     []int // subscriptions with a best hit for this doc
}

// newMatcher builds the matcher of subs with term weights idf (a term
// missing from it weighs 1).
func newMatcher(subs []*Sub, idf map[string]float64) *matcher {
	n := len(subs)
	m := &matcher{subs: subs, post: map[string][]int32{}, idf: idf, found: map[string]bool{}, title: map[string]bool{},
		best: make([]hit, n), bestDoc: make([]uint32, n), admitDoc: make([]uint32, n), admitted: make([]bool, n)}
	all := map[string]bool{}
	for si, s := range subs {
		for qi, terms := range s.terms {
			i := int32(len(m.slots))
			sl := slot{sub: s, si: si, qi: qi, terms: terms}
			if s.q.Mode != search.Vector {
				for _, t := range terms {
					m.post[t] = append(m.post[t], i)
					all[t] = true
				}
			}
			if s.q.Mode != search.BM25 && s.vecs[qi] != nil {
				m.vslots = append(m.vslots, i)
				m.vecs = append(m.vecs, s.vecs[qi])
			}
			m.slots = append(m.slots, sl)
		}
	}
	m.terms = lexical.NewTermSet(all).Finder()
	m.acc = make([]float64, len(m.slots))
	m.setIDF(idf)
	return m
}

// allTerms lists the distinct terms of the lexical slots.
func (m *matcher) allTerms() []string {
	out := make([]string, 0, len(m.post))
	for t := range m.post {
		out = append(out, t)
	}
	return out
}

// setIDF weighs the terms by idf and recomputes each slot's total.
func (m *matcher) setIDF(idf map[string]float64) {
	m.idf = idf
	for i := range m.slots {
		m.slots[i].total = 0
		for _, t := range m.slots[i].terms {
			m.slots[i].total += m.weight(t)
		}
	}
}

func (m *matcher) weight(t string) float64 {
	if w, ok := m.idf[t]; ok {
		return w
	}
	return 1
}

// idfOf is BM25's inverse document frequency of a term found in df of docs
// chunks: always positive, larger for rarer terms.
func idfOf(docs, df uint64) float64 {
	return math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
}

// hit is a subscription's best chunk of an item.
type hit struct {
	sub      *Sub
	chunk    int // index among the item's chunk records
	score    float64
	lex, vec float64 // the legs' scores; -1 where the leg did not match
	queries  []int
}

// match calls fn with the best chunk of d for each subscription it
// matches. lexical says whether d's text changed (else only its vectors
// did, and only the vector leg looks at it).
func (m *matcher) match(d *vfs.IndexDoc, lexicalLeg bool, fn func(hit)) error {
	if !d.Exists || len(d.Chunks) == 0 || len(m.slots) == 0 {
		return nil
	}
	m.doc++
	m.hits = m.hits[:0]
	consider := func(si, chunk, qi int, lex, vec float64) {
		if m.admitDoc[si] != m.doc {
			m.admitDoc[si], m.admitted[si] = m.doc, m.subs[si].admits(d)
		}
		if !m.admitted[si] {
			return
		}
		score := max(lex, vec)
		b := &m.best[si]
		switch {
		case m.bestDoc[si] != m.doc:
			m.bestDoc[si] = m.doc
			m.hits = append(m.hits, si)
			*b = hit{sub: m.subs[si], chunk: chunk, score: score, lex: -1, vec: -1, queries: b.queries[:0]}
		case b.chunk != chunk && score <= b.score:
			return
		case b.chunk != chunk:
			*b = hit{sub: m.subs[si], chunk: chunk, score: score, lex: -1, vec: -1, queries: b.queries[:0]}
		}
		b.score = max(b.score, score)
		b.lex, b.vec = max(b.lex, lex), max(b.vec, vec)
		if !containsInt(b.queries, qi) {
			b.queries = append(b.queries, qi)
		}
	}
	lexOn := lexicalLeg && len(m.post) > 0
	if lexOn {
		clear(m.title)
		if err := m.terms.Find(d.Title+"\n"+d.Description, m.title); err != nil {
			return err
		}
	}
	for ci := range d.Chunks {
		c := &d.Chunks[ci]
		chunk := d.From + ci
		if lexOn {
			clear(m.found)
			for t := range m.title {
				m.found[t] = true
			}
			if err := m.terms.Find(c.Heading, m.found); err != nil {
				return err
			}
			if err := m.terms.Find(c.Text, m.found); err != nil {
				return err
			}
			for t := range m.found {
				w := m.weight(t)
				for _, s := range m.post[t] {
					if m.acc[s] == 0 {
						m.touched = append(m.touched, s)
					}
					m.acc[s] += w
				}
			}
			for _, s := range m.touched {
				sl := &m.slots[s]
				score := m.acc[s] / sl.total
				m.acc[s] = 0
				if score+scoreSlack >= 1 { // every term, summed in another order
					score = 1
				}
				if score+scoreSlack >= sl.sub.lexicalMin() {
					consider(sl.si, chunk, sl.qi, score, -1)
				}
			}
			m.touched = m.touched[:0]
		}
		if len(m.vslots) > 0 && len(c.Vector) > 0 {
			norm := vek32.Norm(c.Vector)
			if norm == 0 {
				continue
			}
			for i, s := range m.vslots {
				q := m.vecs[i]
				if len(q) != len(c.Vector) {
					continue
				}
				cos := float64(vek32.Dot(q, c.Vector) / norm)
				sl := &m.slots[s]
				if cos >= sl.sub.vectorMin() {
					consider(sl.si, chunk, sl.qi, -1, cos)
				}
			}
		}
	}
	for _, si := range m.hits {
		h := m.best[si]
		h.queries = slices.Clone(h.queries)
		fn(h)
	}
	return nil
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
