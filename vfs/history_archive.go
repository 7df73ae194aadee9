package vfs

// The archive of superseded content: per item, as trims, zstd deltas or
// whole frames, large ones shared across items in blobs.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/ctxd/ctxd/vfs/backend"
)

// Archive entry kinds. Superseded content is stored once for the run of an
// item's revisions that had it (and the recent revisions that had it
// before), and content stored whole and large once per SHA-256 across
// items. Content that is still an
// item's current content is not copied: the revisions recorded since the
// item's content last changed are its pending revisions, which read the
// content bucket and hold no reference until the content goes.
const (
	blobZstd  = 1 // payload is a zstd frame
	blobDelta = 2 // payload is base entry's position (16, appendPos) | zstd frame with the base's bytes as dictionary
	// blobTrim is the cheap delta archive makes: payload is base entry's position (16) |
	// depth (1) | uvarint prefix | uvarint suffix | the bytes between: the
	// content is the base's first prefix bytes, those bytes, and the base's
	// last suffix bytes.
	blobTrim = 4
	// blobShared has no payload: the content is the shared blob of its
	// hash in the blobs bucket (kind blobZstd | zstd frame).
	blobShared = 8
)

// maxTrimDepth bounds the chain of blobTrim deltas a read decodes.
const maxTrimDepth = 32

// maxInlineBlob bounds the payload of an entry stored under its item's
// prefix; larger content goes to the shared blobs bucket, where it does not
// make every later write of the item rewrite it.
const maxInlineBlob = 1024

func isEntryKey(k []byte) bool { return len(k) == 33 && k[32] == 1 }

// entry is a decoded archive entry; its slices point into the transaction.
// Its value is uvarint refs | uvarint uses | kind (1) | hash (32) | payload.
// A delta's payload starts with the position of its base's entry (16).
type entry struct {
	key        []byte
	refs, uses int64
	hash       [32]byte
	kind       byte
	payload    []byte
}

func decodeEntry(k, v []byte) (entry, error) {
	e := entry{key: k}
	for _, p := range []*int64{&e.refs, &e.uses} {
		x, n := binary.Uvarint(v)
		if n <= 0 || x > math.MaxInt64 {
			return entry{}, fmt.Errorf("archive entry %x is malformed", k)
		}
		*p, v = int64(x), v[n:]
	}
	if len(v) < 33 {
		return entry{}, fmt.Errorf("archive entry %x is malformed", k)
	}
	e.kind, e.hash, e.payload = v[0], [32]byte(v[1:33]), v[33:]
	switch e.kind {
	case blobZstd, blobShared:
	case blobDelta, blobTrim:
		if len(e.payload) < 17 {
			return entry{}, fmt.Errorf("archive entry %x: short delta", k)
		}
	default:
		return entry{}, fmt.Errorf("archive entry %x has unknown kind %d", k, e.kind)
	}
	return e, nil
}

func (e *entry) encode() []byte {
	b := make([]byte, 0, 2*binary.MaxVarintLen64+33+len(e.payload))
	b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(e.refs)), uint64(e.uses))
	return append(append(append(b, e.kind), e.hash[:]...), e.payload...)
}

// pos is the position e is keyed by.
func (e *entry) pos() revPos { return posOfKey(e.key) }

// base is the position of the entry a delta entry is relative to; rev 0
// when e is stored whole.
func (e *entry) base() revPos {
	if e.kind == blobDelta || e.kind == blobTrim {
		return decodePos(e.payload)
	}
	return revPos{}
}

// depth is how many deltas a read of e decodes.
func (e *entry) depth() int {
	switch e.kind {
	case blobDelta:
		return 1
	case blobTrim:
		return int(e.payload[16])
	}
	return 0
}

// whole reports whether e holds its content on its own (a delta base).
func (e *entry) whole() bool { return e.kind == blobZstd || e.kind == blobShared }

// entryAt returns item u's archive entry at p.
func (t *txn) entryAt(u []byte, p revPos) (entry, error) {
	k := p.entryKey(u)
	v := t.revs.Get(k)
	if v == nil {
		return entry{}, fmt.Errorf("history: archived content %d of item %x is missing", p.rev, u)
	}
	e, err := decodeEntry(k, v)
	if err != nil {
		return entry{}, fmt.Errorf("history: %w", err)
	}
	return e, nil
}

