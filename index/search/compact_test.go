package search

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ctxd/ctxd/vfs"
)

// TestEngine_CompactsWhenQuiet: writes applied in separate passes leave the
// lexical index in several segments; once it has gone CompactIdle without a
// write the engine merges them into one, and searches find what they found
// before, and then what is written after.
func TestEngine_CompactsWhenQuiet(t *testing.T) {
	e := newEnv(t)
	e.close()
	reopen := func(idle time.Duration) {
		eng, err := Open(e.store, Options{Dir: filepath.Join(e.dir, "index"), TimedDrives: []string{timedDrive}, CompactIdle: idle})
		if err != nil {
			t.Fatal(err)
		}
		eng.SetModel(testModel, testDims)
		e.eng, e.withModel = eng, true
	}
	// Bleve merges segments itself: in memory whenever several wait to be
	// persisted together, so each pass is persisted by a close before the
	// next; and on disk once there are more than its budget for the index's
	// size, which four passes of 2,500 documents stay within (it counts
	// small segments as 2,000 documents, and ten of a size to a tier).
	const passes, perPass = 4, 2500
	for pass := range passes {
		reopen(-1) // never compacts
		var ps []vfs.WriteParams
		for i := range perPass {
			n := pass*perPass + i
			ps = append(ps, vfs.WriteParams{Ref: vfs.Ref{Drive: "notes", Path: fmt.Sprintf("/n%d.md", n)}, IsText: true,
				Content: []byte(fmt.Sprintf("entry %d about compaction of segments; word%d\n", n, n))})
		}
		if _, err := e.store.WriteBatch(context.Background(), ps); err != nil {
			t.Fatal(err)
		}
		e.sync()
		if pass < passes-1 {
			e.close()
		}
	}
	if n := e.eng.State().LexicalSegments; n < 2 {
		t.Fatalf("%d segments after %d separate passes, want several", n, passes)
	}
	bm := func(q string) []string {
		return refs(e.search(Request{Mode: BM25, Queries: []Query{{Text: q}}, Limit: 10}))
	}
	want := bm("word7 word777 compaction")
	if len(want) != 10 || !slices.Contains(want, "notes:/n777.md") {
		t.Fatalf("BM25 found %v before compacting, want 10 notes with n777", want)
	}
	e.close()

	reopen(time.Millisecond)
	deadline := time.Now().Add(30 * time.Second)
	for st := e.eng.State(); st.LexicalSegments != 1 || st.Compacting; st = e.eng.State() {
		if time.Now().After(deadline) {
			t.Fatalf("lexical index not compacted 30 s after a quiet start: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := bm("word7 word777 compaction"); !slices.Equal(got, want) {
		t.Fatalf("BM25 after compacting: %v, want %v", got, want)
	}
	if got := bm("ord9999"); !slices.Equal(got, []string{"notes:/n9999.md"}) {
		t.Fatalf("a part of a word (the substring leg) after compacting: %v", got)
	}
	e.write("notes:/later.md", "written after compaction of segments\n", unit(0, 0.1))
	e.sync()
	if got := bm("written after"); len(got) == 0 || got[0] != "notes:/later.md" {
		t.Fatalf("BM25 for a write after compacting: %v", got)
	}
}
