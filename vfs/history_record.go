package vfs

// Recording revisions on the write path: every putItem and removeItem
// appends one in the change's own transaction.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
)

// revRec is a decoded revision record. Layout: version (1) | flags (1) |
// time (8) | uvarint size | uvarint lines | hash (32) | meta id (8) |
// op, actor, drive, path as uvarint length | bytes | uvarint entry.
type revRec struct {
	deleted     bool
	time        int64
	size, lines int64
	hash        [32]byte
	meta        [8]byte // metaID of the metadata snapshot
	op, actor   string
	drive, path string
	// entry is the revision whose archive entry (entryKey) holds this
	// revision's content, or 0 while the revision is pending: its content
	// is its live item's current content.
	entry int64
	id    []byte
	rev   int64
}

// revRecVersion 2 added the entry; version 1 records (the archive found
// through a per-item hash index) are converted on open (history_migrate.go).
const revRecVersion = 2

func (r *revRec) encode() []byte {
	b := make([]byte, 0, 96+len(r.op)+len(r.actor)+len(r.drive)+len(r.path))
	var flags byte
	if r.deleted {
		flags = 1
	}
	b = append(b, revRecVersion, flags)
	b = binary.BigEndian.AppendUint64(b, uint64(r.time))
	b = binary.AppendUvarint(b, uint64(r.size))
	b = binary.AppendUvarint(b, uint64(r.lines))
	b = append(b, r.hash[:]...)
	b = append(b, r.meta[:]...)
	for _, s := range []string{r.op, r.actor, r.drive, r.path} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return binary.AppendUvarint(b, uint64(r.entry))
}

var errBadRecord = errors.New("malformed revision record")

func decodeRevRec(k, v []byte) (revRec, error) { return decodeRevRecVersion(k, v, revRecVersion) }

// decodeRevRecVersion decodes a record of the given version; version 1
// has no entry.
func decodeRevRecVersion(k, v []byte, version byte) (revRec, error) {
	var r revRec
	if len(k) != 24 || len(v) < 10 || v[0] != version {
		return r, errBadRecord
	}
	r.id, r.rev = bytes.Clone(k[:16]), int64(binary.BigEndian.Uint64(k[16:]))
	r.deleted = v[1]&1 != 0
	r.time = int64(binary.BigEndian.Uint64(v[2:10]))
	v = v[10:]
	for _, p := range []*int64{&r.size, &r.lines} {
		x, n := binary.Uvarint(v)
		if n <= 0 || x > math.MaxInt64 {
			return r, errBadRecord
		}
		*p, v = int64(x), v[n:]
	}
	if len(v) < 40 {
		return r, errBadRecord
	}
	copy(r.hash[:], v[:32])
	copy(r.meta[:], v[32:40])
	v = v[40:]
	for _, p := range []*string{&r.op, &r.actor, &r.drive, &r.path} {
		x, n := binary.Uvarint(v)
		if n <= 0 || x > uint64(len(v)-n) {
			return r, errBadRecord
		}
		*p, v = string(v[n:n+int(x)]), v[n+int(x):]
	}
	if version == 1 {
		return r, nil
	}
	x, n := binary.Uvarint(v)
	if n <= 0 || n != len(v) || x > math.MaxInt64 {
		return r, errBadRecord
	}
	r.entry = int64(x)
	return r, nil
}

func revKey(id []byte, rev int64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, 24), id...), uint64(rev))
}

// logKey is the time-ordered key of a revision: time (8) | id (16) | rev (8).
func logKey(tm int64, id []byte, rev int64) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 32), uint64(max(tm, 0)))
	return binary.BigEndian.AppendUint64(append(k, id...), uint64(rev))
}

func actorPrefix(actor string) []byte {
	return append(binary.AppendUvarint(nil, uint64(len(actor))), actor...)
}

func deletedKey(drive, path string, id []byte) []byte {
	k := append([]byte(drive), pathKey(path)...)
	return append(append(k, 0xff), id...)
}

// setFillPercent packs the buckets that grow at the end of their key
// range fuller than bbolt's default, which leaves split pages half empty
// for good: history (by time, or by revision within an item), and what is
// keyed by item id (time-ordered UUIDv7) or outbox sequence.
func (t *txn) setFillPercent() {
	t.revActor.SetFillPercent(1)
	t.revs.SetFillPercent(0.9)
	// Values of a few hundred bytes fill a page in steps of about 10%: at
	// 0.9, 8 content values of 450 bytes fit where 9 do at 1.
	for _, b := range []backend.Bucket{t.content, t.text, t.chunks, t.outbox} {
		b.SetFillPercent(1)
	}
	// Item records grow by about 12% once indexed (IndexedAt): pages
	// packed to 90% overflowed then and split, leaving the new pages 68% full.
	t.items.SetFillPercent(0.8)
}

