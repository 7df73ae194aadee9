package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ctxd/ctxd/vfs/backend"
)

// This file keeps question vectors (the Knowledge Hive's hypothetical prompt
// embeddings): questions a chunk answers, embedded as queries, so that the
// vector leg scores a chunk by the best of its text vector and its question
// vectors. Questions come from two places:
//
//   - the caller, with a Write (WriteParams.Questions): they belong to the
//     item, follow it through moves and copies, survive edits and go with
//     it; each attaches to the item's chunk whose text vector is most
//     similar to it, decided whenever the indexes read the item;
//   - the enricher (SetGeneratedQuestions): keyed by the chunk's text hash,
//     so every chunk with that text shares them and a chunk whose text
//     changes has none until it is asked about.
//
// Question vectors are keyed by the SHA-256 of the question text, one per
// model, like chunk vectors. Questions without one wait in a queue
// (PendingQuestions, SaveQuestionVectors) while a model is set.

// Limits of questions, fixed by the store's keys and the vector index's ids.
const (
	// MaxQuestionBytes is the limit on one question.
	MaxQuestionBytes = 512
	// MaxQuestionsPerItem is the most caller questions one item may carry;
	// the daemon's limits.max_questions_per_item may only lower it.
	MaxQuestionsPerItem = 64
	// MaxGeneratedQuestions is the most generated questions one chunk text
	// may carry.
	MaxGeneratedQuestions = 32
)

const (
	// bucketQuestions holds both kinds of question:
	//   'i' | item id (16) | slot (1)    -> question hash (32) | text: the caller's
	//   'g' | chunk hash (32)            -> count (1): the chunk text was asked about
	//   'g' | chunk hash (32) | slot (1) -> question hash (32) | text: generated
	bucketQuestions = "questions"
	// bucketQVectors is nested per model: question hash (32) -> float32
	// little-endian, the question embedded as a query.
	bucketQVectors = "qvectors"
	// bucketQEmbedQ queues questions for a vector: question key -> question hash (32).
	bucketQEmbedQ = "qembedq"
	// bucketChunkHash indexes chunk records by text hash, so that generated
	// questions find the chunks they belong to:
	// hash (32) | item id (16) | index (4) -> queuedMark.
	bucketChunkHash = "chunkhash"

	counterQEmbedQ = "qembedq"

	questionItem      = 'i'
	questionGenerated = 'g'
)

func itemQuestionPrefix(id []byte) []byte {
	return append([]byte{questionItem}, id...)
}

func generatedPrefix(hash []byte) []byte {
	return append([]byte{questionGenerated}, hash...)
}

// questionVal is a question record's value: its hash, then its text.
func questionVal(text string) []byte {
	h := sha256.Sum256([]byte(text))
	return append(h[:], text...)
}

