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
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
)

// revPos locates one of an item's revision records, or an archive entry:
// the time its key starts with and a revision number. A record's key is
// logKey(time, id, rev) (time: the revision's); an entry's is that key and
// 1, where rev is the revision being recorded when the content was archived.
type revPos struct{ time, rev int64 }

func (p revPos) key(id []byte) []byte      { return logKey(p.time, id, p.rev) }
func (p revPos) entryKey(id []byte) []byte { return append(p.key(id), 1) }

// appendPos appends p as time (8) | rev (8).
func appendPos(b []byte, p revPos) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, uint64(p.time)), uint64(p.rev))
}

// decodePos decodes appendPos's 16 bytes.
func decodePos(b []byte) revPos {
	return revPos{int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:]))}
}

// posOfKey is the position of the record or entry at key k.
func posOfKey(k []byte) revPos {
	return revPos{int64(binary.BigEndian.Uint64(k)), int64(binary.BigEndian.Uint64(k[24:32]))}
}

// revRec is a decoded revision record, keyed time (8) | id (16) | rev (8).
// Layout: version (1) | flags (1) | uvarint size | uvarint lines | hash (32) |
// meta id (8) | prev (8) | op, actor, drive, path as uvarint length | bytes |
// uvarint length | back times, each a varint step down from the one before
// (prev first) | archived and entry, each time (8) | uvarint rev.
type revRec struct {
	deleted     bool
	time        int64
	size, lines int64
	hash        [32]byte
	meta        [8]byte // metaID of the metadata snapshot
	// prev is the time of revision rev-1's record: the item's revisions
	// form a chain from its head (itemHead), so that a write appends its
	// revision at the end of the history, beside the others of its
	// transaction, whatever item it changes. A record missing at prev was
	// pruned: the chain ends there.
	prev        int64
	back        revBack
	op, actor   string
	drive, path string
	// entry is the archive entry holding this revision's content, or rev 0
	// while the revision is pending: its content is its live item's
	// current content. A record is written once: its entry is stored in it
	// only when known then (a delete's, a conversion's) or when history is
	// off. Else it follows from the revision after it (revsDown): the
	// same entry when that has the same content, else that one's archived.
	entry revPos
	// archived is the entry this revision's write archived the content it
	// replaced in: that of the revisions before it back to the previous
	// content change. So a write names it in its own record instead of
	// rewriting the records of the revisions that had it.
	archived revPos
	id       []byte
	rev      int64
}

// revRecVersion 3 keys records by time and chains them; versions 1 and 2
// (keyed by item) are converted on open (history_migrate.go).
const revRecVersion = 3

func (r *revRec) pos() revPos { return revPos{r.time, r.rev} }
func (r *revRec) tip() revTip { return revTip{r.pos(), r.back.after(r.rev, r.prev)} }
func (r *revRec) key() []byte { return logKey(r.time, r.id, r.rev) }

// backLinks is how many revisions past prev a record names the times of,
// so that a walk down an item's chain reads the next backLinks+1 records
// in one round trip on a backend of round trips (revsDown).
const backLinks = 8

// revBack is the times of revisions rev-2, rev-3, … of a record's item,
// nearest first: as many as it has, up to backLinks.
type revBack struct {
	n int
	t [backLinks]int64
}

// after is the revBack of the revision recorded after one at rev, with
// prev and back b.
func (b revBack) after(rev, prev int64) revBack {
	var out revBack
	if rev < 2 {
		return out // rev names no revision before it
	}
	out.t[0] = prev
	out.n = 1 + copy(out.t[1:], b.t[:b.n])
	return out
}

// appendBack appends the encoding of b, the back times of a record with prev.
func appendBack(dst []byte, b revBack, prev int64) []byte {
	var enc [backLinks * binary.MaxVarintLen64]byte
	e, last := enc[:0], prev
	for _, tm := range b.t[:b.n] {
		e, last = binary.AppendVarint(e, last-tm), tm
	}
	return append(binary.AppendUvarint(dst, uint64(len(e))), e...)
}

// decodeBack decodes the back times of a record with prev; malformed
// bytes end them (they only tell a walk what to read ahead, and Verify
// checks them against the chain).
func decodeBack(enc []byte, prev int64) revBack {
	var b revBack
	last := prev
	for b.n < backLinks && len(enc) > 0 {
		d, n := binary.Varint(enc)
		if n <= 0 {
			break
		}
		last -= d
		b.t[b.n], b.n, enc = last, b.n+1, enc[n:]
	}
	return b
}

