package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxd/ctxd/index/lexical"
)

// fillNotes writes n short notes of words drawn from a common vocabulary,
// concurrently so that the store batches the writes.
func fillNotes(e *env, n int) []string {
	e.t.Helper()
	vocab := make([]string, 400)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("common%03dword", i)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := w; i < n; i += 8 {
				words := make([]string, 24)
				for j := range words {
					words[j] = vocab[rng.IntN(len(vocab))]
				}
				e.write(fmt.Sprintf("notes:/n%05d.md", i), strings.Join(words, " "))
			}
		})
	}
	wg.Wait()
	return vocab
}

func TestEngine_LongQueryIsReducedToKeyTerms(t *testing.T) {
	e := newEnv(t)
	vocab := fillNotes(e, 3000)
	// The note the page is about shares its rare words with no other note.
	e.write("notes:/target.md", "The quokkalith migration under the borealux aurora, observed by zephyrine rangers.")
	e.sync()

	// A 1 MB "pasted page": common words, words the index has never seen,
	// and the target's sentence somewhere in the middle.
	rng := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	for b.Len() < 500_000 {
		if rng.IntN(3) == 0 {
			fmt.Fprintf(&b, "unseen%dterm ", rng.IntN(50_000))
		} else {
			b.WriteString(vocab[rng.IntN(len(vocab))] + " ")
		}
	}
	b.WriteString("Rangers saw the quokkalith migration and the borealux aurora; zephyrine notes follow. ")
	for b.Len() < 1_000_000 {
		b.WriteString(vocab[rng.IntN(len(vocab))] + " ")
	}
	page := b.String()[:1_000_000]

	r := e.search(Request{Mode: BM25, Queries: []Query{{Text: page}}})
	red := r.Queries[0].Reduced
	if red == "" {
		t.Fatal("a 1 MB query was not reduced")
	}
	distinct := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(red)) {
		distinct[w] = true
	}
	if n := len(distinct); n > DefaultLimits().MaxQueryTerms {
		t.Fatalf("reduced to %d distinct words, more than %d: %q", n, DefaultLimits().MaxQueryTerms, red)
	}
	for _, w := range []string{"quokkalith", "borealux", "zephyrine"} {
		if !strings.Contains(red, w) {
			t.Errorf("reduced query %q lacks the rare word %q", red, w)
		}
	}
	if got := refs(r); len(got) == 0 || got[0] != "notes:/target.md" {
		t.Fatalf("first results %v, want notes:/target.md first", got[:min(3, len(got))])
	}

	// A short query is used as given.
	if r := e.search(Request{Mode: BM25, Queries: []Query{{Text: "borealux aurora"}}}); r.Queries[0].Reduced != "" {
		t.Fatalf("short query reduced to %q", r.Queries[0].Reduced)
	}
}

// pollCtx counts how often the search polls it and cancels itself at poll
// cancelAt; it records the polls made after that.
type pollCtx struct {
	context.Context
	cancel    context.CancelFunc
	cancelAt  int64
	polls     atomic.Int64
	afterStop atomic.Int64
}

func newPollCtx(cancelAt int64) *pollCtx {
	ctx, cancel := context.WithCancel(context.Background())
	return &pollCtx{Context: ctx, cancel: cancel, cancelAt: cancelAt}
}

func (c *pollCtx) poll() {
	n := c.polls.Add(1)
	if n == c.cancelAt {
		c.cancel()
	} else if c.cancelAt > 0 && n > c.cancelAt {
		c.afterStop.Add(1)
	}
}

func (c *pollCtx) Done() <-chan struct{} { c.poll(); return c.Context.Done() }
func (c *pollCtx) Err() error            { c.poll(); return c.Context.Err() }