// CleanQuestions trims questions, drops duplicates and checks them against
// MaxQuestionBytes and max (the most allowed); ref names the item in errors.
func CleanQuestions(ref string, questions []string, max int) ([]string, error) {
	const hint = "questions are single lines of at most 512 bytes of UTF-8 text, without control characters"
	if len(questions) > max {
		return nil, newError(ErrInvalid, ref, fmt.Sprintf("send at most %d questions", max),
			"%d questions were given; the limit is %d.", len(questions), max)
	}
	out := make([]string, 0, len(questions))
	seen := map[string]bool{}
	for i, q := range questions {
		q = strings.TrimSpace(q)
		if p := questionProblem(q); p != "" {
			return nil, newError(ErrInvalid, ref, hint, "Question %d %s.", i, p)
		}
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out, nil
}

// questionProblem says what is wrong with trimmed question q, "" if nothing.
func questionProblem(q string) string {
	switch {
	case q == "":
		return "is empty"
	case !utf8.ValidString(q):
		return "is not valid UTF-8"
	case len(q) > MaxQuestionBytes:
		return fmt.Sprintf("is %d bytes; the limit is %d", len(q), MaxQuestionBytes)
	case strings.ContainsFunc(q, isControl):
		return fmt.Sprintf("(%s) contains control characters", quote(q))
	}
	return ""
}

// usableQuestions keeps the generated questions CleanQuestions would
// accept, trimmed and without duplicates, at most MaxGeneratedQuestions: a
// model's odd answer loses a question rather than failing the enricher.
func usableQuestions(questions []string) []string {
	var out []string
	for _, q := range questions {
		if q = strings.TrimSpace(q); questionProblem(q) == "" && !slices.Contains(out, q) && len(out) < MaxGeneratedQuestions {
			out = append(out, q)
		}
	}
	return out
}

// qvectorBucket returns the current model's question vectors, or nil.
func (t *txn) qvectorBucket() backend.Bucket {
	if t.model == "" {
		return nil
	}
	return t.qvectors.Bucket([]byte(t.model))
}

func (t *txn) questionVector(qhash []byte) []byte {
	return openVectors(t.qvectorBucket()).get(qhash)
}

// putQuestion stores question record key and queues it for a vector when
// a model is set and its vector is missing.
func (t *txn) putQuestion(key []byte, text string) error {
	v := questionVal(text)
	if err := t.questions.Put(key, v); err != nil {
		return fmt.Errorf("put question: %w", err)
	}
	if t.model == "" || t.questionVector(v[:32]) != nil {
		return nil
	}
	return t.queueQuestion(key, v[:32], false)
}

// queueQuestion queues question key (text hash qhash) for a vector; force
// has it embedded again even if a vector for qhash exists (Reembed).
func (t *txn) queueQuestion(key, qhash []byte, force bool) error {
	existed := t.qembedq.Get(key) != nil
	v := bytes.Clone(qhash)
	if force {
		v = append(v, 1)
	}
	if err := t.qembedq.Put(bytes.Clone(key), v); err != nil {
		return fmt.Errorf("queue question: %w", err)
	}
	if existed {
		return nil
	}
	return t.addCounter(counterQEmbedQ, 1)
}

// deleteQuestions removes every question record under prefix and its queue
// entry, and reports whether any of them had a vector.
func (t *txn) deleteQuestions(prefix []byte) (hadVector bool, err error) {
	var keys [][]byte
	c := t.questions.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		keys = append(keys, bytes.Clone(k))
		if len(v) >= 32 && t.questionVector(v[:32]) != nil {
			hadVector = true
		}
	}
	for _, k := range keys {
		if err := t.questions.Delete(k); err != nil {
			return false, fmt.Errorf("delete question: %w", err)
		}
		if t.qembedq.Get(k) != nil {
			if err := t.qembedq.Delete(k); err != nil {
				return false, fmt.Errorf("dequeue question: %w", err)
			}
			if err := t.addCounter(counterQEmbedQ, -1); err != nil {
				return false, err
			}
		}
	}
	return hadVector, nil
}

// hasItemQuestions reports whether item id carries caller questions.
func (t *txn) hasItemQuestions(id []byte) bool {
	return hasPrefix(t.questions, itemQuestionPrefix(id))
}

// itemQuestions returns the caller questions of item id, in order.
func (t *txn) itemQuestions(id []byte) []string {
	var out []string
	prefix := itemQuestionPrefix(id)
	c := t.questions.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		out = append(out, string(v[32:]))
	}
	return out
}

// setItemQuestions replaces the caller questions of item id (already
// cleaned). The vector index learns of the change through the outbox entry
// of the write that calls it.
func (t *txn) setItemQuestions(id []byte, questions []string) error {
	if _, err := t.deleteQuestions(itemQuestionPrefix(id)); err != nil {
		return err
	}
	for i, q := range questions {
		if err := t.putQuestion(append(itemQuestionPrefix(id), byte(i)), q); err != nil {
			return err
		}
	}
	return nil
}

// putChunkHash and dropChunkHash keep bucketChunkHash in step with chunk
// record key (item id | index) of text hash.
func (t *txn) putChunkHash(hash [32]byte, key []byte) error {
	if err := t.chunkhash.Put(waitKey(hash[:], key), queuedMark); err != nil {
		return fmt.Errorf("index chunk hash: %w", err)
	}
	return nil
}

func (t *txn) dropChunkHash(hash [32]byte, key []byte) error {
	if err := t.chunkhash.Delete(waitKey(hash[:], key)); err != nil {
		return fmt.Errorf("unindex chunk hash: %w", err)
	}
	if t.dropped == nil {
		t.dropped = map[[32]byte]bool{}
	}
	t.dropped[hash] = true
	return nil
}

// chunksWithHash returns the keys (item id | index) of the chunks whose text hash is hash.
func (t *txn) chunksWithHash(hash []byte) [][]byte {
	var keys [][]byte
	c := t.chunkhash.Cursor()
	for k, _ := c.Seek(hash); k != nil && bytes.HasPrefix(k, hash); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k[32:]))
	}
	return keys
}

