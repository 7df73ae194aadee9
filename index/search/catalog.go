package search

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/index/vector"
	"github.com/ctxd/ctxd/vfs"
)

// chunkBits is how many low bits of a vector id hold the chunk index; the
// high bits hold the item's ordinal in the catalog.
const chunkBits = 20

// maxVectorChunks is the most chunks of one item the vector leg holds
// (a 64 MiB item makes about 100k chunks).
const maxVectorChunks = 1 << chunkBits

// Question rows (a chunk's question vectors, see vfs/questions.go) have the
// top bit set and the question's slot on its chunk in the next slotBits, so
// item ordinals stay below 2^36.
const (
	questionFlag     = 1 << 63
	slotShift        = 56
	maxQuestionSlots = 1 << 7 // more than vfs.MaxQuestionsPerItem + vfs.MaxGeneratedQuestions
	ordMask          = 1<<slotShift - 1
)

// entry is one item of the vector leg's catalog: what the filters and the
// id mapping need, without touching the store. There is one per item held
// for the process's life, so it keeps the id as the UUID's 16 bytes (the
// store's ids are canonical UUIDs, see vfs.Item) and shares one copy of
// each drive name and media type: 140 bytes an item besides its path,
// where strings took 240, and twice the difference in a heap the collector
// lets grow to twice what it holds.
type entry struct {
	id    uuid.UUID // item id; itemID is its string
	ord   uint64
	drive string // interned
	path  string
	mime  string // interned
	tags  []string
	time  int64 // lexical.TimeKey of the item's last change
	rows  int   // chunk indexes [0, rows) may have vector rows
	// questions holds, by chunk, the question hashes of its question rows
	// by slot (nil while it has none): rescoring reads their vectors.
	questions map[int][][32]byte
}

// itemID is the entry's item id as the store spells it.
func (e *entry) itemID() string { return e.id.String() }

func vectorID(ord uint64, chunk int) uint64 { return ord<<chunkBits | uint64(chunk) }

func questionID(ord uint64, chunk, slot int) uint64 {
	return questionFlag | uint64(slot)<<slotShift | vectorID(ord, chunk)
}

// isQuestion reports whether vector id is a question row; questionSlot is its slot.
func isQuestion(id uint64) bool  { return id&questionFlag != 0 }
func questionSlot(id uint64) int { return int(id>>slotShift) & (maxQuestionSlots - 1) }

// catalog maps items to ordinals and back. It is guarded by the Engine's lock.
type catalog struct {
	byID  map[uuid.UUID]*entry
	byOrd []*entry // nil where an item was removed
	// names holds the one copy of each drive name and media type that
	// entries share; a store has few of each.
	names map[string]string
}

func newCatalog() *catalog {
	return &catalog{byID: map[uuid.UUID]*entry{}, names: map[string]string{}}
}

// get returns the entry of item id, nil when the catalog has none (or id
// is not a UUID, which no stored item's is).
func (c *catalog) get(id string) *entry {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil
	}
	return c.byID[u]
}

// add returns the item's entry, creating it.
func (c *catalog) add(id uuid.UUID) *entry {
	if e := c.byID[id]; e != nil {
		return e
	}
	e := &entry{id: id, ord: uint64(len(c.byOrd))}
	c.byID[id] = e
	c.byOrd = append(c.byOrd, e)
	return e
}

// describe sets what the filters match of e, sharing drive and mime with
// the entries that have the same.
func (c *catalog) describe(e *entry, drive, path, mime string, tags []string) {
	e.drive, e.path, e.mime, e.tags = c.intern(drive), path, c.intern(mime), tags
}

func (c *catalog) intern(s string) string {
	if have, ok := c.names[s]; ok {
		return have
	}
	c.names[s] = s
	return s
}

func (c *catalog) remove(e *entry) {
	delete(c.byID, e.id)
	c.byOrd[e.ord] = nil
}

// lookup resolves the vector id of a chunk's text vector to its item entry
// and chunk index; a question row resolves to nil (see lookupRow).
func (c *catalog) lookup(id uint64) (*entry, int) {
	if isQuestion(id) {
		return nil, 0
	}
	return c.lookupRow(id)
}

