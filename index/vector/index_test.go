package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// mustBuild upserts n random vectors with ids 1..n into x and returns them by id.
func mustBuild(t testing.TB, x *Index, r *rng, n int) map[uint64][]float32 {
	t.Helper()
	model := make(map[uint64][]float32, n)
	for i := range n {
		v := make([]float32, x.Dims())
		r.fillRandom(v)
		id := uint64(i + 1)
		if err := x.Upsert(id, v); err != nil {
			t.Fatal(err)
		}
		model[id] = v
	}
	return model
}

func TestIndex_Search_matchesBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		dims   int
		shards int
	}{
		{"small/1shard", 500, 16, 1},
		{"n=40000/3shards", 40000, 48, 3},
		{"n=40000/odd-dims", 40000, 37, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rng(42)
			x := NewWithOptions(tc.dims, Options{Shards: tc.shards})
			model := mustBuild(t, x, &r, tc.n)
			if x.Len() != tc.n {
				t.Fatalf("Len = %d, want %d", x.Len(), tc.n)
			}
			for _, k := range []int{1, 10, 100} {
				for range 5 {
					q := make([]float32, tc.dims)
					for i := range q {
						q[i] = r.float() * 3 // unnormalised on purpose
					}
					got, err := x.Search(q, k, nil)
					if err != nil {
						t.Fatal(err)
					}
					checkHits(t, got, bruteForce(model, q, k, nil), model, q)
				}
			}
		})
	}
}

func TestIndex_Search_kLargerThanLen(t *testing.T) {
	r := rng(1)
	x := New(8)
	model := mustBuild(t, x, &r, 5)
	q := make([]float32, 8)
	r.fillRandom(q)
	got, err := x.Search(q, 50, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkHits(t, got, bruteForce(model, q, 50, nil), model, q)
	if got, _ := New(8).Search(q, 10, nil); len(got) != 0 {
		t.Fatalf("empty index returned %v", got)
	}
	if got, _ := x.Search(q, 0, nil); len(got) != 0 {
		t.Fatalf("k=0 returned %v", got)
	}
}

func TestIndex_UpsertDelete(t *testing.T) {
	for _, quant := range []bool{false, true} {
		t.Run(fmt.Sprintf("quantize=%v", quant), func(t *testing.T) {
			const dims, n = 24, 3000
			r := rng(7)
			x := NewWithOptions(dims, Options{Quantize: quant, Rescore: 1000})
			model := mustBuild(t, x, &r, n)

			// Replace a third, delete a third (some twice), add new ids.
			deleted := map[uint64]bool{}
			for id := uint64(1); id <= n; id++ {
				switch id % 3 {
				case 0:
					v := make([]float32, dims)
					r.fillRandom(v)
					if err := x.Upsert(id, v); err != nil {
						t.Fatal(err)
					}
					model[id] = v
				case 1:
					if !x.Delete(id) {
						t.Fatalf("Delete(%d) = false, want true", id)
					}
					if x.Delete(id) {
						t.Fatalf("second Delete(%d) = true", id)
					}
					delete(model, id)
					deleted[id] = true
				}
			}
			for id := uint64(n + 1); id <= n+100; id++ {
				v := make([]float32, dims)
				r.fillRandom(v)
				if err := x.Upsert(id, v); err != nil {
					t.Fatal(err)
				}
				model[id] = v
			}
			if x.Len() != len(model) {
				t.Fatalf("Len = %d, want %d", x.Len(), len(model))
			}
			if x.Contains(1) || !x.Contains(3) {
				t.Fatal("Contains disagrees with the deletes")
			}
			for range 10 {
				q := make([]float32, dims)
				r.fillRandom(q)
				// k = everything: a deleted id must never come back.
				all, err := x.Search(q, n*2, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range all {
					if deleted[h.ID] {
						t.Fatalf("deleted id %d returned", h.ID)
					}
				}
				if len(all) != len(model) {
					t.Fatalf("k=all returned %d hits, want %d", len(all), len(model))
				}
				got, err := x.Search(q, 10, nil)
				if err != nil {
					t.Fatal(err)
				}
				// Rescore 1000 makes the quantized search exact at this size.
				checkHits(t, got, bruteForce(model, q, 10, nil), model, q)
			}
			// Delete everything.
			for id := range model {
				x.Delete(id)
			}
			if x.Len() != 0 {
				t.Fatalf("Len = %d after deleting everything", x.Len())
			}
		})
	}
}

// idSet is a Filter admitting a fixed set of ids.
type idSet map[uint64]bool

func (s idSet) Allowed(id uint64) bool { return s[id] }

func TestIndex_Search_filterFindsFarMatches(t *testing.T) {
	const dims, n = 384, 100000
	if testing.Short() {
		t.Skip("100k×384 vectors")
	}
	r := rng(99)
	exact := New(dims)
	quant := NewQuantized(dims, 0)
	model := make(map[uint64][]float32, n)
	for i := range n {
		v := make([]float32, dims)
		r.fillRandom(v)
		id := uint64(i + 1)
		if err := exact.Upsert(id, v); err != nil {
			t.Fatal(err)
		}
		if err := quant.Upsert(id, v); err != nil {
			t.Fatal(err)
		}
		model[id] = v
	}
	q := make([]float32, dims)
	r.fillRandom(q)
	// The three ids least like the query: ranked ~100,000th globally.
	ranked := bruteForce(model, q, n, nil)
	far := ranked[n-3:]
	allow := idSet{far[0].id: true, far[1].id: true, far[2].id: true}
	for _, tc := range []struct {
		name string
		x    *Index
	}{{"exact", exact}, {"quantized", quant}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.x.Search(q, 10, allow)
			if err != nil {
				t.Fatal(err)
			}
			want := []uint64{far[0].id, far[1].id, far[2].id}
			ids := make([]uint64, len(got))
			for i, h := range got {
				ids[i] = h.ID
			}
			if !slices.Equal(ids, want) {
				t.Fatalf("filtered search = %v, want %v (scores %v)", ids, want, far)
			}
			checkHits(t, got, bruteForce(model, q, 10, allow.Allowed), model, q)
		})
	}
}

