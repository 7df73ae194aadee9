package vfs

import (
	"context"
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
	docs, err := s.IndexDocs(ctx, []string{changes(t, s)[0].ItemID}, true)
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
