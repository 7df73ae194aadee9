package vfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/google/uuid"
	"github.com/x448/float16"
)

// This file keeps the derived state of items in step with their content:
// chunk records, the queue of chunks waiting for an embedding, the queue of
// items waiting for a chunker, and the vectors themselves. All of it changes
// in the same transaction as the content it derives from, so a crash can never
// leave an item without its chunks or a chunk without a queue entry or vector.

// ChunkSpan is one chunk of an item's text as the store keeps it.
type ChunkSpan struct {
	Start, End int      // byte span [Start, End) of the content
	Heading    string   // heading breadcrumb
	Tokens     int      // model tokens of the embedded text, specials included
	Hash       [32]byte // SHA-256 of the exact text the model embeds; vectors are keyed by it
}

// Chunker splits text content into chunks. The store calls it inside write
// transactions: it must be deterministic, fast, and must not use the store.
type Chunker interface {
	// ID names the chunking scheme (tokenizer, window, embedded text); when
	// it changes, every text item is chunked again.
	ID() string
	// Chunk splits one item's content (the body after any frontmatter);
	// spans are relative to content.
	Chunk(content []byte, doc ChunkDoc) []ChunkSpan
}

// ChunkDoc is what a Chunker knows of the item it splits.
type ChunkDoc struct {
	MimeType string
	Path     string
	// Title and Description are the item context every chunk embeds
	// before its own text ("" when the item has none; see chunkDoc).
	Title, Description string
}

// chunkDoc describes it to the Chunker. The default title (the file name)
// carries no meaning beyond the path, and a binary item's searchable text
// starts with its title already, so only a chosen title is embedded;
// because of that a move, which renames only a default title, never
// changes what the chunks embed.
func chunkDoc(it *Item, mimeType string) ChunkDoc {
	d := ChunkDoc{MimeType: mimeType, Path: it.Path, Description: it.Description}
	if it.IsText && it.Title != baseName(it.Path) {
		d.Title = it.Title
	}
	return d
}

// IndexingChange reports what SetIndexing found against the stored state.
type IndexingChange struct {
	PrevChunker, PrevModel string
	Rechunk                int64 // items queued to be chunked again
	Reembed                int64 // chunks queued for the new model
}

// EmbedStats counts the derived state.
type EmbedStats struct {
	Chunks          int64 // chunk records
	PendingEmbed    int64 // chunks waiting for an embedding
	PendingChunking int64 // text items waiting for a chunker
	Vectors         int64 // vectors of the current model
}

// PendingChunk is a queued chunk with the text its embedding needs.
type PendingChunk struct {
	key     []byte
	Hash    [32]byte
	Heading string
	Text    []byte // the chunk's bytes of the item content
	// Title and Description are the item context the Chunker was given
	// (ChunkDoc), which the embedded text starts with.
	Title, Description string
	// Have is set when a vector for Hash already exists and the entry was not
	// forced: nothing needs computing, SaveEmbeddings just clears the entry.
	Have bool
}

func (p PendingChunk) queueKey() []byte { return p.key }

const (
	bucketChunks   = "chunks"   // item id (16) | index (4) -> chunkVal
	bucketEmbedQ   = "embedq"   // item id (16) | index (4) -> hash (32) | force (1)
	bucketChunkQ   = "chunkq"   // item id (16) -> queuedMark
	bucketVectors  = "vectors"  // nested per model id: hash (32) -> place of its vector in blocks (vectors.go)
	bucketCounters = "counters" // nested in meta: name -> int64

	keyChunker = "chunker"
	keyModel   = "embed_model"

	counterChunks = "chunks"
	counterEmbedQ = "embedq"
	counterChunkQ = "chunkq"
)

// queuedMark is the chunkq value: bbolt's Get returns nil for an empty value,
// which would be indistinguishable from a missing key.
var queuedMark = []byte{1}

func vectorCounter(model string) string { return "vectors/" + model }

