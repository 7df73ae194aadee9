package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/internal/beir"
)

// writeDocsCorpus writes a docs-corpus folder to data: docs, and queries and
// qrels under the tldr known-item file names.
func writeDocsCorpus(t *testing.T, data string, docs []beir.Doc, queries []beir.Query, qrels string) {
	t.Helper()
	writeCollection(t, data, "docs-corpus", docs, queries, qrels)
	dir := filepath.Join(data, "docs-corpus")
	for from, to := range map[string]string{"queries.jsonl": "tldr-knownitem-queries.jsonl", "qrels.tsv": "tldr-knownitem-qrels.tsv"} {
		if err := os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
}

// tldrDocs is a docs-corpus slice: two tldr pages and a PHP manual page
// that also mentions what q1 asks for.
var tldrDocs = []beir.Doc{
	{ID: "tldr:pages/common/strings.md", Title: "strings", Text: "# strings\n\n> Find printable strings in an object file.\n\n- Limit results to strings at least n characters long:\n\n`strings -n {{n}} {{file}}`", Source: "tldr", Format: "markdown"},
	{ID: "tldr:pages/linux/am.md", Title: "am", Text: "# am\n\n> Android activity manager.\n\n- Start an activity:\n\n`am start -n {{component}}`", Source: "tldr", Format: "markdown"},
	{ID: "php:function.strlen", Title: "strlen", Text: "Returns the length of the given string, in characters.", Source: "php-manual", Format: "xml"},
}

func TestLoadCollection_TLDRKeepsItsSourceAndQueries(t *testing.T) {
	data := t.TempDir()
	writeDocsCorpus(t, data, tldrDocs,
		[]beir.Query{{ID: "tk0", Text: "Limit results to strings at least n characters long"}, {ID: "tk1", Text: "unjudged"}, {ID: "tk2", Text: "Start an activity"}},
		"tk0\ttldr:pages/common/strings.md\t1\ntk2\ttldr:pages/linux/am.md\t1\n")
	docs, judged, err := loadCollection(data, "tldr")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	if want := []string{"tldr:pages/common/strings.md", "tldr:pages/linux/am.md"}; !slices.Equal(ids, want) {
		t.Errorf("documents = %v, want %v", ids, want)
	}
	var qids []string
	for _, q := range judged {
		qids = append(qids, q.id)
	}
	if want := []string{"tk0", "tk2"}; !slices.Equal(qids, want) {
		t.Errorf("judged queries = %v, want %v", qids, want)
	}
}

func TestLoadCollection_TLDRRejectsJudgementOnOtherSource(t *testing.T) {
	data := t.TempDir()
	writeDocsCorpus(t, data, tldrDocs,
		[]beir.Query{{ID: "tk0", Text: "length of a string"}},
		"tk0\tphp:function.strlen\t1\n")
	_, _, err := loadCollection(data, "tldr")
	if err == nil || !strings.Contains(err.Error(), "php:function.strlen") {
		t.Fatalf("err = %v, want one naming the judged php:function.strlen", err)
	}
}

// TestRun_TLDRCollection runs -collections tldr end to end in bm25 mode: the
// report counts only the tldr pages, and each known-item query finds its
// page first (the PHP page sharing tk0's "strings"/"characters" is not there
// to compete).
func TestRun_TLDRCollection(t *testing.T) {
	data := t.TempDir()
	writeDocsCorpus(t, data, tldrDocs,
		[]beir.Query{{ID: "tk0", Text: "Limit results to strings at least n characters long"}, {ID: "tk1", Text: "Android activity manager"}},
		"tk0\ttldr:pages/common/strings.md\t1\ntk1\ttldr:pages/linux/am.md\t1\n")
	report := bm25Report(t, data, "tldr")
	for _, want := range []string{
		"| tldr | 2 | 2 | reference | 1.0000 | 1.0000 | – |",
		"| tldr | 2 | 2 | bm25 | 1.0000 | 1.0000 |",
		"| tldr | 2 | 2 | bm25 (items) | 1.0000 | 1.0000 |",
		"| tldr | 2 | 2 | bm25 +proximity | 1.0000 | 1.0000 |",
		"| tldr | 2 | 2 | bm25 (items) -proximity | 1.0000 | 1.0000 |",
		"| tldr | 2 | 2 | bm25 -recency | 1.0000 | 1.0000 |",
		"| tldr | 2 | 2 | bm25 +importance 0.3 | 1.0000 | 1.0000 |",
		// Both queries find their page first either way: no difference.
		"| tldr | bm25 (items) | 1.0000 | 1.0000 | +0.0000 ± 0.0000 (0/0) | 1.0000 | 1.0000 | +0.0000 ± 0.0000 (0/0) | either (on and off rank alike) |",
		"| tldr | bm25 | 0 of 2 |",
		"| tldr | 2 | 2 | bm25 +usage 0.3 | 1.0000 | 1.0000 |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

func TestParseFlags_Priors(t *testing.T) {
	o, err := parseFlags([]string{"-data", "d", "-priors", "0.1, 1"})
	if err != nil || !slices.Equal(o.priors, []float64{0.1, 1}) {
		t.Fatalf("priors = %v, %v", o.priors, err)
	}
	if o, err := parseFlags([]string{"-data", "d", "-priors", ""}); err != nil || o.priors != nil {
		t.Errorf("empty -priors: %v, %v", o.priors, err)
	}
	for _, bad := range []string{"0", "1.5", "x", "0.1,0.1", "NaN"} {
		if _, err := parseFlags([]string{"-data", "d", "-priors", bad}); err == nil || !strings.Contains(err.Error(), "-priors") {
			t.Errorf("-priors %q: err = %v", bad, err)
		}
	}
	var labels []string
	for _, v := range variants([]float64{0.3}) {
		labels = append(labels, v.label("hybrid"))
	}
	if want := []string{"hybrid", "hybrid (items)", "hybrid +proximity", "hybrid (items) +proximity", "hybrid -proximity", "hybrid (items) -proximity",
		"hybrid -recency", "hybrid (items) -recency", "hybrid +importance 0.3", "hybrid +usage 0.3"}; !slices.Equal(labels, want) {
		t.Errorf("labels = %v, want %v", labels, want)
	}
}
