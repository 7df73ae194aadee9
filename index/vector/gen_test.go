package vector

import (
	"math"
	"slices"
	"testing"
)

// rng is a seeded xorshift64* generator: fast enough to fill a 1M×384 matrix.
type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = rng(x)
	return x * 2685821657736338717
}

// float returns a uniform float32 in [-1, 1).
func (r *rng) float() float32 { return float32(r.next()>>40)/(1<<23) - 1 }

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// fillRandom fills v with uniform noise and normalises it.
func (r *rng) fillRandom(v []float32) {
	for i := range v {
		v[i] = r.float()
	}
	normalize(v)
}

func normalize(v []float32) {
	var ss float64
	for _, f := range v {
		ss += float64(f) * float64(f)
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
}

// clusters generates vectors as a random unit centre plus uniform noise of
// norm ≈ noise: closer to real embeddings than uniform random unit vectors.
type clusters struct {
	r       rng
	dims    int
	noise   float32
	centres [][]float32
}

func newClusters(seed uint64, dims, n int, noise float32) *clusters {
	c := &clusters{r: rng(seed), dims: dims, noise: noise}
	for range n {
		v := make([]float32, dims)
		c.r.fillRandom(v)
		c.centres = append(c.centres, v)
	}
	return c
}

// fill writes a normalised point of a random cluster into v.
func (c *clusters) fill(v []float32) {
	ctr := c.centres[c.r.intn(len(c.centres))]
	// Uniform [-a, a) has std a/√3; a noise vector of norm noise needs a = noise·√3/√dims.
	a := c.noise * float32(math.Sqrt(3/float64(c.dims)))
	for i := range v {
		v[i] = ctr[i] + a*c.r.float()
	}
	normalize(v)
}

// refHit is a brute-force result computed in float64.
type refHit struct {
	id    uint64
	score float64
}

// bruteForce ranks every vector of model allowed by allow against q in float64.
func bruteForce(model map[uint64][]float32, q []float32, k int, allow func(uint64) bool) []refHit {
	qn := slices.Clone(q)
	normalize(qn)
	var all []refHit
	for id, v := range model {
		if allow != nil && !allow(id) {
			continue
		}
		var dot, ss float64
		for i := range v {
			dot += float64(v[i]) * float64(qn[i])
			ss += float64(v[i]) * float64(v[i])
		}
		all = append(all, refHit{id, dot / math.Sqrt(ss)})
	}
	slices.SortFunc(all, func(a, b refHit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		if a.id < b.id {
			return -1
		}
		return 1
	})
	return all[:min(k, len(all))]
}

// checkHits fails unless got matches ref up to float32 rounding: same length,
// each score within tol of the reference, and each id either the reference's
// or one whose reference score ties it within tol.
func checkHits(t *testing.T, got []Hit, ref []refHit, model map[uint64][]float32, q []float32) {
	t.Helper()
	const tol = 1e-5
	if len(got) != len(ref) {
		t.Fatalf("got %d hits, want %d", len(got), len(ref))
	}
	qn := slices.Clone(q)
	normalize(qn)
	for i, h := range got {
		v, ok := model[h.ID]
		if !ok {
			t.Fatalf("hit %d: id %d is not in the index", i, h.ID)
		}
		var dot float64
		for j := range v {
			dot += float64(v[j]) * float64(qn[j])
		}
		if math.Abs(dot-float64(h.Score)) > tol {
			t.Fatalf("hit %d: id %d score %v, float64 reference %v", i, h.ID, h.Score, dot)
		}
		if h.ID != ref[i].id && math.Abs(ref[i].score-dot) > tol {
			t.Fatalf("hit %d: id %d (%.6f), want id %d (%.6f)", i, h.ID, dot, ref[i].id, ref[i].score)
		}
		if i > 0 && got[i-1].Score < h.Score {
			t.Fatalf("hit %d: scores not descending: %v then %v", i, got[i-1].Score, h.Score)
		}
	}
}

// recallAt returns |exact ∩ approx| / |exact|.
func recallAt(exact, approx []Hit) float64 {
	if len(exact) == 0 {
		return 1
	}
	in := make(map[uint64]bool, len(exact))
	for _, h := range exact {
		in[h.ID] = true
	}
	n := 0
	for _, h := range approx {
		if in[h.ID] {
			n++
		}
	}
	return float64(n) / float64(len(exact))
}
