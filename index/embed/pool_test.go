package embed

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadSpec(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		want    Spec
		wantErr string // substring; "" means success
	}{
		{
			name: "minilm",
			json: `{"id":"all-MiniLM-L6-v2","dimensions":384,"pooling":"mean","normalize":true,"max_tokens":256,"query_prefix":"","lowercase":true}`,
			want: Spec{ID: "all-MiniLM-L6-v2", Dimensions: 384, Pooling: "mean", Normalize: true, MaxTokens: 256},
		},
		{
			name: "bge",
			json: `{"id":"bge-small-en-v1.5","dimensions":384,"pooling":"cls","normalize":true,"max_tokens":512,"query_prefix":"Represent this sentence for searching relevant passages: "}`,
			want: Spec{ID: "bge-small-en-v1.5", Dimensions: 384, Pooling: "cls", Normalize: true, MaxTokens: 512,
				QueryPrefix: "Represent this sentence for searching relevant passages: "},
		},
		{name: "missing id", json: `{"dimensions":384,"pooling":"mean","normalize":true,"max_tokens":256}`, wantErr: "id: missing"},
		{name: "missing normalize", json: `{"id":"m","dimensions":384,"pooling":"mean","max_tokens":256}`, wantErr: "normalize: missing"},
		{name: "missing several", json: `{"id":"m"}`, wantErr: "max_tokens: missing"},
		{name: "zero dimensions", json: `{"id":"m","dimensions":0,"pooling":"mean","normalize":true,"max_tokens":256}`, wantErr: "dimensions: 0"},
		{name: "bad pooling", json: `{"id":"m","dimensions":384,"pooling":"max","normalize":true,"max_tokens":256}`, wantErr: `pooling: "max"`},
		{name: "tiny window", json: `{"id":"m","dimensions":384,"pooling":"cls","normalize":true,"max_tokens":2}`, wantErr: "max_tokens: 2"},
		{name: "wrong type", json: `{"id":"m","dimensions":"384"}`, wantErr: "dimensions"},
		{name: "not json", json: `{`, wantErr: "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, SpecFile), []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := LoadSpec(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadSpec error = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("LoadSpec = %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := LoadSpec(t.TempDir())
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("LoadSpec error = %v, want not-exist", err)
		}
	})
}

// hidden is a hand-made [2 inputs, 3 positions, 2 dims] tensor; input 0 has 3
// real tokens, input 1 has 2 and one padding position holding garbage that
// mean pooling must ignore.
var (
	hidden = []float32{
		1, 2, 3, 4, 5, 6, // input 0: positions 0..2
		10, 0, 0, 20, 999, 999, // input 1: positions 0..1, then padding
	}
	hiddenMask = []int64{1, 1, 1, 1, 1, 0}
)

