package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/ctxd/ctxd/vfs/backend"
)

// Vectors are keyed by the hash of the text a chunk embeds, so one vector
// serves every chunk with that text, in any item. A vector that appears for
// a hash therefore changes what each such chunk contributes to the vector
// index, and each of them needs an outbox entry in the same transaction:
// putVector is the one place vectors are stored, and it appends them.

// bucketEmbedWait indexes the embedding queue by hash, so that a new vector
// finds every chunk waiting for it:
// hash (32) | item id (16) | index (4) -> queuedMark.
const bucketEmbedWait = "embedwait"

func waitKey(hash, key []byte) []byte {
	k := make([]byte, 0, 32+len(key))
	return append(append(k, hash...), key...)
}

// A model's vectors are packed into blocks rather than stored under their
// hash keys: under random keys, B-tree splits leave pages about 60% full,
// and with values of 769 bytes (384 float16s) the waste was 40% of the
// vectors bucket. Blocks are keyed by an increasing number in the nested
// bucket vectorBlocks and filled in order, so their pages are full; the
// hash key holds the vector's place, vectorPlaced | block (8) | slot (2).
// A block is slot size (2) | slots. Values stored before blocks (an
// encodeVector value under the hash) still read.
const (
	vectorPlaced = 2 // leads a place; 11 bytes is neither a float32 nor a float16 encoding
	placeLen     = 11
	vectorBlocks = "blocks" // not 32 bytes long, so no hash key
	// blockBytes keeps a block with bbolt's page and element headers
	// within four 4 KiB pages.
	blockBytes = 4*4096 - 64
)

// blockTail is the last block of a bucket as this transaction appends to
// it: bbolt keeps the slice Put gives it until the commit, so appends
// extend buf within its capacity and Put it again rather than copy the
// block for every vector.
type blockTail struct {
	blocks backend.Bucket
	key    [8]byte
	buf    []byte
}

// vectorSet reads one model's vectors; it opens the blocks bucket once,
// not per vector (a search rescores dozens).
type vectorSet struct {
	b, blocks backend.Bucket
}

// openVectors returns the reader of model bucket b (nil: no vectors).
func openVectors(b backend.Bucket) *vectorSet { return &vectorSet{b: b} }

// prefetch reads the vectors of hashes ahead of get (backend.Prefetch).
func (s *vectorSet) prefetch(hashes [][]byte) {
	if s.b == nil || len(hashes) == 0 {
		return
	}
	backend.Prefetch(s.b, hashes)
	if _, ok := s.b.(backend.Prefetcher); !ok {
		return
	}
	if s.blocks == nil {
		if s.blocks = s.b.Bucket([]byte(vectorBlocks)); s.blocks == nil {
			return
		}
	}
	var blocks [][]byte
	for _, h := range hashes {
		if v := s.b.Get(h); len(v) == placeLen && v[0] == vectorPlaced {
			blocks = append(blocks, v[1:9])
		}
	}
	backend.Prefetch(s.blocks, blocks)
}

// get returns the encoded vector stored for hash, or nil.
func (s *vectorSet) get(hash []byte) []byte {
	if s.b == nil {
		return nil
	}
	v := s.b.Get(hash)
	if len(v) != placeLen || v[0] != vectorPlaced {
		return v
	}
	if s.blocks == nil {
		if s.blocks = s.b.Bucket([]byte(vectorBlocks)); s.blocks == nil {
			return nil
		}
	}
	blk := s.blocks.Get(v[1:9])
	if len(blk) < 2 {
		return nil
	}
	size := int(binary.BigEndian.Uint16(blk))
	off := 2 + int(binary.BigEndian.Uint16(v[9:]))*size
	if off+size > len(blk) {
		return nil
	}
	return blk[off : off+size]
}

// storeVector stores encoded vector enc for hash in model bucket b: over
// the old one in its block when it has a place, else appended to the last
// block.
func (t *txn) storeVector(b backend.Bucket, hash, enc []byte) error {
	blocks, err := b.CreateBucketIfNotExists([]byte(vectorBlocks))
	if err != nil {
		return fmt.Errorf("put vector: %w", err)
	}
	blocks.SetFillPercent(1) // appended in key order
	if old := b.Get(hash); len(old) == placeLen && old[0] == vectorPlaced {
		if err := t.overwriteSlot(blocks, old, enc); err == nil || !errors.Is(err, errSlotMismatch) {
			return err
		}
	}
	tail, err := t.blockTail(blocks, len(enc))
	if err != nil {
		return err
	}
	slot := (len(tail.buf) - 2) / len(enc)
	tail.buf = append(tail.buf, enc...)
	if err := blocks.Put(tail.key[:], tail.buf); err != nil {
		return fmt.Errorf("put vector: %w", err)
	}
	place := make([]byte, placeLen)
	place[0] = vectorPlaced
	copy(place[1:9], tail.key[:])
	binary.BigEndian.PutUint16(place[9:], uint16(slot))
	if err := b.Put(bytes.Clone(hash), place); err != nil {
		return fmt.Errorf("put vector: %w", err)
	}
	return nil
}

