package search

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"
)

// TestEngine_RebuildsLexicalIndexOfEarlierMapping: a lexical index written
// by an earlier binary (mapping "ctxd-lexical-v1": no field lengths, which
// BM25F needs) is discarded and rebuilt from the store on open, even when
// it claims to have applied every change, so searches after an upgrade
// score exactly as on a fresh index.
func TestEngine_RebuildsLexicalIndexOfEarlierMapping(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/a.md", "zebra crossing")
	e.write("notes:/b.md", "zebra zebra road works ahead")
	e.sync()
	q := Request{Mode: BM25, Queries: []Query{{Text: "zebra"}}, Weights: map[Leg]float64{LegSubstring: 0}}
	fresh := e.search(q)
	if len(fresh.Results) != 2 {
		t.Fatalf("fresh index finds %v, want both notes", refs(fresh))
	}
	seq, err := e.store.OutboxSeq(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.close()

	// What the earlier binary left: its mapping version, a stale document,
	// and every change recorded as applied.
	dir := filepath.Join(e.dir, "index", lexicalDir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	old, err := bleve.New(dir, im)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Index("stale#0", map[string]string{"text": "zebra"}); err != nil {
		t.Fatal(err)
	}
	var sb [8]byte
	binary.BigEndian.PutUint64(sb[:], seq)
	if err := old.SetInternal([]byte("ctxd/applied_seq"), sb[:]); err != nil {
		t.Fatal(err)
	}
	if err := old.SetInternal([]byte("ctxd/mapping_version"), []byte("ctxd-lexical-v1")); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	e.open(true)
	e.sync()
	got := e.search(q)
	if !slices.Equal(refs(got), refs(fresh)) {
		t.Fatalf("after the upgrade BM25 finds %v, want %v as on a fresh index", refs(got), refs(fresh))
	}
	for i, r := range got.Results {
		if g, w := r.Ranks[0].Score, fresh.Results[i].Ranks[0].Score; math.Abs(g-w) > 1e-9*w {
			t.Errorf("%s: BM25 score %v after the upgrade, %v on a fresh index", r.Path, g, w)
		}
	}
}

// TestEngine_RebuildsLexicalIndexWithoutVocabulary: a lexical index whose
// vocabulary log is missing (lost to a crash while the index was created)
// is rebuilt from the store on open, so the substring leg finds partial
// words again.
func TestEngine_RebuildsLexicalIndexWithoutVocabulary(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/hook.md", "call useEffect here")
	e.write("notes:/other.md", "nothing to see")
	e.sync()
	q := Request{Mode: BM25, Queries: []Query{{Text: "useEff"}}}
	want := []string{"notes:/hook.md"}
	if got := refs(e.search(q)); !slices.Equal(got, want) {
		t.Fatalf("fresh index finds %v for useEff, want %v", got, want)
	}
	e.close()
	// The log's name is the lexical package's vocabularyFile.
	if err := os.Remove(filepath.Join(e.dir, "index", lexicalDir, "ctxd_vocabulary")); err != nil {
		t.Fatal(err)
	}
	e.open(true)
	e.sync()
	if got := refs(e.search(q)); !slices.Equal(got, want) {
		t.Fatalf("after losing the vocabulary log, useEff finds %v, want %v", got, want)
	}
}
