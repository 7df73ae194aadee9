package vfs

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestStore_NewVectorRecordsEveryChunkWithItsText: vectors are keyed by
// chunk text, so the vector computed for one item's chunk is also the
// vector of every other chunk with that text (two binary items of the same
// name and type have the same searchable text). Each of those items must get
// an outbox entry in the transaction that stores the vector, or the vector
// index never learns of it.
func TestStore_NewVectorRecordsEveryChunkWithItsText(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	var ids []string
	for _, ref := range []string{"bin:/a/logo.png", "bin:/b/logo.png"} {
		res, err := s.Write(ctx, WriteParams{Ref: mustRef(t, ref), Content: png})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Item.ID)
	}
	before, err := s.OutboxSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.PendingEmbeddings(ctx, 1)
	if err != nil || len(first) != 1 {
		t.Fatalf("pending = %v, %v", first, err)
	}
	if err := s.SaveEmbeddings(ctx, "m1", first, [][]float32{{1, 0, 0}}); err != nil {
		t.Fatal(err)
	}
	cs, _, err := s.Changes(ctx, before, 100)
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]bool{}
	for _, c := range cs {
		if c.VectorsOnly && c.VectorsFrom <= 0 && c.VectorsTo > 0 {
			recorded[c.ItemID] = true
		}
	}
	for _, id := range ids {
		if !recorded[id] {
			t.Errorf("item %s: its chunk has a vector now, but no outbox entry says so (entries %+v)", id, cs)
		}
	}
	if st := mustStats(t, s); st.PendingEmbed != 0 || st.Vectors != 1 {
		t.Errorf("after one vector for both chunks: %+v, want nothing pending and 1 vector", st)
	}
}

// TestStore_ModelBackAfterRunWithoutOneQueuesWhatLacksAVector: chunks
// stored while no model was installed are not queued. When the same model
// comes back, every chunk without its vector must wait in the queue again
// at once (not only after the items are chunked again), or a vector that
// arrives for its text meanwhile reaches no outbox entry.
func TestStore_ModelBackAfterRunWithoutOneQueuesWhatLacksAVector(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	mustSetIndexing(t, s, paragraphChunker{"fallback"}, "")
	mustWrite(t, s, "notes:/a.md", "written without a model")
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	st := mustStats(t, s)
	if st.PendingEmbed != st.Chunks || st.Chunks == 0 {
		t.Fatalf("after the model came back: %+v, want every chunk queued", st)
	}
	for {
		n, err := s.ChunkPending(ctx, 16)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if st := mustStats(t, s); st.PendingEmbed != st.Chunks {
		t.Fatalf("after chunking again: %+v, want every chunk queued", st)
	}
}

// TestStore_OpenIndexesAnOlderQueue: a store written before the queue's
// hash index existed gets it at open, filled from the queue.
func TestStore_OpenIndexesAnOlderQueue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ctxd.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	mustWrite(t, s, "notes:/a.md", "same text")
	mustWrite(t, s, "notes:/b.md", "same text")
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte(bucketEmbedWait)) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	if err := s.Verify(ctx); err != nil {
		t.Fatalf("verify after open: %v", err)
	}
	first, err := s.PendingEmbeddings(ctx, 1)
	if err != nil || len(first) != 1 {
		t.Fatalf("pending = %v, %v", first, err)
	}
	if err := s.SaveEmbeddings(ctx, "m1", first, [][]float32{{1, 0}}); err != nil {
		t.Fatal(err)
	}
	if st := mustStats(t, s); st.PendingEmbed != 0 {
		t.Fatalf("one vector for both chunks left %+v", st)
	}
}

// sameDirection reports whether a and b point the same way, within what
// storing a vector as float16s changes.
func sameDirection(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return na > 0 && nb > 0 && dot/math.Sqrt(na*nb) > 1-1e-6
}

func TestEncodeVector(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 384)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * 1000) // any scale is stored as unit length
	}
	b := encodeVector(v)
	if len(b) != 1+2*len(v) {
		t.Fatalf("encoded %d floats in %d bytes, want %d", len(v), len(b), 1+2*len(v))
	}
	got := decodeVector(b)
	var norm float64
	for _, f := range got {
		norm += float64(f) * float64(f)
	}
	if math.Abs(norm-1) > 1e-3 || !sameDirection(got, v) {
		t.Errorf("decoded vector has norm² %v and is not v's direction", norm)
	}
	// Vectors stored before float16s were plain little-endian float32s.
	old := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0} // 1, -2
	if got := decodeVector(old); !slices.Equal(got, []float32{1, -2}) {
		t.Errorf("decodeVector(float32s) = %v, want [1 -2]", got)
	}
}
