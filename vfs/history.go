package vfs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ctxd/ctxd/vfs/backend"
)

// Bucket and key names of item history; see doc.go for the layout.
const (
	// bucketRevs holds the history in time order: time (8) | id (16) | rev
	// (8) -> revision record (naming the time of the item's previous one
	// and the entries of the content its write archived and, a delete's,
	// of its own); that key | 1 -> archived content (an entry, see
	// revPos); and per item id | 0xff 'm' | metaID (8) -> reference count
	// (8) | metadata snapshot (JSON; no entry while it is the item's record,
	// see detachMeta). A transaction's revisions, whatever items they
	// change, are appended to the same pages.
	bucketRevs = "history"
	// bucketRevsByItem is where stores of schema version 3 and earlier kept
	// revisions, keyed by item; Open converts it (history_migrate.go).
	bucketRevsByItem = "revisions"
	// bucketRevActor is the log: uvarint len | actor | time (8) | id (16) |
	// rev (8) -> empty. Log across actors merges their ranges, so a write
	// appends to one index, not two (one key and page fewer per commit).
	bucketRevActor = "revision_actors"
	// bucketRevLog is the time index that stores of schema version 2 and
	// earlier kept beside the log by actor; Open drops it.
	bucketRevLog  = "revision_log"
	bucketDeleted = "deleted" // drive | path key | 0xff | id (16) -> position (appendPos) of the delete revision
	// bucketBlobs holds superseded content stored whole that is too large
	// to keep under an item's prefix (see maxInlineBlob), shared by the
	// items that had it: SHA-256 (32) | 0 -> blobZstd | zstd frame, and
	// SHA-256 | 1 -> how many items' entries name it (8).
	bucketBlobs = "blobs"
	// bucketRepack queues content archive stored whole, for PruneHistory to
	// store as a delta: time (8) | SHA-256 (32) -> the key of its entry
	// without the final 1: time (8) | item id (16) | rev (8).
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
		if len(v) != 16 {
			continue
		}
		if tm := decodePos(v).time; best == nil || tm > bestTime {
			best, bestTime = bytes.Clone(k[len(prefix):]), tm
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
		var ferr error
		err = t.revsDown(h.id, func(l revLink) bool {
			if beforeRev > 0 && l.rev >= beforeRev {
				return true
			}
			rec := l.record()
			if !t.visibleRev(rec) { // made while the item lay outside the caller's access
				return true
			}
			r, err := t.revision(rec, metas)
			if err != nil {
				ferr = err
				return false
			}
			out = append(out, r)
			return len(out) < limit
		})
		if err != nil {
			return fmt.Errorf("history of %s: %w", h.ref, err)
		}
		return ferr
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
	rec, err := t.revisionDown(h.id, rev)
	if err != nil {
		return h, nil, fmt.Errorf("revision %d of %s: %w", rev, h.ref, err)
	}
	if rec == nil {
		ret := s.retention
		return h, nil, newError(ErrNotFound, h.ref,
			"call history to list the revisions kept; retention is set by history_keep and history_min_age (--history-keep, --history-min-age)",
			"Revision %d of %s was pruned: history keeps each item's last %d revisions and every revision younger than %s.", rev, h.ref, ret.Keep, ret.MinAge)
	}
	if !t.visibleRev(*rec) {
		return h, nil, newError(ErrNotFound, h.ref, "call history to list the revisions", "%s has no revision %d.", h.ref, rev)
	}
	return h, rec, nil
}

// revisionDown returns revision rev of item u, found down its chain; nil
// when the chain ends first (pruned).
func (t *txn) revisionDown(u []byte, rev int64) (*revRec, error) {
	var out *revRec
	err := t.revsDown(u, func(l revLink) bool {
		if l.rev == rev {
			r := l.record()
			out = &r
		}
		return l.rev > rev
	})
	return out, err
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
				if len(k) < 17 || len(v) != 16 {
					return fmt.Errorf("deleted: malformed entry %x", k)
				}
				r, ok, err := t.visibleRevisionAt(decodePos(v).key(k[len(k)-16:]), metas)
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
		prefixes := [][]byte{actorPrefix(q.Actor)}
		if q.Actor == "" {
			var err error
			if prefixes, err = t.logActors(); err != nil {
				return err
			}
		}
		log := newLogMerge(t.revActor, prefixes, start)
		metas := map[[8]byte]Item{}
		for lk := log.next(); lk != nil; lk = log.next() {
			if int64(binary.BigEndian.Uint64(lk[:8])) < since {
				break
			}
			if len(out) == limit {
				next = base64.RawURLEncoding.EncodeToString(out[len(out)-1].logKey())
				break
			}
			r, ok, err := t.visibleRevisionAt(lk, metas)
			if err != nil {
				return fmt.Errorf("revision log %x: %w", lk, err)
			}
			if ok {
				out = append(out, r)
			}
		}
		return log.err
	})
	return out, next, err
}

