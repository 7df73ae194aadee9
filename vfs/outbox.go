package vfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// This file is the store's side of the derived search indexes (DESIGN §2).
// Every transaction that changes what an item contributes to an index (its
// metadata, chunks or vectors) appends the item's id to a durable outbox under
// a monotonic sequence number, in the same transaction. An index records the
// last sequence it applied; after a crash it asks for the entries past that
// and re-reads those items' current state, which makes applying idempotent.

const bucketOutbox = "outbox" // seq (8) -> item id (16) | chunk records before the change (4) | what changed (1)

// What an outbox entry says changed.
const (
	changedItem    = 1 << 0 // content, chunks or indexed metadata
	changedVectors = 1 << 1 // only vectors of existing chunks
)

// IndexChange is one outbox entry: item ItemID changed at Seq. PrevChunks is
// how many chunk records the item had just before, so an index can delete
// chunk ids that no longer exist. VectorsOnly is set when nothing but the
// vectors of its chunks changed, which the lexical index can skip.
type IndexChange struct {
	Seq         uint64
	ItemID      string
	PrevChunks  int
	VectorsOnly bool
}

// IndexChunk is one chunk as the indexes need it.
type IndexChunk struct {
	ChunkSpan
	Text   string    // the chunk's bytes of the content
	Vector []float32 // the current model's vector; nil while not embedded
}

// IndexDoc is an item as the indexes see it. Exists is false for a deleted
// item (only ItemID is then set).
type IndexDoc struct {
	ItemID string
	Exists bool
	Drive  string
	Path   string
	Title  string
	Mime   string
	Tags   []string
	Chunks []IndexChunk
}

// emit records in the outbox that item id changed.
func (t *txn) emit(id []byte) error { return t.emitKind(id, changedItem) }

// emitVectors records that only the vectors of item id's chunks changed.
func (t *txn) emitVectors(id []byte) error { return t.emitKind(id, changedVectors) }

// emitKind appends an outbox entry for item id, or adds kind to the entry
// this transaction already appended for it.
func (t *txn) emitKind(id []byte, kind byte) error {
	var k [16]byte
	copy(k[:], id)
	if t.emitted == nil {
		t.emitted = map[[16]byte]uint64{}
	}
	if seq, ok := t.emitted[k]; ok {
		v := bytes.Clone(t.outbox.Get(seqKey(seq)))
		v[20] |= kind
		return t.outbox.Put(seqKey(seq), v)
	}
	seq, err := t.outbox.NextSequence()
	if err != nil {
		return fmt.Errorf("outbox sequence: %w", err)
	}
	t.emitted[k] = seq
	v := make([]byte, 21)
	copy(v, id)
	binary.BigEndian.PutUint32(v[16:], uint32(t.chunkCount(id)))
	v[20] = kind
	if err := t.outbox.Put(seqKey(seq), v); err != nil {
		return fmt.Errorf("append outbox: %w", err)
	}
	return nil
}

func seqKey(seq uint64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, seq)
	return k
}

// chunkCount counts the chunk records of item id.
func (t *txn) chunkCount(id []byte) int {
	n := 0
	c := t.chunks.Cursor()
	for k, _ := c.Seek(id); k != nil && bytes.HasPrefix(k, id); k, _ = c.Next() {
		n++
	}
	return n
}

// OutboxSeq returns the sequence of the last outbox entry ever written (0 for none).
func (s *Store) OutboxSeq(ctx context.Context) (uint64, error) {
	var seq uint64
	err := s.view(ctx, func(t *txn) error {
		seq = t.outbox.Sequence()
		return nil
	})
	return seq, err
}

// Changes returns up to limit outbox entries with a sequence above after, in
// order, and the lowest sequence still retained (when the outbox is empty:
// the next one to be written). An index whose applied sequence is below
// retained-1 has missed entries that were trimmed and must be rebuilt.
func (s *Store) Changes(ctx context.Context, after uint64, limit int) (changes []IndexChange, retained uint64, err error) {
	err = s.view(ctx, func(t *txn) error {
		changes = changes[:0]
		c := t.outbox.Cursor()
		retained = t.outbox.Sequence() + 1
		if k, _ := c.First(); k != nil {
			retained = binary.BigEndian.Uint64(k)
		}
		for k, v := c.Seek(seqKey(after + 1)); k != nil && len(changes) < limit; k, v = c.Next() {
			changes = append(changes, IndexChange{
				Seq:         binary.BigEndian.Uint64(k),
				ItemID:      uuid.UUID(v[:16]).String(),
				PrevChunks:  int(binary.BigEndian.Uint32(v[16:20])),
				VectorsOnly: v[20] == changedVectors,
			})
		}
		return nil
	})
	return changes, retained, err
}

// trimBatch bounds the outbox entries one trim transaction deletes.
const trimBatch = 10_000

