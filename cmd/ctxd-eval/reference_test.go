package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/internal/beir"
)

// The expected scores are worked out by hand from the formula in
// reference's doc comment, with k1 = 0.9 and b = 0.4.
//
// The corpus, after the "en" analyzer (stop words dropped, Porter stems):
//
//	d1 "The cat sat."           → cat sat            |d1| = 2
//	d2 "Cats chase dogs."       → cat chase dog      |d2| = 3
//	d3 "A dog barks at the dog" → dog bark dog       |d3| = 3
//
// N = 3, avgdl = 8/3. The length norm k1*(1 - b + b*|d|/avgdl) is
// 0.9*(0.6 + 0.15*|d|): 0.81 for |d| = 2, 0.945 for |d| = 3.
// idf with df = 2 (cat, dog): ln(1 + (3-2+0.5)/(2+0.5)) = ln 1.6;
// with df = 1 (bark): ln(1 + (3-1+0.5)/(1+0.5)) = ln(8/3).
var referenceCorpus = []string{"The cat sat.", "Cats chase dogs.", "A dog barks at the dog"}

func TestReference_Search(t *testing.T) {
	a, err := analyzerEN()
	if err != nil {
		t.Fatal(err)
	}
	r := newReference(a, []string{"d1", "d2", "d3"}, referenceCorpus)
	tests := []struct {
		name  string
		query string
		k     int
		want  []scoredDoc
	}{
		{
			// d2: cat and dog, tf 1 each: 2 * ln1.6 * 1.9/(1+0.945).
			// d3: dog, tf 2: ln1.6 * 2*1.9/(2+0.945).
			// d1: cat, tf 1: ln1.6 * 1.9/(1+0.81).
			name:  "two terms",
			query: "cat dog",
			k:     10,
			want: []scoredDoc{
				{"d2", 2 * math.Log(1.6) * 1.9 / 1.945}, // 0.918259018577787
				{"d3", math.Log(1.6) * 3.8 / 2.945},     // 0.606456295800949
				{"d1", math.Log(1.6) * 1.9 / 1.81},      // 0.493373975451325
			},
		},
		{
			// The query analyses to dog dog bark: qtf(dog) = 2.
			// d3: 2 * ln1.6 * 2*1.9/(2+0.945) + ln(8/3) * 1.9/(1+0.945).
			// d2: 2 * ln1.6 * 1.9/(1+0.945). d1 holds neither term.
			name:  "repeated query term and stemming",
			query: "Dogs barking, dog!",
			k:     10,
			want: []scoredDoc{
				{"d3", 2*math.Log(1.6)*3.8/2.945 + math.Log(8.0/3)*1.9/1.945}, // 2.171049136960397
				{"d2", 2 * math.Log(1.6) * 1.9 / 1.945},                       // 0.918259018577787
			},
		},
		{
			name:  "cut at k",
			query: "cat dog",
			k:     1,
			want:  []scoredDoc{{"d2", 2 * math.Log(1.6) * 1.9 / 1.945}},
		},
		{
			name:  "no query term in the corpus",
			query: "the zebra",
			k:     10,
			want:  []scoredDoc{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.search(tt.query, tt.k)
			if len(got) != len(tt.want) {
				t.Fatalf("search(%q) = %v, want %v", tt.query, got, tt.want)
			}
			for i, w := range tt.want {
				if got[i].id != w.id || math.Abs(got[i].score-w.score) > 1e-6 {
					t.Errorf("search(%q)[%d] = %v, want %v", tt.query, i, got[i], w)
				}
			}
		})
	}
}

func TestReference_SearchTiesByID(t *testing.T) {
	a, err := analyzerEN()
	if err != nil {
		t.Fatal(err)
	}
	// Same text, so same score: the lower id ranks first whatever the
	// order of indexing.
	r := newReference(a, []string{"b", "c", "a"}, []string{"wing lift", "wing lift", "wing lift"})
	got := r.search("wing", 10)
	var ids []string
	for _, h := range got {
		ids = append(ids, h.id)
	}
	if strings.Join(ids, ",") != "a,b,c" {
		t.Errorf("ranking = %v, want a,b,c", ids)
	}
}

func TestDocContent(t *testing.T) {
	tests := []struct {
		name              string
		doc               beir.Doc
		wantContent, mime string
	}{
		{
			name:        "titled document is markdown with an H1",
			doc:         beir.Doc{Title: "wing  in a\nslipstream", Text: "an experimental study"},
			wantContent: "# wing in a slipstream\n\nan experimental study",
			mime:        "text/markdown; charset=utf-8",
		},
		{
			// tldr pages: a second H1 would count the title's terms twice.
			name:        "text opening with the title's H1 is written as it is",
			doc:         beir.Doc{Title: "am", Text: "\n# am\n\n> Android activity manager."},
			wantContent: "\n# am\n\n> Android activity manager.",
			mime:        "text/markdown; charset=utf-8",
		},
		{
			name:        "a closed H1 and spacing still match the title",
			doc:         beir.Doc{Title: "git  log", Text: "#  git   log ##\nShow commits."},
			wantContent: "#  git   log ##\nShow commits.",
			mime:        "text/markdown; charset=utf-8",
		},
		{
			name:        "a trailing # that is part of the heading is not a closing sequence",
			doc:         beir.Doc{Title: "C", Text: "# C#\nA language."},
			wantContent: "# C\n\n# C#\nA language.",
			mime:        "text/markdown; charset=utf-8",
		},
		{
			name:        "another H1 gets the title before it",
			doc:         beir.Doc{Title: "am", Text: "# Activity manager\n\nStarts activities."},
			wantContent: "# am\n\n# Activity manager\n\nStarts activities.",
			mime:        "text/markdown; charset=utf-8",
		},
		{
			name:        "the title as an H2 or later in the text is not the opening H1",
			doc:         beir.Doc{Title: "am", Text: "## am\n# am"},
			wantContent: "# am\n\n## am\n# am",
			mime:        "text/markdown; charset=utf-8",
		},
		{
			name:        "untitled document is plain text",
			doc:         beir.Doc{Title: " ", Text: "compact memories"},
			wantContent: "compact memories",
			mime:        "text/plain; charset=utf-8",
		},
		{
			name: "no title and blank text is not written",
			doc:  beir.Doc{Text: " \n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content, mime := docContent(tt.doc)
			if content != tt.wantContent || mime != tt.mime {
				t.Errorf("docContent = %q, %q; want %q, %q", content, mime, tt.wantContent, tt.mime)
			}
		})
	}
}

