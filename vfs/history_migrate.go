package vfs

// Converting the history of a store written by an earlier ctxd on open.
// Up to schema version 3 revisions were kept by item, in bucketRevsByItem:
// id | rev (8) -> record (its time in the value, its entry a uvarint rev),
// id | rev | 1 -> archived content (delta bases named by rev (8)), and the
// metadata snapshots; a write then added its revision on a page of its own
// item's. Schema version 1 also indexed archived content by hash (id |
// 0xff 'x' | SHA-256 -> rev) and counted pending revisions (id | 0xff 'p');
// its records named no entry, its entries held no hash and deltas named
// their base by hash. Now history is kept in time order (bucketRevs), each
// record naming the time of the one before, an item's latest named by its
// head (history_head.go).

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/ctxd/ctxd/vfs/backend"
)

// keyHistoryMigrate (in meta) marks a store of schema version 1 whose
// history is still to convert: its records and entries are version 1.
const keyHistoryMigrate = "history_migrate"

// migrateKeys bounds the legacy keys one conversion transaction rewrites
// (an item's are converted in one, however many it has).
const migrateKeys = 10000

var nameRevsByItem = []byte(bucketRevsByItem)

// startHistoryMigration runs in Open's transaction on a store of schema
// version 1: it marks its history as version 1 until it is converted.
func startHistoryMigration(meta backend.Bucket) error {
	return meta.Put([]byte(keyHistoryMigrate), []byte{})
}

// dropTimeIndex runs in Open's transaction on a store of schema version 1
// or 2: it drops the time index of revisions, which the log by actor
// replaces (Log merges the actors' ranges).
func dropTimeIndex(tx backend.Tx) error {
	if tx.Bucket([]byte(bucketRevLog)) != nil {
		if err := tx.DeleteBucket([]byte(bucketRevLog)); err != nil {
			return fmt.Errorf("drop the revision time index: %w", err)
		}
	}
	return nil
}

// migrateHistory converts the history kept by item into the time-ordered
// history: first what names revisions from outside it (deleted entries and
// the repack queue), then item after item, in transactions of about
// migrateKeys keys, each dropping what it converted; then it drops the
// legacy bucket. A run that stopped resumes where it stopped.
func (s *Store) migrateHistory(ctx context.Context) error {
	err := s.db.Update(ctx, func(tx backend.Tx) error {
		return s.newTxn(tx).migrateHistoryRefs(tx.Bucket(nameRevsByItem))
	})
	for err == nil {
		done := false
		err = s.db.Update(ctx, func(tx backend.Tx) error {
			t := s.newTxn(tx)
			meta := tx.Bucket([]byte(bucketMeta))
			legacy := tx.Bucket(nameRevsByItem)
			v1 := meta.Get([]byte(keyHistoryMigrate)) != nil
			for n := 0; n < migrateKeys; {
				k, _ := legacy.Cursor().First()
				if k == nil {
					done = true
					if err := tx.DeleteBucket(nameRevsByItem); err != nil {
						return err
					}
					return meta.Delete([]byte(keyHistoryMigrate))
				}
				if len(k) < 16 {
					return fmt.Errorf("history: malformed key %x", k)
				}
				converted, err := t.migrateItemHistory(legacy, bytes.Clone(k[:16]), v1)
				if err != nil {
					return err
				}
				n += converted
			}
			return nil
		})
		if done {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("convert the history of a store from an earlier ctxd: %w", err)
	}
	return nil
}

// legacyTime returns the time of revision rev of item id in legacy, or 0
// when it is gone (pruned): the time a converted entry of that revision is
// keyed by, whichever of the conversions below asks.
func legacyTime(legacy backend.Bucket, id []byte, rev int64) int64 {
	v := legacy.Get(binary.BigEndian.AppendUint64(bytes.Clone(id), uint64(rev)))
	if len(v) < 10 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v[2:10]))
}

// migrateHistoryRefs converts the deleted entries (rev (8) -> appendPos)
// and the repack queue (id | rev -> a key of the history); values already
// converted are left as they are.
func (t *txn) migrateHistoryRefs(legacy backend.Bucket) error {
	type kv struct{ k, v []byte }
	var puts []kv
	c := t.deleted.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) == 8 && len(k) > 16 {
			rev := int64(binary.BigEndian.Uint64(v))
			puts = append(puts, kv{bytes.Clone(k), appendPos(nil, revPos{legacyTime(legacy, k[len(k)-16:], rev), rev})})
		}
	}
	for _, p := range puts {
		if err := t.deleted.Put(p.k, p.v); err != nil {
			return err
		}
	}
	puts = puts[:0]
	c = t.repack.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) == 24 {
			rev := int64(binary.BigEndian.Uint64(v[16:]))
			puts = append(puts, kv{bytes.Clone(k), revPos{legacyTime(legacy, v[:16], rev), rev}.key(v[:16])})
		}
	}
	for _, p := range puts {
		if err := t.repack.Put(p.k, p.v); err != nil {
			return err
		}
	}
	return nil
}

