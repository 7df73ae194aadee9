package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/vfs"
)

// indexedAt returns the IndexedAt and UpdatedAt of the item at ref.
func (e *env) indexedAt(ref string) (indexed, updated time.Time) {
	e.t.Helper()
	r, err := vfs.ParseRef(ref)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := e.store.Info(context.Background(), r)
	if err != nil {
		e.t.Fatalf("Info(%s): %v", ref, err)
	}
	return info.Item.IndexedAt, info.Item.UpdatedAt
}

// wantIndexed fails unless ref is marked indexed, not before its update, and
// BM25 finds it for q.
func (e *env) wantIndexed(ref, q string) time.Time {
	e.t.Helper()
	at, updated := e.indexedAt(ref)
	if at.IsZero() || at.Before(updated) {
		e.t.Fatalf("%s: indexed at %v, updated at %v; want indexed, not before the update", ref, at, updated)
	}
	if got := refs(e.search(Request{Mode: BM25, Queries: []Query{{Text: q}}})); !slices.Contains(got, ref) {
		e.t.Fatalf("%s is marked indexed but BM25 %q finds %v", ref, q, got)
	}
	return at
}

// TestEngine_MarksItemsIndexed checks that once the engine has applied a
// change, the item's IndexedAt says when its chunks became searchable: after
// a write, an edit, a catch-up after a restart and a rebuild, and without
// feeding the outbox.
func TestEngine_MarksItemsIndexed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.write("notes:/a.md", "alpha paragraph\n\nsecond paragraph", unit(0, 0), unit(1, 0))
	seq, err := e.store.OutboxSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.sync()
	first := e.wantIndexed("notes:/a.md", "alpha")
	if after, err := e.store.OutboxSeq(ctx); err != nil || after != seq {
		t.Fatalf("outbox seq %d after indexing, %d before (%v): marking must not append entries", after, seq, err)
	}

	if _, err := e.store.Edit(ctx, vfs.Ref{Drive: "notes", Path: "/a.md"}, []vfs.Patch{{StartLine: 1, EndLine: 1, Content: "omega paragraph"}}, ""); err != nil {
		t.Fatal(err)
	}
	e.sync()
	if again := e.wantIndexed("notes:/a.md", "omega"); !again.After(first) {
		t.Fatalf("indexed at %v after the edit, %v before", again, first)
	}

	// Written while no engine runs: marked once a new one catches up.
	e.close()
	e.write("notes:/b.md", "beta paragraph")
	if at, _ := e.indexedAt("notes:/b.md"); !at.IsZero() {
		t.Fatalf("b.md indexed at %v with no engine running", at)
	}
	e.open(true)
	e.sync()
	e.wantIndexed("notes:/b.md", "beta")

	// And by a rebuild of a lost lexical index.
	e.close()
	e.write("notes:/c.md", "gamma paragraph")
	if err := os.RemoveAll(filepath.Join(e.dir, "index", lexicalDir)); err != nil {
		t.Fatal(err)
	}
	e.open(true)
	e.sync()
	e.wantIndexed("notes:/c.md", "gamma")
	e.wantIndexed("notes:/b.md", "beta")
}

// TestEngine_AppliedSeqMeansMarked: marking runs a batch behind the
// lexical index (beside the next batch), so the state must never show a
// sequence applied before the items it covers are marked, across a catch-up
// of several batches.
func TestEngine_AppliedSeqMeansMarked(t *testing.T) {
	e := newEnv(t)
	e.write("notes:/first.md", "a first paragraph") // else the engine rebuilds, not catches up
	e.sync()
	e.close()
	ctx := context.Background()
	paragraph := strings.Repeat("lorem ipsum dolor sit amet ", 4)
	text := strings.Repeat(paragraph+"\n\n", applyBytes/len(paragraph)/2) // half a batch of text per item
	var refs []string
	var seqs []uint64
	for i := range 6 {
		ref := fmt.Sprintf("notes:/big%d.md", i)
		e.write(ref, fmt.Sprintf("item%d %s", i, text))
		seq, err := e.store.OutboxSeq(ctx)
		if err != nil {
			t.Fatal(err)
		}
		refs, seqs = append(refs, ref), append(seqs, seq)
	}
	// Slow marks: the state's sequence must wait for them.
	eng, err := Open(e.store, Options{Dir: filepath.Join(e.dir, "index"), beforeMark: func() { time.Sleep(20 * time.Millisecond) }})
	if err != nil {
		t.Fatal(err)
	}
	eng.SetModel(testModel, testDims)
	e.eng, e.withModel = eng, true
	deadline := time.Now().Add(30 * time.Second)
	for checked := 0; checked < len(refs); {
		applied := e.eng.State().AppliedSeq
		for ; checked < len(refs) && seqs[checked] <= applied; checked++ {
			if at, _ := e.indexedAt(refs[checked]); at.IsZero() {
				t.Fatalf("state shows seq %d applied, but %s (seq %d) is not marked indexed", applied, refs[checked], seqs[checked])
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine stuck at seq %d of %d", applied, seqs[len(seqs)-1])
		}
		time.Sleep(time.Millisecond)
	}
	for i, ref := range refs {
		e.wantIndexed(ref, fmt.Sprintf("item%d", i))
	}
}