// histNow is the txn's time as a revision time.
func (t *txn) histNow() int64 { return t.now.UnixNano() }

// isRevKey tells revision keys from the other keys under an item's prefix.
func isRevKey(k []byte) bool { return len(k) == 24 && k[16] < 0x80 }

func metaKey(id []byte, m [8]byte) []byte {
	return append(append(append(make([]byte, 0, 26), id...), 0xff, 'm'), m[:]...)
}

// metaID names a metadata snapshot among its item's: a prefix of its
// SHA-256, as an item has few distinct snapshots.
func metaID(snapshot []byte) [8]byte {
	h := sha256.Sum256(snapshot)
	return [8]byte(h[:8])
}

func blobKey(h []byte, part byte) []byte { return append(append(make([]byte, 0, 33), h...), part) }

// latestRev returns the newest revision record of id, or rev 0 when it has none.
func (t *txn) latestRev(id []byte) (revRec, error) {
	k, v := t.latestKey(id)
	if k == nil {
		return revRec{}, nil
	}
	return decodeRevRec(k, v)
}

// latestLink is latestRev for the write path, which needs less of it.
func (t *txn) latestLink(id []byte) (revLink, error) {
	k, v := t.latestKey(id)
	if k == nil {
		return revLink{}, nil
	}
	return decodeRevLink(k, v)
}

// latestKey returns the key and record of id's newest revision, or nils.
func (t *txn) latestKey(id []byte) (k, v []byte) {
	c := t.revs.Cursor()
	k, v = c.Seek(revKey(id, math.MaxInt64))
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for k != nil && isEntryKey(k) && bytes.HasPrefix(k, id) {
		k, v = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, id) || !isRevKey(k) {
		// bbolt's Prev stops (returns nil) at a leaf emptied by deletes
		// earlier in the transaction (PruneHistory's): walk forward instead.
		var lk, lv []byte
		for k, v = c.Seek(revKey(id, 0)); k != nil && bytes.HasPrefix(k, id) && isRevKey(k); k, v = c.Next() {
			lk, lv = k, v
		}
		return lk, lv
	}
	return k, v
}

// putRevRec stores r again (after its entry changed).
func (t *txn) putRevRec(r *revRec) error {
	if err := t.revs.Put(revKey(r.id, r.rev), r.encode()); err != nil {
		return fmt.Errorf("put revision: %w", err)
	}
	return nil
}

// prevItem is what history needs of an item's state before a change.
type prevItem struct {
	it      Item
	content []byte // valid inside the transaction
}

// recordPut records the revision of putItem storing it (content nil: kept)
// for item u; meta is it's metadata snapshot (metaSnapshot). It runs before
// the item's metadata and content are replaced. settled reports that no
// revision needs the metadata of the record being replaced kept, so
// putItem need not detach it (detachMeta decodes the record).
//
// While history is on, an item's latest revision records its current state
// (Open closes the gaps history off leaves), so the old content hash and
// metadata snapshot come from there rather than from decoding the record.
func (t *txn) recordPut(u []byte, it *Item, content, meta []byte) (settled bool, err error) {
	exists := t.items.Get(u) != nil
	if t.historyOff && (!exists || content == nil) {
		return !exists, nil // pending revisions keep the content they read
	}
	latest, err := t.latestLink(u)
	if err != nil {
		return false, err
	}
	if exists && !t.historyOff && latest.rev == 0 {
		prev, err := t.prevState(u)
		if err != nil {
			return false, err
		}
		if _, err = t.baseline(u, prev); err != nil {
			return false, err
		}
		if latest, err = t.latestLink(u); err != nil {
			return false, err
		}
	}
	// Pending revisions (the latest is one) need the content this write replaces.
	if exists && latest.rev > 0 && latest.entry == 0 && content != nil && hex.EncodeToString(latest.hash[:]) != it.ContentHash {
		if err := t.archive(latest.hash, u, latest.rev, t.content.Get(u)); err != nil {
			return false, err
		}
	}
	if t.historyOff {
		return false, nil
	}
	settled = !exists || t.metaSettled(u, latest.meta, meta)
	return settled, t.appendRev(u, latest.rev+1, it, meta, false, t.operation(), t.actor.Name, t.histNow())
}

