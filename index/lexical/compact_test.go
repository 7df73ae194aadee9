package lexical

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIndex_Compact: an index written in several Applies, with deletes,
// compacts into one segment without the deleted documents; BM25 returns the
// same hits with the same scores before and after, and the substring leg
// matches the same documents. (Its scores move: Bleve's BM25 takes a field's
// average length from the field dictionaries' sizes, which depend on how
// the terms are spread over segments; so do Bleve's own merges.)
func TestIndex_Compact(t *testing.T) {
	ps := loadPassages(t, 10000)
	x := segmentedIndex(t, ps, 2500)
	var deleted []string
	for i := 0; i < len(ps); i += 20 {
		deleted = append(deleted, ps[i].ID)
	}
	mustApply(t, x, nil, deleted, uint64(len(ps)+1))

	before, err := x.Segments()
	if err != nil {
		t.Fatal(err)
	}
	live := uint64(len(ps) - len(deleted))
	if before.Count < 2 || before.Docs != live || !before.Worth() {
		t.Fatalf("before: %+v, want several segments holding %d documents, worth compacting", before, live)
	}
	words, subs, phrases := benchQueries(ps, 60)
	search := func() (bm25 [][]Hit, substring [][]string) {
		for _, q := range append(words, phrases...) {
			bm25 = append(bm25, mustBM25(t, x, q, Filter{}, 10))
		}
		for _, q := range append(subs, phrases...) {
			matched := ids(mustSubstring(t, x, q, Filter{}, len(ps)))
			slices.Sort(matched)
			substring = append(substring, matched)
		}
		return bm25, substring
	}
	want, wantMatched := search()

	if err := x.Compact(context.Background()); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	after, err := x.Segments()
	if err != nil {
		t.Fatal(err)
	}
	if after != (Segments{Count: 1, Docs: live, Largest: live}) || after.Worth() {
		t.Fatalf("after: %+v, want one segment of %d live documents and none deleted", after, live)
	}
	got, gotMatched := search()
	found, matched := 0, 0
	for i := range want {
		if !sameHits(got[i], want[i]) {
			t.Fatalf("BM25 query %d: after compacting\n%v\nbefore\n%v", i, got[i], want[i])
		}
		found += len(want[i])
	}
	for i := range wantMatched {
		if !slices.Equal(gotMatched[i], wantMatched[i]) {
			t.Fatalf("substring query %d: after compacting %d matches, before %d", i, len(gotMatched[i]), len(wantMatched[i]))
		}
		matched += len(wantMatched[i])
	}
	if found == 0 || matched == 0 {
		t.Fatalf("BM25 found %d hits, substring matched %d: the queries test nothing", found, matched)
	}
	n, err := x.Count()
	if err != nil || n != live {
		t.Fatalf("Count = %d, %v; want %d", n, err, live)
	}
}

// segmentedIndex indexes ps in Applies of per documents each, each
// persisted as a segment of its own by closing the index after it (Bleve
// merges in memory whenever several wait to be persisted together), and
// returns the index open again. Bleve also merges on disk once there are
// more segments than its budget for the index's size, which counts small
// segments as 2,000 documents: at fewer than ten segments of 2,000 or more
// each, the segments stay apart until Compact.
func segmentedIndex(t *testing.T, ps []passage, per int) *Index {
	dir := filepath.Join(t.TempDir(), "idx")
	for start := 0; start < len(ps); start += per {
		x, err := Open(dir)
		if err != nil {
			t.Fatalf("Open(%s): %v", dir, err)
		}
		docs := make([]Doc, 0, per)
		for i := start; i < min(start+per, len(ps)); i++ {
			docs = append(docs, passageDoc(ps[i], i, ""))
		}
		mustApply(t, x, docs, nil, uint64(start+1))
		if err := x.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	return mustOpen(t, dir)
}

// sameHits reports whether a and b hold the same scores in order and the
// same documents at each score, but for those tied with the last: the
// order of tied documents, and so which of those tied at the cut the top k
// keep, is the order they are collected in, which is the segments'.
func sameHits(a, b []Hit) bool {
	score := func(h Hit) float64 { return h.Score }
	if len(a) != len(b) || !slices.Equal(mapHits(a, score), mapHits(b, score)) {
		return false
	}
	above := func(hs []Hit) []Hit {
		out := slices.DeleteFunc(slices.Clone(hs), func(h Hit) bool { return h.Score == hs[len(hs)-1].Score })
		slices.SortFunc(out, func(x, y Hit) int { return cmp.Or(-cmp.Compare(x.Score, y.Score), strings.Compare(x.ID, y.ID)) })
		return out
	}
	return len(a) == 0 || slices.Equal(above(a), above(b))
}

func mapHits[T any](hs []Hit, f func(Hit) T) []T {
	out := make([]T, len(hs))
	for i, h := range hs {
		out[i] = f(h)
	}
	return out
}

// TestIndex_CompactCanceled: a canceled compaction returns ctx's error and
// leaves an index that still serves every document.
func TestIndex_CompactCanceled(t *testing.T) {
	ps := loadPassages(t, 600)
	x := segmentedIndex(t, ps, 200)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := x.Compact(ctx); err != context.Canceled {
		t.Fatalf("Compact with a canceled context = %v, want context.Canceled", err)
	}
	seg, err := x.Segments()
	if err != nil || seg.Docs != uint64(len(ps)) {
		t.Fatalf("Segments = %+v, %v; want %d documents", seg, err, len(ps))
	}
	if hits := mustBM25(t, x, ps[0].Title, Filter{}, 10); len(hits) == 0 {
		t.Fatalf("no hit for %q after the canceled compaction", ps[0].Title)
	}
}

// TestSegments_Worth: compacting pays once an eighth of the largest
// segment's size lies outside it, new or deleted.
func TestSegments_Worth(t *testing.T) {
	for _, c := range []struct {
		s    Segments
		want bool
	}{
		{Segments{Count: 1, Docs: 100, Largest: 100, Deleted: 50}, false},
		{Segments{Count: 2, Docs: 1000, Largest: 990}, false},
		{Segments{Count: 2, Docs: 1125, Largest: 1000}, true},
		{Segments{Count: 2, Docs: 1100, Largest: 1000, Deleted: 25}, true},
		{Segments{Count: 10, Docs: 100_000, Largest: 30_000}, true},
	} {
		if got := c.s.Worth(); got != c.want {
			t.Errorf("%+v.Worth() = %v, want %v", c.s, got, c.want)
		}
	}
}