// dropOrphanQuestions deletes the generated questions of the text hashes
// this transaction dropped the last chunk of. It runs at the end of every
// update, after a rewrite has put back the chunks it keeps.
func (t *txn) dropOrphanQuestions() error {
	for h := range t.dropped {
		if hasPrefix(t.chunkhash, h[:]) {
			continue
		}
		if _, err := t.deleteQuestions(generatedPrefix(h[:])); err != nil {
			return err
		}
	}
	t.dropped = nil
	return nil
}

// indexChunkHashes creates the chunk hash index, filling it from the chunk
// records of a store written before the index existed.
func indexChunkHashes(tx backend.Tx) error {
	if tx.Bucket([]byte(bucketChunkHash)) != nil {
		return nil
	}
	b, err := tx.CreateBucketIfNotExists([]byte(bucketChunkHash))
	if err != nil {
		return err
	}
	return tx.Bucket([]byte(bucketChunks)).ForEach(func(k, v []byte) error {
		return b.Put(waitKey(v[20:52], k), queuedMark)
	})
}

// QuestionTask is a chunk the enricher may ask questions about.
type QuestionTask struct {
	ItemID  string
	Ref     string
	Chunk   int
	Hash    [32]byte // chunk text hash
	Title   string
	Heading string
	Text    []byte
}

// QuestionTasks returns up to limit chunks, in key order after cursor after
// ("" = from the start), whose text hash has no generated-questions record
// (a text shared by several chunks comes once per call); next is the cursor
// for the following call, "" when the scan reached the end.
func (s *Store) QuestionTasks(ctx context.Context, after string, limit int) (tasks []QuestionTask, next string, err error) {
	if limit < 1 {
		return nil, "", newError(ErrInvalid, "", "ask for at least one task", "The limit %d is not positive.", limit)
	}
	var start []byte
	if after != "" {
		k, err := hex.DecodeString(after)
		if err != nil || len(k) != 20 {
			return nil, "", newError(ErrInvalid, after, "pass the cursor a previous call returned, or \"\" to start", "The cursor %s is malformed.", quote(after))
		}
		start = append(k, 0) // just past it
	}
	err = s.view(ctx, func(t *txn) error {
		tasks, next = tasks[:0], ""
		seen := map[[32]byte]bool{}
		c := t.chunks.Cursor()
		k, v := c.First()
		if start != nil {
			k, v = c.Seek(start)
		}
		for ; k != nil; k, v = c.Next() {
			if len(tasks) == limit {
				return nil
			}
			next = hex.EncodeToString(k)
			if err := ctx.Err(); err != nil {
				return err
			}
			ch := decodeChunk(v)
			if seen[ch.Hash] || t.questions.Get(generatedPrefix(ch.Hash[:])) != nil {
				continue
			}
			seen[ch.Hash] = true
			it, err := t.item(k[:16])
			if err != nil {
				return err
			}
			content := t.chunkSource(k[:16])
			if ch.End > len(content) || ch.Start > ch.End {
				return fmt.Errorf("chunk %x span %d-%d outside content of %d bytes", k, ch.Start, ch.End, len(content))
			}
			tasks = append(tasks, QuestionTask{
				ItemID: it.ID, Ref: it.Ref(), Chunk: int(binary.BigEndian.Uint32(k[16:])), Hash: ch.Hash,
				Title: it.Title, Heading: ch.Heading, Text: bytes.Clone(content[ch.Start:ch.End]),
			})
		}
		next = ""
		return nil
	})
	return tasks, next, err
}

// SetGeneratedQuestions stores the questions generated for chunk text hash
// (replacing any) and queues them for embedding; an empty list records
// "asked, nothing usable" so the hash is not asked again. A hash no chunk
// has any more is ignored (returns nil). Questions are trimmed; those
// CleanQuestions would refuse and duplicates are dropped, and at most
// MaxGeneratedQuestions kept.
func (s *Store) SetGeneratedQuestions(ctx context.Context, hash [32]byte, questions []string) error {
	qs := usableQuestions(questions)
	return s.update(ctx, func(t *txn) error {
		chunks := t.chunksWithHash(hash[:])
		if len(chunks) == 0 {
			return nil
		}
		prefix := generatedPrefix(hash[:])
		hadVector, err := t.deleteQuestions(prefix)
		if err != nil {
			return err
		}
		if err := t.questions.Put(prefix, []byte{byte(len(qs))}); err != nil {
			return fmt.Errorf("put questions: %w", err)
		}
		haveVector := false
		for i, q := range qs {
			key := append(bytes.Clone(prefix), byte(i))
			if err := t.putQuestion(key, q); err != nil {
				return err
			}
			haveVector = haveVector || t.qembedq.Get(key) == nil && t.model != ""
		}
		if !hadVector && !haveVector {
			return nil // the vector index holds nothing of them either way
		}
		for _, k := range chunks {
			if err := t.emitVectors(k[:16], int(binary.BigEndian.Uint32(k[16:]))); err != nil {
				return err
			}
		}
		return nil
	})
}

