package search

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/vfs"
)

// similarRefs lists the refs of a FindSimilar response in order.
func similarRefs(r SimilarResponse) []string {
	var out []string
	for _, s := range r.Items {
		out = append(out, s.Drive+":"+s.Path)
	}
	return out
}

func (e *env) similar(req SimilarRequest) SimilarResponse {
	e.t.Helper()
	r, err := e.eng.FindSimilar(context.Background(), req)
	if err != nil {
		e.t.Fatalf("find similar %+v: %v", req, err)
	}
	return r
}

// TestEngine_FindSimilar: a two-chunk target, an exact copy, an item
// holding only one of its chunks, one close to a chunk (cosine 0.95) and
// one unrelated. Similarity is the best pair, coverage the share of the
// target's chunks matched, and the target itself never comes back.
func TestEngine_FindSimilar(t *testing.T) {
	e := newEnv(t)
	target := e.write("notes:/target.md", "first part\n\nsecond part", unit(0, 0), unit(1, 0))
	e.write("notes:/copy.md", "first part\n\nsecond part again", unit(0, 0), unit(1, 0))
	e.write("notes:/half.md", "first part\n\nsomething else", unit(0, 0), unit(5, 0))
	e.write("notes:/close.md", "roughly the first part", angled(math.Acos(0.95)))
	e.write("other:/unrelated.md", "nothing alike", unit(3, 0))
	e.sync()

	r := e.similar(SimilarRequest{ItemID: target.ID})
	if got, want := similarRefs(r), []string{"notes:/copy.md", "notes:/half.md", "notes:/close.md"}; !slices.Equal(got, want) {
		t.Fatalf("items %v, want %v", got, want)
	}
	if r.TargetChunks != 2 {
		t.Errorf("target chunks %d, want 2", r.TargetChunks)
	}
	for i, want := range []struct{ sim, cov float64 }{{1, 1}, {1, 0.5}, {0.95, 0.5}} {
		s := r.Items[i]
		if math.Abs(s.Similarity-want.sim) > 1e-4 || s.Coverage != want.cov {
			t.Errorf("%s: similarity %v coverage %v, want %v and %v", s.Path, s.Similarity, s.Coverage, want.sim, want.cov)
		}
		if s.ItemID == target.ID || s.Title == "" || s.Snippet == "" {
			t.Errorf("%+v: the target itself, or without title or snippet", s)
		}
	}
	if got := r.Items[1]; got.ChunkID != ChunkID(got.ItemID, 0) || got.Snippet != "first part" {
		t.Errorf("half.md's best pair is %s %q, want its first chunk", got.ChunkID, got.Snippet)
	}

	// A stricter threshold drops the near one; a limit keeps the best.
	if got := similarRefs(e.similar(SimilarRequest{ItemID: target.ID, Threshold: 0.99})); !slices.Equal(got, []string{"notes:/copy.md", "notes:/half.md"}) {
		t.Errorf("threshold 0.99: %v", got)
	}
	if got := similarRefs(e.similar(SimilarRequest{ItemID: target.ID, Limit: 1})); !slices.Equal(got, []string{"notes:/copy.md"}) {
		t.Errorf("limit 1: %v", got)
	}
	// A threshold of 1 still finds identical vectors.
	if got := similarRefs(e.similar(SimilarRequest{ItemID: target.ID, Threshold: 1})); !slices.Equal(got, []string{"notes:/copy.md", "notes:/half.md"}) {
		t.Errorf("threshold 1: %v", got)
	}

	// A text's vectors: nothing is excluded, the target is found too.
	r = e.similar(SimilarRequest{Vectors: [][]float32{unit(3, 0)}})
	if got := similarRefs(r); !slices.Equal(got, []string{"other:/unrelated.md"}) || r.Items[0].Coverage != 1 {
		t.Errorf("vector target: %v %+v", got, r.Items)
	}
	r = e.similar(SimilarRequest{Vectors: [][]float32{unit(1, 0)}})
	if got := slices.Sorted(slices.Values(similarRefs(r))); !slices.Equal(got, []string{"notes:/copy.md", "notes:/target.md"}) {
		t.Errorf("vector target of the second part: %v", got)
	}

	// Filters and the caller's access bound what is compared.
	if got := similarRefs(e.similar(SimilarRequest{Vectors: [][]float32{unit(3, 0)}, Within: []string{"notes:/"}})); got != nil {
		t.Errorf("within notes:/ found %v", got)
	}
	if got := similarRefs(e.similar(SimilarRequest{ItemID: target.ID, Filter: lexical.Filter{PathPrefixes: []string{"notes:/half.md"}}})); !slices.Equal(got, []string{"notes:/half.md"}) {
		t.Errorf("path filter: %v", got)
	}
}