// revTip is what appending after an item's latest revision takes from it:
// its position, and the back times of the record appended.
type revTip struct {
	pos  revPos
	back revBack
}

func (r *revRec) encode() []byte {
	b := make([]byte, 0, 112+len(r.op)+len(r.actor)+len(r.drive)+len(r.path))
	var flags byte
	if r.deleted {
		flags = 1
	}
	b = append(b, revRecVersion, flags)
	b = binary.AppendUvarint(b, uint64(r.size))
	b = binary.AppendUvarint(b, uint64(r.lines))
	b = append(b, r.hash[:]...)
	b = append(b, r.meta[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(r.prev))
	for _, s := range []string{r.op, r.actor, r.drive, r.path} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = appendBack(b, r.back, r.prev)
	return appendEntryRef(appendEntryRef(b, r.archived), r.entry)
}

// appendEntryRef appends the entry a record names: time (8) | uvarint rev.
func appendEntryRef(b []byte, p revPos) []byte {
	return binary.AppendUvarint(binary.BigEndian.AppendUint64(b, uint64(p.time)), uint64(p.rev))
}

var errBadRecord = errors.New("malformed revision record")

func decodeRevRec(k, v []byte) (revRec, error) {
	l, err := decodeRevLink(k, v)
	if err != nil {
		return revRec{}, err
	}
	return l.record(), nil
}

// record is the revRec of l, copied out of the transaction.
func (l *revLink) record() revRec {
	return revRec{id: bytes.Clone(l.key[8:24]), rev: l.rev, time: l.time,
		deleted: l.deleted, size: l.size, lines: l.lines, hash: l.hash, meta: l.meta, prev: l.prev, back: decodeBack(l.back, l.prev), entry: l.entry, archived: l.archived,
		op: string(l.strs[0]), actor: string(l.strs[1]), drive: string(l.strs[2]), path: string(l.strs[3])}
}

// logKey is the time-ordered key of a revision: time (8) | id (16) | rev (8).
func logKey(tm int64, id []byte, rev int64) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 33), uint64(max(tm, 0)))
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
// for good: history (by time), and what is keyed by item id (time-ordered
// UUIDv7) or outbox sequence.
func (t *txn) setFillPercent() {
	t.revActor.SetFillPercent(1)
	t.revs.SetFillPercent(1)
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

// isRevKey tells revision records from the other keys of the history
// bucket: archive entries (33 bytes) and metadata snapshots (26).
func isRevKey(k []byte) bool { return len(k) == 32 }

// isMetaKey tells metadata snapshot keys (metaKey).
func isMetaKey(k []byte) bool { return len(k) == 26 && k[16] == 0xff && k[17] == 'm' }

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
	k, v, err := t.latestKey(id)
	if k == nil || err != nil {
		return revRec{}, err
	}
	return decodeRevRec(k, v)
}

// latestLink is latestRev for the write path, which needs less of it.
func (t *txn) latestLink(id []byte) (revLink, error) {
	k, v, err := t.latestKey(id)
	if k == nil || err != nil {
		return revLink{}, err
	}
	return decodeRevLink(k, v)
}

// latestKey returns the key and record of id's newest revision, or nils.
func (t *txn) latestKey(id []byte) (k, v []byte, err error) {
	head, ok := t.itemHead(id)
	if !ok {
		return nil, nil, nil
	}
	k = head.key(id)
	if v = t.revs.Get(k); v == nil {
		return nil, nil, fmt.Errorf("history: the latest revision %d of item %x is missing", head.rev, id)
	}
	return k, v, nil
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
	// Pending revisions (the latest is one) need the content this write
	// replaces, archived beside the revision this write appends, which
	// names it.
	var archived revPos
	if exists && latest.rev > 0 && latest.entry.rev == 0 && content != nil && hex.EncodeToString(latest.hash[:]) != it.ContentHash {
		if archived, _, err = t.archive(latest.hash, u, revPos{t.histNow(), latest.rev + 1}, t.content.Get(u), 0, t.historyOff); err != nil {
			return false, err
		}
	}
	if t.historyOff {
		return false, nil
	}
	settled = !exists || t.metaSettled(u, latest.meta, meta)
	return settled, t.appendRev(u, latest.tip(), it, meta, revPos{}, archived, t.operation(), t.actor.Name, t.histNow())
}

