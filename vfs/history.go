package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// Bucket and key names of item history; see doc.go for the layout.
const (
	// bucketRevs holds, per item id (16): id | rev (8) -> revision record;
	// id | rev | 1 -> archived content (an entry, see entryKey); id | 0xff
	// 'm' | metaID (8) -> reference count (8) | metadata snapshot (JSON;
	// no entry while it is the item's record, see detachMeta);
	// id | 0xff 'p' -> pending count (8); id | 0xff 'x' | SHA-256 -> rev of
	// its entry. An item's revisions and what they share sit on the same pages.
	bucketRevs     = "revisions"
	bucketRevLog   = "revision_log"    // time (8) | id (16) | rev (8) -> empty
	bucketRevActor = "revision_actors" // uvarint len | actor | time (8) | id (16) | rev (8) -> empty
	bucketDeleted  = "deleted"         // drive | path key | 0xff | id (16) -> rev (8) of the delete
	// bucketBlobs holds superseded content stored whole that is too large
	// to keep under an item's prefix (see maxInlineBlob), shared by the
	// items that had it: SHA-256 (32) | 0 -> blobZstd | zstd frame, and
	// SHA-256 | 1 -> how many items' entries name it (8).
	bucketBlobs = "blobs"
	// bucketRepack queues content archive stored whole, for PruneHistory to
	// store as a delta: time (8) | SHA-256 (32) -> item id (16) | rev (8),
	// the revision whose content it is.
	bucketRepack = "blob_repack"
	// keyHistoryGap (in meta) is set while the store is opened with history
	// off: items may then change without a revision, which the next open with
	// history on records as baseline revisions.
	keyHistoryGap = "history_gap"
)

// Operations a Revision records. Actor.Op may name another (assemble and
// ingest use OpContextUpdate and OpRefresh for the writes they make).
const (
	OpWrite         = "write"
	OpEdit          = "edit"
	OpDelete        = "delete"
	OpMove          = "move"
	OpCopy          = "copy"
	OpMakeDir       = "make_dir"
	OpRevert        = "revert"
	OpContextUpdate = "context_update"
	OpRefresh       = "refresh"
	OpCompact       = "compact"
	// OpBaseline is the state an item had when history started recording
	// it: the item was written before the store kept history, or changed
	// while history was off. Its actor is empty and its time is the item's
	// UpdatedAt then.
	OpBaseline = "baseline"
)

// Retention defaults and the limits of History, Deleted and Log.
const (
	DefaultHistoryKeep   = 20
	DefaultHistoryMinAge = 30 * 24 * time.Hour
	// DefaultHistoryLimit is the page size of History, Deleted and Log when
	// the caller passes 0; MaxHistoryLimit is the largest they accept.
	DefaultHistoryLimit = 50
	MaxHistoryLimit     = 1000
	// pruneBatch bounds the revisions one PruneHistory transaction examines,
	// so writers never wait long behind it.
	pruneBatch = 1000
	// maxDeltaBytes bounds the content stored as a delta against an older
	// revision; larger content is compressed on its own.
	maxDeltaBytes = 4 << 20
)

// Retention says which revisions PruneHistory removes: a revision goes once
// it is not among its item's Keep newest AND is older than MinAge, and all of
// a deleted (not restored) item's revisions go MinAge after the delete. The zero
// Retention means the defaults (20 revisions, 30 days); one with Keep set is
// used as given, so MinAge 0 keeps revisions by count alone.
type Retention struct {
	Keep   int
	MinAge time.Duration
}

// Revision is one recorded change of an item. Its content is the item's
// content after the change (for a delete, the content deleted).
type Revision struct {
	ItemID  string
	Ref     string // drive:/path of the item at this revision
	Rev     int64  // per item, from 1
	Time    time.Time
	Actor   string // token name, OwnerActor, or "" for OpBaseline
	Op      string // one of the Op constants, or the Actor.Op of the change
	Hash    string // content hash after the change
	Size    int64
	Deleted bool // the change deleted the item
	// Item is the metadata at this revision. Retrieval counts and IndexedAt
	// are not kept; UpdatedAt is the revision's time.
	Item Item
}

// LogQuery selects the revisions Log returns, newest first.
type LogQuery struct {
	Actor     string    // only this actor's changes; "" for all
	Since     time.Time // only changes at or after Since; zero for all
	Limit     int       // 0 means DefaultHistoryLimit; at most MaxHistoryLimit
	PageToken string    // the token a previous call returned, to continue
}

// Archive entry kinds. Superseded content is stored once per item and
// SHA-256 whatever the number of revisions that had it, and content stored
// whole and large once per SHA-256 across items. Content that is still an
// item's current content is not copied: the revisions recorded since the
// item's content last changed are its pending revisions, which read the
// content bucket and hold no reference until the content goes.
const (
	blobZstd  = 1 // payload is a zstd frame
	blobDelta = 2 // payload is base hash (32) | zstd frame with the base's bytes as dictionary
	// blobTrim is the cheap delta archive makes: payload is base hash (32) |
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

// revRec is a decoded revision record. Layout: version (1) | flags (1) |
// time (8) | uvarint size | uvarint lines | hash (32) | meta id (8) |
// op, actor, drive, path as uvarint length | bytes.
type revRec struct {
	deleted     bool
	time        int64
	size, lines int64
	hash        [32]byte
	meta        [8]byte // metaID of the metadata snapshot
	op, actor   string
	drive, path string
	id          []byte
	rev         int64
}

const revRecVersion = 1

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
	return b
}

var errBadRecord = errors.New("malformed revision record")

func decodeRevRec(k, v []byte) (revRec, error) {
	var r revRec
	if len(k) != 24 || len(v) < 10 || v[0] != revRecVersion {
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
	t.revLog.FillPercent, t.revActor.FillPercent, t.revs.FillPercent = 1, 1, 0.9
	// Values of a few hundred bytes fill a page in steps of about 10%: at
	// 0.9, 8 content values of 450 bytes fit where 9 do at 1.
	for _, b := range []*bolt.Bucket{t.content, t.text, t.chunks, t.outbox} {
		b.FillPercent = 1
	}
	// Item records grow by about 12% once indexed (IndexedAt): pages
	// packed to 90% overflowed then and split, leaving the new pages 68% full.
	t.items.FillPercent = 0.8
}

// histNow is the txn's time as a revision time.
func (t *txn) histNow() int64 { return t.now.UnixNano() }

// isRevKey tells revision keys from the other keys under an item's prefix.
func isRevKey(k []byte) bool { return len(k) == 24 && k[16] < 0x80 }

func pendingKey(id []byte) []byte { return append(append(make([]byte, 0, 18), id...), 0xff, 'p') }

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
	c := t.revs.Cursor()
	k, v := c.Seek(revKey(id, math.MaxInt64))
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
		if lk == nil {
			return revRec{}, nil
		}
		k, v = lk, lv
	}
	return decodeRevRec(k, v)
}

