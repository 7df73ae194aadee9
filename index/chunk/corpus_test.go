package chunk

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// corpusEvery picks the docs-corpus sample: every 10th record, about 2,000
// documents spread over all six sources (the file holds them in order).
const corpusEvery = 10

// TestSplit_Corpus is the property test: every document of the docs-corpus
// sample and every golden input, chunked with the real tokenizer and window,
// keeps all invariants (coverage, order, rune boundaries, Tokens within the
// window and equal to a fresh count of EmbedText; the tokenizer is a
// SumCounter, so this checks the summed counts too, and a prefix as
// SplitWithPrefix takes one). With -short only the golden inputs are
// checked. It logs chunk statistics per source.
func TestSplit_Corpus(t *testing.T) {
	tk := mustLoadTokenizer(t)
	for _, name := range goldenInputs(t) {
		content := mustReadInput(t, name)
		checkChunks(t, content, Split(content, "", "/"+name, tk, realWindow), tk, realWindow)
	}
	if testing.Short() {
		t.Skip("docs-corpus sample skipped in -short mode")
	}
	type stats struct{ docs, chunks, tokens, maxChunks, bytes int }
	bySource := map[string]*stats{}
	all := &stats{}
	for _, d := range readCorpusSample(t, corpusEvery) {
		content := []byte(d.Text)
		chunks := Split(content, "", d.path(), tk, realWindow)
		prefix := Prefix(d.path(), d.Source, tk, realWindow)
		t.Run(d.ID, func(t *testing.T) {
			checkChunks(t, content, chunks, tk, realWindow)
			checkChunksPrefix(t, content, SplitWithPrefix(content, "", d.path(), prefix, tk, realWindow), tk, realWindow, prefix)
		})
		st := bySource[d.Source]
		if st == nil {
			st = &stats{}
			bySource[d.Source] = st
		}
		for _, s := range []*stats{st, all} {
			s.docs++
			s.chunks += len(chunks)
			s.bytes += len(content)
			s.maxChunks = max(s.maxChunks, len(chunks))
			for _, ch := range chunks {
				s.tokens += ch.Tokens
			}
		}
	}
	sources := make([]string, 0, len(bySource))
	for s := range bySource {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	var b strings.Builder
	line := func(name string, s *stats) {
		fmt.Fprintf(&b, "%-12s docs=%5d bytes=%9d chunks=%6d chunks/doc=%6.2f (max %d) tokens/chunk=%6.1f\n",
			name, s.docs, s.bytes, s.chunks, float64(s.chunks)/float64(max(1, s.docs)), s.maxChunks,
			float64(s.tokens)/float64(max(1, s.chunks)))
	}
	for _, s := range sources {
		line(s, bySource[s])
	}
	line("all", all)
	t.Logf("docs-corpus sample (every %dth record), window %d:\n%s", corpusEvery, realWindow, b.String())
}

// freshCounter hides a Counter's SumCounter mark, so that Split counts
// every chunk's embedded text afresh.
type freshCounter struct{ Counter }

// TestSplit_SummedCountsChangeNothing chunks the golden inputs with and
// without a prefix through the real tokenizer twice, once summing counts
// (the tokenizer is a SumCounter) and once counting afresh: the chunks must
// be the same.
func TestSplit_SummedCountsChangeNothing(t *testing.T) {
	tk := mustLoadTokenizer(t)
	if _, ok := Counter(tk).(SumCounter); !ok {
		t.Fatal("the tokenizer is not a SumCounter")
	}
	for _, name := range goldenInputs(t) {
		content := mustReadInput(t, name)
		for _, prefix := range []string{"", Prefix(name, "A description of "+name, tk, realWindow)} {
			summed := SplitWithPrefix(content, "", "/"+name, prefix, tk, realWindow)
			fresh := SplitWithPrefix(content, "", "/"+name, prefix, freshCounter{tk}, realWindow)
			if !reflect.DeepEqual(summed, fresh) {
				t.Errorf("%s (prefix %q): summed counts give %d chunks %v, fresh counts %d chunks %v", name, prefix, len(summed), summed, len(fresh), fresh)
			}
		}
	}
}