// recordRemove records the deletion of item u, before it is removed.
func (t *txn) recordRemove(u []byte) error {
	if t.historyOff {
		latest, err := t.latestRev(u)
		if err != nil || latest.rev == 0 || latest.entry.rev != 0 {
			return err
		}
		_, _, err = t.archive(latest.hash, u, revPos{t.histNow(), latest.rev + 1}, t.content.Get(u), 0, true)
		return err
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
	// The delete revision too keeps the content, which is going: it names
	// the entry itself, and the pending revisions before it, which have the
	// same content, follow it.
	del := revPos{t.histNow(), latest.rev + 1}
	e, _, err := t.archive(latest.hash, u, del, prev.content, 1, false)
	if err != nil {
		return err
	}
	if err := t.appendRev(u, latest.tip(), &prev.it, nil, e, revPos{}, t.operation(), t.actor.Name, t.histNow()); err != nil {
		return err
	}
	return t.deleted.Put(deletedKey(prev.it.Drive, prev.it.Path, u), appendPos(nil, del))
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
	if err := t.appendRev(u, latest.tip(), &prev.it, nil, revPos{}, revPos{}, OpBaseline, "", tm); err != nil {
		return revRec{}, err
	}
	return t.latestRev(u)
}

// matchesLatest reports whether latest records it as it is.
func matchesLatest(latest revRec, it *Item) bool {
	return latest.rev > 0 && !latest.deleted && hex.EncodeToString(latest.hash[:]) == it.ContentHash &&
		latest.drive == it.Drive && latest.path == it.Path
}

// appendRev stores the revision of item u after latest (its latest
// revision; rev 0 when it has none) with it's content hash and metadata
// (meta: it's metadata snapshot, or nil to encode it here), its log entry,
// and makes it u's head. A delete's revision names its content's entry
// (deleted); any other is pending: its content is (or is about to be) u's
// current content. archived is the entry of the content the write replaced.
func (t *txn) appendRev(u []byte, latest revTip, it *Item, meta []byte, deleted, archived revPos, op, actor string, tm int64) error {
	if op == "" {
		return fmt.Errorf("history: change of %s names no operation", it.Ref())
	}
	r := revRec{deleted: deleted.rev != 0, entry: deleted, archived: archived, time: max(tm, 0), size: it.Size, lines: it.LineCount,
		op: op, actor: actor, drive: it.Drive, path: it.Path, id: u, rev: latest.pos.rev + 1, prev: latest.pos.time, back: latest.back}
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
	if v := t.revs.Get(mk); len(v) >= 8 || r.deleted {
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
	k := r.key()
	if err := t.revs.Put(k, r.encode()); err != nil {
		return fmt.Errorf("put revision: %w", err)
	}
	if err := t.revActor.Put(append(actorPrefix(actor), k...), nil); err != nil {
		return fmt.Errorf("put revision log: %w", err)
	}
	t.setItemHead(u, r.pos())
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
	t.revsDown(u, func(r revLink) bool { // a broken chain counts what it reached
		if r.meta == h {
			n++
		}
		return true
	})
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

// Archived content. An item's superseded content is kept in the history
// bucket beside the revision the write that superseded it appends, so that
// archiving touches the page that record lands on anyway:
//
//	time (8) | id | rev (8) | 1  -> uvarint refs | uvarint uses | kind (1) | SHA-256 (32) | payload
//
// where time and rev are those of the revision being appended (revPos),
// which names it (revRec.archived; a delete's, revRec.entry), so a write
// adds no key away from the end of the history. refs counts the item's
// revisions (not pending) whose content it holds (as revsDown resolves
// them) plus the item's entries that are deltas
// against it; uses counts the latter. Content an item had a few revisions
// before is found among those revisions and shares their entry; content
// that comes back later is archived again, as a delta like any other.
// Content whose compressed form is larger than maxInlineBlob is stored once
// per SHA-256 in the blobs bucket, shared by every item that had it, and
// its entries are blobShared; deltas are always an item's own, against an
// entry of the same item.
