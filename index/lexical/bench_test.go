package lexical

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Benchmarks read the first passages of the shared Wikipedia corpus
// (../shared/data beside the repository).
// CTXD_LEXICAL_BENCH_N sets the size of the search benchmark index
// (default 100000).
const corpusPath = "../../../shared/data/wikipedia-passages/corpus.jsonl.gz"

type passage struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

var (
	passagesMu sync.Mutex
	passages   []passage
)

// loadPassages returns the first n passages of the corpus.
func loadPassages(b testing.TB, n int) []passage {
	b.Helper()
	passagesMu.Lock()
	defer passagesMu.Unlock()
	if len(passages) >= n {
		return passages[:n]
	}
	f, err := os.Open(corpusPath)
	if err != nil {
		b.Fatalf("wikipedia-passages corpus missing (%v): see ../shared/data/README.md", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []passage
	for len(out) < n && sc.Scan() {
		var p passage
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			b.Fatalf("decode passage %d: %v", len(out), err)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	if len(out) < n {
		b.Fatalf("corpus has %d passages, want %d", len(out), n)
	}
	passages = out
	return out
}

func passageDoc(p passage, i int, suffix string) Doc {
	return Doc{
		ID:      p.ID + suffix,
		Text:    p.Text,
		Title:   p.Title,
		Heading: p.Title,
		Drive:   "wiki",
		Path:    fmt.Sprintf("/wiki/%02d/%s.txt", i%100, p.ID),
		Mime:    "text/plain",
		Tags:    []string{"t" + strconv.Itoa(i%7)},
	}
}

// BenchmarkIndex_Apply measures index-only ingest: batches of 1,000 short
// Wikipedia passages, each batch new documents.
func BenchmarkIndex_Apply(b *testing.B) {
	const batch = 1000
	ps := loadPassages(b, 20000)
	b.Run("batch=1000", func(b *testing.B) {
		x := mustOpen(b, b.TempDir())
		docs := make([]Doc, batch)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			off := (i * batch) % len(ps)
			round := "#" + strconv.Itoa(i*batch/len(ps))
			for j := range docs {
				docs[j] = passageDoc(ps[off+j], off+j, round)
			}
			if err := x.Apply(docs, nil, uint64(i+1)); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "docs/s")
	})
}

var (
	searchIdxOnce sync.Once
	searchIdx     *Index
	searchIdxN    int
	searchIdxDir  string
	searchIdxErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if searchIdx != nil {
		_ = searchIdx.Close()
	}
	if searchIdxDir != "" {
		_ = os.RemoveAll(searchIdxDir)
	}
	os.Exit(code)
}

// benchIndex builds the search benchmark index once per process.
func benchIndex(b *testing.B) (*Index, []passage) {
	b.Helper()
	n := 100000
	if s := os.Getenv("CTXD_LEXICAL_BENCH_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("CTXD_LEXICAL_BENCH_N: %v", err)
		}
		n = v
	}
	ps := loadPassages(b, n)
	searchIdxOnce.Do(func() {
		searchIdxDir, searchIdxErr = os.MkdirTemp("", "ctxd-lexical-bench-")
		if searchIdxErr != nil {
			return
		}
		searchIdx, searchIdxErr = Open(filepath.Join(searchIdxDir, "idx"))
		if searchIdxErr != nil {
			return
		}
		start := time.Now()
		const batch = 1000
		docs := make([]Doc, 0, batch)
		for i, p := range ps {
			docs = append(docs, passageDoc(p, i, ""))
			if len(docs) == batch || i == len(ps)-1 {
				if searchIdxErr = searchIdx.Apply(docs, nil, uint64(i+1)); searchIdxErr != nil {
					return
				}
				docs = docs[:0]
			}
		}
		searchIdxN = n
		el := time.Since(start)
		fmt.Fprintf(os.Stderr, "lexical bench: built %d docs in %v (%.0f docs/s)\n", n, el.Round(time.Millisecond), float64(n)/el.Seconds())
	})
	if searchIdxErr != nil {
		b.Fatal(searchIdxErr)
	}
	return searchIdx, ps
}

// benchQueries derives queries from random passages: four words of
// 4+ letters for BM25, a 5-letter slice of a 7+ letter word for the
// substring leg, and 3 to 8 consecutive words as the daemon's bench asks
// (its BM25 mode sends them to both legs).
func benchQueries(ps []passage, count int) (words, subs, phrases []string) {
	r := rand.New(rand.NewPCG(1, 2))
	for len(words) < count || len(subs) < count {
		p := ps[r.IntN(len(ps))]
		fs := strings.FieldsFunc(p.Text, func(c rune) bool {
			return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
		})
		var long, mid []string
		for _, f := range fs {
			if len(f) >= 4 {
				mid = append(mid, f)
			}
			if len(f) >= 7 {
				long = append(long, f)
			}
		}
		if len(mid) >= 4 && len(words) < count {
			r.Shuffle(len(mid), func(i, j int) { mid[i], mid[j] = mid[j], mid[i] })
			words = append(words, strings.Join(mid[:4], " "))
		}
		if len(long) > 0 && len(subs) < count {
			w := long[r.IntN(len(long))]
			o := r.IntN(len(w) - 4)
			subs = append(subs, w[o:o+5])
		}
	}
	for len(phrases) < count {
		fs := strings.Fields(ps[r.IntN(len(ps))].Text)
		if len(fs) < 3 {
			continue
		}
		k := min(3+r.IntN(6), len(fs))
		at := r.IntN(len(fs) - k + 1)
		phrases = append(phrases, strings.Join(fs[at:at+k], " "))
	}
	return words, subs, phrases
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		i := int(p * float64(len(lat)-1))
		return float64(lat[i].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkIndex_Search measures per-query latency of both legs over the
// benchmark index, unfiltered and with a path filter matching 1% of docs.
func BenchmarkIndex_Search(b *testing.B) {
	x, ps := benchIndex(b)
	words, subs, phrases := benchQueries(ps, 500)
	scoped := Filter{PathPrefixes: []string{"wiki:/wiki/42"}}
	cases := []struct {
		name string
		qs   []string
		f    Filter
		fn   func(context.Context, string, Filter, int) ([]Hit, error)
	}{
		{"bm25", words, Filter{}, x.SearchBM25},
		{"bm25/filtered", words, scoped, x.SearchBM25},
		{"substring", subs, Filter{}, x.SearchSubstring},
		{"substring/filtered", subs, scoped, x.SearchSubstring},
		{"substring/phrase", phrases, Filter{}, x.SearchSubstring},
	}
	for _, c := range cases {
		b.Run(fmt.Sprintf("n=%d/%s", searchIdxN, c.name), func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := c.qs[i%len(c.qs)]
				t0 := time.Now()
				if _, err := c.fn(context.Background(), q, c.f, 10); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportLatency(b, lat)
		})
	}
}

// BenchmarkIndex_SearchAfterApply measures the first BM25 search after
// each Apply (one document replaced), the case an index under steady
// writes serves: only the search is timed.
func BenchmarkIndex_SearchAfterApply(b *testing.B) {
	x, ps := benchIndex(b)
	words, _, _ := benchQueries(ps, 500)
	b.Run(fmt.Sprintf("n=%d", searchIdxN), func(b *testing.B) {
		seq, err := x.AppliedSeq()
		if err != nil {
			b.Fatal(err)
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			seq++
			d := passageDoc(ps[i%len(ps)], i, "")
			d.ID = "bench-updated"
			if err := x.Apply([]Doc{d}, nil, seq); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			if _, err := x.SearchBM25(context.Background(), words[i%len(words)], Filter{}, 10); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		reportLatency(b, lat)
	})
}
