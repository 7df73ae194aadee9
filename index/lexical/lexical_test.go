package lexical

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

func mustOpen(t testing.TB, dir string) *Index {
	t.Helper()
	x, err := Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := x.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return x
}

func mustApply(t testing.TB, x *Index, up []Doc, del []string, seq uint64) {
	t.Helper()
	if err := x.Apply(up, del, seq); err != nil {
		t.Fatalf("Apply(seq %d): %v", seq, err)
	}
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func mustBM25(t testing.TB, x *Index, q string, f Filter, k int) []Hit {
	t.Helper()
	hits, err := x.SearchBM25(context.Background(), q, f, k)
	if err != nil {
		t.Fatalf("SearchBM25(%q): %v", q, err)
	}
	return hits
}

func mustSubstring(t testing.TB, x *Index, q string, f Filter, k int) []Hit {
	t.Helper()
	hits, err := x.SearchSubstring(context.Background(), q, f, k)
	if err != nil {
		t.Fatalf("SearchSubstring(%q): %v", q, err)
	}
	return hits
}

func TestOpen_ScoringModelIsBM25(t *testing.T) {
	dir := t.TempDir()
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	// Check the mapping as persisted and re-read from disk.
	x = mustOpen(t, dir)
	im, ok := x.idx.Mapping().(*mapping.IndexMappingImpl)
	if !ok {
		t.Fatalf("mapping type %T", x.idx.Mapping())
	}
	if im.ScoringModel != index.BM25Scoring {
		t.Fatalf("ScoringModel = %q, want %q", im.ScoringModel, index.BM25Scoring)
	}
}

// near reports whether got is within a millionth of want, relative: the
// index keeps field lengths as float32 norms.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-6*math.Abs(want) }

// TestIndex_SearchBM25_SaturatesTermFrequency checks the scores are
// textbook BM25 (k1 0.9, b 0.4, Lucene's idf), computed by hand. Text
// lengths 5, 10 and 15 tokens (mean 10); "apple" in 2 of 3 documents:
//
//	idf  = ln(1 + (3 - 2 + 0.5)/(2 + 0.5)) = ln 1.6 = 0.470004
//	once: tf 1 in 5 tokens:  tf~ = 1/(0.6 + 0.4*5/10)   = 1.25
//	      score = idf * 1.25*1.9/(1.25 + 0.9)          = 0.519190
//	tenx: tf 10 in 10 tokens: tf~ = 10/(0.6 + 0.4*10/10) = 10
//	      score = idf * 10*1.9/(10 + 0.9)              = 0.819272
//
// Bleve's own BM25 gives other numbers: it takes sqrt(tf), squares the idf,
// multiplies by a query norm and estimates the mean length from the term
// dictionary.
func TestIndex_SearchBM25_SaturatesTermFrequency(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "once", Text: "apple kiwi lime mango melon"},
		{ID: "tenx", Text: strings.TrimSpace(strings.Repeat("apple ", 10))},
		{ID: "none", Text: "kiwi lime mango melon peach plum grape guava fig pear lemon cherry berry date olive"},
	}, nil, 1)
	hits := mustBM25(t, x, "apple", Filter{}, 10)
	if got := ids(hits); !slices.Equal(got, []string{"tenx", "once"}) {
		t.Fatalf("hits = %v, want [tenx once]", got)
	}
	for i, want := range []float64{0.8192723812540346, 0.5191900555621498} {
		if !near(hits[i].Score, want) {
			t.Errorf("%s score = %.9f, want %.9f", hits[i].ID, hits[i].Score, want)
		}
	}
}

