package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"testing"
)

// paragraphChunker is a hand-written fake: one chunk per blank-line-separated
// paragraph, hashed by its text. The real chunker (index/chunk) is exercised
// by the daemon's tests with the real model.
type paragraphChunker struct{ id string }

func (p paragraphChunker) ID() string { return p.id }

func (p paragraphChunker) Chunk(content []byte, _ ChunkDoc) []ChunkSpan {
	var out []ChunkSpan
	start := 0
	for start < len(content) {
		end := bytes.Index(content[start:], []byte("\n\n"))
		if end < 0 {
			end = len(content)
		} else {
			end += start
		}
		if text := bytes.TrimSpace(content[start:end]); len(text) > 0 {
			out = append(out, ChunkSpan{Start: start, End: end, Tokens: len(bytes.Fields(text)) + 2, Hash: sha256.Sum256(content[start:end])})
		}
		start = end + 2
	}
	return out
}

func mustSetIndexing(t *testing.T, s *Store, c Chunker, model string) IndexingChange {
	t.Helper()
	ch, err := s.SetIndexing(context.Background(), c, model)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func mustStats(t *testing.T, s *Store) EmbedStats {
	t.Helper()
	st, err := s.EmbedStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// embedAll drains the queue with a fake vector per chunk and returns how many
// vectors were computed (entries whose vector existed cost nothing).
func embedAll(t *testing.T, s *Store, model string) int {
	t.Helper()
	return embedChunks(t, s, model, func(p PendingChunk) []float32 { return []float32{float32(p.Hash[0]), float32(len(p.Text))} })
}

// embedChunks drains the chunk embedding queue, a few at a time, with
// vectors from f, and returns how many were computed.
func embedChunks(t *testing.T, s *Store, model string, f func(PendingChunk) []float32) int {
	t.Helper()
	ctx := context.Background()
	computed := 0
	for {
		pending, err := s.PendingEmbeddings(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) == 0 {
			return computed
		}
		vecs := make([][]float32, len(pending))
		for i, p := range pending {
			if !p.Have {
				vecs[i] = f(p)
				computed++
			}
		}
		if err := s.SaveEmbeddings(ctx, model, pending, vecs); err != nil {
			t.Fatal(err)
		}
	}
}

const threeParas = "alpha one\n\nbeta two\n\ngamma three\n"

func TestStore_Index_WriteChunksAndQueues(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	mustWrite(t, s, "/a.md", threeParas)
	chunks, err := s.Chunks(context.Background(), mustRef(t, "/a.md"))
	if err != nil || len(chunks) != 3 || string([]byte(threeParas)[chunks[1].Start:chunks[1].End]) != "beta two" {
		t.Fatalf("chunks = %+v, %v", chunks, err)
	}
	if st := mustStats(t, s); st.Chunks != 3 || st.PendingEmbed != 3 || st.Vectors != 0 {
		t.Errorf("stats after write = %+v", st)
	}
	if n := embedAll(t, s, "m1"); n != 3 {
		t.Errorf("computed %d vectors, want 3", n)
	}
	if st := mustStats(t, s); st.PendingEmbed != 0 || st.Vectors != 3 {
		t.Errorf("stats after embedding = %+v", st)
	}
	// A second item sharing two paragraphs needs one new vector.
	mustWrite(t, s, "/b.md", "alpha one\n\nbeta two\n\ndelta four\n")
	if n := embedAll(t, s, "m1"); n != 1 {
		t.Errorf("second item computed %d vectors, want 1 (unchanged chunks are never embedded twice)", n)
	}
	// A binary item gets one chunk of searchable text (its name and type);
	// an empty item has none.
	if _, err := s.Write(context.Background(), WriteParams{Ref: mustRef(t, "/bin"), Content: []byte{0, 1}}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, "/empty.txt", "")
	if st := mustStats(t, s); st.Chunks != 7 || st.PendingChunking != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestStore_Index_CopyMoveEditDelete(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	mustWrite(t, s, "/dir/a.md", threeParas)
	embedAll(t, s, "m1")

	if _, err := s.Copy(ctx, mustRef(t, "/dir"), mustRef(t, "other:/copy"), true, ConflictError); err != nil {
		t.Fatal(err)
	}
	if n := embedAll(t, s, "m1"); n != 0 {
		t.Errorf("copy computed %d vectors; copies must reuse them", n)
	}
	if c, _ := s.Chunks(ctx, mustRef(t, "other:/copy/a.md")); len(c) != 3 {
		t.Errorf("copy has %d chunks", len(c))
	}
	if _, err := s.Move(ctx, mustRef(t, "/dir/a.md"), mustRef(t, "moved:/a.md"), ConflictError); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Chunks(ctx, mustRef(t, "moved:/a.md")); len(c) != 3 {
		t.Errorf("moved item has %d chunks", len(c))
	}
	if _, err := s.Edit(ctx, mustRef(t, "moved:/a.md"), []Patch{{StartLine: 3, EndLine: 3, Content: "BETA TWO"}}, ""); err != nil {
		t.Fatal(err)
	}
	if n := embedAll(t, s, "m1"); n != 1 {
		t.Errorf("edit of one paragraph computed %d vectors, want 1", n)
	}
	if _, err := s.Delete(ctx, mustRef(t, "other:/"), true); err != nil {
		t.Fatal(err)
	}
	if st := mustStats(t, s); st.Chunks != 3 || st.PendingEmbed != 0 {
		t.Errorf("after delete: %+v", st)
	}
}

func TestStore_Index_NoChunkerThenChunker(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "/a.md", threeParas)
	mustWrite(t, s, "/b.md", "one\n")
	if st := mustStats(t, s); st.PendingChunking != 2 || st.Chunks != 0 {
		t.Fatalf("without a chunker: %+v", st)
	}
	// A copy of an unchunked item waits too.
	if _, err := s.Copy(context.Background(), mustRef(t, "/b.md"), mustRef(t, "/c.md"), false, ConflictError); err != nil {
		t.Fatal(err)
	}
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	for {
		n, err := s.ChunkPending(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if st := mustStats(t, s); st.PendingChunking != 0 || st.Chunks != 5 || st.PendingEmbed != 5 {
		t.Errorf("after chunking: %+v", st)
	}
}

func TestStore_Index_ModelAndChunkerChanges(t *testing.T) {
	path := newLocation(t)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	mustWrite(t, s, "/a.md", threeParas)
	embedAll(t, s, "m1")
	s.Close()

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ch := mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1"); ch.Rechunk != 0 || ch.Reembed != 0 || ch.PrevModel != "m1" {
		t.Errorf("same indexing after reopen: %+v", ch)
	}
	ch := mustSetIndexing(t, s, paragraphChunker{"p1"}, "m2")
	if ch.Reembed != 3 || ch.PrevModel != "m1" {
		t.Errorf("model change: %+v", ch)
	}
	if st := mustStats(t, s); st.Vectors != 0 || st.PendingEmbed != 3 {
		t.Errorf("after model change: %+v (vectors of m1 must not count for m2)", st)
	}
	if n := embedAll(t, s, "m2"); n != 3 {
		t.Errorf("m2 computed %d", n)
	}
	// Saving for a model that is no longer current stores nothing.
	mustWrite(t, s, "/b.md", "fresh\n")
	pending, _ := s.PendingEmbeddings(context.Background(), 10)
	if err := s.SaveEmbeddings(context.Background(), "m1", pending, make([][]float32, len(pending))); err != nil {
		t.Fatal(err)
	}
	if st := mustStats(t, s); st.PendingEmbed != 1 {
		t.Errorf("stale-model save cleared the queue: %+v", st)
	}
	if ch := mustSetIndexing(t, s, paragraphChunker{"p2"}, "m2"); ch.Rechunk != 2 || ch.PrevChunker != "p1" {
		t.Errorf("chunker change: %+v", ch)
	}
	if err := s.check(); err != nil {
		t.Error(err)
	}
}

func TestStore_Index_ReembedAndStaleSave(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	mustWrite(t, s, "/d/a.md", threeParas)
	mustWrite(t, s, "/e.md", "solo\n")
	embedAll(t, s, "m1")

	n, items, err := s.Reembed(ctx, []Ref{mustRef(t, "/d")}, false)
	if err != nil || n != 3 || len(items) != 1 {
		t.Fatalf("Reembed(/d) = %d, %v, %v", n, items, err)
	}
	// Only the re-embedded item's entries, though another item queued too.
	mustWrite(t, s, "/g.md", "queued after\n")
	of, queued, err := s.PendingEmbeddingsOf(ctx, items, 2)
	if err != nil || len(of) != 2 || queued != 3 || of[0].Have || of[1].Have {
		t.Fatalf("PendingEmbeddingsOf(/d) = %d chunks (%v), %d queued, %v; want 2 forced of 3", len(of), of, queued, err)
	}
	if c := embedAll(t, s, "m1"); c != 4 {
		t.Errorf("forced re-embedding computed %d, want 3 even though vectors existed, and /g.md", c)
	}
	if of, queued, err := s.PendingEmbeddingsOf(ctx, items, 2); err != nil || len(of) != 0 || queued != 0 {
		t.Errorf("PendingEmbeddingsOf after embedding = %v, %d, %v", of, queued, err)
	}
	if n, _, err := s.Reembed(ctx, nil, true); err != nil || n != 5 {
		t.Errorf("Reembed(all) = %d, %v", n, err)
	}
	embedAll(t, s, "m1")
	if _, _, err := s.Reembed(ctx, []Ref{mustRef(t, "/nope")}, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("Reembed of a missing ref: %v", err)
	}

	// The item changes between fetching its queue and saving: the new
	// chunk stays queued.
	mustWrite(t, s, "/f.md", "old text\n")
	pending, err := s.PendingEmbeddings(ctx, 10)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %v, %v", pending, err)
	}
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/f.md"), Content: []byte("new text\n"), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveEmbeddings(ctx, "m1", pending, [][]float32{{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if st := mustStats(t, s); st.PendingEmbed != 1 {
		t.Errorf("stale save dequeued the new chunk: %+v", st)
	}
	v, err := s.Vector(ctx, pending[0].Hash)
	if err != nil || !sameDirection(v, []float32{1, 2}) {
		t.Errorf("Vector = %v, %v; want the direction of [1 2]", v, err)
	}
}
