package vfs

// Converting the history of a store written by an earlier ctxd (schema
// version 1) on open: there each item's archive entries were found through
// a hash index under its prefix (id | 0xff 'x' | SHA-256 -> rev) and its
// pending revisions counted by a key (id | 0xff 'p'); entries held no hash
// and deltas named their base by hash. Now revision records name their
// entry, entries hold their hash and deltas name their base by revision,
// so a write adds no key away from its item's latest pages.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/ctxd/ctxd/vfs/backend"
)

// keyHistoryMigrate (in meta) is set while the conversion runs: the id of
// the next item whose history is converted.
const keyHistoryMigrate = "history_migrate"

// migrateKeys bounds the revisions keys one conversion transaction
// rewrites (an item's are converted in one, however many it has).
const migrateKeys = 10000

// startHistoryMigration runs in Open's transaction on a store of schema
// version 1: it marks its history as still to convert (the schema version
// says the current one from the start, so an earlier ctxd refuses a
// half-converted store).
func startHistoryMigration(meta backend.Bucket) error {
	return meta.Put([]byte(keyHistoryMigrate), []byte{})
}

// dropTimeIndex runs in Open's transaction on a store of schema version 1
// or 2: it drops the time index of revisions, which the log by actor
// replaces (Log merges the actors' ranges), and marks the store current.
func dropTimeIndex(tx backend.Tx, meta backend.Bucket) error {
	if tx.Bucket([]byte(bucketRevLog)) != nil {
		if err := tx.DeleteBucket([]byte(bucketRevLog)); err != nil {
			return fmt.Errorf("drop the revision time index: %w", err)
		}
	}
	return meta.Put([]byte(keySchema), []byte(strconv.Itoa(schemaVersion)))
}

// migrateHistory converts the history of every item from where the last
// run stopped, in transactions of about migrateKeys keys, then clears the mark.
func (s *Store) migrateHistory(ctx context.Context) error {
	for {
		done := false
		err := s.db.Update(ctx, func(tx backend.Tx) error {
			t := s.newTxn(tx)
			meta := tx.Bucket([]byte(bucketMeta))
			next := meta.Get([]byte(keyHistoryMigrate))
			if next == nil {
				done = true
				return nil
			}
			start := bytes.Clone(next)
			for n := 0; n < migrateKeys; {
				k, _ := t.revs.Cursor().Seek(start)
				if k == nil {
					done = true
					return meta.Delete([]byte(keyHistoryMigrate))
				}
				if len(k) < 16 {
					return fmt.Errorf("history: malformed key %x", k)
				}
				id := bytes.Clone(k[:16])
				converted, err := t.migrateItemHistory(id)
				if err != nil {
					return err
				}
				n += converted
				start = append(id, 0xff, 0xff) // past every key of id
			}
			return meta.Put([]byte(keyHistoryMigrate), start)
		})
		if err != nil {
			return fmt.Errorf("convert the history of a store from an earlier ctxd: %w", err)
		}
		if done {
			return nil
		}
	}
}

// migrateItemHistory converts item u's revisions keys and returns how many
// it read.
func (t *txn) migrateItemHistory(u []byte) (int, error) {
	type kv struct{ k, v []byte }
	var recs, entries []kv
	index := map[[32]byte]int64{} // hash -> rev of its entry
	byRev := map[int64][32]byte{} // rev of an entry -> its hash
	var pending int64
	var drop [][]byte
	c := t.revs.Cursor()
	n := 0
	for k, v := c.Seek(u); k != nil && bytes.HasPrefix(k, u); k, v = c.Next() {
		n++
		switch {
		case isRevKey(k):
			recs = append(recs, kv{bytes.Clone(k), bytes.Clone(v)})
		case isEntryKey(k):
			entries = append(entries, kv{bytes.Clone(k), bytes.Clone(v)})
		case len(k) == 50 && k[16] == 0xff && k[17] == 'x' && len(v) == 8:
			rev := int64(binary.BigEndian.Uint64(v))
			index[[32]byte(k[18:])], byRev[rev] = rev, [32]byte(k[18:])
			drop = append(drop, bytes.Clone(k))
		case len(k) == 18 && k[16] == 0xff && k[17] == 'p' && len(v) == 8:
			pending = int64(binary.BigEndian.Uint64(v))
			drop = append(drop, bytes.Clone(k))
		}
	}
	for _, e := range entries {
		rev := int64(binary.BigEndian.Uint64(e.k[16:24]))
		hash, ok := byRev[rev]
		if !ok {
			return 0, fmt.Errorf("history: item %x: archived content %d is not indexed", u, rev)
		}
		v, err := migrateEntry(e.v, hash, index)
		if err != nil {
			return 0, fmt.Errorf("history: item %x: archived content %d: %w", u, rev, err)
		}
		if err := t.revs.Put(e.k, v); err != nil {
			return 0, err
		}
	}
	live := t.items.Get(u) != nil
	for i, rk := range recs {
		r, err := decodeRevRecVersion(rk.k, rk.v, 1)
		if err != nil {
			return 0, fmt.Errorf("history: revision %x: %w", rk.k, err)
		}
		if !live || int64(len(recs)-i) > pending { // else pending: the item's content
			var ok bool
			if r.entry, ok = index[r.hash]; !ok {
				return 0, fmt.Errorf("history: item %x: content %x of revision %d is not archived", u, r.hash, r.rev)
			}
		}
		if err := t.putRevRec(&r); err != nil {
			return 0, err
		}
	}
	for _, k := range drop {
		if err := t.revs.Delete(k); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// migrateEntry converts a version 1 archive entry value (uvarint refs |
// uvarint uses | kind | payload, a delta's payload starting with its base's
// hash) holding content hash.
func migrateEntry(v []byte, hash [32]byte, index map[[32]byte]int64) ([]byte, error) {
	head := 0
	for range 2 {
		_, n := binary.Uvarint(v[head:])
		if n <= 0 {
			return nil, errBadRecord
		}
		head += n
	}
	if len(v) <= head {
		return nil, errBadRecord
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