// TestIndex_SearchBM25_FieldModel checks BM25F over text and title, by
// hand: a title term's frequency is weighted (TitleBoost 2) and normalised
// against the mean title length, then added to its text frequency before
// one saturation, and a document matching one of two query words is not
// scaled down (no coordination factor). Text lengths 3, 4, 2 (mean 3);
// title lengths 1, 0, 1 (mean 2/3):
//
//	idf(zebra) = ln(1 + (3 - 1 + 0.5)/1.5) = 0.980829 (df 1 in text and in title)
//	idf(cross) = ln(1 + (3 - 2 + 0.5)/2.5) = 0.470004
//	A zebra: tf~ = 1/(0.6 + 0.4*3/3) + 2*1/(0.6 + 0.4*1/(2/3)) = 1 + 1.666667 = 2.666667
//	         idf * 2.666667*1.9/(2.666667 + 0.9) = 1.393327
//	A cross: tf~ = 1 → idf * 1.9/1.9 = 0.470004; A = 1.863331
//	B cross: tf~ = 1/(0.6 + 0.4*4/3) = 0.882353 → idf * 0.882353*1.9/1.782353 = 0.442083
func TestIndex_SearchBM25_FieldModel(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "A", Text: "zebra crossing rules", Title: "zebra"},
		{ID: "B", Text: "crossing guard duty road"},
		{ID: "C", Text: "bicycle lane", Title: "road"},
	}, nil, 1)
	hits := mustBM25(t, x, "zebra crossing", Filter{}, 10)
	if got := ids(hits); !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("hits = %v, want [A B]", got)
	}
	for i, want := range []float64{1.8633311662343561, 0.4420826215677711} {
		if !near(hits[i].Score, want) {
			t.Errorf("%s score = %.9f, want %.9f", hits[i].ID, hits[i].Score, want)
		}
	}
}

// TestIndex_SearchBM25_MeanLengthOfLiveDocuments checks the mean field
// length counts each document as it is now: a replaced document by its new
// text and a deleted one not at all. After the changes two documents
// remain, of 1 and 3 tokens (mean 2), "apple" in both:
//
//	idf = ln(1 + (2 - 2 + 0.5)/(2 + 0.5)) = ln 1.2 = 0.182322
//	a (1 token):  tf~ = 1/(0.6 + 0.4*1/2) = 1.25 → idf * 1.25*1.9/2.15 = 0.201402
//	b (3 tokens): tf~ = 1/(0.6 + 0.4*3/2) = 0.833333 → idf * 0.833333*1.9/1.733333 = 0.166544
func TestIndex_SearchBM25_MeanLengthOfLiveDocuments(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	long := strings.TrimSpace(strings.Repeat("kiwi lime mango melon peach ", 8))
	mustApply(t, x, []Doc{
		{ID: "a", Text: "apple " + long},
		{ID: "b", Text: "apple kiwi lime"},
		{ID: "c", Text: long},
	}, nil, 1)
	mustApply(t, x, []Doc{{ID: "a", Text: "apple"}}, []string{"c"}, 2)
	hits := mustBM25(t, x, "apple", Filter{}, 10)
	if got := ids(hits); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("hits = %v, want [a b]", got)
	}
	for i, want := range []float64{0.20140171971425216, 0.1665437297637085} {
		if !near(hits[i].Score, want) {
			t.Errorf("%s score = %.9f, want %.9f", hits[i].ID, hits[i].Score, want)
		}
	}
}