// addRefs adjusts the reference and base-use counts of item u's archive
// entry at p, releasing it at zero refs unless keep has it (see adjustRefs).
func (t *txn) addRefs(u []byte, p revPos, dRefs, dUses int64, keep map[revPos]bool) error {
	e, err := t.entryAt(u, p)
	if err != nil {
		return err
	}
	return t.adjustRefs(u, e, dRefs, dUses, keep)
}

// adjustRefs is addRefs of entry e, read in this transaction. refs counts
// the revisions whose content e holds and the zstd deltas based on it; the
// trim deltas based on it are not counted, so that archiving a one-line
// edit rewrites no older entry. So an entry at zero refs is deleted, with
// its references released, only when no trim delta still needed is based
// on it: keep holds those (trimBases), which only PruneHistory, the one
// caller that lowers refs, computes.
func (t *txn) adjustRefs(u []byte, e entry, dRefs, dUses int64, keep map[revPos]bool) error {
	e.refs, e.uses = e.refs+dRefs, e.uses+dUses
	if e.refs > 0 || keep[e.pos()] {
		if dRefs == 0 && dUses == 0 {
			return nil
		}
		return t.revs.Put(bytes.Clone(e.key), e.encode())
	}
	base, hash := e.base(), e.hash
	if err := t.revs.Delete(bytes.Clone(e.key)); err != nil {
		return err
	}
	switch e.kind {
	case blobDelta:
		return t.addRefs(u, base, -1, -1, keep)
	case blobTrim:
		return t.addRefs(u, base, 0, 0, keep) // released if nothing else holds it
	case blobShared:
		return t.addBlobRefs(hash[:], -1)
	}
	return nil
}

// trimBases returns the entries of item u that trim deltas the revisions
// chain (u's, newest first, entries resolved) still need are based on,
// directly or down a chain of trims.
func (t *txn) trimBases(u []byte, chain []revLink) (map[revPos]bool, error) {
	keep := map[revPos]bool{}
	seen := map[revPos]bool{}
	for _, r := range chain {
		for p := r.entry; p.rev != 0 && !seen[p]; {
			seen[p] = true
			e, err := t.entryAt(u, p)
			if err != nil {
				return nil, err
			}
			if e.kind != blobTrim {
				break
			}
			p = e.base()
			keep[p] = true
		}
	}
	return keep, nil
}