// QuestionStats counts chunks with and without a question vector, and
// questions waiting for a vector. Counting the chunks with one reads every
// question record and the chunks that carry one, so the count is kept until
// the outbox sequence or the model changes: every change to a chunk, a
// question or a question vector appends to the outbox, and Status polled
// while nothing is written costs two counter reads.
func (s *Store) QuestionStats(ctx context.Context) (with, without, pending int64, err error) {
	err = s.view(ctx, func(t *txn) error {
		pending = t.counter(counterQEmbedQ)
		key := questionCountKey{seq: t.outbox.Sequence(), model: t.model}
		var ok bool
		if with, ok = s.questionsWith.get(key); !ok {
			var err error
			if with, err = t.chunksWithQuestions(ctx); err != nil {
				return err
			}
			s.questionsWith.set(key, with)
		}
		without = t.counter(counterChunks) - with
		return nil
	})
	return with, without, pending, err
}

// questionCount is a count of chunks with a question vector and the store
// state it was taken at.
type questionCount struct {
	mu    sync.Mutex
	key   questionCountKey
	valid bool
	with  int64
}

type questionCountKey struct {
	seq   uint64
	model string
}

func (c *questionCount) get(key questionCountKey) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.with, c.valid && c.key == key
}

func (c *questionCount) set(key questionCountKey, with int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key, c.valid, c.with = key, true, with
}

// chunksWithQuestions counts the chunks that carry a question vector.
func (t *txn) chunksWithQuestions(ctx context.Context) (int64, error) {
	var with int64
	if t.qvectorBucket() == nil {
		return 0, nil
	}
	// Chunks whose text has a generated question with a vector: the records
	// of one text are adjacent, its marker first.
	c := t.questions.Cursor()
	hc := t.chunkhash.Cursor()
	var counted []byte // the text hash last counted
	for k, v := c.Seek([]byte{questionGenerated}); k != nil && k[0] == questionGenerated; k, v = c.Next() {
		if len(k) == 33 || bytes.Equal(counted, k[1:33]) || t.questionVector(v[:32]) == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		counted = k[1:33]
		for h, _ := hc.Seek(counted); h != nil && bytes.HasPrefix(h, counted); h, _ = hc.Next() {
			with++
		}
	}
	// Chunks a caller's question attaches to, unless counted above.
	for k, _ := c.Seek([]byte{questionItem}); k != nil && k[0] == questionItem; k, _ = c.Seek(afterPrefix(k[:17])) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		id := bytes.Clone(k[1:17])
		for i, qs := range t.attached(id) {
			if v := t.chunks.Get(chunkKey(id, i)); len(qs) > 0 && v != nil && !t.generatedHasVector(v[20:52]) {
				with++
			}
		}
	}
	return with, nil
}

// generatedHasVector reports whether chunk text hash has a generated
// question with a vector.
func (t *txn) generatedHasVector(hash []byte) bool {
	prefix := generatedPrefix(hash)
	c := t.questions.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) > len(prefix) && t.questionVector(v[:32]) != nil {
			return true
		}
	}
	return false
}

// afterPrefix returns the first key past every key that starts with prefix.
func afterPrefix(prefix []byte) []byte {
	k := bytes.Clone(prefix)
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] < 0xff {
			k[i]++
			return k[:i+1]
		}
	}
	return append(k, 0xff) // all 0xff: nothing sorts past it but longer keys
}

// IndexQuestion is a question vector as the vector index holds it.
type IndexQuestion struct {
	Hash   [32]byte // SHA-256 of the question text; QuestionVectors reads it by this
	Vector []float32
}

