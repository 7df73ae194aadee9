package vfs

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/jackc/pgx/v5"
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
	path := newLocation(t)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	mustWrite(t, s, "notes:/a.md", "same text")
	mustWrite(t, s, "notes:/b.md", "same text")
	if err := s.db.Update(ctx, func(tx backend.Tx) error { return tx.DeleteBucket([]byte(bucketEmbedWait)) }); err != nil {
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

// TestStore_VectorBlocks: vectors are packed into blocks in the order they
// come, a later transaction goes on filling the last block, a vector
// stored again overwrites its slot, and values stored under the hash
// before blocks existed still read (and move to a block when replaced).
func TestStore_VectorBlocks(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	const dims = 2000 // 4001-byte slots: 4 per block
	perBlock := (blockBytes - 2) / (1 + 2*dims)
	rng := rand.New(rand.NewPCG(3, 4))
	vector := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	want := map[[32]byte][]float32{}
	put := func(hashes ...int) {
		t.Helper()
		err := s.update(ctx, func(tx *txn) error {
			for _, h := range hashes {
				hash := [32]byte{byte(h), 0xb1}
				want[hash] = vector(dims)
				if err := tx.putVector(hash, want[hash]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	blocks := func() (n int) {
		t.Helper()
		err := s.view(ctx, func(tx *txn) error {
			return tx.vectorBucket().Bucket([]byte(vectorBlocks)).ForEach(func(_, v []byte) error {
				if len(v) > blockBytes {
					t.Errorf("block of %d bytes, at most %d", len(v), blockBytes)
				}
				n++
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	check := func(when string) {
		t.Helper()
		for hash, v := range want {
			got, err := s.Vector(ctx, hash)
			if err != nil || !sameDirection(got, v) {
				t.Fatalf("%s: vector %x: %d floats, %v; not the one stored", when, hash[:2], len(got), err)
			}
		}
	}
	put(0, 1, 2, 3, 4, 5) // a full block and two slots of the next
	put(6, 7, 8)          // fills that block from a new transaction, then a third
	check("after two transactions")
	if n := blocks(); perBlock != 4 || n != 3 {
		t.Fatalf("9 vectors, %d per block: %d blocks, want 3", perBlock, n)
	}
	put(0, 8) // stored again: in place, in an old block and in the last
	check("after overwriting")
	if n := blocks(); n != 3 {
		t.Errorf("after overwriting two vectors: %d blocks, want still 3", n)
	}

	// Values of a store written before blocks: a float16 and a float32 vector
	// under their hash.
	f16, f32 := [32]byte{0xf1}, [32]byte{0xf2}
	want[f16], want[f32] = vector(dims), []float32{1, -2, 0.5}
	err := s.update(ctx, func(tx *txn) error {
		b := tx.vectorBucket()
		raw32 := make([]byte, 0, 12)
		for _, f := range want[f32] {
			raw32 = binary.LittleEndian.AppendUint32(raw32, math.Float32bits(f))
		}
		if err := errors.Join(b.Put(f16[:], encodeVector(want[f16])), b.Put(f32[:], raw32)); err != nil {
			return err
		}
		return tx.addCounter(vectorCounter("m1"), 2)
	})
	if err != nil {
		t.Fatal(err)
	}
	check("with values stored before blocks")
	// A vector of another width (the model's changed) takes a new block.
	hash := [32]byte{0xf2}
	err = s.update(ctx, func(tx *txn) error {
		want[hash] = vector(3)
		return tx.putVector(hash, want[hash])
	})
	if err != nil {
		t.Fatal(err)
	}
	check("after replacing a float32 value by a vector of another width")
	if n := blocks(); n != 4 {
		t.Errorf("a 3-float vector after 2000-float ones: %d blocks, want 4", n)
	}
}

// TestStore_VectorMirror: on PostgreSQL every chunk vector is also in
// ctxd_vectors, a pgvector column usable from SQL; MirrorVectors fills it
// for a store whose mirror is empty (a key-for-key copy). On bbolt there is
// no mirror and MirrorVectors writes nothing.
func TestStore_VectorMirror(t *testing.T) {
	loc := newLocation(t)
	s, err := Open(loc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	mustWrite(t, s, "/a.md", "first paragraph\n\nsecond paragraph\n")
	pending, err := s.PendingEmbeddings(ctx, 10)
	if err != nil || len(pending) != 2 {
		t.Fatalf("pending = %v, %v", pending, err)
	}
	vecs := [][]float32{{0.5, -0.25, 1}, {0.125, 0, -1}}
	if err := s.SaveEmbeddings(ctx, "m1", pending, vecs); err != nil {
		t.Fatal(err)
	}
	if testBackend != "postgres" {
		if n, err := s.MirrorVectors(ctx); n != 0 || err != nil {
			t.Errorf("MirrorVectors on %s = %d, %v; want 0, nil", testBackend, n, err)
		}
		return
	}
	conn, err := pgx.Connect(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	mirrored := func() map[string]string {
		t.Helper()
		rows, err := conn.Query(ctx, `SELECT encode(chunk_hash, 'hex'), embedding::text FROM ctxd_vectors WHERE model = 'm1'`)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kv [2]string, err error) {
			err = r.Scan(&kv[0], &kv[1])
			return kv, err
		})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, kv := range got {
			m[kv[0]] = kv[1]
		}
		return m
	}
	// The mirror holds the vectors as the store keeps them: unit length.
	want := mirrored()
	if len(want) != 2 || want[fmt.Sprintf("%x", pending[1].Hash)] == "" {
		t.Fatalf("ctxd_vectors = %v, want both chunks", want)
	}
	var first []float64
	if err := json.Unmarshal([]byte(want[fmt.Sprintf("%x", pending[0].Hash)]), &first); err != nil {
		t.Fatal(err)
	}
	norm := math.Sqrt(0.5*0.5 + 0.25*0.25 + 1)
	for i, x := range []float64{0.5, -0.25, 1} {
		if math.Abs(first[i]-x/norm) > 1e-2 {
			t.Errorf("mirrored vector %v, want about %v / %.3f", first, vecs[0], norm)
			break
		}
	}
	// The nearest neighbour by pgvector's own operator is the first chunk.
	var nearest string
	if err := conn.QueryRow(ctx, `SELECT encode(chunk_hash, 'hex') FROM ctxd_vectors ORDER BY embedding <=> '[1,0,1]'::halfvec LIMIT 1`).Scan(&nearest); err != nil || nearest != fmt.Sprintf("%x", pending[0].Hash) {
		t.Errorf("nearest by <=> = %s, %v; want the first chunk", nearest, err)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM ctxd_vectors`); err != nil {
		t.Fatal(err)
	}
	if n, err := s.MirrorVectors(ctx); n != 2 || err != nil {
		t.Errorf("MirrorVectors = %d, %v; want 2", n, err)
	}
	if got := mirrored(); !maps.Equal(got, want) {
		t.Errorf("ctxd_vectors after MirrorVectors = %v, want %v", got, want)
	}
}