// lookupRow resolves any vector id, text or question row, to the item entry
// and chunk index it scores.
func (c *catalog) lookupRow(id uint64) (*entry, int) {
	ord := (id & ordMask) >> chunkBits
	if ord >= uint64(len(c.byOrd)) {
		return nil, 0
	}
	return c.byOrd[ord], int(id & (maxVectorChunks - 1))
}

// matcher evaluates a lexical.Filter against catalog entries, so that the
// vector leg applies exactly the filters the lexical legs do.
type matcher struct {
	f             lexical.Filter
	prefixes      []prefix
	after, before int64 // lexical.TimeKey bounds; 0 when open
}

type prefix struct{ drive, path string }

// newMatcher compiles f, which Search has validated.
func newMatcher(f lexical.Filter) matcher {
	m := matcher{f: f}
	for _, p := range f.PathPrefixes {
		drive, dir, _ := lexical.ParsePathPrefix(p)
		m.prefixes = append(m.prefixes, prefix{drive, dir})
	}
	if !f.After.IsZero() {
		m.after = lexical.TimeKey(f.After)
	}
	if !f.Before.IsZero() {
		m.before = lexical.TimeKey(f.Before)
	}
	return m
}

func (m *matcher) empty() bool {
	return len(m.f.Drives) == 0 && len(m.prefixes) == 0 && len(m.f.Mimes) == 0 && len(m.f.Tags) == 0 &&
		len(m.f.AnyTags) == 0 && m.f.After.IsZero() && m.f.Before.IsZero()
}

func (m *matcher) match(e *entry) bool {
	if len(m.f.Drives) > 0 && !slices.Contains(m.f.Drives, e.drive) {
		return false
	}
	if len(m.prefixes) > 0 && !slices.ContainsFunc(m.prefixes, func(p prefix) bool {
		return (p.drive == "" || p.drive == e.drive) && under(e.path, p.path)
	}) {
		return false
	}
	if len(m.f.Mimes) > 0 && !slices.ContainsFunc(m.f.Mimes, func(mt string) bool {
		if major, ok := strings.CutSuffix(mt, "/*"); ok {
			return strings.HasPrefix(e.mime, major+"/")
		}
		return mt == e.mime
	}) {
		return false
	}
	for _, t := range m.f.Tags {
		if !slices.Contains(e.tags, t) {
			return false
		}
	}
	if len(m.f.AnyTags) > 0 && !slices.ContainsFunc(m.f.AnyTags, func(t string) bool { return slices.Contains(e.tags, t) }) {
		return false
	}
	// As in the lexical index, an item without a time matches no range.
	if (!m.f.After.IsZero() || !m.f.Before.IsZero()) && e.time == 0 {
		return false
	}
	return (m.f.After.IsZero() || e.time >= m.after) && (m.f.Before.IsZero() || e.time < m.before)
}

// under reports whether path is dir or below it, by whole segments.
func under(path, dir string) bool {
	if dir == "/" || path == dir {
		return true
	}
	return strings.HasPrefix(path, dir) && len(path) > len(dir) && path[len(dir)] == '/'
}

// vectorLeg is the vector index with the catalog of the items its rows
// belong to. It is guarded by the Engine's lock.
type vectorLeg struct {
	idx   *vector.Index
	cat   *catalog
	store *vfs.Store
	qrows int // question rows in idx
}

// chunkRows is how many chunk text vectors the leg holds.
func (v *vectorLeg) chunkRows() int { return v.idx.Len() - v.qrows }

// vectorRescore is the vector leg's candidate multiplier. The leg already
// asks for several times the results a query returns (fusion needs depth),
// so twice that depth of int8 candidates is plenty, and every candidate
// costs a store read to rescore.
const vectorRescore = 2

// newVectorLeg returns an empty leg. It scans int8 copies of the vectors and
// rescores the best candidates exactly with their float32 vectors read from
// the store: memory and start-up then cost dims+36 bytes a vector instead of
// 5*dims+36, the scan is 3x faster than an exact one at 100k vectors, and
// the bench measures recall against exact.
func newVectorLeg(dims int, store *vfs.Store) *vectorLeg {
	l := &vectorLeg{cat: newCatalog(), store: store}
	l.idx = vector.NewWithOptions(dims, vector.Options{Quantize: true, Rescore: vectorRescore, Exact: l})
	return l
}