func (t *txn) blobRefs(hash []byte) int64 {
	if v := t.blobs.Get(blobKey(hash, 1)); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

// addBlobRefs adjusts the reference count of shared blob hash (the
// blobShared entries naming it), deleting the blob at zero.
func (t *txn) addBlobRefs(hash []byte, d int64) error {
	if n := t.blobRefs(hash) + d; n > 0 {
		return t.blobs.Put(blobKey(hash, 1), binary.BigEndian.AppendUint64(nil, uint64(n)))
	}
	if err := t.blobs.Delete(blobKey(hash, 1)); err != nil {
		return err
	}
	return t.blobs.Delete(blobKey(hash, 0))
}

// revLink is a revision record decoded without copying: what the write
// path reads of older revisions, and the record itself, to name an entry
// in it (withEntry). Its slices point into the transaction unless copied.
type revLink struct {
	deleted     bool
	time, rev   int64
	size, lines int64
	prev        int64
	back        []byte // encoded (decodeBack): most walks need none of it
	entry       revPos // as resolved by revsDown
	archived    revPos
	hash        [32]byte
	meta        [8]byte
	strs        [4][]byte // op, actor, drive, path
	key, val    []byte
}

func (l *revLink) pos() revPos { return revPos{l.time, l.rev} }
func (l *revLink) tip() revTip {
	return revTip{l.pos(), decodeBack(l.back, l.prev).after(l.rev, l.prev)}
}

// decodeRevLink decodes the revision record k, v.
func decodeRevLink(k, v []byte) (revLink, error) {
	l := revLink{key: k, val: v}
	if len(k) != 32 || len(v) < 2 || v[0] != revRecVersion {
		return l, errBadRecord
	}
	l.deleted = v[1]&1 != 0
	l.time, l.rev = posOfKey(k).time, posOfKey(k).rev
	p := 2
	for _, f := range []*int64{&l.size, &l.lines} {
		x, n := binary.Uvarint(v[p:])
		if n <= 0 || x > math.MaxInt64 {
			return l, errBadRecord
		}
		*f, p = int64(x), p+n
	}
	if len(v)-p < 48 {
		return l, errBadRecord
	}
	l.hash, l.meta = [32]byte(v[p:p+32]), [8]byte(v[p+32:p+40])
	l.prev = int64(binary.BigEndian.Uint64(v[p+40:]))
	p += 48
	for i := range l.strs {
		x, n := binary.Uvarint(v[p:])
		if n <= 0 || x > uint64(len(v)-p-n) {
			return l, errBadRecord
		}
		l.strs[i], p = v[p+n:p+n+int(x)], p+n+int(x)
	}
	x, n := binary.Uvarint(v[p:])
	if n <= 0 || x > uint64(len(v)-p-n) {
		return l, errBadRecord
	}
	l.back, p = v[p+n:p+n+int(x)], p+n+int(x)
	for _, e := range []*revPos{&l.archived, &l.entry} {
		if len(v)-p < 9 {
			return l, errBadRecord
		}
		e.time = int64(binary.BigEndian.Uint64(v[p:]))
		x, n := binary.Uvarint(v[p+8:])
		if n <= 0 || x > math.MaxInt64 {
			return l, errBadRecord
		}
		e.rev, p = int64(x), p+8+n
	}
	if p != len(v) {
		return l, errBadRecord
	}
	return l, nil
}

// withEntry returns the record of pending revision l naming entry: the
// record ends with its entry, time 0 and rev 0 (9 bytes) while pending.
func (l *revLink) withEntry(entry revPos) []byte {
	return appendEntryRef(append(make([]byte, 0, len(l.val)+8), l.val[:len(l.val)-9]...), entry)
}

// revsDown calls fn with item u's revision records from its head down its
// chain, newest first, until fn returns false or the chain ends (at
// revision 1, or where PruneHistory dropped the older ones), each with its
// entry resolved: a record that names none has the entry of the revision
// after it when that has the same content, else that one's archived. The
// records' bytes are copies.
func (t *txn) revsDown(u []byte, fn func(r revLink) bool) error {
	p, ok := t.itemHead(u)
	var newer revLink
	// On a backend of round trips, the records a record names the times of
	// (prev and back) are read together, once the walk goes past it.
	pf, _ := t.revs.(backend.Prefetcher)
	fetched := int64(math.MaxInt64) // the oldest revision read ahead
	for ok && p.rev > 0 {
		k := p.key(u)
		v := t.revs.Get(k)
		if v == nil {
			return nil
		}
		r, err := decodeRevLink(k, bytes.Clone(v))
		if err != nil {
			return fmt.Errorf("history: revision %x: %w", k, err)
		}
		if r.entry.rev == 0 && newer.rev != 0 {
			if r.entry = newer.archived; r.hash == newer.hash {
				r.entry = newer.entry
			}
		}
		if !fn(r) {
			return nil
		}
		if pf != nil && r.rev-1 < fetched && len(r.back) > 0 {
			back := decodeBack(r.back, r.prev)
			keys := append(make([][]byte, 0, 1+back.n), logKey(r.prev, u, r.rev-1))
			for i, tm := range back.t[:back.n] {
				keys = append(keys, logKey(tm, u, r.rev-2-int64(i)))
			}
			pf.Prefetch(keys)
			fetched = r.rev - 1 - int64(back.n)
		}
		newer, p = r, revPos{r.prev, r.rev - 1}
	}
	return nil
}

// recentArchived is how many archived revisions before the pending ones
// archive looks at for the same content and a trim base, and repack for a
// delta base.
const recentArchived = 4

// archive keeps content (item u's content with this hash, about to be
// replaced or deleted) for u's pending revisions (its newest, which name no
// entry) and extra revisions about to be recorded naming it: that of a
// recent revision with the same content, else a new one at at, a trim delta
// against the content u had before when that is small, else compressed (and
// queued to become a delta). It returns the entry, for the revision the
// write records to name (revRec.archived); with history off, when the write
// records none, the pending records are rewritten to name it (attach).
// pending reports whether there were pending revisions.
func (t *txn) archive(hash [32]byte, u []byte, at revPos, content []byte, extra int64, attach bool) (e revPos, pending bool, err error) {
	var pend, older []revLink
	err = t.revsDown(u, func(r revLink) bool {
		if r.entry.rev == 0 && older == nil {
			pend = append(pend, r)
		} else {
			older = append(older, r)
		}
		return len(older) < recentArchived
	})
	if err != nil || len(pend)+int(extra) == 0 {
		return revPos{}, false, err
	}
	if at, err = t.archiveEntry(hash, u, at, content, int64(len(pend))+extra, older); err != nil {
		return revPos{}, false, err
	}
	for _, r := range pend {
		if !attach {
			break
		}
		if err := t.revs.Put(r.key, r.withEntry(at)); err != nil {
			return revPos{}, false, fmt.Errorf("put revision: %w", err)
		}
	}
	return at, len(pend) > 0, nil
}

// archiveEntry returns the position of the entry holding content for refs
// more revisions, storing it at at unless one of older (archived
// revisions, newest first) has it.
func (t *txn) archiveEntry(hash [32]byte, u []byte, at revPos, content []byte, refs int64, older []revLink) (revPos, error) {
	for _, r := range older {
		if r.hash == hash {
			return r.entry, t.addRefs(u, r.entry, refs, 0, nil)
		}
	}
	e := entry{key: at.entryKey(u), refs: refs, hash: hash}
	if t.blobs.Get(blobKey(hash[:], 0)) != nil { // another item's, stored whole
		e.kind = blobShared
		if err := t.addBlobRefs(hash[:], 1); err != nil {
			return revPos{}, err
		}
		return at, t.putEntry(&e)
	}
	// The next archive of u is likely a delta against this content.
	recentBlobs.put(hash, bytes.Clone(content))
	// Against the content u had before, a one-line edit leaves a common
	// prefix and suffix around a few bytes: store those bytes alone.
	if base, baseContent, ok := t.trimBase(u, older); ok {
		p, q := commonEnds(content, baseContent)
		// The bytes between, stored raw, beat the whole compressed (about a
		// third of text) while they are at most a quarter of it.
		if middle := content[p : len(content)-q]; len(middle) <= len(content)/4 && len(middle) <= maxInlineBlob {
			val := append(appendPos(make([]byte, 0, 40+len(middle)), base.pos()), byte(base.depth()+1))
			e.kind, e.payload = blobTrim, append(binary.AppendUvarint(binary.AppendUvarint(val, uint64(p)), uint64(q)), middle...)
			return at, t.putEntry(&e)
		}
	}
	// Stored whole, compressed; PruneHistory makes it a zstd delta later,
	// off the write path, where the dictionary holds up no writer.
	e.kind, e.payload = blobZstd, zenc().EncodeAll(content, nil)
	if len(e.payload) > maxInlineBlob {
		if err := t.blobs.Put(blobKey(hash[:], 0), append([]byte{blobZstd}, e.payload...)); err != nil {
			return revPos{}, fmt.Errorf("archive content: %w", err)
		}
		if err := t.addBlobRefs(hash[:], 1); err != nil {
			return revPos{}, err
		}
		e.kind, e.payload = blobShared, nil
	}
	if err := t.putEntry(&e); err != nil {
		return revPos{}, err
	}
	qk := binary.BigEndian.AppendUint64(make([]byte, 0, 40), uint64(t.histNow()))
	if err := t.repack.Put(append(qk, hash[:]...), at.key(u)); err != nil {
		return revPos{}, fmt.Errorf("queue repack: %w", err)
	}
	return at, nil
}

// putEntry stores a new archive entry.
func (t *txn) putEntry(e *entry) error {
	if err := t.revs.Put(e.key, e.encode()); err != nil {
		return fmt.Errorf("archive content: %w", err)
	}
	return nil
}

// commonEnds returns the lengths of the longest common prefix and suffix of
// a and b that do not overlap in either.
func commonEnds(a, b []byte) (prefix, suffix int) {
	n := min(len(a), len(b))
	// Eight bytes at a time first: this runs inside the write transaction.
	le := binary.LittleEndian
	for prefix+8 <= n && le.Uint64(a[prefix:]) == le.Uint64(b[prefix:]) {
		prefix += 8
	}
	for prefix < n && a[prefix] == b[prefix] {
		prefix++
	}
	for suffix+8 <= n-prefix && le.Uint64(a[len(a)-suffix-8:]) == le.Uint64(b[len(b)-suffix-8:]) {
		suffix += 8
	}
	for suffix < n-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	return prefix, suffix
}

// trimBase picks the entry of the content item u had before, the newest of
// older (archived revisions, newest first, none with the content being
// archived), for a blobTrim delta: the entry and its bytes; ok is false
// when there is none or its chain is already maxTrimDepth long.
func (t *txn) trimBase(u []byte, older []revLink) (base entry, content []byte, ok bool) {
	if len(older) == 0 {
		return entry{}, nil, false
	}
	r := older[0]
	e, err := t.entryAt(u, r.entry)
	if err != nil || e.depth() >= maxTrimDepth {
		return entry{}, nil, false
	}
	c, cached := recentBlobs.get(r.hash)
	if !cached {
		if c, err = t.blobContent(u, r.entry); err != nil {
			return entry{}, nil, false
		}
	}
	return e, c, true
}

// recentBlobs keeps the content of recently archived blobs, by hash, so that
// the next archive of the same item finds its delta base without decoding a
// chain inside the write transaction. Content-addressed, it stays right
// whatever transaction fails; it holds at most recentBlobsBytes.
var recentBlobs = blobCache{m: map[[32]byte][]byte{}}

const recentBlobsBytes = 16 << 20

type blobCache struct {
	mu    sync.Mutex
	m     map[[32]byte][]byte
	order [][32]byte // oldest first
	size  int
}

func (c *blobCache) get(h [32]byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[h]
	return b, ok
}

func (c *blobCache) put(h [32]byte, b []byte) {
	if len(b) > recentBlobsBytes/16 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[h]; ok {
		return
	}
	c.m[h], c.size, c.order = b, c.size+len(b), append(c.order, h)
	for c.size > recentBlobsBytes {
		old := c.order[0]
		c.order = c.order[1:]
		c.size -= len(c.m[old])
		delete(c.m, old)
	}
}

// repackOne stores content hash, archived whole in item u's entry at p,
// as a delta against an older revision of u when the delta is at most
// half its size (and small enough to keep inline). Content that is
// the base of deltas stays whole, so zstd deltas never chain.
func (t *txn) repackOne(hash, u []byte, p revPos) error {
	if t.revs.Get(p.entryKey(u)) == nil {
		return nil // dropped since it was queued
	}
	e, err := t.entryAt(u, p)
	if err != nil || !bytes.Equal(e.hash[:], hash) || !e.whole() || e.uses > 0 {
		return err
	}
	frame := e.payload
	if e.kind == blobShared {
		blob := t.blobs.Get(blobKey(hash, 0))
		if len(blob) < 1 || blob[0] != blobZstd {
			return fmt.Errorf("history: shared blob %x is missing or malformed", hash)
		}
		frame = blob[1:]
	}
	base, baseContent, err := t.deltaBase(u, p, e.hash)
	if err != nil || base.rev == 0 {
		return err
	}
	content, err := zdecode(frame, nil)
	if err != nil {
		return fmt.Errorf("history: archived content %x: %w", hash, err)
	}
	if len(content) > maxDeltaBytes {
		return nil
	}
	delta := encodeDelta(appendPos(nil, base), content, baseContent)
	if len(delta) > len(frame)/2 || len(delta) > maxInlineBlob {
		return nil // different enough to be the base of later deltas
	}
	shared := e.kind == blobShared
	e.kind, e.payload = blobDelta, delta
	if err := t.revs.Put(bytes.Clone(e.key), e.encode()); err != nil {
		return err
	}
	if err := t.addRefs(u, base, 1, 1, nil); err != nil {
		return err
	}
	if shared {
		return t.addBlobRefs(hash, -1)
	}
	return nil
}

// deltaBase picks the content a delta of content not, item u's entry at
// at, is made against: the nearest of the few archived revisions older than
// the entry whose entry is stored whole (or the base of a delta), so that
// zstd deltas are never chained. base.rev is 0 when there is none.
func (t *txn) deltaBase(u []byte, at revPos, not [32]byte) (base revPos, content []byte, err error) {
	seen := 0
	err = t.revsDown(u, func(r revLink) bool {
		if r.rev >= at.rev || r.entry.rev == 0 || r.hash == not {
			return true
		}
		seen++
		e, err := t.entryAt(u, r.entry)
		if err == nil && e.kind == blobDelta {
			e, err = t.entryAt(u, e.base())
		}
		if err != nil || !e.whole() {
			return seen < recentArchived
		}
		if c, err := t.blobContent(u, e.pos()); err == nil && len(c) <= maxDeltaBytes {
			base, content = e.pos(), c
		}
		return false
	})
	return base, content, err
}

// revContent returns the content of revision r: the item's current content
// for a pending revision, else its archived content.
func (t *txn) revContent(r *revRec) ([]byte, error) {
	if r.entry.rev == 0 {
		c := t.content.Get(r.id)
		if c == nil && t.items.Get(r.id) == nil {
			return nil, fmt.Errorf("history: revision %d of item %x is pending but the item is gone", r.rev, r.id)
		}
		if sum := sha256.Sum256(c); sum != r.hash {
			return nil, fmt.Errorf("history: revision %d of item %x is pending but the item's content is %x, not %x", r.rev, r.id, sum, r.hash)
		}
		return bytes.Clone(c), nil
	}
	c, err := t.blobContent(r.id, r.entry)
	if err == nil && sha256.Sum256(c) != r.hash {
		err = fmt.Errorf("history: revision %d of item %x names archived content %d, which is not its content %x", r.rev, r.id, r.entry.rev, r.hash)
	}
	return c, err
}

// blobContent returns the content of item u's archive entry at p,
// checked against the entry's hash.
func (t *txn) blobContent(u []byte, p revPos) ([]byte, error) {
	e, err := t.entryAt(u, p)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch e.kind {
	case blobZstd:
		out, err = zdecode(e.payload, nil)
	case blobShared:
		blob := t.blobs.Get(blobKey(e.hash[:], 0))
		if len(blob) < 1 || blob[0] != blobZstd {
			return nil, fmt.Errorf("history: shared blob %x is missing or malformed", e.hash)
		}
		out, err = zdecode(blob[1:], nil)
	case blobDelta:
		var base []byte
		if base, err = t.blobContent(u, e.base()); err == nil {
			out, err = zdecode(e.payload[16:], base)
		}
	case blobTrim:
		out, err = t.untrim(u, e.payload)
	}
	if err != nil {
		return nil, fmt.Errorf("history: archived content %x of item %x: %w", e.hash, u, err)
	}
	if sum := sha256.Sum256(out); sum != e.hash {
		return nil, fmt.Errorf("history: archived content %x of item %x does not match its hash", e.hash, u)
	}
	return out, nil
}

// untrim rebuilds the content of a blobTrim payload of item u.
func (t *txn) untrim(u, payload []byte) ([]byte, error) {
	p, n1 := binary.Uvarint(payload[17:])
	if n1 <= 0 {
		return nil, errors.New("malformed trim delta")
	}
	q, n2 := binary.Uvarint(payload[17+n1:])
	if n2 <= 0 {
		return nil, errors.New("malformed trim delta")
	}
	middle := payload[17+n1+n2:]
	base, err := t.blobContent(u, decodePos(payload))
	if err != nil {
		return nil, err
	}
	if p+q > uint64(len(base)) {
		return nil, errors.New("trim delta longer than its base")
	}
	out := make([]byte, 0, int(p)+len(middle)+int(q))
	return append(append(append(out, base[:p]...), middle...), base[uint64(len(base))-q:]...), nil
}

// One encoder for blobs on their own (EncodeAll is safe for concurrent use),
// one for deltas (its dictionary changes per call), and pooled decoders.
var (
	zenc = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false), zstd.WithEncoderConcurrency(2))
		if err != nil {
			panic(err) // only invalid options fail
		}
		return e
	})
	deltaEnc struct {
		sync.Mutex
		e *zstd.Encoder
	}
	zdecoders sync.Pool
)