// chunkVal layout: start (8) | end (8) | tokens (4) | hash (32) | heading.
func encodeChunk(c ChunkSpan) []byte {
	v := make([]byte, 52+len(c.Heading))
	binary.BigEndian.PutUint64(v[0:], uint64(c.Start))
	binary.BigEndian.PutUint64(v[8:], uint64(c.End))
	binary.BigEndian.PutUint32(v[16:], uint32(c.Tokens))
	copy(v[20:52], c.Hash[:])
	copy(v[52:], c.Heading)
	return v
}

func decodeChunk(v []byte) ChunkSpan {
	c := ChunkSpan{
		Start:   int(binary.BigEndian.Uint64(v[0:])),
		End:     int(binary.BigEndian.Uint64(v[8:])),
		Tokens:  int(binary.BigEndian.Uint32(v[16:])),
		Heading: string(v[52:]),
	}
	copy(c.Hash[:], v[20:52])
	return c
}

func chunkKey(id []byte, i int) []byte {
	k := make([]byte, 20)
	copy(k, id)
	binary.BigEndian.PutUint32(k[16:], uint32(i))
	return k
}

func (t *txn) counter(name string) int64 {
	v := t.counters.Get([]byte(name))
	if v == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

func (t *txn) addCounter(name string, d int64) error {
	if d == 0 {
		return nil
	}
	v := make([]byte, 8)
	binary.BigEndian.PutUint64(v, uint64(t.counter(name)+d))
	return t.counters.Put([]byte(name), v)
}

// vectorBucket returns the current model's vectors, or nil when no model is set
// or none of its vectors exist yet.
func (t *txn) vectorBucket() backend.Bucket {
	if t.model == "" {
		return nil
	}
	return t.vectors.Bucket([]byte(t.model))
}

func (t *txn) hasVector(hash []byte) bool {
	b := t.vectorBucket()
	return b != nil && b.Get(hash) != nil
}

// reindex replaces the chunks of item id after its content was written.
// chunksFrom, when set, is an item with the same content whose chunk records
// are copied instead of chunking again (Copy).
func (t *txn) reindex(id []byte, it *Item, content, chunksFrom []byte) error {
	if err := t.emit(id); err != nil {
		return err
	}
	if err := t.dropChunks(id); err != nil {
		return err
	}
	mime := it.MimeType
	if !it.IsText && !it.IsDir {
		body, err := t.putBinaryText(id, it, chunksFrom)
		if err != nil {
			return err
		}
		content, mime, chunksFrom = body, "text/plain", nil
	} else if err := t.text.Delete(id); err != nil { // it may have been binary before
		return fmt.Errorf("delete text: %w", err)
	}
	if it.IsDir || len(content) == 0 {
		if t.precomputed != nil {
			return newError(ErrInvalid, it.Ref(), "send embeddings only with non-empty text content",
				"%s has no text to chunk, so it cannot take chunk embeddings.", it.Ref())
		}
		return nil
	}
	if chunksFrom != nil {
		if t.chunkq.Get(chunksFrom) == nil {
			return t.putChunks(id, t.chunksOf(chunksFrom))
		}
	} else if t.chunker != nil {
		spans := t.chunked.spans
		if t.chunked.by == "" || t.chunked.by != t.chunker.ID() {
			spans = chunkBody(t.chunker, it, content, mime)
		}
		return t.putChunks(id, spans)
	}
	// No chunker yet (no model installed): remember the item for later.
	if t.precomputed != nil {
		return newError(ErrInvalid, it.Ref(), "wait until Status reports the embedding model available",
			"No embedding model is loaded, so %s cannot be chunked to match its chunk embeddings.", it.Ref())
	}
	if err := t.chunkq.Put(bytes.Clone(id), queuedMark); err != nil {
		return fmt.Errorf("queue chunking: %w", err)
	}
	return t.addCounter(counterChunkQ, 1)
}

// chunkBody chunks content of it with c. The frontmatter is metadata, not
// text to search: c gets the body, and the spans are shifted back onto the
// content.
func chunkBody(c Chunker, it *Item, content []byte, mimeType string) []ChunkSpan {
	fm := int(min(it.FrontmatterLen, int64(len(content))))
	spans := c.Chunk(content[fm:], chunkDoc(it, mimeType))
	for i := range spans {
		spans[i].Start += fm
		spans[i].End += fm
	}
	return spans
}

// chunking is a text item's content chunked before the write lock was
// taken, by the chunker with ID by; reindex uses it while that chunker is
// still installed.
type chunking struct {
	by    string
	spans []ChunkSpan
}

// chunkAhead chunks a text item about to be written, outside the store's
// write lock, so that writers tokenize in parallel and a batch holds the
// lock only to store.
func (s *Store) chunkAhead(it *Item, content []byte) chunking {
	s.mu.RLock()
	c := s.chunker
	s.mu.RUnlock()
	if c == nil || len(content) == 0 {
		return chunking{}
	}
	return chunking{by: c.ID(), spans: chunkBody(c, it, content, it.MimeType)}
}

// binaryHeaderEnd separates a binary item's title and MIME type from the text
// extracted from it in its searchable text.
var binaryHeaderEnd = []byte("\n\n")

// putBinaryText stores and returns the searchable text of binary item id: its
// title and MIME type, so that it is found by name, then the text extracted
// from it. The extracted part comes from the current Write, else from the
// item copied (from), else from what the item had.
func (t *txn) putBinaryText(id []byte, it *Item, from []byte) ([]byte, error) {
	extracted := t.extracted
	if extracted == nil {
		if from == nil {
			from = id
		}
		_, extracted, _ = bytes.Cut(t.text.Get(from), binaryHeaderEnd)
	}
	body := make([]byte, 0, len(it.Title)+len(it.MimeType)+len(binaryHeaderEnd)+1+len(extracted))
	body = append(body, it.Title...)
	body = append(body, '\n')
	body = append(body, it.MimeType...)
	body = append(body, binaryHeaderEnd...)
	body = append(body, extracted...)
	if err := t.text.Put(bytes.Clone(id), body); err != nil {
		return nil, fmt.Errorf("put text %s: %w", it.ID, err)
	}
	return body, nil
}

// chunkSource returns the bytes the chunk spans of item id point into: the
// searchable text of a binary item, else the content.
func (t *txn) chunkSource(id []byte) []byte {
	if v := t.text.Get(id); v != nil {
		return v
	}
	return t.content.Get(id)
}

// putChunks stores chunk records and the precomputed vectors of a Write, and
// queues chunks that still lack a vector.
func (t *txn) putChunks(id []byte, spans []ChunkSpan) error {
	if err := t.putPrecomputed(spans); err != nil {
		return err
	}
	for i, c := range spans {
		k := chunkKey(id, i)
		if err := t.chunks.Put(k, encodeChunk(c)); err != nil {
			return fmt.Errorf("put chunk: %w", err)
		}
		if err := t.putChunkHash(c.Hash, k); err != nil {
			return err
		}
		// Without a model nothing can embed; setting one queues what lacks a vector.
		if t.model == "" {
			continue
		}
		if t.hasVector(c.Hash[:]) {
			t.chunksReused++
			continue
		}
		t.chunksToEmbed++
		if err := t.queueEmbed(k, c.Hash, false); err != nil {
			return err
		}
	}
	return t.addCounter(counterChunks, int64(len(spans)))
}

// Embeddings are precomputed chunk vectors supplied with a Write: one per
// chunk the store's chunker makes of the content, in order, from Model, which
// must be the store's model. The caller checks their dimensions.
type Embeddings struct {
	Model   string
	Vectors [][]float32
}

func (t *txn) putPrecomputed(spans []ChunkSpan) error {
	e := t.precomputed
	if e == nil {
		return nil
	}
	if e.Model != t.model {
		return newError(ErrInvalid, "", "embed with the store's model (see Status), or leave the embeddings out",
			"The embeddings come from model %q but the store embeds with %q.", e.Model, t.model)
	}
	if len(e.Vectors) != len(spans) {
		return newError(ErrInvalid, "", "send one embedding per chunk of the store's chunker",
			"The content makes %d chunks but %d embeddings were given.", len(spans), len(e.Vectors))
	}
	for i, c := range spans {
		if err := t.putVector(c.Hash, e.Vectors[i]); err != nil {
			return err
		}
	}
	return nil
}

// chunksOf returns the chunk records of item id.
func (t *txn) chunksOf(id []byte) []ChunkSpan {
	var out []ChunkSpan
	c := t.chunks.Cursor()
	for k, v := c.Seek(id); k != nil && bytes.HasPrefix(k, id); k, v = c.Next() {
		out = append(out, decodeChunk(v))
	}
	return out
}

// dropChunks removes every chunk record and queue entry of item id.
func (t *txn) dropChunks(id []byte) error {
	var keys [][]byte
	var hashes [][32]byte
	c := t.chunks.Cursor()
	for k, v := c.Seek(id); k != nil && bytes.HasPrefix(k, id); k, v = c.Next() {
		keys, hashes = append(keys, bytes.Clone(k)), append(hashes, [32]byte(v[20:52]))
	}
	for i, k := range keys {
		if err := t.chunks.Delete(k); err != nil {
			return fmt.Errorf("delete chunk: %w", err)
		}
		if err := t.dropChunkHash(hashes[i], k); err != nil {
			return err
		}
		if err := t.dequeueEmbed(k); err != nil {
			return err
		}
	}
	if err := t.addCounter(counterChunks, -int64(len(keys))); err != nil {
		return err
	}
	if t.chunkq.Get(id) != nil {
		if err := t.chunkq.Delete(id); err != nil {
			return fmt.Errorf("dequeue chunking: %w", err)
		}
		return t.addCounter(counterChunkQ, -1)
	}
	return nil
}

// SetIndexing installs the chunker and the embedding model id (either may be
// nil/empty while unavailable) and reconciles the store with them in one
// transaction: a changed chunker queues every item to be chunked again;
// a changed model queues every chunk that lacks one of its vectors. No model
// forgets the store's model, since chunks stored without one are not queued:
// installing it again queues them. Vectors of other models are kept, never
// mixed in.
func (s *Store) SetIndexing(ctx context.Context, c Chunker, model string) (IndexingChange, error) {
	s.mu.Lock()
	s.chunker, s.model = c, model
	s.mu.Unlock()
	var ch IndexingChange
	// Look first: at start-up the store usually matches, and a write
	// transaction would wait for an fsync behind whatever else is flushing.
	if err := s.view(ctx, func(t *txn) error {
		meta := t.tx.Bucket([]byte(bucketMeta))
		ch.PrevChunker, ch.PrevModel = string(meta.Get([]byte(keyChunker))), string(meta.Get([]byte(keyModel)))
		return nil
	}); err != nil || ((c == nil || ch.PrevChunker == c.ID()) && ch.PrevModel == model) {
		return ch, err
	}
	err := s.update(ctx, func(t *txn) error {
		ch = IndexingChange{}
		meta := t.tx.Bucket([]byte(bucketMeta))
		ch.PrevChunker, ch.PrevModel = string(meta.Get([]byte(keyChunker))), string(meta.Get([]byte(keyModel)))
		if c != nil && ch.PrevChunker != c.ID() {
			if err := t.queueAllForChunking(&ch.Rechunk); err != nil {
				return err
			}
			if err := meta.Put([]byte(keyChunker), []byte(c.ID())); err != nil {
				return err
			}
		}
		switch {
		case model == "" && ch.PrevModel != "":
			// Chunks stored from now on are not queued: forget the model, so
			// that installing it again queues every chunk without its vector.
			if err := meta.Delete([]byte(keyModel)); err != nil {
				return err
			}
		case model != "" && ch.PrevModel != model:
			if err := t.queueMissingVectors(&ch.Reembed); err != nil {
				return err
			}
			if err := t.queueMissingQuestionVectors(); err != nil {
				return err
			}
			if err := meta.Put([]byte(keyModel), []byte(model)); err != nil {
				return err
			}
		}
		return nil
	})
	return ch, err
}

func (t *txn) queueAllForChunking(n *int64) error {
	*n = 0
	return t.paths.ForEachBucket(func(name []byte) error {
		return t.paths.Bucket(name).ForEach(func(_, v []byte) error {
			pv := decodePathVal(v)
			if pv.dir() || (pv.text() && pv.size == 0) || t.chunkq.Get(pv.id) != nil {
				return nil
			}
			if err := t.chunkq.Put(bytes.Clone(pv.id), queuedMark); err != nil {
				return err
			}
			*n++
			return t.addCounter(counterChunkQ, 1)
		})
	})
}

func (t *txn) queueMissingVectors(n *int64) error {
	*n = 0
	var keys [][]byte
	var hashes [][32]byte
	err := t.chunks.ForEach(func(k, v []byte) error {
		c := decodeChunk(v)
		if !t.hasVector(c.Hash[:]) && t.embedq.Get(k) == nil {
			keys, hashes = append(keys, bytes.Clone(k)), append(hashes, c.Hash)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if err := t.queueEmbed(k, hashes[i], false); err != nil {
			return err
		}
	}
	*n = int64(len(keys))
	return nil
}

// ChunkPending chunks up to limit items waiting for a chunker and returns how
// many it handled. It does nothing while no chunker is installed.
func (s *Store) ChunkPending(ctx context.Context, limit int) (int, error) {
	// Look first: even an empty bbolt write transaction costs an fsync.
	var queued int64
	if err := s.view(ctx, func(t *txn) error {
		if t.chunker != nil {
			queued = t.counter(counterChunkQ)
		}
		return nil
	}); err != nil || queued == 0 {
		return 0, err
	}
	var n int
	err := s.update(ctx, func(t *txn) error {
		n = 0
		if t.chunker == nil {
			return nil
		}
		var ids [][]byte
		c := t.chunkq.Cursor()
		for k, _ := c.First(); k != nil && len(ids) < limit; k, _ = c.Next() {
			ids = append(ids, bytes.Clone(k))
		}
		for _, id := range ids {
			it, err := t.item(id)
			if err != nil {
				return err
			}
			content := t.content.Get(id)
			// An item stored before frontmatter was parsed gets its
			// metadata now, when the new chunker re-chunks it.
			if it.FrontmatterLen == 0 && opensFrontmatter(content) {
				if applyFrontmatter(&it, content, editCallerFields(&it)); it.FrontmatterLen > 0 {
					if err := t.putMeta(id, &it, nil); err != nil {
						return err
					}
				}
			}
			if err := t.reindex(id, &it, content, nil); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	return n, err
}

// PendingEmbeddings returns up to limit queued chunks with their text, in
// queue order. On a store shared by replicas it leaves out the chunks
// another replica has claimed and claims those it returns (DefaultClaimLease),
// so each chunk is embedded once for all of them.
func (s *Store) PendingEmbeddings(ctx context.Context, limit int) ([]PendingChunk, error) {
	var out []PendingChunk
	err := s.claimQueue(ctx, claimEmbed, func(t *txn) backend.Bucket { return t.embedq }, limit,
		func() { out = out[:0] },
		func(t *txn, k, v []byte) error {
			p, err := t.pendingChunk(k, v)
			out = append(out, p)
			return err
		})
	return out, err
}

// PendingEmbeddingsOf is PendingEmbeddings restricted to the items with the
// given ids (as Reembed returns them), so that a caller waiting for those
// items can embed them ahead of the rest of the queue. It also returns how
// many of their chunks are queued in all.
func (s *Store) PendingEmbeddingsOf(ctx context.Context, items []string, limit int) ([]PendingChunk, int64, error) {
	prefixes := make([][]byte, len(items))
	for i, id := range items {
		p, err := parseID(id)
		if err != nil {
			return nil, 0, err
		}
		prefixes[i] = p
	}
	var out []PendingChunk
	var queued int64
	err := s.view(ctx, func(t *txn) error {
		out, queued = out[:0], 0
		c := t.embedq.Cursor()
		for _, id := range prefixes {
			for k, v := c.Seek(id); k != nil && bytes.HasPrefix(k, id); k, v = c.Next() {
				queued++
				if len(out) == limit {
					continue
				}
				p, err := t.pendingChunk(k, v)
				if err != nil {
					return err
				}
				out = append(out, p)
			}
		}
		return nil
	})
	return out, queued, err
}

// pendingChunk reads the chunk of embedding queue entry k, v.
func (t *txn) pendingChunk(k, v []byte) (PendingChunk, error) {
	cv := t.chunks.Get(k)
	if cv == nil {
		return PendingChunk{}, fmt.Errorf("queued chunk %x has no record", k)
	}
	ch := decodeChunk(cv)
	content := t.chunkSource(k[:16])
	if ch.End > len(content) || ch.Start > ch.End {
		return PendingChunk{}, fmt.Errorf("chunk %x span %d-%d outside content of %d bytes", k, ch.Start, ch.End, len(content))
	}
	it, err := t.item(k[:16])
	if err != nil {
		return PendingChunk{}, err
	}
	doc := chunkDoc(&it, "")
	p := PendingChunk{key: bytes.Clone(k), Hash: ch.Hash, Heading: ch.Heading, Text: bytes.Clone(content[ch.Start:ch.End]),
		Title: doc.Title, Description: doc.Description}
	p.Have = v[32] == 0 && t.hasVector(ch.Hash[:])
	return p, nil
}

// SaveEmbeddings stores the vectors computed for pending chunks (vecs[i] for
// done[i]; nil where Have was set) under model and clears their queue entries,
// in one transaction. Entries re-queued meanwhile (the item changed) stay
// queued. Nothing is saved if model is no longer the store's model.
func (s *Store) SaveEmbeddings(ctx context.Context, model string, done []PendingChunk, vecs [][]float32) error {
	if len(vecs) != len(done) {
		return fmt.Errorf("save embeddings: %d vectors for %d chunks", len(vecs), len(done))
	}
	return s.update(ctx, func(t *txn) error {
		if err := releaseClaims(s, t, claimEmbed, done); err != nil {
			return err
		}
		if t.model != model {
			return nil
		}
		for i, p := range done {
			if vecs[i] != nil {
				if err := t.putVector(p.Hash, vecs[i]); err != nil {
					return err
				}
			}
			// A new vector has dequeued its chunks already (putVector).
			if v := t.embedq.Get(p.key); v != nil && bytes.Equal(v[:32], p.Hash[:]) {
				if err := t.dequeueEmbed(p.key); err != nil {
					return err
				}
				if err := t.emitVectors(p.key[:16], int(binary.BigEndian.Uint32(p.key[16:]))); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// vectorFloat16 leads a vector stored as unit-length float16s. Vectors
// stored before it are float32s with no lead byte, so of even length;
// this encoding's is odd.
const vectorFloat16 = 1

// encodeVector stores v scaled to unit length (search compares directions
// only) as float16s: half the bytes of float32s. Each component keeps 11
// significant bits, so the stored vector moves by at most 2^-12 and a
// cosine with it by at most about 2.5e-4.
func encodeVector(v []float32) []byte {
	var sum float64
	for _, f := range v {
		sum += float64(f) * float64(f)
	}
	scale := 1.0
	if sum > 0 {
		scale = 1 / math.Sqrt(sum)
	}
	b := make([]byte, 1+2*len(v))
	b[0] = vectorFloat16
	for i, f := range v {
		binary.LittleEndian.PutUint16(b[1+2*i:], float16.Fromfloat32(float32(float64(f)*scale)).Bits())
	}
	return b
}

// decodeVector decodes either encoding.
func decodeVector(b []byte) []float32 {
	if len(b)%2 == 1 && b[0] == vectorFloat16 {
		v := make([]float32, len(b)/2)
		for i := range v {
			v[i] = float16.Frombits(binary.LittleEndian.Uint16(b[1+2*i:])).Float32()
		}
		return v
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Reembed queues every chunk of the items at refs (items or directories; all
// items when all is set) to be embedded again even though vectors exist,
// with the items' questions and those generated for their chunks' texts,
// and returns how many chunks it queued and the ids of the items that have
// chunks (for PendingEmbeddingsOf).
func (s *Store) Reembed(ctx context.Context, refs []Ref, all bool) (int64, []string, error) {
	var n int64
	var items []string
	err := s.update(ctx, func(t *txn) error {
		n, items = 0, items[:0]
		queue := func(id []byte) error {
			chunks := t.chunksOf(id)
			for i, c := range chunks {
				if err := t.queueEmbed(chunkKey(id, i), c.Hash, true); err != nil {
					return err
				}
				n++
			}
			if t.model != "" {
				if err := t.requeueQuestions(id, chunks); err != nil {
					return err
				}
			}
			if len(chunks) > 0 {
				items = append(items, uuid.UUID(id).String())
			}
			return nil
		}
		if all {
			var ids [][]byte
			c := t.chunks.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Seek(afterID(k[:16])) {
				ids = append(ids, bytes.Clone(k[:16]))
			}
			for _, id := range ids {
				if err := queue(id); err != nil {
					return err
				}
			}
			return nil
		}
		for _, r := range refs {
			nd, err := t.lookup(r)
			if err != nil {
				return err
			}
			switch {
			case !nd.exists():
				return t.notFound(nd)
			case nd.isFile():
				if err := queue(nd.pv().id); err != nil {
					return err
				}
			default:
				var ids [][]byte
				subtree(t.driveBucket(nd.drive), nd.path, func(_, v []byte) { ids = append(ids, bytes.Clone(v[1:17])) })
				for _, id := range ids {
					if err := queue(id); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	return n, items, err
}

// afterID returns the first chunk key past every chunk of id.
func afterID(id []byte) []byte {
	k := make([]byte, 20)
	copy(k, id)
	for i := 16; i < 20; i++ {
		k[i] = 0xff
	}
	return append(k, 0)
}

// Chunks returns the chunk records of the item at ref (nil while it waits
// for a chunker).
func (s *Store) Chunks(ctx context.Context, ref Ref) ([]ChunkSpan, error) {
	var out []ChunkSpan
	err := s.view(ctx, func(t *txn) error {
		n, err := t.lookup(ref)
		if err != nil {
			return err
		}
		if !n.isFile() {
			if !n.exists() {
				return t.notFound(n)
			}
			r := n.ref()
			return newError(ErrIsDir, r, "pass an item ref", "%s is a directory, not an item.", r)
		}
		out = t.chunksOf(n.pv().id)
		return nil
	})
	return out, err
}

// Vector returns the current model's vector for a chunk text hash, as
// stored (unit length; see encodeVector), or nil.
func (s *Store) Vector(ctx context.Context, hash [32]byte) ([]float32, error) {
	var v []float32
	err := s.view(ctx, func(t *txn) error {
		if raw := openVectors(t.vectorBucket()).get(hash[:]); raw != nil {
			v = decodeVector(raw)
		}
		return nil
	})
	return v, err
}

// EmbedStats reads the derived-state counters.
func (s *Store) EmbedStats(ctx context.Context) (EmbedStats, error) {
	var st EmbedStats
	err := s.view(ctx, func(t *txn) error {
		st = EmbedStats{
			Chunks:          t.counter(counterChunks),
			PendingEmbed:    t.counter(counterEmbedQ),
			PendingChunking: t.counter(counterChunkQ),
		}
		if t.model != "" {
			st.Vectors = t.counter(vectorCounter(t.model))
		}
		return nil
	})
	return st, err
}

// Work returns a new channel that is signalled after each committed change,
// so that each background worker can wait for new work instead of polling.
// Signals coalesce: one pending signal stands for any number of changes.
func (s *Store) Work() <-chan struct{} {
	w := make(chan struct{}, 1)
	s.workMu.Lock()
	s.work = append(s.work, w)
	s.workMu.Unlock()
	return w
}
