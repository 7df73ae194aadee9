package search

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ctxd/ctxd/vfs"
)

// TestEngine_PriorsReorderByImportanceAndUsage: a slightly weaker match
// overtakes a stronger one once its item's importance or usage is weighed,
// by exactly the documented factor, in both groupings; with no signal on
// any item a prior changes no order.
func TestEngine_PriorsReorderByImportanceAndUsage(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/plain.md", "heron")
	important := e.writeImportant("notes:/important.md", "heron wading in the marsh", 1)
	used := e.write("notes:/used.md", "heron wading in the marsh at dawn")
	e.write("notes:/other.md", "gulls")
	e.sync()
	if err := e.store.RecordRetrievals(context.Background(), slices.Repeat([]string{used.ID}, usageHalf), time.Now()); err != nil {
		t.Fatal(err)
	}
	q := []Query{{Text: "heron"}}
	for _, group := range []GroupBy{GroupChunk, GroupItem} {
		base := e.search(Request{Queries: q, Mode: BM25, GroupBy: group})
		if want := []string{"notes:/plain.md", "notes:/important.md", "notes:/used.md"}; !slices.Equal(refs(base), want) {
			t.Fatalf("group %d, no priors: %v, want %v", group, refs(base), want)
		}
		score := map[string]float64{}
		for _, r := range base.Results {
			score[r.Path] = r.Score
		}
		for _, tc := range []struct {
			priors Priors
			first  string
			want   map[string]float64 // the factor each result's score is multiplied by
		}{
			{Priors{Importance: 1}, "/important.md", map[string]float64{"/plain.md": 0.5, "/important.md": 1, "/used.md": 0.5}},
			{Priors{Usage: 1}, "/used.md", map[string]float64{"/plain.md": 0.5, "/important.md": 0.5, "/used.md": 0.75}},
			{Priors{Importance: 0.5, Usage: 0.5}, "/important.md", map[string]float64{"/plain.md": 0.5, "/important.md": 0.75, "/used.md": 0.625}},
		} {
			got := e.search(Request{Queries: q, Mode: BM25, GroupBy: group, Priors: tc.priors})
			if len(got.Results) != 3 || got.Results[0].Path != tc.first {
				t.Errorf("group %d, %+v: %v, want %s first", group, tc.priors, refs(got), tc.first)
			}
			for _, r := range got.Results {
				if want := score[r.Path] * tc.want[r.Path]; math.Abs(r.Score-want) > 1e-12 {
					t.Errorf("group %d, %+v: %s scores %v, want %v", group, tc.priors, r.Path, r.Score, want)
				}
			}
		}
	}
	if important.Importance != 1 {
		t.Fatalf("importance not stored: %v", important.Importance)
	}

}

// TestEngine_PriorWithoutSignalKeepsOrder: where no item has importance or
// usage, weighing them scales every score alike.
func TestEngine_PriorWithoutSignalKeepsOrder(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/a.md", "heron")
	e.write("notes:/b.md", "heron wading")
	e.write("notes:/c.md", "a heron among many other birds")
	e.sync()
	q := []Query{{Text: "heron wading"}}
	base := e.search(Request{Queries: q, Mode: BM25})
	got := e.search(Request{Queries: q, Mode: BM25, Priors: Priors{Importance: 1, Usage: 1}})
	if len(base.Results) != 3 || !slices.Equal(refs(got), refs(base)) {
		t.Fatalf("priors without signal: %v, want %v", refs(got), refs(base))
	}
	for i, r := range got.Results {
		if want := base.Results[i].Score / 3; math.Abs(r.Score-want) > 1e-12 {
			t.Errorf("%s scores %v, want %v", r.Path, r.Score, want)
		}
	}
}

func TestEngine_PriorWeightsOutOfRange(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/a.md", "heron")
	e.sync()
	for _, bad := range []Priors{{Importance: -0.1}, {Usage: 1.5}, {Importance: math.NaN()}, {Usage: math.Inf(1)}} {
		_, err := e.eng.Search(context.Background(), Request{Queries: []Query{{Text: "heron"}}, Priors: bad})
		if !errors.Is(err, ErrPriorWeight) || !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("priors %+v: err = %v, want ErrPriorWeight", bad, err)
		}
	}
}

// writeImportant stores text at ref with an importance.
func (e *env) writeImportant(ref, text string, importance float64) vfs.Item {
	e.t.Helper()
	r, err := vfs.ParseRef(ref)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.store.Write(context.Background(), vfs.WriteParams{Ref: r, Content: []byte(text), IsText: true, Importance: importance})
	if err != nil {
		e.t.Fatalf("write %s: %v", ref, err)
	}
	return res.Item
}
