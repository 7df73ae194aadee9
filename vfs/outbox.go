package vfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/google/uuid"
)

// This file is the store's side of the derived search indexes (DESIGN §2).
// Every transaction that changes what an item contributes to an index (its
// metadata, chunks or vectors) appends the item's id to a durable outbox under
// a monotonic sequence number, in the same transaction. An index records the
// last sequence it applied; after a crash it asks for the entries past that
// and re-reads those items' current state, which makes applying idempotent.

// seq (8) -> item id (16) | chunk records before the change (4) | what changed (1) |
// first (4) and one past the last (4) chunk whose vector changed | time (8,
// unix ns) | the id of the replica that wrote it (the rest; absent when the
// store has none). Entries written before the chunk range (or the time, or
// the replica) existed end after what changed (or the range, or the time).
const bucketOutbox = "outbox"

// outboxTimeEnd is the length of an entry that records its time.
const outboxTimeEnd = 37

// What an outbox entry says changed.
const (
	changedItem    = 1 << 0 // content, chunks or indexed metadata
	changedVectors = 1 << 1 // only vectors of existing chunks
)

// IndexChange is one outbox entry: item ItemID changed at Seq. PrevChunks is
// how many chunk records the item had just before, so an index can delete
// chunk ids that no longer exist. VectorsOnly is set when nothing but the
// vectors of chunks [VectorsFrom, VectorsTo) changed: the lexical index can
// skip it and the vector index read just those chunks, which keeps the cost
// of embedding a large item in steps proportional to each step.
type IndexChange struct {
	Seq                    uint64
	ItemID                 string
	PrevChunks             int
	VectorsOnly            bool
	VectorsFrom, VectorsTo int
	// Replica is the id of the replica whose daemon made the change
	// (Options.ReplicaID), "" when the store had none or the entry
	// predates it.
	Replica string
}

// IndexChunk is one chunk as the indexes need it.
type IndexChunk struct {
	ChunkSpan
	Text   string    // the chunk's bytes of the content
	Vector []float32 // the current model's vector; nil while not embedded
	// Questions are the question vectors the chunk carries (see
	// questions.go); read only with vectors.
	Questions []IndexQuestion
}

// IndexDoc is an item as the indexes see it. Exists is false for a deleted
// item (only ItemID is then set). Chunks are chunk records From, From+1, …
// of the item's Total; More is set when a read stopped at its limit inside
// the item, and the rest is read from From+len(Chunks).
type IndexDoc struct {
	ItemID string
	Exists bool
	Drive  string
	Path   string
	Title  string
	Mime   string
	Tags   []string
	From   int
	Total  int
	More   bool
	Chunks []IndexChunk
	// Description is the item's; it is searched with the title.
	Description string
	// Time is when the item last changed (its UpdatedAt); filters select
	// by it.
	Time time.Time
}

// IndexRead asks IndexDocs for chunk records [From, To) of item ItemID; To
// <= 0 reads through the last one.
type IndexRead struct {
	ItemID   string
	From, To int
}

// emit records in the outbox that item id changed.
func (t *txn) emit(id []byte) error { return t.emitKind(id, changedItem, 0) }

// emitVectors records that only the vector of chunk i of item id changed.
// For an item with caller questions it records every chunk: the chunk each
// question attaches to may change with any chunk's vector.
func (t *txn) emitVectors(id []byte, i int) error {
	if t.hasItemQuestions(id) {
		if n := t.chunkCount(id); n > 0 {
			if err := t.emitKind(id, changedVectors, 0); err != nil {
				return err
			}
			i = n - 1
		}
	}
	return t.emitKind(id, changedVectors, i)
}