// TestIndex_Apply_KeepsFieldLengthSums checks the token count sums behind
// BM25F's mean field lengths after each Apply, counted by hand (no stop
// words below, so every word is a token): replacing a document swaps its
// lengths, deleting one removes them, an id upserted twice in one batch
// counts once (the last), one upserted and deleted in the same batch not at
// all, and deleting an unknown id changes nothing. The sums persist.
func TestIndex_Apply_KeepsFieldLengthSums(t *testing.T) {
	dir := t.TempDir()
	x := mustOpen(t, dir)
	check := func(x *Index, step string, want lengthSums) {
		t.Helper()
		raw, err := x.idx.GetInternal(keyFieldLengths)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeLengthSums(raw)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got != want {
			t.Errorf("%s: sums (text, heading, title) = %v, want %v", step, got, want)
		}
	}
	check(x, "empty", lengthSums{})
	mustApply(t, x, []Doc{
		{ID: "a", Text: "apple kiwi lime", Heading: "fruit", Title: "market"},           // 3 1 1
		{ID: "b", Text: "mango melon", Title: "summer harvest", Description: "orchard"}, // 2 0 3
		{ID: "c", Text: "peach", Heading: "stone fruit list"},                           // 1 3 0
	}, nil, 1)
	check(x, "adds", lengthSums{6, 4, 4})
	mustApply(t, x, []Doc{
		{ID: "a", Text: "apple", Heading: "fruit basket"}, // 1 2 0 replaces 3 1 1
		{ID: "d", Text: "plum grape fig pear"},            // 4 0 0
	}, []string{"b", "unknown"}, 2)
	check(x, "update, add, delete", lengthSums{6, 5, 0})
	mustApply(t, x, []Doc{
		{ID: "e", Text: "olive olive olive"},        // 3 0 0, replaced in the batch
		{ID: "e", Text: "date", Title: "dried"},     // 1 0 1
		{ID: "f", Text: "cherry berry", Title: "x"}, // deleted in the batch
		{ID: "c", Text: "lemon lime"},               // 2 0 0 replaces 1 3 0
	}, []string{"f", "d"}, 3)
	check(x, "same batch", lengthSums{4, 2, 1})
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = mustOpen(t, dir)
	check(x, "reopened", lengthSums{4, 2, 1})
	mustApply(t, x, nil, []string{"a", "c", "e"}, 4)
	check(x, "all deleted", lengthSums{})
}

func TestIndex_SearchBM25_Stemming(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "a", Text: "The dog runs every morning."},
		{ID: "b", Text: "Cats sleep all day."},
	}, nil, 1)
	hits := mustBM25(t, x, "running", Filter{}, 10)
	if got := ids(hits); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("hits = %v, want [a]", got)
	}
}

// TestIndex_SearchBM25_HeadingBoost: same term, same field lengths, same
// document frequencies; only the field separates the two. The heading's
// frequency is weighted by HeadingBoost before saturation (BM25F), so with
// idf = ln(1 + (2 - 1 + 0.5)/1.5) = ln 2 and every length at its mean:
//
//	in-text:    tf~ = 1 → ln 2 * 1.9/1.9       = 0.693147
//	in-heading: tf~ = 2 → ln 2 * 2*1.9/(2+0.9) = 0.908262
func TestIndex_SearchBM25_HeadingBoost(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "in-text", Text: "zebra crossing", Heading: "road safety"},
		{ID: "in-heading", Text: "road safety", Heading: "zebra crossing"},
	}, nil, 1)
	hits := mustBM25(t, x, "zebra", Filter{}, 10)
	if got := ids(hits); !slices.Equal(got, []string{"in-heading", "in-text"}) {
		t.Fatalf("hits = %v, want [in-heading in-text]", got)
	}
	for i, want := range []float64{0.9082618228026869, 0.6931471805599453} {
		if !near(hits[i].Score, want) {
			t.Errorf("%s score = %.9f, want %.9f", hits[i].ID, hits[i].Score, want)
		}
	}
}

func TestIndex_SearchBM25_DescriptionWithTitle(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "described", Text: "payment terms", Title: "Billing", Description: "how invoices are sent"},
		{ID: "other", Text: "payment terms", Title: "notes.md"},
	}, nil, 1)
	hits := mustBM25(t, x, "invoices", Filter{}, 10)
	if got := ids(hits); !slices.Equal(got, []string{"described"}) {
		t.Fatalf("hits = %v, want [described]: the description is searched", got)
	}
	// The title itself is still searched.
	if got := ids(mustBM25(t, x, "billing", Filter{}, 10)); !slices.Equal(got, []string{"described"}) {
		t.Fatalf("title hits = %v, want [described]", got)
	}
	// A description is searched up to MaxTitleBytes, as every chunk repeats it.
	long := "ledger " + strings.Repeat("é", MaxTitleBytes) + " zanzibar"
	mustApply(t, x, []Doc{{ID: "long", Text: "payment terms", Title: "Long", Description: long}}, nil, 2)
	if got := ids(mustBM25(t, x, "ledger", Filter{}, 10)); !slices.Equal(got, []string{"long"}) {
		t.Errorf("hits for the description's start = %v, want [long]", got)
	}
	if got := ids(mustBM25(t, x, "zanzibar", Filter{}, 10)); len(got) != 0 {
		t.Errorf("hits for a word past MaxTitleBytes = %v, want none", got)
	}
}