// recordRemove records the deletion of item u, before it is removed.
func (t *txn) recordRemove(u []byte) error {
	if t.historyOff {
		latest, err := t.latestRev(u)
		if err != nil || latest.rev == 0 || latest.entry != 0 {
			return err
		}
		return t.archive(latest.hash, u, latest.rev, t.content.Get(u))
	}
	prev, err := t.prevState(u)
	if err != nil {
		return err
	}
	if prev == nil {
		return fmt.Errorf("history: removed item %x has no metadata", u)
	}
	latest, err := t.baseline(u, prev)
	if err != nil {
		return err
	}
	rev := latest.rev + 1
	if err := t.appendRev(u, rev, &prev.it, nil, true, t.operation(), t.actor.Name, t.histNow()); err != nil {
		return err
	}
	// The delete revision too keeps the content, which is going.
	if err := t.archive(latest.hash, u, rev, prev.content); err != nil {
		return err
	}
	return t.deleted.Put(deletedKey(prev.it.Drive, prev.it.Path, u), binary.BigEndian.AppendUint64(nil, uint64(rev)))
}

// operation is the Op the current change records.
func (t *txn) operation() string {
	if t.actor.Op != "" {
		return t.actor.Op
	}
	return t.op
}

func (t *txn) prevState(u []byte) (*prevItem, error) {
	if t.items.Get(u) == nil {
		return nil, nil
	}
	it, err := t.item(u)
	if err != nil {
		return nil, err
	}
	return &prevItem{it: it, content: t.content.Get(u)}, nil
}

// baseline returns the latest revision of u, first recording the item's
// current state as an OpBaseline revision when history does not have it (an
// item written before history existed or changed while it was off).
func (t *txn) baseline(u []byte, prev *prevItem) (revRec, error) {
	latest, err := t.latestRev(u)
	if err != nil || prev == nil || matchesLatest(latest, &prev.it) {
		return latest, err
	}
	tm := prev.it.UpdatedAt.UnixNano()
	if err := t.appendRev(u, latest.rev+1, &prev.it, nil, false, OpBaseline, "", tm); err != nil {
		return revRec{}, err
	}
	return t.latestRev(u)
}

// matchesLatest reports whether latest records it as it is.
func matchesLatest(latest revRec, it *Item) bool {
	return latest.rev > 0 && !latest.deleted && hex.EncodeToString(latest.hash[:]) == it.ContentHash &&
		latest.drive == it.Drive && latest.path == it.Path
}

// appendRev stores revision rev of item u with it's content hash and
// metadata (meta: it's metadata snapshot, or nil to encode it here), and its
// log entry. The revision is pending (no entry): its content is (or is
// about to be) u's current content.
func (t *txn) appendRev(u []byte, rev int64, it *Item, meta []byte, deleted bool, op, actor string, tm int64) error {
	if op == "" {
		return fmt.Errorf("history: change of %s names no operation", it.Ref())
	}
	r := revRec{deleted: deleted, time: max(tm, 0), size: it.Size, lines: it.LineCount, op: op, actor: actor, drive: it.Drive, path: it.Path}
	if _, err := hex.Decode(r.hash[:], []byte(it.ContentHash)); err != nil || len(it.ContentHash) != 64 {
		return fmt.Errorf("history: %s has a malformed content hash", it.Ref())
	}
	if meta == nil {
		var err error
		if meta, err = metaSnapshot(it); err != nil {
			return err
		}
	}
	r.meta = metaID(meta)
	// Without an entry the snapshot is the item's record, which it is
	// about to hold: the putMeta that replaces the record detaches the old
	// one's (see detachMeta). A delete stores it, counting the revisions
	// that reference it.
	mk := metaKey(u, r.meta)
	if v := t.revs.Get(mk); len(v) >= 8 || deleted {
		n := int64(1)
		if len(v) >= 8 {
			n += int64(binary.BigEndian.Uint64(v))
		} else {
			n += t.metaUses(u, r.meta)
		}
		if err := t.revs.Put(mk, append(binary.BigEndian.AppendUint64(nil, uint64(n)), meta...)); err != nil {
			return fmt.Errorf("put revision metadata: %w", err)
		}
	}
	if err := t.revs.Put(revKey(u, rev), r.encode()); err != nil {
		return fmt.Errorf("put revision: %w", err)
	}
	if err := t.revActor.Put(append(actorPrefix(actor), logKey(r.time, u, rev)...), nil); err != nil {
		return fmt.Errorf("put revision log: %w", err)
	}
	return nil
}

// Metadata snapshots. The snapshot of an item's current metadata is not
// stored: revisions whose snapshot has no entry read the item's record
// (most items never change their metadata, and the copy with its entry was
// 70% of a new item's history). Whatever replaces or removes the record
// calls detachMeta first, which stores the snapshot with the number of
// revisions referencing it. So a snapshot without an entry is always the
// metadata of the item's record.