// errSlotMismatch: the old vector's slot is not the new one's size (the
// model's vectors changed width), so the new one is appended.
var errSlotMismatch = errors.New("slot size differs")

// overwriteSlot writes enc over the vector at place.
func (t *txn) overwriteSlot(blocks backend.Bucket, place, enc []byte) error {
	key := place[1:9]
	var blk []byte
	if t.tail != nil && t.tail.blocks == blocks && bytes.Equal(t.tail.key[:], key) {
		blk = t.tail.buf
	} else if old := blocks.Get(key); old != nil {
		blk = bytes.Clone(old)
	}
	if len(blk) < 2 || int(binary.BigEndian.Uint16(blk)) != len(enc) {
		return errSlotMismatch
	}
	off := 2 + int(binary.BigEndian.Uint16(place[9:]))*len(enc)
	if off+len(enc) > len(blk) {
		return errSlotMismatch
	}
	copy(blk[off:], enc)
	if err := blocks.Put(bytes.Clone(key), blk); err != nil {
		return fmt.Errorf("put vector: %w", err)
	}
	return nil
}

// blockTail returns the block to append a vector of size bytes to: the
// last one while it has room for it and holds vectors of that size, else a
// new one.
func (t *txn) blockTail(blocks backend.Bucket, size int) (*blockTail, error) {
	room := func(buf []byte) bool {
		return len(buf) >= 2 && int(binary.BigEndian.Uint16(buf)) == size && len(buf)+size <= max(blockBytes, 2+size)
	}
	if t.tail != nil && t.tail.blocks == blocks && room(t.tail.buf) {
		return t.tail, nil
	}
	if size > math.MaxUint16 {
		return nil, fmt.Errorf("put vector: %d bytes, at most %d", size, math.MaxUint16)
	}
	tail := &blockTail{blocks: blocks}
	capacity := max(blockBytes, 2+size)
	k, v := blocks.Cursor().Last()
	switch {
	case k != nil && len(k) == 8 && room(v):
		copy(tail.key[:], k)
		tail.buf = append(make([]byte, 0, capacity), v...)
	default:
		var next uint64
		if k != nil {
			next = binary.BigEndian.Uint64(k) + 1
		}
		binary.BigEndian.PutUint64(tail.key[:], next)
		tail.buf = binary.BigEndian.AppendUint16(make([]byte, 0, capacity), uint16(size))
	}
	t.tail = tail
	return tail, nil
}

// putVector stores vec as the current model's vector of chunk text hash.
// When the vector is new, every chunk waiting for it (each chunk without a
// vector waits in the queue once a model is set) has it now: each is
// dequeued and recorded in the outbox.
func (t *txn) putVector(hash [32]byte, vec []float32) error {
	b, err := t.vectors.CreateBucketIfNotExists([]byte(t.model))
	if err != nil {
		return err
	}
	added := b.Get(hash[:]) == nil
	enc := encodeVector(vec)
	if err := t.storeVector(b, hash[:], enc); err != nil {
		return err
	}
	if m, ok := t.tx.(backend.VectorMirror); ok { // the vector as stored: unit length, float16
		if err := m.MirrorVector(t.model, hash[:], decodeVector(enc)); err != nil {
			return err
		}
	}
	if !added {
		return nil
	}
	if err := t.addCounter(vectorCounter(t.model), 1); err != nil {
		return err
	}
	var keys [][]byte
	c := t.waitq.Cursor()
	for k, _ := c.Seek(hash[:]); k != nil && bytes.HasPrefix(k, hash[:]); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k[32:]))
	}
	for _, k := range keys {
		if err := t.dequeueEmbed(k); err != nil {
			return err
		}
		if err := t.emitVectors(k[:16], int(binary.BigEndian.Uint32(k[16:]))); err != nil {
			return err
		}
	}
	return nil
}