// TrimOutbox deletes the entries up to and including seq, once every index
// has applied them durably, in transactions of at most trimBatch deletes.
func (s *Store) TrimOutbox(ctx context.Context, seq uint64) error {
	for {
		var any bool
		if err := s.view(ctx, func(t *txn) error {
			k, _ := t.outbox.Cursor().First()
			any = k != nil && binary.BigEndian.Uint64(k) <= seq
			return nil
		}); err != nil || !any {
			return err
		}
		err := s.update(ctx, func(t *txn) error {
			c := t.outbox.Cursor()
			n := 0
			for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= seq && n < trimBatch; k, _ = c.First() {
				if err := c.Delete(); err != nil {
					return fmt.Errorf("trim outbox: %w", err)
				}
				n++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
}

// IndexDocs reads the current state of the items with ids, in one
// transaction; withVectors adds the current model's vectors.
func (s *Store) IndexDocs(ctx context.Context, ids []string, withVectors bool) ([]IndexDoc, error) {
	out := make([]IndexDoc, len(ids))
	err := s.view(ctx, func(t *txn) error {
		for i, id := range ids {
			u, err := parseID(id)
			if err != nil {
				return err
			}
			d, err := t.indexDoc(u, withVectors)
			if err != nil {
				return err
			}
			out[i] = d
		}
		return nil
	})
	return out, err
}

// ScanIndexDocs calls fn with every item that has chunks, from one consistent
// snapshot, and returns the outbox sequence that snapshot reflects. It is how
// indexes are rebuilt from scratch.
func (s *Store) ScanIndexDocs(ctx context.Context, withVectors bool, fn func(IndexDoc) error) (uint64, error) {
	var seq uint64
	err := s.view(ctx, func(t *txn) error {
		seq = t.outbox.Sequence()
		var last []byte
		c := t.chunks.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if bytes.Equal(k[:16], last) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			last = bytes.Clone(k[:16])
			d, err := t.indexDoc(last, withVectors)
			if err != nil {
				return err
			}
			if err := fn(d); err != nil {
				return err
			}
		}
		return nil
	})
	return seq, err
}

func (t *txn) indexDoc(id []byte, withVectors bool) (IndexDoc, error) {
	d := IndexDoc{ItemID: uuid.UUID(id).String()}
	if t.items.Get(id) == nil {
		return d, nil
	}
	it, err := t.item(id)
	if err != nil {
		return d, err
	}
	d.Exists = true
	d.Drive, d.Path, d.Title, d.Mime, d.Tags = it.Drive, it.Path, it.Title, it.MimeType, it.Tags
	content := t.chunkSource(id)
	vb := t.vectorBucket()
	c := t.chunks.Cursor()
	for k, v := c.Seek(id); k != nil && bytes.HasPrefix(k, id); k, v = c.Next() {
		ch := decodeChunk(v)
		if ch.End > len(content) || ch.Start > ch.End {
			return d, fmt.Errorf("chunk %x span %d-%d outside content of %d bytes", k, ch.Start, ch.End, len(content))
		}
		ic := IndexChunk{ChunkSpan: ch, Text: string(content[ch.Start:ch.End])}
		if withVectors && vb != nil {
			if raw := vb.Get(ch.Hash[:]); raw != nil {
				ic.Vector = decodeVector(raw)
			}
		}
		d.Chunks = append(d.Chunks, ic)
	}
	return d, nil
}

// RecordRetrievals adds one to the retrieval count of each item in ids (an id
// may repeat) and sets its last retrieval time to at. Missing items are
// ignored: they may have been deleted since the search. Usage signals are not
// indexed, so nothing is appended to the outbox.
func (s *Store) RecordRetrievals(ctx context.Context, ids []string, at time.Time) error {
	return s.update(ctx, func(t *txn) error {
		for _, id := range ids {
			u, err := parseID(id)
			if err != nil {
				return err
			}
			if t.items.Get(u) == nil {
				continue
			}
			it, err := t.item(u)
			if err != nil {
				return err
			}
			it.RetrievalCount++
			if at.After(it.LastRetrievedAt) {
				it.LastRetrievedAt = at.UTC()
			}
			if err := t.putMeta(u, &it); err != nil {
				return err
			}
		}
		return nil
	})
}

// ChunkRef names chunk Index of item ItemID.
type ChunkRef struct {
	ItemID string
	Index  int
}

// ChunkText is a chunk with its item, as search results show it. Found is
// false when the item or the chunk no longer exists.
type ChunkText struct {
	Found bool
	Item  Item
	ChunkSpan
	Text string
}

// ReadChunks reads the chunks at refs with their items, in one transaction.
func (s *Store) ReadChunks(ctx context.Context, refs []ChunkRef) ([]ChunkText, error) {
	out := make([]ChunkText, len(refs))
	err := s.view(ctx, func(t *txn) error {
		for i, r := range refs {
			u, err := parseID(r.ItemID)
			if err != nil {
				return err
			}
			v := t.chunks.Get(chunkKey(u, r.Index))
			if v == nil || t.items.Get(u) == nil {
				out[i] = ChunkText{}
				continue
			}
			it, err := t.item(u)
			if err != nil {
				return err
			}
			ch := decodeChunk(v)
			content := t.chunkSource(u)
			if ch.End > len(content) || ch.Start > ch.End {
				return fmt.Errorf("chunk %s#%d span %d-%d outside content of %d bytes", r.ItemID, r.Index, ch.Start, ch.End, len(content))
			}
			out[i] = ChunkText{Found: true, Item: it, ChunkSpan: ch, Text: string(content[ch.Start:ch.End])}
		}
		return nil
	})
	return out, err
}

// ChunkVectors reads the current model's vectors of the chunks at refs in
// one transaction; an entry is nil where the chunk or its vector is gone (or
// the ref is the zero ChunkRef).
func (s *Store) ChunkVectors(ctx context.Context, refs []ChunkRef) ([][]float32, error) {
	out := make([][]float32, len(refs))
	err := s.view(ctx, func(t *txn) error {
		vb := t.vectorBucket()
		if vb == nil {
			return nil
		}
		for i, r := range refs {
			if r.ItemID == "" {
				continue
			}
			u, err := parseID(r.ItemID)
			if err != nil {
				return err
			}
			if v := t.chunks.Get(chunkKey(u, r.Index)); v != nil {
				if raw := vb.Get(v[20:52]); raw != nil {
					out[i] = decodeVector(raw)
				}
			}
		}
		return nil
	})
	return out, err
}