func TestIndex_Apply_UpdatesAndDeletesVisibleToBothLegs(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "a", Text: "calls useEffect on mount"},
		{ID: "b", Text: "calls useEffect on unmount"},
	}, nil, 1)
	mustApply(t, x, []Doc{{ID: "a", Text: "calls useMemo instead"}}, []string{"b"}, 2)

	if got := ids(mustBM25(t, x, "useEffect", Filter{}, 10)); len(got) != 0 {
		t.Errorf("bm25 useEffect after update+delete = %v, want none", got)
	}
	if got := ids(mustSubstring(t, x, "useEff", Filter{}, 10)); len(got) != 0 {
		t.Errorf("substring useEff after update+delete = %v, want none", got)
	}
	if got := ids(mustBM25(t, x, "useMemo", Filter{}, 10)); !slices.Equal(got, []string{"a"}) {
		t.Errorf("bm25 useMemo = %v, want [a]", got)
	}
	if got := ids(mustSubstring(t, x, "seMem", Filter{}, 10)); !slices.Equal(got, []string{"a"}) {
		t.Errorf("substring seMem = %v, want [a]", got)
	}
	if n, err := x.Count(); err != nil || n != 1 {
		t.Errorf("Count = %d, %v; want 1", n, err)
	}
	// An id both upserted and deleted in one batch ends up deleted.
	mustApply(t, x, []Doc{{ID: "c", Text: "transient"}}, []string{"c"}, 3)
	if got := ids(mustBM25(t, x, "transient", Filter{}, 10)); len(got) != 0 {
		t.Errorf("upsert+delete in one batch = %v, want none", got)
	}
}

// TestIndex_Search_FilterInsideQuery: 2,000 documents match the query far
// better than the one in scope; a scoped top-5 must still return it.
func TestIndex_Search_FilterInsideQuery(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	docs := make([]Doc, 0, 2001)
	for i := range 2000 {
		docs = append(docs, Doc{
			ID: fmt.Sprintf("noise-%d", i), Text: "database database index database",
			Heading: "database index", Drive: "disk", Path: fmt.Sprintf("/var/%d.txt", i),
			Mime: "text/plain", Tags: []string{"x"},
		})
	}
	docs = append(docs, Doc{
		ID: "target", Text: "A long note that mentions a database only once among many other words about gardening.",
		Drive: "notes", Path: "/garden/plan.md", Mime: "text/markdown", Tags: []string{"home"},
	})
	mustApply(t, x, docs, nil, 1)

	if got := ids(mustBM25(t, x, "database", Filter{}, 5)); slices.Contains(got, "target") {
		t.Fatalf("unscoped top-5 %v already contains target; test proves nothing", got)
	}
	filters := map[string]Filter{
		"drive":                {Drives: []string{"notes"}},
		"plain path prefix":    {PathPrefixes: []string{"/garden"}},
		"drive path prefix":    {PathPrefixes: []string{"notes:/garden/"}},
		"mime":                 {Mimes: []string{"text/markdown"}},
		"tag":                  {Tags: []string{"home"}},
		"drive or other drive": {Drives: []string{"nope", "notes"}},
		"all fields":           {Drives: []string{"notes"}, PathPrefixes: []string{"/garden"}, Mimes: []string{"text/markdown"}, Tags: []string{"home"}},
	}
	for name, f := range filters {
		t.Run(name, func(t *testing.T) {
			if got := ids(mustBM25(t, x, "database", f, 5)); !slices.Equal(got, []string{"target"}) {
				t.Errorf("bm25 = %v, want [target]", got)
			}
			if got := ids(mustSubstring(t, x, "databa", f, 5)); !slices.Equal(got, []string{"target"}) {
				t.Errorf("substring = %v, want [target]", got)
			}
		})
	}
	// AND across fields: right drive, wrong mime.
	f := Filter{Drives: []string{"notes"}, Mimes: []string{"text/plain"}}
	if got := ids(mustBM25(t, x, "database", f, 5)); len(got) != 0 {
		t.Errorf("drive AND wrong mime = %v, want none", got)
	}
}