// deltaDictID names the dictionary in delta frames; the base blob, not the
// id, says which bytes it is.
const deltaDictID = 1

// encodeDelta appends content compressed with base as the dictionary to dst.
func encodeDelta(dst, content, base []byte) []byte {
	deltaEnc.Lock()
	defer deltaEnc.Unlock()
	var err error
	if deltaEnc.e == nil {
		deltaEnc.e, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false),
			zstd.WithEncoderConcurrency(1), zstd.WithEncoderDictRaw(deltaDictID, base))
	} else {
		err = deltaEnc.e.ResetWithOptions(nil, zstd.WithEncoderDictRaw(deltaDictID, base))
	}
	if err != nil {
		panic(err) // only invalid options fail
	}
	// The encoder keeps base until the next call: resetting it to release
	// the bytes would rebuild its match table, which costs more than the delta.
	return deltaEnc.e.EncodeAll(content, dst)
}

// zdecode decodes a zstd frame, with dict as the raw dictionary of a delta.
func zdecode(frame, dict []byte) ([]byte, error) {
	d, _ := zdecoders.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		if d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1)); err != nil {
			return nil, err
		}
	}
	defer zdecoders.Put(d)
	if dict != nil {
		if err := d.ResetWithOptions(nil, zstd.WithDecoderDictRaw(deltaDictID, dict)); err != nil {
			return nil, err
		}
		defer d.ResetWithOptions(nil, zstd.WithDecoderDictRaw(deltaDictID, nil))
	}
	return d.DecodeAll(frame, nil)
}