// Vectors reads the float32 vectors of rows from the store, for rescoring:
// chunk text vectors by chunk, question vectors by question hash.
func (v *vectorLeg) Vectors(ids []uint64) ([][]float32, error) {
	refs := make([]vfs.ChunkRef, len(ids))
	var qs [][32]byte
	var qat []int
	for i, id := range ids {
		en, chunk := v.cat.lookupRow(id)
		switch {
		case en == nil:
		case !isQuestion(id):
			refs[i] = vfs.ChunkRef{ItemID: en.itemID(), Index: chunk}
		case questionSlot(id) < len(en.questions[chunk]):
			qs, qat = append(qs, en.questions[chunk][questionSlot(id)]), append(qat, i)
		}
	}
	out, err := v.store.ChunkVectors(context.Background(), refs)
	if err != nil || len(qs) == 0 {
		return out, err
	}
	qv, err := v.store.QuestionVectors(context.Background(), qs)
	if err != nil {
		return nil, err
	}
	for j, i := range qat {
		out[i] = qv[j]
	}
	return out, nil
}

// apply makes the leg hold d's current vectors: those of the chunks d
// holds and, once d reaches the item's last chunk, none past it.
func (v *vectorLeg) apply(d vfs.IndexDoc, log *slog.Logger) {
	id, err := uuid.Parse(d.ItemID)
	if err != nil {
		log.Error("item not indexed for vectors: its id is not a UUID", "item", d.ItemID)
		return
	}
	en := v.cat.byID[id]
	if !d.Exists || d.Total == 0 {
		if en != nil {
			for i := range en.rows {
				v.idx.Delete(vectorID(en.ord, i))
				v.setQuestions(en, i, nil, log)
			}
			v.cat.remove(en)
		}
		return
	}
	if en == nil {
		en = v.cat.add(id)
	}
	v.cat.describe(en, d.Drive, d.Path, d.Mime, d.Tags)
	en.time = 0
	if !d.Time.IsZero() {
		en.time = lexical.TimeKey(d.Time)
	}
	end := min(d.From+len(d.Chunks), maxVectorChunks)
	for i := d.From; i < end; i++ {
		id := vectorID(en.ord, i)
		if vec := d.Chunks[i-d.From].Vector; vec != nil {
			if err := v.idx.Upsert(id, vec); err != nil {
				log.Error("vector not indexed", "item", d.ItemID, "chunk", i, "err", err)
				v.idx.Delete(id)
			}
		} else {
			v.idx.Delete(id)
		}
		v.setQuestions(en, i, d.Chunks[i-d.From].Questions, log)
	}
	if d.More || d.From+len(d.Chunks) < d.Total {
		en.rows = max(en.rows, end)
		return
	}
	n := min(d.Total, maxVectorChunks)
	for i := n; i < en.rows; i++ {
		v.idx.Delete(vectorID(en.ord, i))
		v.setQuestions(en, i, nil, log)
	}
	en.rows = n
}

// setQuestions makes chunk i of en carry the question rows qs (at most
// maxQuestionSlots), replacing those it had.
func (v *vectorLeg) setQuestions(en *entry, i int, qs []vfs.IndexQuestion, log *slog.Logger) {
	old := en.questions[i]
	if len(old) == 0 && len(qs) == 0 {
		return
	}
	qs = qs[:min(len(qs), maxQuestionSlots)]
	hashes := make([][32]byte, 0, len(qs))
	for _, q := range qs {
		id := questionID(en.ord, i, len(hashes))
		if err := v.idx.Upsert(id, q.Vector); err != nil {
			log.Error("question vector not indexed", "item", en.itemID(), "chunk", i, "err", err)
			continue
		}
		hashes = append(hashes, q.Hash)
	}
	for slot := len(hashes); slot < len(old); slot++ {
		v.idx.Delete(questionID(en.ord, i, slot))
	}
	v.qrows += len(hashes) - len(old)
	if len(hashes) == 0 {
		delete(en.questions, i)
		return
	}
	if en.questions == nil {
		en.questions = map[int][][32]byte{}
	}
	en.questions[i] = hashes
}