func TestPool_MeanVsCLS(t *testing.T) {
	tests := []struct {
		pooling string
		want    [][]float32
	}{
		{PoolingMean, [][]float32{{3, 4}, {5, 10}}},
		{PoolingCLS, [][]float32{{1, 2}, {10, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.pooling, func(t *testing.T) {
			out := newVectors(2, 2)
			if err := pool(out, hidden, hiddenMask, 2, 3, 2, tt.pooling, false); err != nil {
				t.Fatal(err)
			}
			for i := range out {
				if !slices.Equal(out[i], tt.want[i]) {
					t.Errorf("input %d: %v, want %v", i, out[i], tt.want[i])
				}
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		if err := pool(newVectors(2, 2), hidden, hiddenMask, 2, 3, 2, "max", false); err == nil {
			t.Fatal("pool with unknown pooling: no error")
		}
	})
	t.Run("short input", func(t *testing.T) {
		if err := pool(newVectors(2, 2), hidden[:5], hiddenMask, 2, 3, 2, PoolingMean, false); err == nil {
			t.Fatal("pool with short hidden: no error")
		}
	})
}

func TestPool_Normalize(t *testing.T) {
	out := newVectors(2, 2)
	if err := pool(out, hidden, hiddenMask, 2, 3, 2, PoolingMean, true); err != nil {
		t.Fatal(err)
	}
	// mean {3,4} has norm 5; {5,10} has norm 5*sqrt(5).
	want := [][]float32{{0.6, 0.8}, {float32(1 / math.Sqrt(5)), float32(2 / math.Sqrt(5))}}
	for i := range out {
		checkUnit(t, "pooled", out[i])
		for d := range out[i] {
			if math.Abs(float64(out[i][d]-want[i][d])) > 1e-6 {
				t.Errorf("input %d: %v, want %v", i, out[i], want[i])
			}
		}
	}
	zero := []float32{0, 0, 0}
	l2normalize(zero)
	if !slices.Equal(zero, []float32{0, 0, 0}) {
		t.Errorf("l2normalize(0) = %v, want zeros", zero)
	}
}

func TestPadBatch(t *testing.T) {
	seqs := [][]int64{{101, 7, 102}, {101, 7, 8, 9, 102}, {101, 102}}
	in := padBatch(seqs, 0, nil)
	if in.batch != 3 || in.seqLen != 5 {
		t.Fatalf("shape [%d, %d], want [3, 5] (longest input, not max_tokens)", in.batch, in.seqLen)
	}
	wantIDs := []int64{101, 7, 102, 0, 0, 101, 7, 8, 9, 102, 101, 102, 0, 0, 0}
	wantMask := []int64{1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0}
	if !slices.Equal(in.ids, wantIDs) {
		t.Errorf("ids %v, want %v", in.ids, wantIDs)
	}
	if !slices.Equal(in.mask, wantMask) {
		t.Errorf("mask %v, want %v", in.mask, wantMask)
	}
	if !slices.Equal(in.types, make([]int64, 15)) {
		t.Errorf("types %v, want zeros", in.types)
	}

	// A reused buffer full of garbage gives the same layout.
	buf := slices.Repeat([]int64{-1}, 64)
	again := padBatch(seqs, 0, buf)
	if !slices.Equal(again.ids, wantIDs) || !slices.Equal(again.mask, wantMask) || !slices.Equal(again.types, make([]int64, 15)) {
		t.Errorf("with reused buffer: ids %v mask %v types %v", again.ids, again.mask, again.types)
	}
	if &again.ids[0] != &buf[0] {
		t.Error("padBatch did not reuse a large enough buffer")
	}
}

func TestCosine(t *testing.T) {
	tests := []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{1, 0}, 1},
		{[]float32{1, 0}, []float32{0, 2}, 0},
		{[]float32{1, 1}, []float32{-2, -2}, -1},
		{[]float32{0, 0}, []float32{1, 0}, 0},
		{[]float32{1}, []float32{1, 0}, 0},
	}
	for _, tt := range tests {
		if got := Cosine(tt.a, tt.b); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestVersionAtLeast(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"1.24.1", true}, {"1.24", true}, {"1.25.0", true}, {"2.0.0", true},
		{"1.23.2", false}, {"0.99", false}, {"", false}, {"x.y", false},
	}
	for _, tt := range tests {
		if got := versionAtLeast(tt.v, 1, 24); got != tt.want {
			t.Errorf("versionAtLeast(%q, 1, 24) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestBatchSize(t *testing.T) {
	tests := []struct {
		name            string
		lens            []int
		maxBatch, limit int
		want            int
	}{
		{"empty", nil, 4, 100, 0},
		{"all fit", []int{5, 5, 5}, 4, 100, 3},
		{"max batch", []int{5, 5, 5, 5, 5, 5}, 4, 100, 4},
		{"token budget", []int{10, 10, 10, 10}, 8, 30, 3},
		{"longest counts", []int{2, 2, 20, 2}, 8, 50, 2}, // 3 × 20 > 50
		{"one always", []int{300, 10}, 8, 100, 1},
		{"exact budget", []int{25, 25, 25, 25}, 8, 100, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := batchSize(tt.lens, tt.maxBatch, tt.limit); got != tt.want {
				t.Errorf("batchSize(%v, %d, %d) = %d, want %d", tt.lens, tt.maxBatch, tt.limit, got, tt.want)
			}
		})
	}
}