func TestIndex_concurrent(t *testing.T) {
	const dims, n = 32, 20000
	for _, quant := range []bool{false, true} {
		t.Run(fmt.Sprintf("quantize=%v", quant), func(t *testing.T) {
			r := rng(5)
			x := NewWithOptions(dims, Options{Quantize: quant, Shards: 3})
			mustBuild(t, x, &r, n)
			var stop atomic.Bool
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for s := range 4 {
				wg.Go(func() {
					r := rng(100 + s)
					q := make([]float32, dims)
					even := FilterFunc(func(id uint64) bool { return id%2 == 0 })
					for !stop.Load() {
						r.fillRandom(q)
						var allow Filter
						if s%2 == 1 {
							allow = even
						}
						hits, err := x.Search(q, 10, allow)
						if err != nil {
							errs <- err
							return
						}
						if len(hits) != 10 {
							errs <- fmt.Errorf("got %d hits", len(hits))
							return
						}
						for i, h := range hits {
							if allow != nil && h.ID%2 != 0 || i > 0 && hits[i-1].Score < h.Score {
								errs <- fmt.Errorf("bad hits %v", hits)
								return
							}
						}
					}
				})
			}
			v := make([]float32, dims)
			for i := range 1000 {
				id := uint64(r.intn(2*n) + 1)
				if i%2 == 0 {
					x.Delete(id)
				} else {
					r.fillRandom(v)
					if err := x.Upsert(id, v); err != nil {
						t.Fatal(err)
					}
				}
				_ = x.Len()
			}
			stop.Store(true)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

func TestIndex_quantizedRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("50k×384 vectors")
	}
	const dims, n, queries, k = 384, 50000, 200, 10
	for _, tc := range []struct {
		name   string
		noise  float32 // noise norm relative to the unit centre; large noise ≈ uniform random data
		assert bool
	}{
		{"clustered/noise=0.75", 0.75, true},
		{"clustered/noise=1.5", 1.5, false},
		{"near-uniform/noise=20", 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRecall(t, newClusters(2024, dims, 200, tc.noise), n, queries, k, tc.assert)
		})
	}
}

func checkRecall(t *testing.T, c *clusters, n, queries, k int, assert bool) {
	dims := c.dims
	x := NewQuantized(dims, 0)
	v := make([]float32, dims)
	for i := range n {
		c.fill(v)
		if err := x.Upsert(uint64(i+1), v); err != nil {
			t.Fatal(err)
		}
	}
	qs := make([][]float32, queries)
	for i := range qs {
		qs[i] = make([]float32, dims)
		c.fill(qs[i])
	}
	for _, rescore := range []int{1, 2, 4, DefaultRescore} {
		var sum float64
		for _, q := range qs {
			exact, err := x.SearchExact(q, k, nil)
			if err != nil {
				t.Fatal(err)
			}
			approx, err := x.search(context.Background(), q, k, nil, rescore)
			if err != nil {
				t.Fatal(err)
			}
			sum += recallAt(exact, approx)
		}
		recall := sum / float64(queries)
		t.Logf("n=%d dims=%d: quantized recall@%d with rescore %d = %.4f", n, dims, k, rescore, recall)
		if assert && rescore == DefaultRescore && recall < 0.98 {
			t.Errorf("recall@%d = %.4f with the default rescore, want >= 0.98", k, recall)
		}
	}
}

func TestIndex_errors(t *testing.T) {
	x := New(4)
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"upsert short", x.Upsert(1, []float32{1, 2, 3}), ErrDims},
		{"upsert long", x.Upsert(1, []float32{1, 2, 3, 4, 5}), ErrDims},
		{"upsert zero", x.Upsert(1, make([]float32, 4)), ErrInvalid},
		{"upsert NaN", x.Upsert(1, []float32{float32(math.NaN()), 0, 0, 1}), ErrInvalid},
		{"upsert inf", x.Upsert(1, []float32{float32(math.Inf(1)), 0, 0, 1}), ErrInvalid},
		{"search short", second(x.Search([]float32{1}, 1, nil)), ErrDims},
		{"search zero", second(x.Search(make([]float32, 4), 1, nil)), ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, tc.want) {
				t.Fatalf("err = %v, want %v", tc.err, tc.want)
			}
		})
	}
	if x.Len() != 0 {
		t.Fatalf("failed upserts left Len = %d", x.Len())
	}
}

