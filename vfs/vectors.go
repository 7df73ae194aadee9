package vfs

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
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
	if err := b.Put(bytes.Clone(hash[:]), encodeVector(vec)); err != nil {
		return fmt.Errorf("put vector: %w", err)
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
func indexEmbedQueue(tx *bolt.Tx) error {
	if tx.Bucket([]byte(bucketEmbedWait)) != nil {
		return nil
	}
	w, err := tx.CreateBucket([]byte(bucketEmbedWait))
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