// chunkQuestions returns the question vectors of chunk i (text hash) of
// item id: the caller's attached to it, then the generated ones of its text.
func (t *txn) chunkQuestions(id []byte, i int, hash [32]byte) []IndexQuestion {
	if t.qvectorBucket() == nil {
		return nil
	}
	var out []IndexQuestion
	if t.hasItemQuestions(id) {
		out = append(out, t.attached(id)[i]...)
	}
	prefix := generatedPrefix(hash[:])
	c := t.questions.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) == len(prefix) {
			continue
		}
		if raw := t.questionVector(v[:32]); raw != nil {
			out = append(out, IndexQuestion{Hash: [32]byte(v[:32]), Vector: decodeVector(raw)})
		}
	}
	return out
}

// attached returns the caller questions of item id that have a vector, by
// the chunk each attaches to: the one whose text vector is most similar
// (the first on a tie), or chunk 0 while no chunk has a vector. The result
// is remembered for the transaction, since the indexes read a large item in
// several steps.
func (t *txn) attached(id []byte) map[int][]IndexQuestion {
	if t.attachedMemo != nil && bytes.Equal(t.attachedMemo.id, id) {
		return t.attachedMemo.byChunk
	}
	byChunk := map[int][]IndexQuestion{}
	var qs []IndexQuestion
	prefix := itemQuestionPrefix(id)
	c := t.questions.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if raw := t.questionVector(v[:32]); raw != nil {
			qs = append(qs, IndexQuestion{Hash: [32]byte(v[:32]), Vector: decodeVector(raw)})
		}
	}
	if len(qs) > 0 {
		var chunkVecs [][]float32
		if vb := t.vectorBucket(); vb != nil {
			vs := openVectors(vb)
			cc := t.chunks.Cursor()
			for k, v := cc.Seek(id); k != nil && bytes.HasPrefix(k, id); k, v = cc.Next() {
				var vec []float32
				if raw := vs.get(v[20:52]); raw != nil {
					vec = decodeVector(raw)
				}
				chunkVecs = append(chunkVecs, vec)
			}
		}
		for _, q := range qs {
			best, bestSim := 0, math.Inf(-1)
			for i, cv := range chunkVecs {
				if cv == nil {
					continue
				}
				if sim := cosine(q.Vector, cv); sim > bestSim {
					best, bestSim = i, sim
				}
			}
			byChunk[best] = append(byChunk[best], q)
		}
	}
	t.attachedMemo = &attachment{id: bytes.Clone(id), byChunk: byChunk}
	return byChunk
}

// attachment memoises attached for one item.
type attachment struct {
	id      []byte
	byChunk map[int][]IndexQuestion
}

// cosine is the cosine similarity of a and b (0 when either is zero or
// their lengths differ), as embed.Cosine: the store imports no index package.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// PendingQuestion is a queued question with its text.
type PendingQuestion struct {
	key  []byte
	Hash [32]byte // SHA-256 of Text
	Text string
	// Have is set when a vector for Hash already exists (another item or
	// chunk text has the same question) and the entry does not ask for it
	// to be computed again: SaveQuestionVectors just clears the entry.
	Have bool
}

func (p PendingQuestion) queueKey() []byte { return p.key }

// PendingQuestions returns up to limit queued questions, in queue order.
func (s *Store) PendingQuestions(ctx context.Context, limit int) ([]PendingQuestion, error) {
	var out []PendingQuestion
	err := s.claimQueue(ctx, claimQuestion, func(t *txn) backend.Bucket { return t.qembedq }, limit,
		func() { out = out[:0] },
		func(t *txn, k, v []byte) error {
			rec := t.questions.Get(k)
			if rec == nil {
				return fmt.Errorf("queued question %x has no record", k)
			}
			out = append(out, PendingQuestion{key: bytes.Clone(k), Hash: [32]byte(v[:32]), Text: string(rec[32:]),
				Have: len(v) == 32 && t.questionVector(v) != nil})
			return nil
		})
	return out, err
}

// SaveQuestionVectors stores the vectors computed for pending questions
// (vecs[i] for done[i]; nil where Have was set) under model, clears their
// queue entries and records in the outbox the chunks that now carry them,
// in one transaction. Nothing is saved if model is no longer the store's.
func (s *Store) SaveQuestionVectors(ctx context.Context, model string, done []PendingQuestion, vecs [][]float32) error {
	if len(vecs) != len(done) {
		return fmt.Errorf("save question vectors: %d vectors for %d questions", len(vecs), len(done))
	}
	return s.update(ctx, func(t *txn) error {
		if err := releaseClaims(s, t, claimQuestion, done); err != nil {
			return err
		}
		if t.model != model {
			return nil
		}
		b, err := t.qvectors.CreateBucketIfNotExists([]byte(model))
		if err != nil {
			return err
		}
		for i, p := range done {
			if vecs[i] != nil {
				if err := t.storeVector(b, p.Hash[:], encodeVector(vecs[i])); err != nil {
					return err
				}
			}
			// An entry replaced meanwhile (the questions changed) stays queued.
			if v := t.qembedq.Get(p.key); v == nil || !bytes.Equal(v[:32], p.Hash[:]) {
				continue
			}
			if err := t.qembedq.Delete(p.key); err != nil {
				return fmt.Errorf("dequeue question: %w", err)
			}
			if err := t.addCounter(counterQEmbedQ, -1); err != nil {
				return err
			}
			if err := t.emitQuestionOwner(p.key); err != nil {
				return err
			}
		}
		return nil
	})
}