// logActors returns the key prefix of every actor in the log, from one
// seek per actor (a store has a few: the owner, its tokens, its watches).
func (t *txn) logActors() ([][]byte, error) {
	var out [][]byte
	c := t.revActor.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Seek(logEnd(out[len(out)-1], nil)) {
		prefix, _, err := splitLogKey(k)
		if err != nil {
			return nil, err
		}
		out = append(out, bytes.Clone(prefix))
	}
	return out, nil
}

// splitLogKey splits a key of the log into its actor prefix and its log
// key (time | id | rev).
func splitLogKey(k []byte) (prefix, lk []byte, err error) {
	n, w := binary.Uvarint(k)
	if w <= 0 || uint64(len(k)-w) != n+32 {
		return nil, nil, fmt.Errorf("revision log: malformed key %x", k)
	}
	return k[:len(k)-32], k[len(k)-32:], nil
}

// logEnd is the key right after every log key of prefix earlier than
// before (a log key; nil for all of them).
func logEnd(prefix, before []byte) []byte {
	if before == nil {
		before = bytes.Repeat([]byte{0xff}, 33)
	}
	return append(bytes.Clone(prefix), before...)
}

// logMerge walks the log ranges of several actors newest first, as one.
type logMerge struct {
	prefixes [][]byte
	curs     []backend.Cursor
	heads    [][]byte // per range, its current log key (time | id | rev); nil once done
	err      error    // a malformed key met
}

// newLogMerge positions a walk of prefixes' ranges below before (a log key,
// exclusive; nil for the newest).
func newLogMerge(b backend.Bucket, prefixes [][]byte, before []byte) *logMerge {
	m := &logMerge{prefixes: prefixes, curs: make([]backend.Cursor, len(prefixes)), heads: make([][]byte, len(prefixes))}
	for i, p := range prefixes {
		c := b.Cursor()
		k, _ := c.Seek(logEnd(p, before))
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		m.curs[i] = c
		m.set(i, k)
	}
	return m
}

// set makes k (a key of the bucket, or nil) range i's head while it is in the range.
func (m *logMerge) set(i int, k []byte) {
	p := m.prefixes[i]
	switch {
	case k == nil || !bytes.HasPrefix(k, p):
		m.heads[i] = nil
	case len(k) != len(p)+32:
		m.heads[i] = nil
		m.err = cmp.Or(m.err, fmt.Errorf("revision log: malformed key %x", k))
	default:
		m.heads[i] = k[len(p):]
	}
}

// next returns the newest log key not returned yet, or nil at the end
// (m.err tells a malformed key from the end).
func (m *logMerge) next() []byte {
	best := -1
	for i, h := range m.heads {
		if h != nil && (best < 0 || bytes.Compare(h, m.heads[best]) > 0) {
			best = i
		}
	}
	if best < 0 || m.err != nil {
		return nil
	}
	out := bytes.Clone(m.heads[best])
	k, _ := m.curs[best].Prev()
	m.set(best, k)
	return out
}

// logKey is the time index key of r, the position a Log page ends at.
func (r *Revision) logKey() []byte {
	id, _ := uuid.Parse(r.ItemID)
	return logKey(r.Time.UnixNano(), id[:], r.Rev)
}