// pending returns how many of id's newest revisions have its current
// content and hold no reference to archived content.
func (t *txn) pending(id []byte) int64 {
	if v := t.revs.Get(pendingKey(id)); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

func (t *txn) setPending(id []byte, n int64) error {
	if n == 0 {
		return t.revs.Delete(pendingKey(id))
	}
	return t.revs.Put(pendingKey(id), binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// prevItem is what history needs of an item's state before a change.
type prevItem struct {
	it      Item
	content []byte // valid inside the transaction
}

// recordPut records the revision of putItem storing it (content nil: kept)
// for item u; meta is it's metadata snapshot (metaSnapshot). It runs before
// the item's metadata and content are replaced.
//
// While history is on, an item's latest revision records its current state
// (Open closes the gaps history off leaves), so the old content hash comes
// from there rather than from decoding the old metadata.
func (t *txn) recordPut(u []byte, it *Item, content, meta []byte) error {
	exists := t.items.Get(u) != nil
	if t.historyOff {
		// Pending revisions still need the content this write replaces.
		if !exists || content == nil || t.pending(u) == 0 {
			return nil
		}
	}
	latest, err := t.latestRev(u)
	if err != nil {
		return err
	}
	if exists && !t.historyOff && latest.rev == 0 {
		prev, err := t.prevState(u)
		if err != nil {
			return err
		}
		if latest, err = t.baseline(u, prev); err != nil {
			return err
		}
	}
	if exists && latest.rev > 0 && content != nil && hex.EncodeToString(latest.hash[:]) != it.ContentHash {
		if err := t.archive(latest.hash, u, latest.rev, t.content.Get(u)); err != nil {
			return err
		}
	}
	if t.historyOff {
		return nil
	}
	return t.appendRev(u, latest.rev+1, it, meta, false, t.operation(), t.actor.Name, t.histNow())
}

// recordRemove records the deletion of item u, before it is removed.
func (t *txn) recordRemove(u []byte) error {
	if t.historyOff {
		if t.pending(u) == 0 {
			return nil
		}
		latest, err := t.latestRev(u)
		if err != nil {
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
// log and actor index entries. The revision is pending: its content is (or
// is about to be) u's current content.
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
	if err := t.setPending(u, t.pending(u)+1); err != nil {
		return err
	}
	if err := t.revs.Put(revKey(u, rev), r.encode()); err != nil {
		return fmt.Errorf("put revision: %w", err)
	}
	lk := logKey(r.time, u, rev)
	if err := t.revLog.Put(lk, nil); err != nil {
		return fmt.Errorf("put revision log: %w", err)
	}
	if err := t.revActor.Put(append(actorPrefix(actor), lk...), nil); err != nil {
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
//	id | rev (8) | 1          -> uvarint refs | uvarint uses | kind (1) | payload
//	id | 0xff 'x' | SHA-256    -> rev (8): the entry holding that content
//
// An entry is keyed by the revision whose content it first archived, so
// entries are appended in order, right before the next revision record,
// and a trim delta lands beside its base. refs counts the item's revisions
// (not pending) with that content plus the item's entries that are deltas
// against it; uses counts the latter. The index, the one key of a write
// away from the item's latest pages, keeps the content stored once per item
// and hash. Content whose compressed form is larger than maxInlineBlob is
// stored once per SHA-256 in the blobs bucket, shared by every item that
// had it, and its entries are blobShared; deltas are always an item's own,
// against an entry of the same item.

// maxInlineBlob bounds the payload of an entry stored under its item's
// prefix; larger content goes to the shared blobs bucket, where it does not
// make every later write of the item rewrite it.
const maxInlineBlob = 1024

func entryKey(u []byte, rev int64) []byte { return append(revKey(u, rev), 1) }

func isEntryKey(k []byte) bool { return len(k) == 25 && k[16] < 0x80 && k[24] == 1 }

func indexKey(u, hash []byte) []byte {
	return append(append(append(make([]byte, 0, 50), u...), 0xff, 'x'), hash...)
}

func isIndexKey(k []byte) bool { return len(k) == 50 && k[16] == 0xff && k[17] == 'x' }

// entry is a decoded archive entry; its slices point into the transaction.
// Its value is uvarint refs | uvarint uses | kind (1) | payload; the hash
// is the index's.
type entry struct {
	key        []byte
	refs, uses int64
	hash       [32]byte
	kind       byte
	payload    []byte
}

func decodeEntry(k, v, hash []byte) (entry, error) {
	e := entry{key: k, hash: [32]byte(hash)}
	for _, p := range []*int64{&e.refs, &e.uses} {
		x, n := binary.Uvarint(v)
		if n <= 0 || x > math.MaxInt64 {
			return entry{}, fmt.Errorf("archive entry %x is malformed", k)
		}
		*p, v = int64(x), v[n:]
	}
	if len(v) < 1 {
		return entry{}, fmt.Errorf("archive entry %x is malformed", k)
	}
	e.kind, e.payload = v[0], v[1:]
	switch e.kind {
	case blobZstd, blobShared:
	case blobDelta, blobTrim:
		if len(e.payload) < 33 {
			return entry{}, fmt.Errorf("archive entry %x: short delta", k)
		}
	default:
		return entry{}, fmt.Errorf("archive entry %x has unknown kind %d", k, e.kind)
	}
	return e, nil
}

func (e *entry) encode() []byte {
	b := make([]byte, 0, 2*binary.MaxVarintLen64+1+len(e.payload))
	b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(e.refs)), uint64(e.uses))
	return append(append(b, e.kind), e.payload...)
}

// base is the hash of the content a delta entry is relative to, or nil.
func (e *entry) base() []byte {
	if e.kind == blobDelta || e.kind == blobTrim {
		return e.payload[:32]
	}
	return nil
}

// depth is how many deltas a read of e decodes.
func (e *entry) depth() int {
	switch e.kind {
	case blobDelta:
		return 1
	case blobTrim:
		return int(e.payload[32])
	}
	return 0
}

// whole reports whether e holds its content on its own (a delta base).
func (e *entry) whole() bool { return e.kind == blobZstd || e.kind == blobShared }

// entryOf returns item u's archive entry of content hash; found is false
// when u has none.
func (t *txn) entryOf(u, hash []byte) (e entry, found bool, err error) {
	iv := t.revs.Get(indexKey(u, hash))
	if iv == nil {
		return entry{}, false, nil
	}
	if len(iv) != 8 {
		return entry{}, false, fmt.Errorf("history: index of %x in item %x is malformed", hash, u)
	}
	k := entryKey(u, int64(binary.BigEndian.Uint64(iv)))
	v := t.revs.Get(k)
	if v == nil {
		return entry{}, false, fmt.Errorf("history: archived content %x of item %x is missing", hash, u)
	}
	if e, err = decodeEntry(k, v, hash); err != nil {
		return entry{}, false, fmt.Errorf("history: %w", err)
	}
	return e, true, nil
}

// putEntry stores a new archive entry of item u and its index.
func (t *txn) putEntry(u []byte, e *entry) error {
	if err := t.revs.Put(e.key, e.encode()); err != nil {
		return fmt.Errorf("archive content: %w", err)
	}
	if err := t.revs.Put(indexKey(u, e.hash[:]), bytes.Clone(e.key[16:24])); err != nil {
		return fmt.Errorf("archive content: %w", err)
	}
	return nil
}

// addRefs adjusts the reference and base-use counts of item u's archived
// content hash, deleting the entry (and its references) at zero.
func (t *txn) addRefs(u, hash []byte, dRefs, dUses int64) error {
	e, ok, err := t.entryOf(u, hash)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("history: archived content %x of item %x is missing", hash, u)
	}
	e.refs, e.uses = e.refs+dRefs, e.uses+dUses
	if e.refs > 0 {
		return t.revs.Put(bytes.Clone(e.key), e.encode())
	}
	base, shared := bytes.Clone(e.base()), e.kind == blobShared
	if err := t.revs.Delete(bytes.Clone(e.key)); err != nil {
		return err
	}
	if err := t.revs.Delete(indexKey(u, hash)); err != nil {
		return err
	}
	if base != nil {
		return t.addRefs(u, base, -1, -1)
	}
	if shared {
		return t.addBlobRefs(hash, -1)
	}
	return nil
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

// archive keeps content (item u's content with this hash, about to be
// replaced or deleted) for u's pending revisions, which then reference its
// entry: stored once per item, as a trim delta against the content u had
// before when that is small, else compressed (and queued to become a delta).
func (t *txn) archive(hash [32]byte, u []byte, rev int64, content []byte) error {
	n := t.pending(u)
	if n == 0 {
		return nil
	}
	if err := t.setPending(u, 0); err != nil {
		return err
	}
	if _, ok, err := t.entryOf(u, hash[:]); err != nil || ok {
		if err != nil {
			return err
		}
		return t.addRefs(u, hash[:], n, 0)
	}
	e := entry{key: entryKey(u, rev), refs: n, hash: hash}
	if t.blobs.Get(blobKey(hash[:], 0)) != nil { // another item's, stored whole
		e.kind = blobShared
		if err := t.addBlobRefs(hash[:], 1); err != nil {
			return err
		}
		return t.putEntry(u, &e)
	}
	// The next archive of u is likely a delta against this content.
	recentBlobs.put(hash, bytes.Clone(content))
	// Against the content u had before, a one-line edit leaves a common
	// prefix and suffix around a few bytes: store those bytes alone.
	if base, depth, baseContent := t.trimBase(u, rev, hash); base != nil {
		p, q := commonEnds(content, baseContent)
		// The bytes between, stored raw, beat the whole compressed (about a
		// third of text) while they are at most a quarter of it.
		if middle := content[p : len(content)-q]; len(middle) <= len(content)/4 && len(middle) <= maxInlineBlob {
			val := append(append(make([]byte, 0, 48+len(middle)), base...), byte(depth+1))
			e.kind, e.payload = blobTrim, append(binary.AppendUvarint(binary.AppendUvarint(val, uint64(p)), uint64(q)), middle...)
			if err := t.putEntry(u, &e); err != nil {
				return err
			}
			return t.addRefs(u, base, 1, 1)
		}
	}
	// Stored whole, compressed; PruneHistory makes it a zstd delta later,
	// off the write path, where the dictionary holds up no writer.
	e.kind, e.payload = blobZstd, zenc().EncodeAll(content, nil)
	if len(e.payload) > maxInlineBlob {
		if err := t.blobs.Put(blobKey(hash[:], 0), append([]byte{blobZstd}, e.payload...)); err != nil {
			return fmt.Errorf("archive content: %w", err)
		}
		if err := t.addBlobRefs(hash[:], 1); err != nil {
			return err
		}
		e.kind, e.payload = blobShared, nil
	}
	if err := t.putEntry(u, &e); err != nil {
		return err
	}
	qk := binary.BigEndian.AppendUint64(make([]byte, 0, 40), uint64(t.histNow()))
	if err := t.repack.Put(append(qk, hash[:]...), revKey(u, rev)); err != nil {
		return fmt.Errorf("queue repack: %w", err)
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

// trimBase finds the entry of the content item u had before revision rev's
// (content not), for a blobTrim delta: its hash, its depth and its bytes;
// nil when there is none or its chain is already maxTrimDepth long.
func (t *txn) trimBase(u []byte, rev int64, not [32]byte) (hash []byte, depth int, content []byte) {
	t.olderEntries(u, rev, not, func(r revRec, e entry) bool {
		if e.depth() >= maxTrimDepth {
			return true
		}
		c, ok := recentBlobs.get(r.hash)
		if !ok {
			var err error
			if c, err = t.blobContent(u, r.hash[:]); err != nil {
				return true
			}
		}
		hash, depth, content = bytes.Clone(r.hash[:]), e.depth(), c
		return true
	})
	return hash, depth, content
}

// olderEntries calls fn, newest first, with up to 4 of item u's revisions
// before rev whose content is not not and is archived, and that entry,
// until fn returns true.
func (t *txn) olderEntries(u []byte, rev int64, not [32]byte, fn func(r revRec, e entry) bool) {
	c := t.revs.Cursor()
	k, v := c.Seek(revKey(u, rev))
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for i := 0; i < 4 && k != nil && bytes.HasPrefix(k, u); k, v = c.Prev() {
		if isEntryKey(k) {
			continue
		}
		i++
		r, err := decodeRevRec(k, v)
		if err != nil || r.hash == not {
			continue
		}
		if e, ok, err := t.entryOf(u, r.hash[:]); err == nil && ok && fn(r, e) {
			return
		}
	}
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

// repackOne stores content hash, archived whole from revision rev of item
// u, as a delta against an older revision of u when the delta is at most
// half its size (and small enough to keep under u's prefix). Content that is
// the base of deltas stays whole, so zstd deltas never chain.
func (t *txn) repackOne(hash, u []byte, rev int64) error {
	e, ok, err := t.entryOf(u, hash)
	if err != nil || !ok || !e.whole() || e.uses > 0 {
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
	base, baseContent := t.deltaBase(u, rev, [32]byte(hash))
	if base == nil {
		return nil
	}
	content, err := zdecode(frame, nil)
	if err != nil {
		return fmt.Errorf("history: archived content %x: %w", hash, err)
	}
	if len(content) > maxDeltaBytes {
		return nil
	}
	delta := encodeDelta(bytes.Clone(base), content, baseContent)
	if len(delta) > len(frame)/2 || len(delta) > maxInlineBlob {
		return nil // different enough to be the base of later deltas
	}
	shared := e.kind == blobShared
	e.kind, e.payload = blobDelta, delta
	if err := t.revs.Put(bytes.Clone(e.key), e.encode()); err != nil {
		return err
	}
	if err := t.addRefs(u, base, 1, 1); err != nil {
		return err
	}
	if shared {
		return t.addBlobRefs(hash, -1)
	}
	return nil
}

// deltaBase picks the content a delta of content not, item u's at revision
// rev, is made against: the nearest older revision's entry stored whole (or
// the base of a delta), so that zstd deltas are never chained.
func (t *txn) deltaBase(u []byte, rev int64, not [32]byte) (hash, content []byte) {
	t.olderEntries(u, rev, not, func(_ revRec, e entry) bool {
		if e.kind == blobDelta {
			var ok bool
			var err error
			if e, ok, err = t.entryOf(u, bytes.Clone(e.base())); err != nil || !ok {
				return false
			}
		}
		if !e.whole() {
			return false
		}
		c, err := t.blobContent(u, e.hash[:])
		if err == nil && len(c) <= maxDeltaBytes {
			hash, content = bytes.Clone(e.hash[:]), c
		}
		return true
	})
	return hash, content
}

// revContent returns the content of revision r: the item's current content
// for a pending revision, else its archived content.
func (t *txn) revContent(r *revRec) ([]byte, error) {
	if t.items.Get(r.id) != nil {
		latest, err := t.latestRev(r.id)
		if err != nil {
			return nil, err
		}
		if r.rev > latest.rev-t.pending(r.id) {
			c := t.content.Get(r.id)
			if sum := sha256.Sum256(c); sum != r.hash {
				return nil, fmt.Errorf("history: revision %d of item %x is pending but the item's content is %x, not %x", r.rev, r.id, sum, r.hash)
			}
			return bytes.Clone(c), nil
		}
	}
	return t.blobContent(r.id, r.hash[:])
}

// blobContent returns item u's archived content hash, checked against the hash.
func (t *txn) blobContent(u, hash []byte) ([]byte, error) {
	e, ok, err := t.entryOf(u, hash)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("history: archived content %x of item %x is missing", hash, u)
	}
	var out []byte
	switch e.kind {
	case blobZstd:
		out, err = zdecode(e.payload, nil)
	case blobShared:
		blob := t.blobs.Get(blobKey(hash, 0))
		if len(blob) < 1 || blob[0] != blobZstd {
			return nil, fmt.Errorf("history: shared blob %x is missing or malformed", hash)
		}
		out, err = zdecode(blob[1:], nil)
	case blobDelta:
		var base []byte
		if base, err = t.blobContent(u, e.payload[:32]); err == nil {
			out, err = zdecode(e.payload[32:], base)
		}
	case blobTrim:
		out, err = t.untrim(u, e.payload)
	}
	if err != nil {
		return nil, fmt.Errorf("history: archived content %x of item %x: %w", hash, u, err)
	}
	if sum := sha256.Sum256(out); !bytes.Equal(sum[:], hash) {
		return nil, fmt.Errorf("history: archived content %x of item %x does not match its hash", hash, u)
	}
	return out, nil
}

// untrim rebuilds the content of a blobTrim payload of item u.
func (t *txn) untrim(u, payload []byte) ([]byte, error) {
	if len(payload) < 34 {
		return nil, errors.New("short trim delta")
	}
	p, n1 := binary.Uvarint(payload[33:])
	if n1 <= 0 {
		return nil, errors.New("malformed trim delta")
	}
	q, n2 := binary.Uvarint(payload[33+n1:])
	if n2 <= 0 {
		return nil, errors.New("malformed trim delta")
	}
	middle := payload[33+n1+n2:]
	base, err := t.blobContent(u, payload[:32])
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

// visibleRevisionAt builds the exported Revision stored at revisions key
// key; ok is false for one made outside the caller's access.
func (t *txn) visibleRevisionAt(key []byte, metas map[[8]byte]Item) (_ Revision, ok bool, _ error) {
	rec, err := decodeRevRec(key, t.revs.Get(key))
	if err != nil || !t.visibleRev(rec) {
		return Revision{}, false, err
	}
	r, err := t.revision(rec, metas)
	return r, err == nil, err
}

// revision builds the exported Revision of r; metas caches decoded snapshots.
func (t *txn) revision(r revRec, metas map[[8]byte]Item) (Revision, error) {
	it, ok := metas[r.meta]
	if !ok {
		snap := t.revs.Get(metaKey(r.id, r.meta))
		switch {
		case snap == nil:
			var err error
			if snap, err = t.metaOfRecord(r.id, r.meta); err != nil {
				return Revision{}, err
			}
		case len(snap) < 8:
			return Revision{}, fmt.Errorf("history: metadata %x of item %x is corrupt", r.meta, r.id)
		default:
			snap = snap[8:]
		}
		if err := json.Unmarshal(snap, &it); err != nil {
			return Revision{}, fmt.Errorf("history: decode metadata %x: %w", r.meta, err)
		}
		if metas != nil {
			metas[r.meta] = it
		}
	}
	it.Tags = slices.Clone(it.Tags)
	tm := time.Unix(0, r.time).UTC()
	it.ID, it.Drive, it.Path = uuid.UUID(r.id).String(), r.drive, r.path
	it.Size, it.ContentHash, it.LineCount, it.UpdatedAt = r.size, hex.EncodeToString(r.hash[:]), r.lines, tm
	return Revision{
		ItemID: it.ID, Ref: it.Ref(), Rev: r.rev, Time: tm, Actor: r.actor, Op: r.op,
		Hash: it.ContentHash, Size: r.size, Deleted: r.deleted, Item: it,
	}, nil
}

// historyOf is the item whose history a ref names.
type historyOf struct {
	id   []byte
	ref  string // as the caller should see it in messages
	live *Item  // the item when it exists
	val  []byte // its paths value
	// baseline is set when the live item's current state is not recorded
	// yet: it is the synthesized revision after the latest.
	baseline *revRec
	latest   revRec
}

// resolveHistory finds the item ref names: the live item at a path, else
// the one deleted last there; an id names live and deleted items alike.
func (t *txn) resolveHistory(ref Ref) (historyOf, error) {
	r, err := normRef(ref)
	if err != nil {
		return historyOf{}, err
	}
	h := historyOf{ref: r.String()}
	unknown := newError(ErrNotFound, h.ref, "ids of deleted items come from deleted or log",
		"No item has the id %s and none had history.", h.ref)
	if r.ID != "" {
		h.id, _ = parseID(r.ID)
		if t.items.Get(h.id) != nil {
			it, err := t.item(h.id)
			if err != nil {
				return historyOf{}, err
			}
			if !t.access.Allows(it.Drive, it.Path) {
				return historyOf{}, unknown
			}
			h.live, h.val = &it, t.driveBucket(it.Drive).Get(pathKey(it.Path))
		}
	} else {
		n, err := t.lookup(r)
		if err != nil {
			return historyOf{}, err
		}
		h.ref = n.ref()
		if n.val != nil { // an item or a directory placeholder
			h.id, h.val = bytes.Clone(n.pv().id), n.val
			it, err := t.item(h.id)
			if err != nil {
				return historyOf{}, err
			}
			h.live = &it
		} else if t.access.Allows(r.Drive, r.Path) {
			h.id = t.lastDeletedAt(r.Drive, r.Path)
		}
		if h.id == nil {
			if n.isDir() {
				return historyOf{}, newError(ErrIsDir, h.ref, "history is kept per item: name an item below it, or list the deleted items under it (ctxd deleted, ListDeleted)",
					"%s is a directory.", h.ref)
			}
			return historyOf{}, newError(ErrNotFound, h.ref, "list deleted items (ctxd deleted, ListDeleted) or read the audit log (ctxd log) to find the item, then pass its id",
				"No item and no deleted item at %s.", h.ref)
		}
	}
	if h.latest, err = t.latestRev(h.id); err != nil {
		return historyOf{}, err
	}
	if h.live != nil && !matchesLatest(h.latest, h.live) {
		b := revRec{rev: h.latest.rev + 1, id: h.id, time: h.live.UpdatedAt.UnixNano(), size: h.live.Size,
			lines: h.live.LineCount, op: OpBaseline, drive: h.live.Drive, path: h.live.Path}
		hex.Decode(b.hash[:], []byte(h.live.ContentHash))
		h.baseline = &b
	}
	if h.latest.rev == 0 && h.baseline == nil || h.live == nil && !t.visibleRev(h.latest) {
		return historyOf{}, unknown
	}
	return h, nil
}

// lastDeletedAt returns the id of the item deleted most recently at path.
func (t *txn) lastDeletedAt(drive, path string) []byte {
	prefix := append(append([]byte(drive), pathKey(path)...), 0xff)
	var best []byte
	var bestTime int64
	c := t.deleted.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		id := k[len(prefix):]
		rv := t.revs.Get(revKey(id, int64(binary.BigEndian.Uint64(v))))
		if len(rv) < 10 {
			continue
		}
		if tm := int64(binary.BigEndian.Uint64(rv[2:10])); best == nil || tm > bestTime {
			best, bestTime = bytes.Clone(id), tm
		}
	}
	return best
}

// checkLimit applies the default and maximum of a page size.
func checkLimit(ref string, limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultHistoryLimit, nil
	case limit < 0 || limit > MaxHistoryLimit:
		return 0, newError(ErrInvalid, ref, fmt.Sprintf("pass a limit from 1 to %d (0 means %d), and page for more", MaxHistoryLimit, DefaultHistoryLimit),
			"The limit %d is outside 1..%d.", limit, MaxHistoryLimit)
	}
	return limit, nil
}

// History returns the revisions of the item at ref, newest first: at most
// limit (0 means DefaultHistoryLimit, at most MaxHistoryLimit), those before
// revision beforeRev when it is not 0 (pass the last Rev returned to page).
// A path where no item lives names the item deleted there last; an id names
// a live or deleted item. An item whose current state is not recorded yet
// (written before history existed) shows it as an OpBaseline revision.
func (s *Store) History(ctx context.Context, ref Ref, limit int, beforeRev int64) ([]Revision, error) {
	limit, err := checkLimit(ref.String(), limit)
	if err != nil {
		return nil, err
	}
	if beforeRev < 0 {
		return nil, newError(ErrInvalid, ref.String(), "pass 0, or the last revision number of the previous page", "before_rev %d is negative.", beforeRev)
	}
	var out []Revision
	err = s.view(ctx, func(t *txn) error {
		out = nil
		h, err := t.resolveHistory(ref)
		if err != nil {
			return err
		}
		metas := map[[8]byte]Item{}
		if h.baseline != nil && (beforeRev == 0 || beforeRev > h.baseline.rev) {
			r, err := t.baselineRevision(h)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		c := t.revs.Cursor()
		start := revKey(h.id, math.MaxInt64)
		if beforeRev > 0 {
			start = revKey(h.id, beforeRev)
		}
		k, v := c.Seek(start)
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, h.id) && len(out) < limit; k, v = c.Prev() {
			if isEntryKey(k) {
				continue
			}
			rec, err := decodeRevRec(k, v)
			if err != nil {
				return fmt.Errorf("history of %s: %w", h.ref, err)
			}
			if !t.visibleRev(rec) { // made while the item lay outside the caller's access
				continue
			}
			r, err := t.revision(rec, metas)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// baselineRevision is the synthesized revision of a live item's unrecorded state.
func (t *txn) baselineRevision(h historyOf) (Revision, error) {
	it := *h.live
	it.IndexedAt, it.LastRetrievedAt, it.RetrievalCount = time.Time{}, time.Time{}, 0
	return Revision{ItemID: it.ID, Ref: it.Ref(), Rev: h.baseline.rev, Time: it.UpdatedAt, Op: OpBaseline,
		Hash: it.ContentHash, Size: it.Size, Item: it}, nil
}

// ReadRevision returns revision rev of the item ref names (see History) and
// its content. A revision pruned away is ErrNotFound saying so.
func (s *Store) ReadRevision(ctx context.Context, ref Ref, rev int64) (Revision, []byte, error) {
	var out Revision
	var content []byte
	err := s.view(ctx, func(t *txn) error {
		h, rec, err := s.findRevision(t, ref, rev)
		if err != nil {
			return err
		}
		if rec == nil {
			out, err = t.baselineRevision(h)
			content = bytes.Clone(t.content.Get(h.id))
			return err
		}
		if out, err = t.revision(*rec, nil); err != nil {
			return err
		}
		content, err = t.revContent(rec)
		return err
	})
	if err != nil {
		return Revision{}, nil, err
	}
	return out, content, nil
}

// findRevision resolves ref and finds revision rev; rec is nil for the
// synthesized baseline.
func (s *Store) findRevision(t *txn, ref Ref, rev int64) (historyOf, *revRec, error) {
	h, err := t.resolveHistory(ref)
	if err != nil {
		return h, nil, err
	}
	last := h.latest.rev
	if h.baseline != nil {
		last = h.baseline.rev
	}
	switch {
	case rev <= 0:
		return h, nil, newError(ErrInvalid, h.ref, "revisions are numbered from 1; call history to list them",
			"Revision %d does not exist: revisions are numbered from 1.", rev)
	case rev > last:
		return h, nil, newError(ErrNotFound, h.ref, "call history to list the revisions",
			"%s has no revision %d: its latest is %d.", h.ref, rev, last)
	case h.baseline != nil && rev == h.baseline.rev:
		return h, nil, nil
	}
	v := t.revs.Get(revKey(h.id, rev))
	if v == nil {
		ret := s.retention
		return h, nil, newError(ErrNotFound, h.ref,
			"call history to list the revisions kept; retention is set by history_keep and history_min_age (--history-keep, --history-min-age)",
			"Revision %d of %s was pruned: history keeps each item's last %d revisions and every revision younger than %s.", rev, h.ref, ret.Keep, ret.MinAge)
	}
	rec, err := decodeRevRec(revKey(h.id, rev), v)
	if err != nil {
		return h, nil, fmt.Errorf("revision %d of %s: %w", rev, h.ref, err)
	}
	if !t.visibleRev(rec) {
		return h, nil, newError(ErrNotFound, h.ref, "call history to list the revisions", "%s has no revision %d.", h.ref, rev)
	}
	return h, &rec, nil
}

// Revert makes revision rev's content and metadata the item's current state,
// as a new revision (OpRevert): at the item's current path when it lives,
// else restoring the deleted item at the path it was deleted from, with its
// id. Reverting a binary item keeps its searchable text only when the
// content is unchanged; otherwise it is searchable by title and MIME type
// until it is written again with text.
func (s *Store) Revert(ctx context.Context, ref Ref, rev int64) (WriteResult, error) {
	var res WriteResult
	err := s.update(ctx, func(t *txn) error {
		t.op = OpRevert
		res = WriteResult{}
		h, rec, err := s.findRevision(t, ref, rev)
		if err != nil {
			return err
		}
		var target Revision
		var content []byte
		if rec == nil {
			if target, err = t.baselineRevision(h); err == nil {
				content = bytes.Clone(t.content.Get(h.id))
			}
		} else if target, err = t.revision(*rec, nil); err == nil {
			content, err = t.revContent(rec)
		}
		if err != nil {
			return err
		}
		it := target.Item
		it.UpdatedAt, it.IndexedAt = t.now, time.Time{}
		old := h.val
		if h.live != nil {
			it.Drive = h.live.Drive
			retitle(&it, h.live.Path)
			it.RetrievalCount, it.LastRetrievedAt = h.live.RetrievalCount, h.live.LastRetrievedAt
		} else {
			// Restored where it was deleted from, whatever path rev had.
			it.Drive = h.latest.drive
			retitle(&it, h.latest.path)
			if err := t.checkRestorable(&it); err != nil {
				return err
			}
			if err := t.deleted.Delete(deletedKey(h.latest.drive, h.latest.path, h.id)); err != nil {
				return err
			}
			res.Created = true
		}
		if it.IsText && !it.IsDir {
			if err := checkText(it.Ref(), content); err != nil {
				return err
			}
		}
		if !it.IsText && !it.IsDir && (h.live == nil || h.live.ContentHash != it.ContentHash) {
			t.extracted = []byte{}
		}
		if err := t.putItem(&it, content, old, nil); err != nil {
			return err
		}
		res.Item = it
		res.ChunksToEmbed, res.ChunksReused = t.chunksToEmbed, t.chunksReused
		return nil
	})
	return res, err
}

// checkRestorable refuses to restore a deleted item where its path is now
// taken or below an item.
func (t *txn) checkRestorable(it *Item) error {
	ref := it.Ref()
	n, err := t.lookup(Ref{Drive: it.Drive, Path: it.Path})
	if err != nil {
		return err
	}
	switch {
	case n.val != nil:
		return newError(ErrConflict, ref, "move or delete the item now at that path, then revert again",
			"Cannot restore %s: another item now lives there.", ref)
	case n.children && !it.IsDir && it.Drive != urlDrive:
		return newError(ErrIsDir, ref, "move the items below that path elsewhere, then revert again",
			"Cannot restore %s: it is now a directory.", ref)
	}
	if p, bad := fileAncestor(t.driveBucket(it.Drive), it.Path); bad && it.Drive != urlDrive {
		return newError(ErrNotDir, ref, "move that item elsewhere, then revert again",
			"Cannot restore %s: %s is an item, not a directory.", ref, FormatRef(it.Drive, p))
	}
	return nil
}

// Deleted lists items deleted at or below under (the zero Ref: everywhere)
// that were not restored, as their delete revisions in path order: at most
// limit (0 means DefaultHistoryLimit, at most MaxHistoryLimit). Revert
// restores one at its path; History with its ItemID lists its revisions.
func (s *Store) Deleted(ctx context.Context, under Ref, limit int) ([]Revision, error) {
	limit, err := checkLimit(under.String(), limit)
	if err != nil {
		return nil, err
	}
	var prefixes [][]byte
	if under != (Ref{}) {
		r, err := normRef(under)
		if err != nil {
			return nil, err
		}
		if r.ID != "" {
			return nil, newError(ErrInvalid, r.ID, "name a directory as drive:/path, e.g. agent:/", "Deleted needs a drive:/path ref, not an id.")
		}
		prefixes = append(prefixes, append(append([]byte(r.Drive), pathKey(r.Path)...), 0xff))
		prefixes = append(prefixes, append([]byte(r.Drive), dirPrefix(r.Path)...))
		if r.Path == "/" {
			prefixes = prefixes[1:]
		}
	} else {
		prefixes = [][]byte{nil}
	}
	var out []Revision
	err = s.view(ctx, func(t *txn) error {
		out = nil
		metas := map[[8]byte]Item{}
		for _, prefix := range prefixes {
			c := t.deleted.Cursor()
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, v = c.Next() {
				if len(k) < 17 || len(v) != 8 {
					return fmt.Errorf("deleted: malformed entry %x", k)
				}
				id := k[len(k)-16:]
				r, ok, err := t.visibleRevisionAt(revKey(id, int64(binary.BigEndian.Uint64(v))), metas)
				if err != nil {
					return fmt.Errorf("deleted %x: %w", k, err)
				}
				if ok {
					out = append(out, r)
				}
			}
		}
		return nil
	})
	return out, err
}

// Log returns recorded changes across the store, newest first, from the
// time index: those of q.Actor when set, at or after q.Since, at most
// q.Limit. The returned token ("" at the end) continues in the next call.
func (s *Store) Log(ctx context.Context, q LogQuery) ([]Revision, string, error) {
	limit, err := checkLimit("", q.Limit)
	if err != nil {
		return nil, "", err
	}
	var start []byte // exclusive upper bound in time-key space
	if q.PageToken != "" {
		start, err = base64.RawURLEncoding.DecodeString(q.PageToken)
		if err != nil || len(start) != 32 {
			return nil, "", newError(ErrInvalid, "", "pass the page token of the previous response unchanged, or none to start over",
				"The page token %s is malformed.", quote(q.PageToken))
		}
	}
	since := int64(0)
	if !q.Since.IsZero() {
		since = max(q.Since.UnixNano(), 0)
	}
	var out []Revision
	var next string
	err = s.view(ctx, func(t *txn) error {
		out, next = nil, ""
		b, prefix := t.revLog, []byte(nil)
		if q.Actor != "" {
			b, prefix = t.revActor, actorPrefix(q.Actor)
		}
		c := b.Cursor()
		var k []byte
		if start == nil {
			k, _ = c.Seek(append(bytes.Clone(prefix), bytes.Repeat([]byte{0xff}, 33)...))
		} else {
			k, _ = c.Seek(append(bytes.Clone(prefix), start...))
		}
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		metas := map[[8]byte]Item{}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			lk := k[len(prefix):]
			if len(lk) != 32 {
				return fmt.Errorf("revision log: malformed key %x", k)
			}
			if int64(binary.BigEndian.Uint64(lk[:8])) < since {
				break
			}
			if len(out) == limit {
				next = base64.RawURLEncoding.EncodeToString(out[len(out)-1].logKey())
				break
			}
			r, ok, err := t.visibleRevisionAt(lk[8:], metas)
			if err != nil {
				return fmt.Errorf("revision log %x: %w", k, err)
			}
			if ok {
				out = append(out, r)
			}
		}
		return nil
	})
	return out, next, err
}

// logKey is the time index key of r, the position a Log page ends at.
func (r *Revision) logKey() []byte {
	id, _ := uuid.Parse(r.ItemID)
	return logKey(r.Time.UnixNano(), id[:], r.Rev)
}

// withDefaults returns o, or the default retention for the zero Retention.
func (o Retention) withDefaults() Retention {
	if o.Keep == 0 {
		return Retention{Keep: DefaultHistoryKeep, MinAge: DefaultHistoryMinAge}
	}
	return o
}

// PruneHistory removes the revisions retention no longer keeps, and the
// content only they referenced, oldest first; then it stores the content
// archived since its last run as deltas against older revisions (a one-line
// edit of a 10 KB item then costs tens of bytes, not kilobytes). Both run in
// transactions of at most pruneBatch entries; it stops between them when
// ctx ends. It returns how many revisions it removed.
func (s *Store) PruneHistory(ctx context.Context) (int, error) {
	removed, err := s.prune(ctx)
	if err != nil {
		return removed, err
	}
	return removed, s.repackBlobs(ctx)
}

// repackBlobs works through the repack queue, oldest first.
func (s *Store) repackBlobs(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		done := false
		err := s.db.Update(func(tx *bolt.Tx) error {
			t := s.newTxn(tx)
			var keys, ids [][]byte
			c := t.repack.Cursor()
			for k, v := c.First(); k != nil && len(keys) < pruneBatch; k, v = c.Next() {
				keys, ids = append(keys, bytes.Clone(k)), append(ids, bytes.Clone(v))
			}
			done = len(keys) < pruneBatch
			for i, k := range keys {
				if len(k) != 40 || len(ids[i]) != 24 {
					return fmt.Errorf("repack queue: malformed entry %x", k)
				}
				if err := t.repackOne(k[8:], ids[i][:16], int64(binary.BigEndian.Uint64(ids[i][16:]))); err != nil {
					return err
				}
				if err := t.repack.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("repack history: %w", err)
		}
		if done {
			return nil
		}
	}
}

// prune removes the revisions retention no longer keeps. Each batch is
// examined in a read transaction, so a run that finds nothing to drop
// writes (and syncs) nothing; the drops are checked again in the write.
func (s *Store) prune(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-s.retention.MinAge).UnixNano()
	keep := int64(s.retention.Keep)
	var start []byte
	removed := 0
	for {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		var drop [][]byte
		done := false
		err := s.db.View(func(tx *bolt.Tx) error {
			t := s.newTxn(tx)
			drop = drop[:0]
			c := t.revLog.Cursor()
			k, _ := c.First()
			if start != nil {
				k, _ = c.Seek(start)
			}
			for examined := 0; ; k, _ = c.Next() {
				if k == nil || int64(binary.BigEndian.Uint64(k[:8])) >= cutoff {
					done = true
					break
				}
				if examined == pruneBatch {
					break
				}
				examined++
				expired, err := t.expired(k, keep, cutoff)
				if err != nil {
					return err
				}
				if expired {
					drop = append(drop, bytes.Clone(k))
				}
			}
			start = bytes.Clone(k)
			return nil
		})
		n := 0
		if err == nil && len(drop) > 0 {
			err = s.db.Update(func(tx *bolt.Tx) error {
				t := s.newTxn(tx)
				n = 0
				for _, lk := range drop {
					if t.revLog.Get(lk) == nil {
						continue
					}
					// A write since the read may have changed the item.
					expired, err := t.expired(lk, keep, cutoff)
					if err != nil {
						return err
					}
					if !expired {
						continue
					}
					if err := t.dropRevision(lk); err != nil {
						return err
					}
					n++
				}
				return nil
			})
		}
		if err != nil {
			return removed, fmt.Errorf("prune history: %w", err)
		}
		removed += n
		if done {
			return removed, nil
		}
	}
}

// expired reports whether the revision at log key lk (older than cutoff)
// goes: it is not among its item's keep newest, or its item was deleted
// before cutoff and not restored, so a deleted item's history lasts MinAge
// after the delete and no longer.
func (t *txn) expired(lk []byte, keep, cutoff int64) (bool, error) {
	id, rev := lk[8:24], int64(binary.BigEndian.Uint64(lk[24:]))
	latest, err := t.latestRev(id)
	if err != nil {
		return false, err
	}
	gone := latest.deleted && latest.time < cutoff && t.items.Get(id) == nil
	return latest.rev-rev >= keep || gone, nil
}

// dropRevision removes the revision at log key lk with its index entries
// and references.
func (t *txn) dropRevision(lk []byte) error {
	key := lk[8:]
	rec, err := decodeRevRec(key, t.revs.Get(key))
	if err != nil {
		return fmt.Errorf("revision %x: %w", key, err)
	}
	if rec.deleted {
		dk := deletedKey(rec.drive, rec.path, rec.id)
		if v := t.deleted.Get(dk); len(v) == 8 && int64(binary.BigEndian.Uint64(v)) == rec.rev {
			if err := t.deleted.Delete(dk); err != nil {
				return err
			}
		}
	}
	latest, err := t.latestRev(rec.id)
	if err != nil {
		return err
	}
	held := true // it holds a reference to its archived content, unless it is pending
	if t.items.Get(rec.id) != nil {
		if p := t.pending(rec.id); rec.rev > latest.rev-p {
			held = false
			if err := t.setPending(rec.id, p-1); err != nil {
				return err
			}
		}
	}
	for _, err := range []error{
		t.revs.Delete(key),
		t.revLog.Delete(lk),
		t.revActor.Delete(append(actorPrefix(rec.actor), lk...)),
	} {
		if err != nil {
			return err
		}
	}
	if held {
		if err := t.addRefs(rec.id, rec.hash[:], -1, 0); err != nil {
			return err
		}
	}
	return t.unrefMeta(rec.id, rec.meta)
}

// openHistory runs in Open's transaction: it remembers that history is off,
// and reports whether a gap left while it was off needs closing.
func openHistory(meta *bolt.Bucket, off bool) (gap bool, err error) {
	has := meta.Get([]byte(keyHistoryGap)) != nil
	if off && !has {
		return false, meta.Put([]byte(keyHistoryGap), []byte{1})
	}
	return !off && has, nil
}

// closeHistoryGap records a baseline revision of every item that changed
// while history was off, in bounded transactions, then clears the gap mark.
func (s *Store) closeHistoryGap() error {
	var start []byte
	for {
		done := false
		err := s.db.Update(func(tx *bolt.Tx) error {
			t := s.newTxn(tx)
			c := t.items.Cursor()
			k, _ := c.First()
			if start != nil {
				k, _ = c.Seek(start)
			}
			var ids [][]byte
			for ; k != nil && len(ids) < pruneBatch; k, _ = c.Next() {
				ids = append(ids, bytes.Clone(k))
			}
			if k == nil {
				done = true
			} else {
				start = bytes.Clone(k)
			}
			for _, id := range ids {
				prev, err := t.prevState(id)
				if err != nil {
					return err
				}
				latest, err := t.latestRev(id)
				if err != nil {
					return err
				}
				if latest.rev == 0 {
					continue // never recorded: its first change records it
				}
				if _, err := t.baseline(id, prev); err != nil {
					return err
				}
			}
			if done {
				return tx.Bucket([]byte(bucketMeta)).Delete([]byte(keyHistoryGap))
			}
			return nil
		})
		if err != nil || done {
			return err
		}
	}
}

// verifyHistory checks history against the items: every revision has its
// index entries and metadata, an item's pending revisions have its current
// content, every other revision's content is an archive entry of its item
// (found by the item's hash index, which names exactly its entries) holding
// the bytes of its hash, deltas have bases of the same item, shared blobs
// hold their hash's bytes, reference and base-use counts match the
// references, deleted entries name a
// delete revision of an item that is gone, and (unless history was off)
// every live item with revisions has a latest revision recording it as it is.
func (t *txn) verifyHistory(ctx context.Context) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf("history: "+format, args...)) }
	blobRefs := map[[32]byte]int64{} // shared blob -> entries naming it
	entryRefs := map[string]int64{}  // id | hash -> references to the item's entry
	baseUses := map[string]int64{}   // id | hash -> deltas based on the item's entry
	metaRefs := map[string]int64{}   // meta key -> references
	latest := map[string]revRec{}
	var revs []revRec
	nRevs := 0
	c := t.revs.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if !isRevKey(k) {
			continue
		}
		if nRevs++; nRevs%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r, err := decodeRevRec(k, v)
		if err != nil {
			fail("revision %x: %v", k, err)
			continue
		}
		revs = append(revs, r)
		metaRefs[string(metaKey(r.id, r.meta))]++
		lk := logKey(r.time, r.id, r.rev)
		if t.revLog.Get(lk) == nil {
			fail("revision %x: not in the time index", k)
		}
		if t.revActor.Get(append(actorPrefix(r.actor), lk...)) == nil {
			fail("revision %x: not in the actor index", k)
		}
		latest[string(r.id)] = r
	}
	for name, b := range map[string]*bolt.Bucket{"time": t.revLog, "actor": t.revActor} {
		if n := b.Stats().KeyN; n != nRevs {
			fail("%d %s index entries for %d revisions", n, name, nRevs)
		}
	}
	gap := t.tx.Bucket([]byte(bucketMeta)).Get([]byte(keyHistoryGap)) != nil
	items := map[string]*Item{}
	for id, r := range latest {
		if t.items.Get([]byte(id)) == nil {
			continue
		}
		it, err := t.item([]byte(id))
		if err != nil {
			fail("%v", err)
			continue
		}
		items[id] = &it
		if !gap && !matchesLatest(r, &it) {
			fail("%s: latest revision %d (%s, %x) does not record the item (%s)", it.Ref(), r.rev, r.op, r.hash, it.ContentHash)
		}
	}
	for _, r := range revs {
		id := string(r.id)
		it := items[id]
		if it != nil && r.rev > latest[id].rev-t.pending(r.id) {
			if hex.EncodeToString(r.hash[:]) != it.ContentHash {
				fail("%s: pending revision %d does not have the item's content", it.Ref(), r.rev)
			}
			continue
		}
		entryRefs[id+string(r.hash[:])]++
	}
	type entryAt struct{ k, v []byte }
	var entries []entryAt
	indexed := map[string][]byte{} // id | hash -> rev of the index
	for k, v := c.First(); k != nil; k, v = c.Next() {
		switch {
		case isRevKey(k):
		case isEntryKey(k):
			entries = append(entries, entryAt{k, v})
		case isIndexKey(k):
			indexed[string(k[:16])+string(k[18:])] = v
		case len(k) == 18 && k[16] == 0xff && k[17] == 'p':
			id := string(k[:16])
			if n := t.pending(k[:16]); n <= 0 || items[id] == nil || n > latest[id].rev {
				fail("item %x: pending count %d for an item that is gone or has fewer revisions", k[:16], n)
			}
		case len(k) == 26 && k[16] == 0xff && k[17] == 'm':
			var m Item
			if len(v) < 8 || metaID(v[8:]) != [8]byte(k[18:]) || json.Unmarshal(v[8:], &m) != nil {
				fail("item %x: metadata %x is corrupt", k[:16], k[18:])
			} else if n := int64(binary.BigEndian.Uint64(v)); n != metaRefs[string(k)] {
				fail("item %x: metadata %x has reference count %d, but %d references", k[:16], k[18:], n, metaRefs[string(k)])
			}
			delete(metaRefs, string(k))
		default:
			fail("unknown key %x in the revisions", k)
		}
	}
	for k := range metaRefs { // not stored: the record's, so the item must live
		if items[k[:16]] == nil {
			fail("item %x: revisions reference missing metadata %x", k[:16], k[18:])
		} else if _, err := t.metaOfRecord([]byte(k[:16]), [8]byte([]byte(k[18:]))); err != nil {
			fail("%v", err)
		}
	}
	byRev := map[string][]byte{} // id | rev -> hash the index gives it
	for ih, rev := range indexed {
		byRev[ih[:16]+string(rev)] = []byte(ih[16:])
	}
	var decoded []entry
	for _, ea := range entries {
		id := ea.k[:16]
		hash := byRev[string(ea.k[:24])]
		if hash == nil {
			fail("item %x: content archived at %x is not indexed", id, ea.k[16:24])
			continue
		}
		delete(indexed, string(id)+string(hash))
		e, err := decodeEntry(ea.k, ea.v, hash)
		if err != nil {
			fail("%v", err)
			continue
		}
		decoded = append(decoded, e)
		if base := e.base(); base != nil {
			entryRefs[string(id)+string(base)]++
			baseUses[string(id)+string(base)]++
		}
		if e.kind == blobShared {
			blobRefs[e.hash]++
		}
	}
	for i, e := range decoded {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		id := e.key[:16]
		ih := string(id) + string(e.hash[:])
		if e.refs != entryRefs[ih] {
			fail("item %x: content %x has reference count %d, but %d references", id, e.hash, e.refs, entryRefs[ih])
		}
		if e.uses != baseUses[ih] {
			fail("item %x: content %x is the base of %d deltas by its count, but of %d", id, e.hash, e.uses, baseUses[ih])
		}
		delete(entryRefs, ih)
		delete(baseUses, ih)
		if base := e.base(); base != nil {
			b, ok, err := t.entryOf(id, base)
			switch {
			case err != nil || !ok:
				fail("item %x: content %x: delta base %x is missing (%v)", id, e.hash, base, err)
			case e.kind == blobDelta && !b.whole():
				fail("item %x: content %x: delta base %x is not stored whole", id, e.hash, base)
			case e.kind == blobTrim && e.depth() != b.depth()+1:
				fail("item %x: content %x: depth %d on a base of depth %d", id, e.hash, e.depth(), b.depth())
			}
		}
		if _, err := t.blobContent(id, e.hash[:]); err != nil {
			fail("%v", err)
		}
	}
	for ih, v := range indexed {
		fail("item %x: index of content %x names %x, which holds no entry", ih[:16], ih[16:], v)
	}
	for ih, n := range entryRefs {
		fail("item %x: %d references to content %x, which is not archived", ih[:16], n, ih[16:])
	}
	for ih, n := range baseUses {
		fail("item %x: %d deltas based on content %x, which is not archived", ih[:16], n, ih[16:])
	}
	bc := t.blobs.Cursor()
	for k, v := bc.First(); k != nil; k, v = bc.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(k) != 33 || (k[32] != 0 && k[32] != 1) {
			fail("malformed blob key %x", k)
			continue
		}
		h := [32]byte(k[:32])
		if k[32] == 1 {
			if t.blobs.Get(blobKey(h[:], 0)) == nil {
				fail("reference count of missing blob %x", h)
			}
			if len(v) != 8 || int64(binary.BigEndian.Uint64(v)) != blobRefs[h] {
				fail("blob %x: reference count %x, but %d references", h, v, blobRefs[h])
			}
			delete(blobRefs, h)
			continue
		}
		if t.blobs.Get(blobKey(h[:], 1)) == nil {
			fail("blob %x has no reference count", h)
		}
		if len(v) < 1 || v[0] != blobZstd {
			fail("blob %x is not stored whole", h)
			continue
		}
		if out, err := zdecode(v[1:], nil); err != nil {
			fail("blob %x: %v", h, err)
		} else if sha256.Sum256(out) != h {
			fail("blob %x: content does not match its hash", h)
		}
	}
	for h, n := range blobRefs {
		fail("blob %x: %d references but no blob", h, n)
	}
	dc := t.deleted.Cursor()
	for k, v := dc.First(); k != nil; k, v = dc.Next() {
		if len(k) < 17 || len(v) != 8 {
			fail("malformed deleted entry %x", k)
			continue
		}
		id := k[len(k)-16:]
		r, ok := latest[string(id)]
		switch {
		case t.items.Get(id) != nil:
			fail("deleted entry %x: the item lives", k)
		case !ok || !r.deleted || r.rev != int64(binary.BigEndian.Uint64(v)):
			fail("deleted entry %x: not the item's latest revision, a delete", k)
		case !bytes.Equal(k, deletedKey(r.drive, r.path, id)):
			fail("deleted entry %x: not at the deleted item's path", k)
		}
	}
	return errors.Join(errs...)
}
