package vfs

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// changes returns every outbox entry after seq 0.
func changes(t *testing.T, s *Store) []IndexChange {
	t.Helper()
	cs, _, err := s.Changes(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestStore_Outbox_EveryIndexedChangeIsRecorded(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	a := mustWrite(t, s, "notes:/a.md", "one\n\ntwo\n\nthree")
	mustWrite(t, s, "notes:/b.md", "bee")
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "notes:/a.md"), Content: []byte("one"), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Move(ctx, mustRef(t, "notes:/a.md"), mustRef(t, "other:/a.md"), ConflictError); err != nil {
		t.Fatal(err)
	}
	embedAll(t, s, "m1")
	if _, err := s.Delete(ctx, mustRef(t, "other:/a.md"), false); err != nil {
		t.Fatal(err)
	}
	var got []int
	var vectorsOnly []bool
	for i, c := range changes(t, s) {
		if c.Seq != uint64(i+1) {
			t.Fatalf("entry %d has seq %d; sequences must be dense and ordered", i, c.Seq)
		}
		if c.ItemID == a.ID {
			got, vectorsOnly = append(got, c.PrevChunks), append(vectorsOnly, c.VectorsOnly)
		}
	}
	// write (0 before), overwrite (3 before), move (1), vectors saved (1), delete (1).
	if want := []int{0, 3, 1, 1, 1}; !slices.Equal(got, want) {
		t.Fatalf("prev chunk counts of a.md's entries = %v, want %v", got, want)
	}
	if want := []bool{false, false, false, true, false}; !slices.Equal(vectorsOnly, want) {
		t.Fatalf("vectors-only flags = %v, want %v", vectorsOnly, want)
	}
	seq, err := s.OutboxSeq(ctx)
	if err != nil || seq != uint64(len(changes(t, s))) {
		t.Fatalf("OutboxSeq = %d, %v", seq, err)
	}
}

func TestStore_Outbox_TrimKeepsTheSequence(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	for _, r := range []string{"n:/1", "n:/2", "n:/3"} {
		mustWrite(t, s, r, "x")
	}
	if err := s.TrimOutbox(ctx, 2); err != nil {
		t.Fatal(err)
	}
	cs, retained, err := s.Changes(ctx, 0, 10)
	if err != nil || len(cs) != 1 || cs[0].Seq != 3 || retained != 3 {
		t.Fatalf("after trim: %+v retained %d err %v", cs, retained, err)
	}
	if err := s.TrimOutbox(ctx, 3); err != nil {
		t.Fatal(err)
	}
	// Empty: the next sequence to be written is what is retained, so an index
	// at 3 is current and an index at 1 knows it missed entries.
	if _, retained, _ := s.Changes(ctx, 3, 10); retained != 4 {
		t.Fatalf("retained on empty outbox = %d, want 4", retained)
	}
	mustWrite(t, s, "n:/4", "x")
	if cs := changes(t, s); len(cs) != 1 || cs[0].Seq != 4 {
		t.Fatalf("after trim and write: %+v", cs)
	}
}

func TestStore_PrecomputedEmbeddings(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	write := func(ref string, e *Embeddings) error {
		_, err := s.Write(ctx, WriteParams{Ref: mustRef(t, ref), Content: []byte("one\n\ntwo"), IsText: true, Embeddings: e})
		return err
	}
	two := [][]float32{{1, 0}, {0, 1}}
	wantErr(t, write("n:/nomodel", &Embeddings{Model: "m1", Vectors: two}), ErrInvalid)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	wantErr(t, write("n:/wrongmodel", &Embeddings{Model: "m2", Vectors: two}), ErrInvalid)
	if e := wantErr(t, write("n:/count", &Embeddings{Model: "m1", Vectors: two[:1]}), ErrInvalid); e.Message == "" {
		t.Fatal("no message")
	}
	if ps := paths(t, s); len(ps) != 0 {
		t.Fatalf("failed writes left %v", ps)
	}
	if err := write("n:/ok", &Embeddings{Model: "m1", Vectors: two}); err != nil {
		t.Fatal(err)
	}
	st := mustStats(t, s)
	if st.PendingEmbed != 0 || st.Vectors != 2 || st.Chunks != 2 {
		t.Fatalf("stats after precomputed write = %+v, want 2 chunks, 2 vectors, none pending", st)
	}
	docs, err := s.IndexDocs(ctx, []IndexRead{{ItemID: changes(t, s)[0].ItemID}}, true, 0, 0)
	if err != nil || len(docs) != 1 || len(docs[0].Chunks) != 2 || docs[0].Chunks[1].Vector[1] != 1 {
		t.Fatalf("IndexDocs = %+v, %v", docs, err)
	}
}

func TestStore_RecordRetrievals(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	it := mustWrite(t, s, "n:/a", "x")
	before, _, _ := s.Changes(ctx, 0, 10)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.RecordRetrievals(ctx, []string{it.ID, it.ID, "01890000-0000-7000-8000-000000000000"}, at); err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, mustRef(t, "n:/a"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Item.RetrievalCount != 2 || !info.Item.LastRetrievedAt.Equal(at) {
		t.Fatalf("count %d at %v", info.Item.RetrievalCount, info.Item.LastRetrievedAt)
	}
	if after, _, _ := s.Changes(ctx, 0, 10); len(after) != len(before) {
		t.Fatal("usage signals must not touch the outbox: they are not indexed")
	}
	if err := s.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestStore_IndexDocs_ReadsLargeItemsInSteps(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	big := mustWrite(t, s, "n:/big", "a1\n\nb22\n\nc333\n\nd4444\n\ne55555")
	small := mustWrite(t, s, "n:/small", "x\n\ny")
	reads := []IndexRead{{ItemID: big.ID}, {ItemID: small.ID}}

	// Unlimited: both whole.
	docs, err := s.IndexDocs(ctx, reads, false, 0, 0)
	if err != nil || len(docs) != 2 || len(docs[0].Chunks) != 5 || docs[0].Total != 5 || docs[0].More || len(docs[1].Chunks) != 2 {
		t.Fatalf("unlimited IndexDocs = %+v, %v", docs, err)
	}
	// Two chunks a read: the large item comes alone, in steps that cover
	// each chunk once, in order.
	var got []string
	for from := 0; ; {
		docs, err := s.IndexDocs(ctx, []IndexRead{{ItemID: big.ID, From: from}, {ItemID: small.ID}}, false, 2, 0)
		if err != nil || len(docs) != 1 || docs[0].From != from || docs[0].Total != 5 {
			t.Fatalf("IndexDocs from %d = %+v, %v; want one step of the large item", from, docs, err)
		}
		for _, c := range docs[0].Chunks {
			got = append(got, c.Text)
		}
		if !docs[0].More {
			break
		}
		from += len(docs[0].Chunks)
	}
	if want := []string{"a1", "b22", "c333", "d4444", "e55555"}; !slices.Equal(got, want) {
		t.Fatalf("steps read %q, want %q", got, want)
	}
	// A byte limit below the first chunk still reads one chunk; an item that
	// would be cut short after another one is left to the next read.
	docs, err = s.IndexDocs(ctx, []IndexRead{{ItemID: small.ID}, {ItemID: big.ID}}, false, 0, 4)
	if err != nil || len(docs) != 1 || docs[0].ItemID != small.ID || len(docs[0].Chunks) != 2 {
		t.Fatalf("byte-limited IndexDocs = %+v, %v; want the small item only", docs, err)
	}
	docs, err = s.IndexDocs(ctx, []IndexRead{{ItemID: big.ID}}, false, 0, 1)
	if err != nil || len(docs) != 1 || len(docs[0].Chunks) != 1 || !docs[0].More {
		t.Fatalf("IndexDocs with a 1-byte limit = %+v, %v; want one chunk and More", docs, err)
	}
	// A range reads just those chunks; one past the end reads none.
	docs, err = s.IndexDocs(ctx, []IndexRead{{ItemID: big.ID, From: 1, To: 3}, {ItemID: small.ID, From: 9, To: 12}}, false, 0, 0)
	if err != nil || len(docs) != 2 || docs[0].From != 1 || len(docs[0].Chunks) != 2 || docs[0].Chunks[0].Text != "b22" || docs[0].More ||
		len(docs[1].Chunks) != 0 || docs[1].Total != 2 {
		t.Fatalf("ranged IndexDocs = %+v, %v", docs, err)
	}
	// ScanIndexDocs gives every chunk of every item exactly once.
	n := 0
	if _, err := s.ScanIndexDocs(ctx, false, func(d IndexDoc) error {
		n += len(d.Chunks)
		return nil
	}); err != nil || n != 7 {
		t.Fatalf("ScanIndexDocs saw %d chunks, %v; want 7", n, err)
	}
}

func TestStore_Outbox_VectorChangesNameTheirChunks(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	it := mustWrite(t, s, "n:/a", "zero\n\none\n\ntwo\n\nthree\n\nfour")
	pending, err := s.PendingEmbeddings(ctx, 10)
	if err != nil || len(pending) != 5 {
		t.Fatalf("PendingEmbeddings = %d, %v", len(pending), err)
	}
	// Save chunks 1 and 3 in one transaction, then chunk 4.
	vec := [][]float32{{1, 0}, {0, 1}}
	if err := s.SaveEmbeddings(ctx, "m1", []PendingChunk{pending[1], pending[3]}, vec); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveEmbeddings(ctx, "m1", pending[4:], vec[:1]); err != nil {
		t.Fatal(err)
	}
	cs := changes(t, s)
	if len(cs) != 3 || cs[0].VectorsOnly || cs[0].ItemID != it.ID {
		t.Fatalf("changes = %+v; want the write, then two vector changes", cs)
	}
	for i, want := range [][2]int{{1, 4}, {4, 5}} {
		c := cs[i+1]
		if !c.VectorsOnly || c.VectorsFrom != want[0] || c.VectorsTo != want[1] {
			t.Errorf("vector change %d = %+v; want chunks [%d, %d)", i, c, want[0], want[1])
		}
	}
}

// indexedAt returns the IndexedAt and UpdatedAt of the item at ref.
func indexedAt(t *testing.T, s *Store, ref string) (indexed, updated time.Time) {
	t.Helper()
	info, err := s.Info(context.Background(), mustRef(t, ref))
	if err != nil {
		t.Fatalf("Info(%s): %v", ref, err)
	}
	return info.Item.IndexedAt, info.Item.UpdatedAt
}

func mustMarkIndexed(t *testing.T, s *Store, through uint64) {
	t.Helper()
	if err := s.MarkIndexed(context.Background(), through); err != nil {
		t.Fatalf("MarkIndexed(%d): %v", through, err)
	}
}

// TestStore_MarkIndexed marks what an index applied through a sequence:
// items changed again later, waiting for a chunker or directories stay
// unmarked, an edit clears the mark until applied again, and marking
// appends no outbox entry.
func TestStore_MarkIndexed(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	seq := func() uint64 {
		n, err := s.OutboxSeq(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// No chunker yet: the item waits for one and has nothing searchable.
	mustWrite(t, s, "n:/queued.md", "waiting for a chunker")
	mustMarkIndexed(t, s, seq())
	if at, _ := indexedAt(t, s, "n:/queued.md"); !at.IsZero() {
		t.Fatalf("an item waiting for a chunker is marked indexed at %v", at)
	}
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	if _, err := s.ChunkPending(ctx, 10); err != nil {
		t.Fatal(err)
	}

	mustWrite(t, s, "n:/a.md", "alpha\n\nbeta")
	mustMkdir(t, s, "n:/dir")
	mustWrite(t, s, "n:/b.md", "bee")
	through := seq()
	mustWrite(t, s, "n:/c.md", "sea")
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "n:/b.md"), Content: []byte("bee again"), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
		t.Fatal(err)
	}
	before := seq()
	mustMarkIndexed(t, s, through)
	if got := seq(); got != before {
		t.Fatalf("MarkIndexed appended outbox entries: seq %d -> %d", before, got)
	}
	for ref, want := range map[string]bool{"n:/queued.md": true, "n:/a.md": true, "n:/b.md": false, "n:/c.md": false} {
		at, updated := indexedAt(t, s, ref)
		if at.IsZero() == want {
			t.Errorf("%s: indexed at %v, want marked %v", ref, at, want)
		}
		if want && at.Before(updated) {
			t.Errorf("%s: indexed at %v before its update at %v", ref, at, updated)
		}
	}
	if at, _ := indexedAt(t, s, "n:/dir"); !at.IsZero() {
		t.Errorf("directory marked indexed at %v", at)
	}

	// The rest, then an edit: cleared until its change is applied.
	mustMarkIndexed(t, s, seq())
	for _, ref := range []string{"n:/b.md", "n:/c.md"} {
		if at, _ := indexedAt(t, s, ref); at.IsZero() {
			t.Errorf("%s not marked once its last change was applied", ref)
		}
	}
	if _, err := s.Edit(ctx, mustRef(t, "n:/a.md"), []Patch{{StartLine: 1, EndLine: 1, Content: "gamma"}}, ""); err != nil {
		t.Fatal(err)
	}
	if at, _ := indexedAt(t, s, "n:/a.md"); !at.IsZero() {
		t.Fatalf("edited item still indexed at %v", at)
	}
	mustMarkIndexed(t, s, seq())
	at, updated := indexedAt(t, s, "n:/a.md")
	if at.IsZero() || at.Before(updated) {
		t.Fatalf("after the edit was applied: indexed at %v, updated at %v", at, updated)
	}
	// A move changes the ref the index finds it by: cleared until applied.
	if _, err := s.Move(ctx, mustRef(t, "n:/c.md"), mustRef(t, "n:/moved.md"), ConflictError); err != nil {
		t.Fatal(err)
	}
	if at, _ := indexedAt(t, s, "n:/moved.md"); !at.IsZero() {
		t.Fatalf("moved item still indexed at %v", at)
	}
	mustMarkIndexed(t, s, seq())
	if at, updated := indexedAt(t, s, "n:/moved.md"); at.IsZero() || at.Before(updated) {
		t.Fatalf("after the move was applied: indexed at %v, updated at %v", at, updated)
	}

	// Vectors saved change nothing searchable by BM25: no new mark.
	if embedAll(t, s, "m1") == 0 {
		t.Fatal("nothing was embedded")
	}
	mustMarkIndexed(t, s, seq())
	mustWrite(t, s, "n:/d.md", "dee")
	mustMarkIndexed(t, s, seq())
	if again, _ := indexedAt(t, s, "n:/a.md"); !again.Equal(at) {
		t.Errorf("vectors-only entries re-marked a.md: %v -> %v", at, again)
	}
	if at, _ := indexedAt(t, s, "n:/d.md"); at.IsZero() {
		t.Error("d.md, written after the vectors, not marked")
	}
}

// TestStore_MarkIndexedInBatches walks more entries than one transaction
// may, and resumes where the last call stopped.
func TestStore_MarkIndexedInBatches(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	const n = 64
	for i := range n {
		mustWrite(t, s, fmt.Sprintf("src:/d/%d.md", i), fmt.Sprintf("item %d", i))
	}
	// Copies append one entry per item in one transaction each.
	copies := markBatch/n + 1
	for c := range copies {
		if _, err := s.Copy(ctx, mustRef(t, "src:/d"), mustRef(t, fmt.Sprintf("dst:/c%d", c)), true, ConflictError); err != nil {
			t.Fatal(err)
		}
	}
	through, err := s.OutboxSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if through <= markBatch {
		t.Fatalf("only %d entries; the test needs more than %d", through, markBatch)
	}
	mustWrite(t, s, "src:/later.md", "not applied")
	mustMarkIndexed(t, s, through)
	unmarked := 0
	for _, ref := range paths(t, s) {
		if at, _ := indexedAt(t, s, ref); at.IsZero() {
			unmarked++
			if ref != "src:/later.md" {
				t.Errorf("%s not marked", ref)
			}
		}
	}
	if unmarked != 1 {
		t.Fatalf("%d items unmarked, want only the one written after %d", unmarked, through)
	}
	var walked uint64
	if err := s.view(ctx, func(t *txn) error { walked = t.indexedSeq(); return nil }); err != nil || walked != through {
		t.Fatalf("indexed seq = %d, %v; want %d", walked, err, through)
	}
}

// On a shared store an outbox entry names the replica that wrote it; on
// one of its own it names none.
func TestOutbox_Replica(t *testing.T) {
	s := mustOpenStore(t, Options{ReplicaID: "replica-a"})
	mustWrite(t, s, "n:/a", "x")
	changes, _, err := s.Changes(ctx, 0, 10)
	if err != nil || len(changes) == 0 {
		t.Fatalf("changes %v %v", changes, err)
	}
	want := ""
	if s.Shared() {
		want = "replica-a"
	}
	for _, c := range changes {
		if c.Replica != want {
			t.Fatalf("change %+v names replica %q, want %q", c, c.Replica, want)
		}
	}
}

// TrimOutboxTo reports the replica's applied sequence but deletes no entry
// past through.
func TestOutbox_TrimOutboxTo(t *testing.T) {
	s := mustOpenStore(t)
	for _, r := range []string{"n:/1", "n:/2", "n:/3"} {
		mustWrite(t, s, r, "x")
	}
	seq, err := s.OutboxSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.TrimOutboxTo(ctx, seq, seq-1); err != nil {
		t.Fatal(err)
	}
	if _, retained, err := s.Changes(ctx, 0, 10); err != nil || retained != seq {
		t.Fatalf("retained %d, %v; want %d (only the last entry kept)", retained, err, seq)
	}
	head, reps, err := s.Replicas(ctx)
	if err != nil || len(reps) != 1 || reps[0].Applied != seq || head != seq {
		t.Fatalf("replicas %+v head %d, %v; want this one reported at %d", reps, head, err, seq)
	}
}