func second[T any](_ T, err error) error { return err }

func TestDotInt8(t *testing.T) {
	r := rng(3)
	for _, n := range []int{32, 64, 384, 416, 1024} {
		a, b := make([]int8, n), make([]int8, n)
		for trial := range 20 {
			for i := range a {
				a[i], b[i] = int8(r.next()), int8(r.next())
				if trial == 0 { // extremes: -128·-128 products must not overflow
					a[i], b[i] = -128, -128
				}
			}
			if got, want := dotInt8(a, b), dotInt8Go(a, b); got != want {
				t.Fatalf("n=%d: dotInt8 = %d, want %d", n, got, want)
			}
		}
	}
}

func TestQuantize(t *testing.T) {
	r := rng(11)
	v := make([]float32, 100)
	r.fillRandom(v)
	q := make([]int8, 128)
	for i := range q {
		q[i] = 5 // the padding must be cleared
	}
	scale := quantize(q, v)
	for i, f := range v {
		if d := math.Abs(float64(f - float32(q[i])*scale)); d > float64(scale)/2+1e-7 {
			t.Fatalf("v[%d] = %v dequantised to %v", i, f, float32(q[i])*scale)
		}
	}
	for i := 100; i < 128; i++ {
		if q[i] != 0 {
			t.Fatalf("padding q[%d] = %d", i, q[i])
		}
	}
}

func TestIndex_LoadRestoresWhatExportShows(t *testing.T) {
	const dims = 40
	r := rng(7)
	src := NewQuantized(dims, 0)
	mustBuild(t, src, &r, 500)
	var m Matrices
	if err := src.Export(func(sm Matrices) error {
		m = Matrices{IDs: slices.Clone(sm.IDs), Data: slices.Clone(sm.Data), Q: slices.Clone(sm.Q), QScale: slices.Clone(sm.QScale), QStride: sm.QStride}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	dst := NewQuantized(dims, 0)
	if err := dst.Load(m); err != nil {
		t.Fatal(err)
	}
	// Without the int8 copy, Load computes it.
	recomputed := NewQuantized(dims, 0)
	if err := recomputed.Load(Matrices{IDs: slices.Clone(m.IDs), Data: slices.Clone(m.Data)}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		q := make([]float32, dims)
		r.fillRandom(q)
		want, err := src.Search(q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []*Index{dst, recomputed} {
			got, err := x.Search(q, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("after Load: %v, want %v", got, want)
			}
		}
	}
	if err := dst.Load(Matrices{IDs: m.IDs[:2], Data: m.Data[:dims]}); !errors.Is(err, ErrDims) {
		t.Fatalf("short data: %v", err)
	}
	if err := dst.Load(Matrices{IDs: []uint64{1, 1}, Data: m.Data[:2*dims]}); err == nil {
		t.Fatal("duplicate ids accepted")
	}
}

// mapSource is an ExactSource over a map, as the store is for the engine.
type mapSource map[uint64][]float32

func (m mapSource) Vectors(ids []uint64) ([][]float32, error) {
	out := make([][]float32, len(ids))
	for i, id := range ids {
		out[i] = m[id]
	}
	return out, nil
}

func TestIndex_ExactSourceMatchesFloatMatrix(t *testing.T) {
	const dims = 48
	r := rng(11)
	withFloats := NewQuantized(dims, 0)
	model := mustBuild(t, withFloats, &r, 800)
	src := mapSource{}
	int8Only := NewWithOptions(dims, Options{Exact: src})
	for id, v := range model {
		// The source may hold any scale; the index normalises.
		src[id] = append([]float32(nil), v...)
		for i := range src[id] {
			src[id][i] *= 3
		}
		if err := int8Only.Upsert(id, v); err != nil {
			t.Fatal(err)
		}
	}
	for id := uint64(1); id <= 100; id++ {
		withFloats.Delete(id)
		int8Only.Delete(id)
	}
	for range 30 {
		q := make([]float32, dims)
		r.fillRandom(q)
		want, err := withFloats.Search(q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := int8Only.Search(q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d hits, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || math.Abs(float64(got[i].Score-want[i].Score)) > 1e-5 {
				t.Fatalf("hit %d = %+v, want %+v", i, got[i], want[i])
			}
		}
	}
	if _, err := int8Only.SearchExact(make([]float32, dims), 1, nil); !errors.Is(err, ErrNoFloat) {
		t.Fatalf("SearchExact without floats: %v", err)
	}
}