func TestCheckGoals(t *testing.T) {
	m := func(mode string, ndcg float64) modeResult { return modeResult{mode: mode, ndcg: ndcg} }
	tests := []struct {
		name             string
		modes            []modeResult
		wantBM25, wantHy string
	}{
		{
			name:     "both met, bm25 equal to the reference",
			modes:    []modeResult{m("reference", 0.5), m("bm25", 0.5), m("vector", 0.6), m("hybrid", 0.7)},
			wantBM25: "yes (0.5000 vs 0.5000)",
			wantHy:   "yes (0.7000 vs vector 0.6000)",
		},
		{
			name:     "both missed",
			modes:    []modeResult{m("reference", 0.6), m("bm25", 0.55), m("vector", 0.5), m("hybrid", 0.54)},
			wantBM25: "no (0.5500 vs 0.6000)",
			wantHy:   "no (0.5400 vs bm25 0.5500)",
		},
		{
			name:     "bm25 only",
			modes:    []modeResult{m("reference", 0.6), m("bm25", 0.65)},
			wantBM25: "yes (0.6500 vs 0.6000)",
			wantHy:   "not compared (needs modes bm25, vector and hybrid)",
		},
		{
			name:     "vector only",
			modes:    []modeResult{m("reference", 0.6), m("vector", 0.65)},
			wantBM25: "not compared (needs mode bm25)",
			wantHy:   "not compared (needs modes bm25, vector and hybrid)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := checkGoals(tt.modes)
			if g.bm25 != tt.wantBM25 || g.hybrid != tt.wantHy {
				t.Errorf("checkGoals = %+v, want bm25 %q, hybrid %q", g, tt.wantBM25, tt.wantHy)
			}
		})
	}
}

// writeCollection writes a BEIR collection to dir/name.
func writeCollection(t *testing.T, dir, name string, docs []beir.Doc, queries []beir.Query, qrels string) {
	t.Helper()
	cdir := filepath.Join(dir, name)
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var corpus bytes.Buffer
	zw := gzip.NewWriter(&corpus)
	enc := json.NewEncoder(zw)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var qs bytes.Buffer
	for _, q := range queries {
		if err := json.NewEncoder(&qs).Encode(q); err != nil {
			t.Fatal(err)
		}
	}
	for file, data := range map[string][]byte{
		"corpus.jsonl.gz": corpus.Bytes(),
		"queries.jsonl":   qs.Bytes(),
		"qrels.tsv":       []byte("query-id\tcorpus-id\tscore\n" + qrels),
	} {
		if err := os.WriteFile(filepath.Join(cdir, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRun_BM25WithoutModel runs the eval end to end through a real daemon
// with no embedding model: bm25 alone must not wait for one, and the report
// holds the reference row and the goal verdicts.
func TestRun_BM25WithoutModel(t *testing.T) {
	data := t.TempDir()
	writeCollection(t, data, "tiny",
		[]beir.Doc{
			{ID: "d1", Title: "Wing in a slipstream", Text: "An experimental study of lift."},
			{ID: "d2", Text: "Boundary layers on a flat plate."},
			{ID: "d3", Text: "Shock waves at the nose of a body."},
		},
		[]beir.Query{{ID: "q1", Text: "slipstream lift"}, {ID: "q2", Text: "flat plate boundary layer"}},
		"q1\td1\t2\nq2\td2\t1\n")
	report := bm25Report(t, data, "tiny")
	// Each query's one relevant document is the only one holding its
	// terms, so both rank it first: nDCG@10 and Recall@100 are 1.
	for _, want := range []string{
		"| tiny | 3 | 2 | reference | 1.0000 | 1.0000 | – |",
		"| tiny | 3 | 2 | bm25 | 1.0000 | 1.0000 |",
		"| tiny | 3 | 2 | bm25 (items) | 1.0000 | 1.0000 |",
		"| tiny | yes (1.0000 vs 1.0000) | not compared (needs modes bm25, vector and hybrid) |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

// bm25Report runs the eval in bm25 mode (no model) on one collection of
// data and returns the report it writes.
func bm25Report(t *testing.T, data, collection string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "eval.md")
	err := run(t.Context(), []string{"-data", data, "-collections", collection, "-modes", "bm25", "-timeout", "20s", "-concurrency", "2", "-out", out})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