// queueEmbed queues chunk key (text hash) for an embedding; force asks for
// one even if a vector exists.
func (t *txn) queueEmbed(key []byte, hash [32]byte, force bool) error {
	old := t.embedq.Get(key)
	if old != nil && !bytes.Equal(old[:32], hash[:]) {
		if err := t.waitq.Delete(waitKey(old[:32], key)); err != nil {
			return fmt.Errorf("queue embedding: %w", err)
		}
	}
	v := make([]byte, 33)
	copy(v, hash[:])
	if force {
		v[32] = 1
	}
	existed := old != nil
	if err := t.embedq.Put(key, v); err != nil {
		return fmt.Errorf("queue embedding: %w", err)
	}
	if err := t.waitq.Put(waitKey(hash[:], key), queuedMark); err != nil {
		return fmt.Errorf("queue embedding: %w", err)
	}
	if existed {
		return nil
	}
	return t.addCounter(counterEmbedQ, 1)
}

// dequeueEmbed removes chunk key from the embedding queue, if it is there.
func (t *txn) dequeueEmbed(key []byte) error {
	v := t.embedq.Get(key)
	if v == nil {
		return nil
	}
	if err := t.waitq.Delete(waitKey(v[:32], key)); err != nil {
		return fmt.Errorf("dequeue embedding: %w", err)
	}
	if err := t.embedq.Delete(key); err != nil {
		return fmt.Errorf("dequeue embedding: %w", err)
	}
	return t.addCounter(counterEmbedQ, -1)
}

// indexEmbedQueue creates the queue's hash index, filling it from the
// queue for a store written before the index existed.
func indexEmbedQueue(tx backend.Tx) error {
	if tx.Bucket([]byte(bucketEmbedWait)) != nil {
		return nil
	}
	w, err := tx.CreateBucketIfNotExists([]byte(bucketEmbedWait))
	if err != nil {
		return err
	}
	return tx.Bucket([]byte(bucketEmbedQ)).ForEach(func(k, v []byte) error {
		return w.Put(waitKey(v[:32], k), queuedMark)
	})
}

// verifyEmbedWait checks that the hash index holds exactly the queue.
func (t *txn) verifyEmbedWait() error {
	var n int64
	c := t.waitq.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
		if v := t.embedq.Get(k[32:]); v == nil || !bytes.Equal(v[:32], k[:32]) {
			return fmt.Errorf("embedding queue index names chunk %x, which does not wait for hash %x", k[32:], k[:32])
		}
	}
	if q := t.counter(counterEmbedQ); n != q {
		return fmt.Errorf("embedding queue index holds %d entries, the queue %d", n, q)
	}
	return nil
}

// mirrorBatch bounds the vectors one MirrorVectors transaction writes.
const mirrorBatch = 2000

// MirrorVectors writes every stored chunk vector of every model into the
// backend's typed vector column (backend.VectorMirror), in transactions of
// at most mirrorBatch vectors, and returns how many it wrote: for a store
// copied key for key (ctxd migrate), whose mirror the copy left empty. It
// does nothing on a backend without one.
func (s *Store) MirrorVectors(ctx context.Context) (int, error) {
	var models []string
	mirrored := false
	err := s.view(ctx, func(t *txn) error {
		_, mirrored = t.tx.(backend.VectorMirror)
		models = models[:0]
		return t.vectors.ForEachBucket(func(name []byte) error {
			models = append(models, string(name))
			return nil
		})
	})
	if err != nil || !mirrored {
		return 0, err
	}
	n := 0
	for _, model := range models {
		var after []byte // the last hash mirrored
		for done := false; !done; {
			var last []byte
			got := 0
			err := s.update(ctx, func(t *txn) error { // may run again: outputs reset
				last, got, done = after, 0, true
				b := t.vectors.Bucket([]byte(model))
				if b == nil {
					return nil
				}
				m, set, c := t.tx.(backend.VectorMirror), openVectors(b), b.Cursor()
				k, _ := c.First()
				if after != nil {
					if k, _ = c.Seek(after); bytes.Equal(k, after) {
						k, _ = c.Next()
					}
				}
				for ; k != nil && got < mirrorBatch; k, _ = c.Next() {
					if len(k) != sha256.Size { // the blocks bucket
						continue
					}
					if enc := set.get(k); enc != nil {
						if err := m.MirrorVector(model, k, decodeVector(enc)); err != nil {
							return err
						}
						got++
					}
					last = bytes.Clone(k)
				}
				done = k == nil
				return nil
			})
			if err != nil {
				return n, fmt.Errorf("mirror vectors of %s: %w", model, err)
			}
			after, n = last, n+got
		}
	}
	return n, nil
}