// legacyItem is an item's history as kept by item, decoded.
type legacyItem struct {
	recs    []revRec // by rev, entries named by rev (revRec.entry.time unset)
	entries map[int64][]byte
	metas   [][2][]byte
	keys    [][]byte // every key of the item, to drop
}

// migrateItemHistory converts item u's history from legacy (version 1
// records when v1) and returns how many legacy keys it read.
func (t *txn) migrateItemHistory(legacy backend.Bucket, u []byte, v1 bool) (int, error) {
	li, err := readLegacyItem(legacy, u, v1, t.items.Get(u) != nil)
	if err != nil {
		return 0, fmt.Errorf("history: item %x: %w", u, err)
	}
	times := map[int64]int64{}
	for _, r := range li.recs {
		times[r.rev] = r.time
	}
	at := func(rev int64) revPos { return revPos{times[rev], rev} }
	if err := uncountTrims(li.entries); err != nil {
		return 0, fmt.Errorf("history: item %x: %w", u, err)
	}
	for rev, v := range li.entries {
		v, err := convertEntry(v, at)
		if err != nil {
			return 0, fmt.Errorf("history: item %x: archived content %d: %w", u, rev, err)
		}
		if err := t.revs.Put(at(rev).entryKey(u), v); err != nil {
			return 0, err
		}
	}
	for _, r := range li.recs {
		r.prev = times[r.rev-1]
		for i := range backLinks {
			tm, ok := times[r.rev-2-int64(i)]
			if !ok {
				break
			}
			r.back.t[i], r.back.n = tm, i+1
		}
		if r.entry.rev != 0 {
			r.entry = at(r.entry.rev)
		}
		if err := t.revs.Put(r.key(), r.encode()); err != nil {
			return 0, err
		}
	}
	for _, m := range li.metas {
		if err := t.revs.Put(m[0], m[1]); err != nil {
			return 0, err
		}
	}
	if len(li.recs) > 0 {
		head := li.recs[len(li.recs)-1].pos()
		if v := t.items.Get(u); v != nil {
			err = t.items.Put(u, withHead(recordJSON(v), head))
		} else {
			err = t.revHeads.Put(u, appendPos(nil, head))
		}
		if err != nil {
			return 0, err
		}
	}
	for _, k := range li.keys {
		if err := legacy.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(li.keys), nil
}

// readLegacyItem reads item u's legacy history; live says whether the item
// has a record (its pending revisions, in version 1, are its newest).
func readLegacyItem(legacy backend.Bucket, u []byte, v1, live bool) (legacyItem, error) {
	li := legacyItem{entries: map[int64][]byte{}}
	type kv struct{ k, v []byte }
	var recs []kv
	index := map[[32]byte]int64{} // version 1: hash -> rev of its entry
	byRev := map[int64][32]byte{} // version 1: rev of an entry -> its hash
	var pending int64
	c := legacy.Cursor()
	for k, v := c.Seek(u); k != nil && bytes.HasPrefix(k, u); k, v = c.Next() {
		li.keys = append(li.keys, bytes.Clone(k))
		switch {
		case len(k) == 24:
			recs = append(recs, kv{bytes.Clone(k), bytes.Clone(v)})
		case len(k) == 25 && k[24] == 1:
			li.entries[int64(binary.BigEndian.Uint64(k[16:24]))] = bytes.Clone(v)
		case isMetaKey(k):
			li.metas = append(li.metas, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
		case v1 && len(k) == 50 && k[16] == 0xff && k[17] == 'x' && len(v) == 8:
			rev := int64(binary.BigEndian.Uint64(v))
			index[[32]byte(k[18:])], byRev[rev] = rev, [32]byte(k[18:])
		case v1 && len(k) == 18 && k[16] == 0xff && k[17] == 'p' && len(v) == 8:
			pending = int64(binary.BigEndian.Uint64(v))
		default:
			return li, fmt.Errorf("unknown key %x", k)
		}
	}
	if v1 {
		for rev, v := range li.entries {
			hash, ok := byRev[rev]
			if !ok {
				return li, fmt.Errorf("archived content %d is not indexed", rev)
			}
			var err error
			if li.entries[rev], err = migrateEntryV1(v, hash, index); err != nil {
				return li, fmt.Errorf("archived content %d: %w", rev, err)
			}
		}
	}
	for i, r := range recs {
		rec, err := decodeLegacyRec(r.k, r.v, v1)
		if err != nil {
			return li, fmt.Errorf("revision %x: %w", r.k, err)
		}
		if v1 && (!live || int64(len(recs)-i) > pending) { // else pending: the item's content
			rev, ok := index[rec.hash]
			if !ok {
				return li, fmt.Errorf("content %x of revision %d is not archived", rec.hash, rec.rev)
			}
			rec.entry.rev = rev
		}
		li.recs = append(li.recs, rec)
	}
	slices.SortFunc(li.recs, func(a, b revRec) int { return int(a.rev - b.rev) })
	return li, nil
}

// decodeLegacyRec decodes a record kept by item: version (1) | flags (1) |
// time (8) | uvarint size | uvarint lines | hash (32) | meta id (8) | op,
// actor, drive, path as uvarint length | bytes, and in version 2 | uvarint
// entry rev.
func decodeLegacyRec(k, v []byte, v1 bool) (revRec, error) {
	var r revRec
	version := byte(2)
	if v1 {
		version = 1
	}
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
	if v1 {
		return r, nil
	}
	x, n := binary.Uvarint(v)
	if n <= 0 || n != len(v) || x > math.MaxInt64 {
		return r, errBadRecord
	}
	r.entry.rev = int64(x)
	return r, nil
}

// convertEntry converts an entry value kept by item (a delta's base named
// by rev (8)) to name its base's position, at(rev).
func convertEntry(v []byte, at func(rev int64) revPos) ([]byte, error) {
	head, err := entryHeadLen(v)
	if err != nil {
		return nil, err
	}
	kind := v[head]
	if kind != blobDelta && kind != blobTrim {
		return v, nil
	}
	if len(v) < head+33+8 {
		return nil, errBadRecord
	}
	p := head + 33
	out := appendPos(bytes.Clone(v[:p]), at(int64(binary.BigEndian.Uint64(v[p:]))))
	return append(out, v[p+8:]...), nil
}

// uncountTrims takes the trim deltas out of the counts of their bases in
// an item's entries kept by item (by rev), which counted them: now only
// revisions and zstd deltas are counted (see adjustRefs).
func uncountTrims(entries map[int64][]byte) error {
	for rev, v := range entries {
		head, err := entryHeadLen(v)
		if err != nil {
			return fmt.Errorf("archived content %d: %w", rev, err)
		}
		if v[head] != blobTrim {
			continue
		}
		if len(v) < head+33+8 {
			return fmt.Errorf("archived content %d: %w", rev, errBadRecord)
		}
		base := int64(binary.BigEndian.Uint64(v[head+33:]))
		bv, ok := entries[base]
		if !ok {
			return fmt.Errorf("archived content %d: its delta base %d is missing", rev, base)
		}
		bhead, err := entryHeadLen(bv)
		if err != nil {
			return fmt.Errorf("archived content %d: %w", base, err)
		}
		refs, n := binary.Uvarint(bv)
		uses, _ := binary.Uvarint(bv[n:])
		if refs == 0 || uses == 0 {
			return fmt.Errorf("archived content %d: a trim delta is based on it but its counts are %d, %d", base, refs, uses)
		}
		entries[base] = append(binary.AppendUvarint(binary.AppendUvarint(nil, refs-1), uses-1), bv[bhead:]...)
	}
	return nil
}

// entryHeadLen is the length of an entry value's reference counts.
func entryHeadLen(v []byte) (int, error) {
	head := 0
	for range 2 {
		_, n := binary.Uvarint(v[head:])
		if n <= 0 {
			return 0, errBadRecord
		}
		head += n
	}
	if len(v) <= head {
		return 0, errBadRecord
	}
	return head, nil
}

// migrateEntryV1 converts a version 1 archive entry value (uvarint refs |
// uvarint uses | kind | payload, a delta's payload starting with its base's
// hash) holding content hash to the version kept by item (with its hash,
// a delta naming its base's rev).
func migrateEntryV1(v []byte, hash [32]byte, index map[[32]byte]int64) ([]byte, error) {
	head, err := entryHeadLen(v)
	if err != nil {
		return nil, err
	}
	kind, payload := v[head], v[head+1:]
	out := append(bytes.Clone(v[:head+1]), hash[:]...)
	if kind != blobDelta && kind != blobTrim {
		return append(out, payload...), nil
	}
	if len(payload) < 33 {
		return nil, errBadRecord
	}
	base, ok := index[[32]byte(payload[:32])]
	if !ok {
		return nil, fmt.Errorf("delta base %x is not archived", payload[:32])
	}
	return append(binary.BigEndian.AppendUint64(out, uint64(base)), payload[32:]...), nil
}