func TestIndex_Search_TagsAllRequired(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "ab", Text: "shared words", Tags: []string{"a", "b"}},
		{ID: "a", Text: "shared words", Tags: []string{"a"}},
		{ID: "b", Text: "shared words", Tags: []string{"b"}},
		{ID: "abc", Text: "shared words", Tags: []string{"a", "b", "c"}},
	}, nil, 1)
	tests := []struct {
		name string
		tags []string
		want []string
	}{
		{"one tag", []string{"a"}, []string{"a", "ab", "abc"}},
		{"two tags", []string{"a", "b"}, []string{"ab", "abc"}},
		{"three tags", []string{"c", "a", "b"}, []string{"abc"}},
		{"unknown tag", []string{"a", "zzz"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ids(mustBM25(t, x, "shared", Filter{Tags: tc.tags}, 10))
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("tags %v: hits = %v, want %v", tc.tags, got, tc.want)
			}
		})
	}
}

func TestIndex_Search_AnyTags(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "decision", Text: "shared words", Tags: []string{"event", "kind:decision"}},
		{ID: "error", Text: "shared words", Tags: []string{"event", "kind:error"}},
		{ID: "note", Text: "shared words", Tags: []string{"event", "kind:note"}},
		{ID: "untagged", Text: "shared words"},
	}, nil, 1)
	tests := []struct {
		name      string
		tags, any []string
		want      []string
	}{
		{"one of one", nil, []string{"kind:error"}, []string{"error"}},
		{"one of two", nil, []string{"kind:error", "kind:decision"}, []string{"decision", "error"}},
		{"unknown among them", nil, []string{"zzz", "kind:note"}, []string{"note"}},
		{"only unknown", nil, []string{"zzz"}, nil},
		{"and a required tag", []string{"event"}, []string{"kind:note", "kind:error"}, []string{"error", "note"}},
		{"and a required tag none has", []string{"zzz"}, []string{"kind:note"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Filter{Tags: tc.tags, AnyTags: tc.any}
			for leg, hits := range map[string][]Hit{"bm25": mustBM25(t, x, "shared", f, 10), "substring": mustSubstring(t, x, "share", f, 10)} {
				got := ids(hits)
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					t.Errorf("%s: tags %v any of %v: hits = %v, want %v", leg, tc.tags, tc.any, got, tc.want)
				}
			}
		})
	}
}

func TestIndex_Search_TimeRange(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	mustApply(t, x, []Doc{
		{ID: "09:00", Text: "shared words", Time: at(9, 0)},
		{ID: "10:15", Text: "shared words", Time: at(10, 15)},
		{ID: "10:16", Text: "shared words", Time: at(10, 16)},
		{ID: "last-year", Text: "shared words", Time: at(9, 0).AddDate(-1, 0, 0)},
		{ID: "no-time", Text: "shared words"},
	}, nil, 1)
	tests := []struct {
		name          string
		after, before time.Time
		want          []string
	}{
		{"after is inclusive", at(10, 15), time.Time{}, []string{"10:15", "10:16"}},
		{"before is exclusive", time.Time{}, at(10, 15), []string{"09:00", "last-year"}},
		{"both", at(9, 0), at(10, 16), []string{"09:00", "10:15"}},
		{"a millisecond wide", at(10, 15), at(10, 15).Add(time.Millisecond), []string{"10:15"}},
		{"nothing in it", at(11, 0), at(12, 0), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Filter{After: tc.after, Before: tc.before}
			if err := f.Validate(); err != nil {
				t.Fatal(err)
			}
			for leg, hits := range map[string][]Hit{"bm25": mustBM25(t, x, "shared", f, 10), "substring": mustSubstring(t, x, "share", f, 10)} {
				got := ids(hits)
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					t.Errorf("%s: [%v, %v): hits = %v, want %v", leg, tc.after, tc.before, got, tc.want)
				}
			}
		})
	}
	if err := (Filter{After: at(10, 0), Before: at(10, 0)}).Validate(); !errors.Is(err, ErrInvalidFilter) {
		t.Errorf("an empty range: Validate = %v, want ErrInvalidFilter", err)
	}
}