func TestEngine_SearchStopsWhenCanceled(t *testing.T) {
	e := newEnv(t)
	vocab := fillNotes(e, 3000)
	e.sync()
	// A costly request: many queries, each matching most notes in both
	// lexical legs, so every leg polls its context many times.
	var qs []Query
	for i := range DefaultLimits().MaxQueries {
		qs = append(qs, Query{Text: strings.Join(vocab[i*8:i*8+8], " ")})
	}
	req := Request{Mode: BM25, Queries: qs, Limit: 100}

	full := newPollCtx(0)
	if _, err := e.eng.Search(full, req); err != nil {
		t.Fatal(err)
	}
	if full.polls.Load() < 100 {
		t.Fatalf("an uncanceled search polled its context only %d times; the test needs a costlier one", full.polls.Load())
	}

	ctx := newPollCtx(10)
	_, err := e.eng.Search(ctx, req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// Every leg running at the cancel notices it at its next poll and
	// returns (Bleve polls once or twice on the way out, the engine once);
	// nothing after that keeps working, and polling, through the remaining
	// queries.
	t.Logf("polls: %d uncanceled; canceled at 10, then %d more", full.polls.Load(), ctx.afterStop.Load())
	if n := ctx.afterStop.Load(); n > 10 {
		t.Fatalf("%d polls after the cancel (an uncanceled search makes %d in all): work went on", n, full.polls.Load())
	}
}

func TestEngine_RefusesRequestsOverLimits(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/a.md", "walrus tusks", unit(0, 0))
	e.sync()
	l := DefaultLimits()
	q := []Query{{Text: "walrus"}}
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("t%d", i)
		}
		return out
	}
	nq := func(n int) []Query {
		out := make([]Query, n)
		for i := range out {
			out[i] = Query{Text: "walrus"}
		}
		return out
	}
	for _, tt := range []struct {
		name     string
		lim      Limit
		at, over Request
	}{
		{"queries", LimitQueries, Request{Queries: nq(l.MaxQueries)}, Request{Queries: nq(l.MaxQueries + 1)}},
		{"query bytes", LimitQueryBytes,
			Request{Queries: []Query{{Text: "walrus " + strings.Repeat("x", l.MaxQueryBytes-7)}}},
			Request{Queries: []Query{{Text: "walrus " + strings.Repeat("x", l.MaxQueryBytes-6)}}}},
		{"limit", LimitResults, Request{Queries: q, Limit: l.MaxLimit}, Request{Queries: q, Limit: l.MaxLimit + 1}},
		{"snippet", LimitSnippetChars, Request{Queries: q, SnippetChars: l.MaxSnippetChars}, Request{Queries: q, SnippetChars: l.MaxSnippetChars + 1}},
		{"budget", LimitTokenBudget, Request{Queries: q, TokenBudget: l.MaxTokenBudget}, Request{Queries: q, TokenBudget: l.MaxTokenBudget + 1}},
		{"per item", LimitPerItem, Request{Queries: q, MaxPerItem: l.MaxPerItem}, Request{Queries: q, MaxPerItem: l.MaxPerItem + 1}},
		{"filter", LimitFilterValues, Request{Queries: q, Filter: lexical.Filter{Tags: many(l.MaxFilterValues)}},
			Request{Queries: q, Filter: lexical.Filter{Tags: many(l.MaxFilterValues + 1)}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.at.Mode, tt.over.Mode = BM25, BM25
			if _, err := e.eng.Search(context.Background(), tt.at); err != nil {
				t.Fatalf("at the limit: %v", err)
			}
			_, err := e.eng.Search(context.Background(), tt.over)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != tt.lim || !errors.Is(err, ErrInvalidQuery) {
				t.Fatalf("over the limit: err = %v, want a LimitError for limit %d", err, tt.lim)
			}
		})
	}
}

func TestEngine_ResultsCarryLineRange(t *testing.T) {
	e := newEnv(t)
	// Paragraphs (chunks) on lines 1-2, 4-6 and 8.
	e.write("notes:/lines.md", "alpha one\nalpha two\n\nbeta one\nbeta two\nbeta three\n\ngamma\n")
	e.sync()
	for _, tt := range []struct {
		q          string
		start, end int
	}{{"alpha", 1, 2}, {"beta", 4, 6}, {"gamma", 8, 8}} {
		r := e.search(Request{Mode: BM25, Queries: []Query{{Text: tt.q}}})
		if len(r.Results) != 1 || r.Results[0].StartLine != tt.start || r.Results[0].EndLine != tt.end {
			t.Errorf("%s: results %+v, want lines %d-%d", tt.q, r.Results, tt.start, tt.end)
		}
	}
}