// emitQuestionOwner records in the outbox the chunks question key's vector
// belongs to: its item's (attachment may move) or those of its chunk text.
func (t *txn) emitQuestionOwner(key []byte) error {
	if key[0] == questionItem {
		id := key[1:17]
		if t.items.Get(id) == nil || t.chunkCount(id) == 0 {
			return nil
		}
		return t.emitVectors(id, 0) // widened to every chunk: the item has questions
	}
	for _, k := range t.chunksWithHash(key[1:33]) {
		if err := t.emitVectors(k[:16], int(binary.BigEndian.Uint32(k[16:]))); err != nil {
			return err
		}
	}
	return nil
}

// isQuestion tells a question record of the questions bucket from the
// marker that a chunk text was asked about.
func isQuestion(k, v []byte) bool {
	return len(v) >= 32 && !(k[0] == questionGenerated && len(k) == 33)
}

// queueMissingQuestionVectors queues every question without a vector of
// the current model (after the model changed).
func (t *txn) queueMissingQuestionVectors() error {
	type entry struct{ key, qhash []byte }
	var missing []entry
	err := t.questions.ForEach(func(k, v []byte) error {
		if !isQuestion(k, v) {
			return nil
		}
		if t.questionVector(v[:32]) == nil && t.qembedq.Get(k) == nil {
			missing = append(missing, entry{bytes.Clone(k), bytes.Clone(v[:32])})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range missing {
		if err := t.queueQuestion(e.key, e.qhash, false); err != nil {
			return err
		}
	}
	return nil
}

// requeueQuestions queues item id's questions, and the generated questions
// of its chunks' texts, to be embedded again (Reembed).
func (t *txn) requeueQuestions(id []byte, chunks []ChunkSpan) error {
	prefixes := [][]byte{itemQuestionPrefix(id)}
	for _, c := range chunks {
		prefixes = append(prefixes, generatedPrefix(c.Hash[:]))
	}
	var queue [][2][]byte // key, question hash
	for _, prefix := range prefixes {
		c := t.questions.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if isQuestion(k, v) {
				queue = append(queue, [2][]byte{bytes.Clone(k), bytes.Clone(v[:32])})
			}
		}
	}
	for _, q := range queue {
		if err := t.queueQuestion(q[0], q[1], true); err != nil {
			return err
		}
	}
	return nil
}

// QuestionVectors reads the current model's vectors of questions by hash in
// one transaction; an entry is nil where the vector is gone.
func (s *Store) QuestionVectors(ctx context.Context, hashes [][32]byte) ([][]float32, error) {
	out := make([][]float32, len(hashes))
	err := s.view(ctx, func(t *txn) error {
		for i, h := range hashes {
			if raw := t.questionVector(h[:]); raw != nil {
				out[i] = decodeVector(raw)
			}
		}
		return nil
	})
	return out, err
}

// Questions returns the caller questions of the item at ref, in order.
func (s *Store) Questions(ctx context.Context, ref Ref) ([]string, error) {
	var out []string
	err := s.view(ctx, func(t *txn) error {
		n, err := t.resolveItem(ref)
		if err != nil {
			return err
		}
		out = t.itemQuestions(n.pv().id)
		return nil
	})
	return out, err
}

// GeneratedQuestions returns the generated questions of chunk text hash
// and whether it was asked about at all.
func (s *Store) GeneratedQuestions(ctx context.Context, hash [32]byte) (questions []string, asked bool, err error) {
	err = s.view(ctx, func(t *txn) error {
		questions, asked = nil, false
		prefix := generatedPrefix(hash[:])
		c := t.questions.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) == len(prefix) {
				asked = true
				continue
			}
			questions = append(questions, string(v[32:]))
		}
		return nil
	})
	return questions, asked, err
}