func TestIndex_Search_PathPrefix(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "a-file", Text: "word", Drive: "disk", Path: "/a/x.md"},
		{ID: "a-deep", Text: "word", Drive: "disk", Path: "/a/b/c/y.md"},
		{ID: "ab", Text: "word", Drive: "disk", Path: "/ab/y.md"},
		{ID: "other-drive", Text: "word", Drive: "notes", Path: "/a/z.md"},
	}, nil, 1)
	tests := []struct {
		name    string
		f       Filter
		want    []string
		wantErr bool
	}{
		{"plain prefix spans drives", Filter{PathPrefixes: []string{"/a"}}, []string{"a-deep", "a-file", "other-drive"}, false},
		{"trailing slash", Filter{PathPrefixes: []string{"/a/"}}, []string{"a-deep", "a-file", "other-drive"}, false},
		{"sibling not matched", Filter{PathPrefixes: []string{"/ab"}}, []string{"ab"}, false},
		{"drive qualified", Filter{PathPrefixes: []string{"disk:/a"}}, []string{"a-deep", "a-file"}, false},
		{"plain with drive", Filter{PathPrefixes: []string{"/a"}, Drives: []string{"notes"}}, []string{"other-drive"}, false},
		{"deep dir", Filter{PathPrefixes: []string{"/a/b"}}, []string{"a-deep"}, false},
		{"exact item path", Filter{PathPrefixes: []string{"/a/x.md"}}, []string{"a-file"}, false},
		{"root", Filter{PathPrefixes: []string{"disk:/"}}, []string{"a-deep", "a-file", "ab"}, false},
		{"partial segment", Filter{PathPrefixes: []string{"/a/b/c/y"}}, nil, false},
		{"invalid", Filter{PathPrefixes: []string{"a"}}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := x.SearchBM25(context.Background(), "word", tc.f, 10)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidFilter) {
					t.Fatalf("err = %v, want ErrInvalidFilter", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ids(hits)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("hits = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIndex_SearchSubstring(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "hook", Text: "function App() { useEffect(() => {}, []) }"},
		{ID: "prose", Text: "The effect of the change was small."},
		{ID: "head", Text: "body text", Heading: "API > useEffectEvent"},
	}, nil, 1)
	tests := []struct {
		q    string
		want []string
	}{
		{"useEff", []string{"head", "hook"}},
		{"Eff", []string{"head", "hook", "prose"}},
		{"USEEFFECT", []string{"head", "hook"}},
		{"effectEvent", []string{"head"}},
		{"xyz", nil},
		{"us", nil},
		{"", nil},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			got := ids(mustSubstring(t, x, tc.q, Filter{}, 10))
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("SearchSubstring(%q) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func TestIndex_AppliedSeq_PersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if seq, err := x.AppliedSeq(); err != nil || seq != 0 {
		t.Fatalf("fresh AppliedSeq = %d, %v; want 0", seq, err)
	}
	mustApply(t, x, []Doc{{ID: "a", Text: "hello"}}, nil, 41)
	mustApply(t, x, nil, []string{"missing"}, 42)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := x.AppliedSeq(); !errors.Is(err, ErrClosed) {
		t.Fatalf("AppliedSeq after Close: err = %v, want ErrClosed", err)
	}
	x = mustOpen(t, dir)
	if seq, err := x.AppliedSeq(); err != nil || seq != 42 {
		t.Fatalf("AppliedSeq after reopen = %d, %v; want 42", seq, err)
	}
	if n, err := x.Count(); err != nil || n != 1 {
		t.Fatalf("Count after reopen = %d, %v; want 1", n, err)
	}
}

func TestOpen_RefusesMismatchedMappingVersion(t *testing.T) {
	dir := t.TempDir()
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.idx.SetInternal(keyMappingVersion, []byte("ctxd-lexical-v0")); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); !errors.Is(err, ErrMappingMismatch) {
		t.Fatalf("Open = %v, want ErrMappingMismatch", err)
	}
}

func TestIndex_Apply_RejectsEmptyID(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	if err := x.Apply([]Doc{{Text: "x"}}, nil, 1); !errors.Is(err, ErrInvalidDoc) {
		t.Fatalf("err = %v, want ErrInvalidDoc", err)
	}
}

func TestIndex_Apply_LargeBatch(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	docs := make([]Doc, 5000)
	for i := range docs {
		docs[i] = Doc{
			ID:    fmt.Sprintf("c%05d", i),
			Text:  fmt.Sprintf("passage number %d about topic%d and getValue%d", i, i%50, i),
			Drive: "disk", Path: fmt.Sprintf("/corpus/%d/%d.txt", i%10, i),
		}
	}
	mustApply(t, x, docs, nil, 7)
	if n, err := x.Count(); err != nil || n != 5000 {
		t.Fatalf("Count = %d, %v; want 5000", n, err)
	}
	if got := ids(mustBM25(t, x, "topic7", Filter{PathPrefixes: []string{"/corpus/7"}}, 200)); len(got) != 100 {
		t.Fatalf("topic7 in /corpus/7: %d hits, want 100", len(got))
	}
	if got := ids(mustSubstring(t, x, "getValue4999", Filter{}, 10)); !slices.Contains(got, "c04999") {
		t.Fatalf("substring getValue4999 = %v, want to contain c04999", got)
	}
}

func TestPathTerms(t *testing.T) {
	tests := []struct {
		drive, path string
		want        []string
	}{
		{"disk", "/notes/a/b.md", []string{"/", "/notes", "/notes/a", "/notes/a/b.md", "disk:/", "disk:/notes", "disk:/notes/a", "disk:/notes/a/b.md"}},
		{"", "/x", []string{"/", "/x"}},
		{"d", "/", []string{"/", "d:/"}},
		{"d", "", nil},
	}
	for _, tc := range tests {
		if got := pathTerms(tc.drive, tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("pathTerms(%q, %q) = %v, want %v", tc.drive, tc.path, got, tc.want)
		}
	}
}

func TestWordsAnalyzer_Analyze(t *testing.T) {
	type tok struct {
		term       string
		start, end int
	}
	tests := []struct {
		name string
		in   string
		want []tok
	}{
		{"camel case lowercased", "useEff", []tok{{"useeff", 0, 6}}},
		{"words split on punctuation", "a.bcd(x_yz)", []tok{{"bcd", 2, 5}, {"x_yz", 6, 10}}},
		{"repeats dropped", "abc ABC abcd", []tok{{"abc", 0, 3}, {"abcd", 8, 12}}},
		{"non-ASCII", "Ärger über", []tok{{"ärger", 0, 6}, {"über", 7, 12}}},
		{"short words only", "ab c de", nil},
		{"long words left out", "abc " + strings.Repeat("x", maxTermBytes+1) + " " + strings.Repeat("y", maxTermBytes), []tok{{"abc", 0, 3}, {strings.Repeat("y", maxTermBytes), maxTermBytes + 6, 2*maxTermBytes + 6}}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []tok
			for _, tk := range (wordsAnalyzer{}).Analyze([]byte(tc.in)) {
				got = append(got, tok{string(tk.Term), tk.Start, tk.End})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Analyze(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzWordsAnalyzer(f *testing.F) {
	for _, s := range []string{"useEffect", "Ärger ß İ", "a.b_c", "\xff\xfeabc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seen := map[string]bool{}
		for _, tk := range (wordsAnalyzer{}).Analyze([]byte(s)) {
			if utf8.RuneCount(tk.Term) < minSubstringRunes {
				t.Fatalf("term %q is shorter than %d runes", tk.Term, minSubstringRunes)
			}
			if seen[string(tk.Term)] {
				t.Fatalf("term %q emitted twice", tk.Term)
			}
			seen[string(tk.Term)] = true
			if tk.Start < 0 || tk.End > len(s) || tk.Start >= tk.End {
				t.Fatalf("bad span [%d,%d) for input of %d bytes", tk.Start, tk.End, len(s))
			}
		}
	})
}

func TestIndex_ConcurrentApplyAndSearch(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	done := make(chan error, 1)
	go func() {
		for i := range 20 {
			docs := []Doc{{ID: fmt.Sprintf("d%d", i), Text: "concurrent writes and reads", Drive: "disk", Path: "/c/x"}}
			if err := x.Apply(docs, nil, uint64(i+1)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range 50 {
		if _, err := x.SearchBM25(context.Background(), "concurrent reads", Filter{Drives: []string{"disk"}}, 5); err != nil {
			t.Fatal(err)
		}
		if _, err := x.SearchSubstring(context.Background(), "current", Filter{}, 5); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if seq, err := x.AppliedSeq(); err != nil || seq != 20 {
		t.Fatalf("AppliedSeq = %d, %v; want 20", seq, err)
	}
}

// TestIndex_Search_FilterWithEmptyQuery: a query that analyses to nothing
// (stop words only) or matches nothing must not degrade to "everything in
// the filter".
func TestIndex_Search_FilterWithEmptyQuery(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{{ID: "a", Text: "the cat sat", Drive: "disk", Path: "/p/a"}}, nil, 1)
	f := Filter{Drives: []string{"disk"}}
	for _, q := range []string{"the", "and of", "zzzz", "!!!"} {
		if got := ids(mustBM25(t, x, q, f, 10)); len(got) != 0 {
			t.Errorf("bm25 %q with filter = %v, want none", q, got)
		}
	}
	for _, q := range []string{"zzzz", "!!!", "ca"} {
		if got := ids(mustSubstring(t, x, q, f, 10)); len(got) != 0 {
			t.Errorf("substring %q with filter = %v, want none", q, got)
		}
	}
}

func TestStopWordStream(t *testing.T) {
	tests := []struct {
		name  string
		texts []string
		want  []string
	}{
		{"stop words once, in order, case folded", []string{"The theory of THE end and the rest"}, []string{"the", "and"}},
		{"split like query words", []string{"what\u2019s up—with_that (these)"}, []string{"what", "these"}},
		{"text and heading together", []string{"zebra the", "what does the"}, []string{"the", "what", "does"}},
		{"non-ASCII case folding", []string{"\u0130TS"}, []string{"its"}},
		{"short and long words", []string{"a an themselvesx"}, nil},
		{"none", []string{"", "zebra"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, tk := range stopWordStream(tc.texts...) {
				got = append(got, string(tk.Term))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("stopWordStream(%q) = %q, want %q", tc.texts, got, tc.want)
			}
		})
	}
}

// stopWordStream finds the stop words wordsAnalyzer would split a text
// into, the way a substring query is split.
func FuzzStopWordStream(f *testing.F) {
	for _, s := range []string{"The end of it", "\u0130TS what\u2019s", "\xffthe\xfe", "themselves_ themselves"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want []string
		for _, tk := range (wordsAnalyzer{}).Analyze([]byte(s)) {
			if _, ok := englishStopWords[string(tk.Term)]; ok {
				want = append(want, string(tk.Term))
			}
		}
		var got []string
		for i, tk := range stopWordStream(s) {
			got = append(got, string(tk.Term))
			if tk.Position != i+1 || tk.Start < 0 || tk.End > len(s) || tk.Start >= tk.End {
				t.Fatalf("token %d %q: position %d, span [%d,%d) of %d bytes", i, tk.Term, tk.Position, tk.Start, tk.End, len(s))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("stopWordStream(%q) = %q, want %q", s, got, want)
		}
	})
}