// emitKind appends an outbox entry for item id, or adds kind (and chunk i,
// for changedVectors) to the entry this transaction already appended for it.
func (t *txn) emitKind(id []byte, kind byte, i int) error {
	var k [16]byte
	copy(k[:], id)
	if t.emitted == nil {
		t.emitted = map[[16]byte]uint64{}
	}
	if seq, ok := t.emitted[k]; ok {
		v := bytes.Clone(t.outbox.Get(seqKey(seq)))
		v[20] |= kind
		if kind == changedVectors {
			binary.BigEndian.PutUint32(v[21:], uint32(min(int(binary.BigEndian.Uint32(v[21:])), i)))
			binary.BigEndian.PutUint32(v[25:], uint32(max(int(binary.BigEndian.Uint32(v[25:])), i+1)))
		}
		return t.outbox.Put(seqKey(seq), v)
	}
	seq, err := t.outbox.NextSequence()
	if err != nil {
		return fmt.Errorf("outbox sequence: %w", err)
	}
	t.emitted[k] = seq
	v := make([]byte, outboxTimeEnd, outboxTimeEnd+len(t.replica))
	copy(v, id)
	binary.BigEndian.PutUint64(v[29:], uint64(t.now.UnixNano()))
	binary.BigEndian.PutUint32(v[16:], uint32(t.chunkCount(id)))
	v[20] = kind
	if kind == changedVectors {
		binary.BigEndian.PutUint32(v[21:], uint32(i))
		binary.BigEndian.PutUint32(v[25:], uint32(i+1))
	}
	v = append(v, t.replica...)
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

// chunkCount counts the chunk records of item id. Their indexes are dense
// from 0, so the last key tells.
func (t *txn) chunkCount(id []byte) int {
	c := t.chunks.Cursor()
	k, _ := c.Seek(afterID(id))
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, id) {
		return 0
	}
	return int(binary.BigEndian.Uint32(k[16:])) + 1
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
			ch := IndexChange{
				Seq:         binary.BigEndian.Uint64(k),
				ItemID:      uuid.UUID(v[:16]).String(),
				PrevChunks:  int(binary.BigEndian.Uint32(v[16:20])),
				VectorsOnly: v[20] == changedVectors,
			}
			if ch.VectorsOnly {
				ch.VectorsTo = math.MaxUint32
				if len(v) >= 29 {
					ch.VectorsFrom, ch.VectorsTo = int(binary.BigEndian.Uint32(v[21:])), int(binary.BigEndian.Uint32(v[25:]))
				}
			}
			if len(v) > outboxTimeEnd {
				ch.Replica = string(v[outboxTimeEnd:])
			}
			changes = append(changes, ch)
		}
		return nil
	})
	return changes, retained, err
}

// trimBatch bounds the outbox entries one trim transaction deletes.
const trimBatch = 10_000

// TrimOutbox records that this replica's indexes applied the outbox
// durably through seq and deletes the entries every live replica has
// applied (see ReplicaRetention), up to seq, in transactions of at most
// trimBatch deletes.
func (s *Store) TrimOutbox(ctx context.Context, seq uint64) error {
	return s.TrimOutboxTo(ctx, seq, seq)
}

// TrimOutboxTo is TrimOutbox deleting no entry past through (<= seq): the
// caller keeps some entries it applied for a while longer (standing
// queries keep them for resuming subscribers).
func (s *Store) TrimOutboxTo(ctx context.Context, seq, through uint64) error {
	for {
		more := false
		err := s.update(ctx, func(t *txn) error {
			upto, err := t.reportReplica(s.replicaID, s.replicaHost, seq)
			if err != nil {
				return err
			}
			upto = min(upto, through)
			c := t.outbox.Cursor()
			n := 0
			k, _ := c.First()
			for ; k != nil && binary.BigEndian.Uint64(k) <= upto && n < trimBatch; k, _ = c.Next() {
				if err := c.Delete(); err != nil {
					return fmt.Errorf("trim outbox: %w", err)
				}
				n++
			}
			more = k != nil && binary.BigEndian.Uint64(k) <= upto
			return nil
		})
		if err != nil || !more {
			return err
		}
	}
}