// metaSettled reports whether no revision of live item u needs the metadata
// of its record kept when the record with snapshot next replaces it, given
// latest, the snapshot of u's latest revision, which history on keeps
// recording the item as it is. A snapshot without an entry is the
// record's; so when latest has one, no revision references the record's
// without one (the record changed since, and whatever changed it detached
// it), and when it has none, it is the record's.
func (t *txn) metaSettled(u []byte, latest [8]byte, next []byte) bool {
	return metaID(next) == latest || t.revs.Get(metaKey(u, latest)) != nil
}

// detachMeta stores the snapshot of item u's current metadata if revisions
// reference it without an entry and next (the snapshot of the record
// replacing it; nil when the item is removed) differs.
func (t *txn) detachMeta(u, next []byte) error {
	if t.items.Get(u) == nil {
		return nil
	}
	it, err := t.item(u)
	if err != nil {
		return err
	}
	snap, err := metaSnapshot(&it)
	if err != nil {
		return err
	}
	h := metaID(snap)
	if next != nil && metaID(next) == h {
		return nil
	}
	mk := metaKey(u, h)
	if t.revs.Get(mk) != nil {
		return nil
	}
	n := t.metaUses(u, h)
	if n == 0 {
		return nil
	}
	if err := t.revs.Put(mk, append(binary.BigEndian.AppendUint64(nil, uint64(n)), snap...)); err != nil {
		return fmt.Errorf("put revision metadata: %w", err)
	}
	return nil
}

// metaUses counts item u's revisions whose metadata snapshot is h: at most
// what history retains of one item, read only when its metadata changes.
func (t *txn) metaUses(u []byte, h [8]byte) int64 {
	var n int64
	c := t.revs.Cursor()
	for k, v := c.Seek(u); k != nil && bytes.HasPrefix(k, u); k, v = c.Next() {
		if isRevKey(k) {
			if r, err := decodeRevRec(k, v); err == nil && r.meta == h {
				n++
			}
		}
	}
	return n
}

// metaOfRecord returns the metadata snapshot h of item u when its entry
// holds none: the item's record's, which must be h.
func (t *txn) metaOfRecord(u []byte, h [8]byte) ([]byte, error) {
	it, err := t.item(u)
	if err != nil {
		return nil, err
	}
	snap, err := metaSnapshot(&it)
	if err != nil {
		return nil, err
	}
	if metaID(snap) != h {
		return nil, fmt.Errorf("history: metadata %x of item %x is neither stored nor the item's", h, u)
	}
	return snap, nil
}

// unrefMeta drops one reference to item u's metadata snapshot h.
func (t *txn) unrefMeta(u []byte, h [8]byte) error {
	mk := metaKey(u, h)
	v := t.revs.Get(mk)
	if v == nil {
		_, err := t.metaOfRecord(u, h) // not stored: nothing to free
		return err
	}
	if len(v) < 8 {
		return fmt.Errorf("history: metadata %x of item %x is missing", h, u)
	}
	if n := int64(binary.BigEndian.Uint64(v)) - 1; n > 0 {
		return t.revs.Put(mk, append(binary.BigEndian.AppendUint64(nil, uint64(n)), v[8:]...))
	}
	return t.revs.Delete(mk)
}

// metaSnapshot encodes the metadata of it that a revision keeps beyond its
// own fields, so that revisions differing only in content share one copy.
func metaSnapshot(it *Item) ([]byte, error) {
	m := *it
	m.ID, m.Drive, m.Path, m.Size, m.ContentHash, m.LineCount = "", "", "", 0, "", 0
	m.UpdatedAt, m.IndexedAt, m.LastRetrievedAt, m.RetrievalCount = time.Time{}, time.Time{}, time.Time{}, 0
	b, err := json.Marshal(&m)
	if err != nil {
		return nil, fmt.Errorf("history: encode metadata of %s: %w", it.Ref(), err)
	}
	return b, nil
}

// Archived content. An item's superseded content is kept under its own
// key prefix in the revisions bucket, interleaved with its revision
// records, so that archiving touches the page the write's new revision
// record lands on anyway:
//
//	id | rev (8) | 1  -> uvarint refs | uvarint uses | kind (1) | SHA-256 (32) | payload
//
// An entry is keyed by the revision whose content it first archived, so
// entries are appended in order, right before the next revision record,
// and a trim delta lands beside its base. Each revision record names its
// entry (revRec.entry), so a write adds no key away from the item's latest
// pages. refs counts the item's revisions (not pending) naming the entry
// plus the item's entries that are deltas against it; uses counts the
// latter. Content an item had a few revisions before is found among those
// revisions and shares their entry; content that comes back later is
// archived again, as a delta like any other. Content whose compressed form
// is larger than maxInlineBlob is stored once per SHA-256 in the blobs
// bucket, shared by every item that had it, and its entries are
// blobShared; deltas are always an item's own, against an entry of the
// same item.
