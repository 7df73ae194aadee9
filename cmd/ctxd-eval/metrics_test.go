package main

import (
	"math"
	"slices"
	"testing"
)

// The expected values are computed by hand from the definitions; log2(3) is
// written out where it appears so the arithmetic can be checked.

const eps = 1e-12

// misses returns n distinct ids that no test judges.
func misses(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "miss" + string(rune('a'+i))
	}
	return out
}

func TestNDCG(t *testing.T) {
	tests := []struct {
		name   string
		ranked []string
		grades map[string]int
		k      int
		want   float64
	}{
		{
			// DCG = 0 + 1/log2(3) + 3/log2(4); IDCG = 3 + 2/log2(3) + 1/log2(4).
			// The judged non-relevant d (grade 0) adds nothing.
			name:   "graded",
			ranked: []string{"d", "c", "a", "x"},
			grades: map[string]int{"a": 3, "b": 2, "c": 1, "d": 0},
			k:      10,
			want:   (1/math.Log2(3) + 3.0/2) / (3 + 2/math.Log2(3) + 1.0/2), // 0.447499501061509
		},
		{
			name:   "ideal ordering",
			ranked: []string{"a", "b", "c", "x"},
			grades: map[string]int{"a": 3, "b": 2, "c": 1},
			k:      10,
			want:   1,
		},
		{
			name:   "ideal ordering with tied grades swapped",
			ranked: []string{"a", "c", "b"},
			grades: map[string]int{"a": 2, "b": 1, "c": 1},
			k:      10,
			want:   1,
		},
		{
			name:   "relevant documents absent",
			ranked: []string{"x", "y", "z"},
			grades: map[string]int{"a": 2, "b": 1},
			k:      10,
			want:   0,
		},
		{
			// The ideal list holds both relevant documents, found or not:
			// DCG = 1; IDCG = 1 + 1/log2(3).
			name:   "one relevant document missing from the results",
			ranked: []string{"a"},
			grades: map[string]int{"a": 1, "gone": 1},
			k:      10,
			want:   1 / (1 + 1/math.Log2(3)), // 0.6131471927654584
		},
		{
			// DCG = 1/log2(3); IDCG = 1 + 1/log2(3) (cut at 2 of 3 relevant).
			name:   "cut at k",
			ranked: []string{"x", "a", "b", "c"},
			grades: map[string]int{"a": 1, "b": 1, "c": 1},
			k:      2,
			want:   (1 / math.Log2(3)) / (1 + 1/math.Log2(3)), // 0.38685280723454163
		},
		{
			name:   "relevant document at rank 11 is past the cut",
			ranked: append(misses(10), "a"),
			grades: map[string]int{"a": 1},
			k:      10,
			want:   0,
		},
		{
			name:   "no relevant documents",
			ranked: []string{"a"},
			grades: map[string]int{"a": 0},
			k:      10,
			want:   0,
		},
		{
			name:   "empty results",
			ranked: nil,
			grades: map[string]int{"a": 1},
			k:      10,
			want:   0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NDCG(tt.ranked, tt.grades, tt.k); math.Abs(got-tt.want) > eps {
				t.Errorf("NDCG = %.15f, want %.15f", got, tt.want)
			}
		})
	}
}

func TestRecall(t *testing.T) {
	tests := []struct {
		name   string
		ranked []string
		grades map[string]int
		k      int
		want   float64
	}{
		{
			name:   "all found",
			ranked: []string{"b", "x", "a"},
			grades: map[string]int{"a": 1, "b": 3},
			k:      100,
			want:   1,
		},
		{
			// Grade 0 is judged but not relevant: 2 of the 3 relevant found.
			name:   "graded with a judged non-relevant document",
			ranked: []string{"a", "d", "c"},
			grades: map[string]int{"a": 3, "b": 2, "c": 1, "d": 0},
			k:      100,
			want:   2.0 / 3,
		},
		{
			name:   "relevant documents absent",
			ranked: []string{"x", "y"},
			grades: map[string]int{"a": 1, "b": 1},
			k:      100,
			want:   0,
		},
		{
			name:   "cut at k",
			ranked: []string{"a", "x", "b", "c"},
			grades: map[string]int{"a": 1, "b": 1, "c": 1, "d": 1},
			k:      3,
			want:   2.0 / 4,
		},
		{
			name:   "rank 11 counts at k=100",
			ranked: append(misses(10), "a"),
			grades: map[string]int{"a": 1},
			k:      100,
			want:   1,
		},
		{
			name:   "no relevant documents",
			ranked: []string{"a"},
			grades: map[string]int{"a": 0},
			k:      100,
			want:   0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Recall(tt.ranked, tt.grades, tt.k); math.Abs(got-tt.want) > eps {
				t.Errorf("Recall = %.15f, want %.15f", got, tt.want)
			}
		})
	}
}

func TestMean(t *testing.T) {
	if got := Mean([]float64{1, 2, 3, 4}); got != 2.5 {
		t.Errorf("Mean = %v, want 2.5", got)
	}
	if got := Mean(nil); got != 0 {
		t.Errorf("Mean(nil) = %v, want 0", got)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"odd", []float64{3, 1, 2}, 2},
		{"even", []float64{4, 1, 3, 2}, 2.5},
		{"one", []float64{7}, 7},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.xs)
			if got := Median(tt.xs); got != tt.want {
				t.Errorf("Median = %v, want %v", got, tt.want)
			}
			if !slices.Equal(in, tt.xs) {
				t.Errorf("Median modified its input: %v, was %v", tt.xs, in)
			}
		})
	}
}

func TestPairedDiff(t *testing.T) {
	// Differences 0.1, 0.3, -0.1, 0.1: mean 0.1, sd sqrt(0.08/3).
	p := PairedDiff([]float64{0.5, 0.2, 0.4, 0.0}, []float64{0.6, 0.5, 0.3, 0.1})
	half := 1.96 * math.Sqrt(0.08/3) / 2
	if math.Abs(p.Mean-0.1) > eps || math.Abs(p.Half-half) > eps || p.Wins != 3 || p.Losses != 1 {
		t.Errorf("PairedDiff = %+v, want mean 0.1, half %v, 3/1", p, half)
	}
	if p.Beyond() { // 0.1 - 0.16 < 0
		t.Errorf("%+v is beyond noise", p)
	}
	if q := PairedDiff([]float64{0, 0, 0}, []float64{0.1, 0.1, 0.1}); !q.Beyond() || q.Half > eps {
		t.Errorf("a constant rise: %+v", q)
	}
	if q := PairedDiff([]float64{0.2, 0.3}, []float64{0.1, 0.1}); !q.Beyond() || q.Mean >= 0 {
		t.Errorf("a fall: %+v", q)
	}
	if q := PairedDiff(nil, nil); q != (Paired{}) {
		t.Errorf("no queries: %+v", q)
	}
}