// keyIndexedSeq (in meta) is the outbox sequence through which MarkIndexed
// has set IndexedAt: 8 bytes big-endian, absent for 0.
const keyIndexedSeq = "indexed_seq"

// markBatch bounds the outbox entries one MarkIndexed transaction walks.
const markBatch = 4096

// MarkIndexed sets IndexedAt of the items whose outbox entries up to and
// including through the lexical index has applied, continuing from where
// the last call stopped, so that a call lost to an error or a crash is made
// up by the next. An item with an entry past through changed again and is
// left alone: the index does not hold its current state yet, and that entry
// marks it once applied. Items waiting for a chunker and directories have
// nothing searchable and are skipped. Only metadata is written, so marking
// appends no outbox entry and never feeds back into the indexes.
func (s *Store) MarkIndexed(ctx context.Context, through uint64) error {
	// Entries past through (the backlog not yet applied) are collected in a
	// read transaction, so that the write lock is held only for those
	// appended since.
	var from, seen uint64
	work := false
	newer := map[[16]byte]bool{}
	err := s.view(ctx, func(t *txn) error {
		from, seen = t.indexedSeq(), t.outbox.Sequence()
		if from >= through {
			return nil
		}
		// A range of vector-only entries marks nothing: skip the write
		// (and its fsync) unless the range is long enough to be worth
		// recording as walked.
		work = through-from >= markBatch
		t.walkOutbox(from, through, func(_ uint64, _ [16]byte, vectorsOnly bool) bool {
			work = work || !vectorsOnly
			return !work
		})
		if work {
			t.walkOutbox(through, seen, func(_ uint64, id [16]byte, _ bool) bool {
				newer[id] = true
				return true
			})
		}
		return nil
	})
	if err != nil || !work {
		return err
	}
	for done := false; !done; {
		err := s.update(ctx, func(t *txn) error {
			from := t.indexedSeq()
			done = from >= through
			if done {
				return nil
			}
			upto, n := through, 0
			var ids [][16]byte
			t.walkOutbox(from, through, func(seq uint64, id [16]byte, vectorsOnly bool) bool {
				if n == markBatch {
					upto = seq - 1
					return false
				}
				n++
				if !vectorsOnly {
					ids = append(ids, id)
				}
				return true
			})
			done = upto == through
			late := map[[16]byte]bool{}
			t.walkOutbox(seen, math.MaxUint64, func(_ uint64, id [16]byte, _ bool) bool {
				late[id] = true
				return true
			})
			for _, id := range ids {
				if newer[id] || late[id] {
					continue
				}
				if err := t.markIndexed(id[:]); err != nil {
					return err
				}
			}
			v := make([]byte, 8)
			binary.BigEndian.PutUint64(v, upto)
			return t.tx.Bucket([]byte(bucketMeta)).Put([]byte(keyIndexedSeq), v)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// markIndexed sets IndexedAt of item id, if it exists and has something
// searchable. It never precedes UpdatedAt, even if the clock stepped back.
func (t *txn) markIndexed(id []byte) error {
	if t.items.Get(id) == nil || t.chunkq.Get(id) != nil {
		return nil
	}
	it, err := t.item(id)
	if err != nil || it.IsDir {
		return err
	}
	it.IndexedAt = t.now
	if it.IndexedAt.Before(it.UpdatedAt) {
		it.IndexedAt = it.UpdatedAt
	}
	return t.putRecord(id, &it)
}

// indexedSeq is the sequence MarkIndexed has walked through.
func (t *txn) indexedSeq() uint64 {
	if v := t.tx.Bucket([]byte(bucketMeta)).Get([]byte(keyIndexedSeq)); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// walkOutbox calls fn with the outbox entries in (after, upto], in order,
// until fn returns false.
func (t *txn) walkOutbox(after, upto uint64, fn func(seq uint64, id [16]byte, vectorsOnly bool) bool) {
	c := t.outbox.Cursor()
	for k, v := c.Seek(seqKey(after + 1)); k != nil; k, v = c.Next() {
		seq := binary.BigEndian.Uint64(k)
		if seq > upto || !fn(seq, [16]byte(v[:16]), v[20] == changedVectors) {
			return
		}
	}
}

// IndexDocs reads the current state of the items reads name, in order and
// in one transaction; withVectors adds the current model's vectors. It stops
// once the chunks read reach maxChunks or their text maxBytes (<= 0: no
// limit), and then returns a prefix of reads: only its first doc may be cut
// short (More), so that an item larger than the limits is read in steps and
// the others whole.
func (s *Store) IndexDocs(ctx context.Context, reads []IndexRead, withVectors bool, maxChunks, maxBytes int) ([]IndexDoc, error) {
	var out []IndexDoc
	err := s.view(ctx, func(t *txn) error {
		lim := newReadLimit(maxChunks, maxBytes)
		for i, r := range reads {
			u, err := parseID(r.ItemID)
			if err != nil {
				return err
			}
			d, err := t.indexDoc(u, r.From, r.To, withVectors, lim)
			if err != nil {
				return err
			}
			if d.More && i > 0 {
				break
			}
			out = append(out, d)
			if d.More || lim.spent() {
				break
			}
		}
		return nil
	})
	return out, err
}

// Limits of one ScanIndexDocs call of fn, as IndexDocs' maxChunks and
// maxBytes: a rebuild never holds more of one item at once, and the search
// engine's batches are no larger (one 60 MB item took 6 GB to index whole).
const (
	scanChunks = 1024
	scanBytes  = 256 << 10
)

// ScanIndexDocs calls fn with every item that has chunks, from one consistent
// snapshot, and returns the outbox sequence that snapshot reflects. It is how
// indexes are rebuilt from scratch. An item with more than scanChunks chunks
// or scanBytes of chunk text comes in several calls, each with the next
// chunks (IndexDoc.From, More).
func (s *Store) ScanIndexDocs(ctx context.Context, withVectors bool, fn func(IndexDoc) error) (uint64, error) {
	var seq uint64
	err := s.view(ctx, func(t *txn) error {
		seq = t.outbox.Sequence()
		c := t.chunks.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Seek(afterID(k[:16])) {
			id := bytes.Clone(k[:16])
			for from := 0; ; {
				if err := ctx.Err(); err != nil {
					return err
				}
				d, err := t.indexDoc(id, from, 0, withVectors, newReadLimit(scanChunks, scanBytes))
				if err != nil {
					return err
				}
				if err := fn(d); err != nil {
					return err
				}
				if !d.More {
					break
				}
				from = d.From + len(d.Chunks)
			}
		}
		return nil
	})
	return seq, err
}

// readLimit is what one read of index docs may still take. The first chunk
// is always taken, so that every read makes progress.
type readLimit struct{ chunks, bytes, taken int }

func newReadLimit(chunks, bytes int) *readLimit {
	if chunks <= 0 {
		chunks = math.MaxInt
	}
	if bytes <= 0 {
		bytes = math.MaxInt
	}
	return &readLimit{chunks: chunks, bytes: bytes}
}

// take reports whether a chunk of n bytes of text may be read, and counts it.
func (l *readLimit) take(n int) bool {
	if l.taken > 0 && (l.chunks < 1 || l.bytes < n) {
		return false
	}
	l.chunks, l.bytes, l.taken = l.chunks-1, l.bytes-n, l.taken+1
	return true
}

func (l *readLimit) spent() bool { return l.chunks < 1 || l.bytes < 1 }

// indexDoc reads chunk records [from, to) of item id (to <= 0: through the
// last) as far as lim allows.
func (t *txn) indexDoc(id []byte, from, to int, withVectors bool, lim *readLimit) (IndexDoc, error) {
	d := IndexDoc{ItemID: uuid.UUID(id).String(), From: from}
	if t.items.Get(id) == nil {
		return d, nil
	}
	it, err := t.item(id)
	if err != nil {
		return d, err
	}
	d.Exists = true
	d.Drive, d.Path, d.Title, d.Mime, d.Tags = it.Drive, it.Path, it.Title, it.MimeType, it.Tags
	d.Description, d.Time = it.Description, it.UpdatedAt
	d.Total = t.chunkCount(id)
	if to <= 0 || to > d.Total {
		to = d.Total
	}
	content := t.chunkSource(id)
	vb := t.vectorBucket()
	vs := openVectors(vb)
	c := t.chunks.Cursor()
	for k, v := c.Seek(chunkKey(id, from)); k != nil && bytes.HasPrefix(k, id) && from+len(d.Chunks) < to; k, v = c.Next() {
		ch := decodeChunk(v)
		if ch.End > len(content) || ch.Start > ch.End {
			return d, fmt.Errorf("chunk %x span %d-%d outside content of %d bytes", k, ch.Start, ch.End, len(content))
		}
		if !lim.take(ch.End - ch.Start) {
			d.More = true
			break
		}
		ic := IndexChunk{ChunkSpan: ch, Text: string(content[ch.Start:ch.End])}
		if withVectors && vb != nil {
			if raw := vs.get(ch.Hash[:]); raw != nil {
				ic.Vector = decodeVector(raw)
			}
			ic.Questions = t.chunkQuestions(id, from+len(d.Chunks), ch.Hash)
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
			u, it, ok, err := t.itemByID(id)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			it.RetrievalCount++
			if at.After(it.LastRetrievedAt) {
				it.LastRetrievedAt = at.UTC()
			}
			if err := t.putRecord(u, &it); err != nil {
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
	// StartLine and EndLine are the 1-based, inclusive lines of the span
	// (EndLine holds its last byte), as Read's line offset counts them.
	StartLine, EndLine int
}

// ReadChunks reads the chunks at refs with their items, in one transaction;
// chunks of items outside the context's Access are not found.
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
			if !t.access.Allows(it.Drive, it.Path) {
				out[i] = ChunkText{}
				continue
			}
			ch := decodeChunk(v)
			content := t.chunkSource(u)
			if ch.End > len(content) || ch.Start > ch.End {
				return fmt.Errorf("chunk %s#%d span %d-%d outside content of %d bytes", r.ItemID, r.Index, ch.Start, ch.End, len(content))
			}
			start := 1 + bytes.Count(content[:ch.Start], []byte{'\n'})
			end := start
			if ch.End > ch.Start {
				end += bytes.Count(content[ch.Start:ch.End-1], []byte{'\n'})
			}
			out[i] = ChunkText{Found: true, Item: it, ChunkSpan: ch, Text: string(content[ch.Start:ch.End]), StartLine: start, EndLine: end}
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
		vs := openVectors(vb)
		keys := make([][]byte, len(refs))
		for i, r := range refs {
			if r.ItemID == "" {
				continue
			}
			u, err := parseID(r.ItemID)
			if err != nil {
				return err
			}
			keys[i] = chunkKey(u, r.Index)
		}
		// Three dependent reads a ref (chunk record, vector place, block):
		// on a backend of round trips, three round trips in all.
		if _, ok := t.chunks.(backend.Prefetcher); ok {
			backend.Prefetch(t.chunks, keys)
			var hashes [][]byte
			for _, k := range keys {
				if v := t.chunks.Get(k); v != nil {
					hashes = append(hashes, v[20:52])
				}
			}
			vs.prefetch(hashes)
		}
		for i, k := range keys {
			if k == nil {
				continue
			}
			if v := t.chunks.Get(k); v != nil {
				if raw := vs.get(v[20:52]); raw != nil {
					out[i] = decodeVector(raw)
				}
			}
		}
		return nil
	})
	return out, err
}