func TestEngine_FindSimilarRefusals(t *testing.T) {
	e := newEnv(t)
	pending := e.write("notes:/pending.md", "no vectors yet\n\nnor here")
	empty := e.write("notes:/empty.md", "")
	e.sync()
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		req  SimilarRequest
		want error
	}{
		{"negative threshold", SimilarRequest{Vectors: [][]float32{unit(0, 0)}, Threshold: -0.1}, ErrThreshold},
		{"threshold over 1", SimilarRequest{Vectors: [][]float32{unit(0, 0)}, Threshold: 1.5}, ErrThreshold},
		{"NaN threshold", SimilarRequest{Vectors: [][]float32{unit(0, 0)}, Threshold: math.NaN()}, ErrThreshold},
		{"no chunks", SimilarRequest{}, ErrNoChunks},
		{"too many chunks", SimilarRequest{Vectors: slices.Repeat([][]float32{unit(0, 0)}, MaxSimilarChunks+1)}, ErrTooManyChunks},
		{"wrong dimensions", SimilarRequest{Vectors: [][]float32{{1, 2}}}, ErrInvalidQuery},
		{"not embedded", SimilarRequest{ItemID: pending.ID}, ErrNotEmbedded},
		{"empty item", SimilarRequest{ItemID: empty.ID}, ErrNoChunks},
		{"negative limit", SimilarRequest{Vectors: [][]float32{unit(0, 0)}, Limit: -1}, ErrInvalidQuery},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.eng.FindSimilar(ctx, tt.req)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
	_, err := e.eng.FindSimilar(ctx, SimilarRequest{Vectors: [][]float32{unit(0, 0)}, Limit: DefaultLimits().MaxLimit + 1})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitResults {
		t.Errorf("limit over the maximum: %v", err)
	}

	// Without a model nothing can be compared.
	e.close()
	e.open(false)
	e.sync()
	for _, req := range []SimilarRequest{{Vectors: [][]float32{unit(0, 0)}}, {ItemID: pending.ID}} {
		if _, err := e.eng.FindSimilar(ctx, req); !errors.Is(err, ErrNoModel) {
			t.Errorf("no model, %+v: %v", req, err)
		}
	}
}

// TestEngine_FindSimilarItemWaitingForChunker: an item written before any
// chunker is installed has no chunks yet; it is not embedded, not empty.
func TestEngine_FindSimilarItemWaitingForChunker(t *testing.T) {
	dir := t.TempDir()
	s, err := vfs.Open(filepath.Join(dir, "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	w, err := s.Write(ctx, vfs.WriteParams{Ref: vfs.Ref{Drive: "notes", Path: "/a.md"}, Content: []byte("some text"), IsText: true})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := Open(s, Options{Dir: filepath.Join(dir, "index")})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	eng.SetModel(testModel, testDims)
	for deadline := time.Now().Add(30 * time.Second); eng.State().Model != testModel; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the engine did not take the model")
		}
	}
	if _, err := eng.FindSimilar(ctx, SimilarRequest{ItemID: w.Item.ID}); !errors.Is(err, ErrNotEmbedded) {
		t.Fatalf("item waiting for a chunker: %v", err)
	}
}

func TestCovers(t *testing.T) {
	a, b, c := unit(0, 0), unit(1, 0), angled(0.3) // cos(a, c) = 0.955
	for _, tc := range []struct {
		name               string
		targets, candidate [][]float32
		threshold          float64
		want               bool
	}{
		{"exact", [][]float32{a, b}, [][]float32{b, a}, 0.9, true},
		{"near", [][]float32{c}, [][]float32{a}, 0.9, true},
		{"near, under a stricter threshold", [][]float32{c}, [][]float32{a}, 0.96, false},
		{"one target chunk unmatched", [][]float32{a, b}, [][]float32{a, c}, 0.9, false},
		{"no targets", nil, [][]float32{a}, 0.9, false},
		{"other dimensions", [][]float32{a}, [][]float32{a[:4]}, 0.9, false},
	} {
		if got := Covers(tc.targets, tc.candidate, tc.threshold); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
