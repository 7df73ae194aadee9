package vfs

// Retention: PruneHistory drops what it no longer keeps and repacks whole
// archives as deltas; opening with history on again records the gap.

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ctxd/ctxd/vfs/backend"
)

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
		err := s.db.Update(ctx, func(tx backend.Tx) error {
			t := s.newTxn(tx)
			var keys, ids [][]byte
			c := t.repack.Cursor()
			for k, v := c.First(); k != nil && len(keys) < pruneBatch; k, v = c.Next() {
				keys, ids = append(keys, bytes.Clone(k)), append(ids, bytes.Clone(v))
			}
			done = len(keys) < pruneBatch
			for i, k := range keys {
				if len(k) != 40 || len(ids[i]) != 32 {
					return fmt.Errorf("repack queue: malformed entry %x", k)
				}
				if err := t.repackOne(k[8:], ids[i][8:24], posOfKey(ids[i])); err != nil {
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

// prune removes the revisions retention no longer keeps, walking the
// history in time order up to the cutoff. Each batch is examined in a read
// transaction, so a run that finds nothing to drop writes (and syncs)
// nothing; the drops are checked again in the write.
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
		err := s.db.View(ctx, func(tx backend.Tx) error {
			t := s.newTxn(tx)
			drop = drop[:0]
			c := t.revs.Cursor()
			k, _ := c.First()
			if start != nil {
				k, _ = c.Seek(start)
			}
			for examined := 0; k != nil && examined < pruneBatch; examined++ {
				if isRevKey(k) {
					if posOfKey(k).time >= cutoff {
						k = nil // every later revision is younger
						break
					}
					expired, err := t.expired(k, keep, cutoff)
					if err != nil {
						return err
					}
					if expired {
						drop = append(drop, bytes.Clone(k))
					}
				}
				k, _ = c.Next()
			}
			done, start = k == nil, bytes.Clone(k)
			return nil
		})
		n := 0
		if err == nil && len(drop) > 0 {
			err = s.db.Update(ctx, func(tx backend.Tx) error {
				t := s.newTxn(tx)
				n = 0
				chains := map[string][]revLink{} // per item, its revisions newest first
				for _, k := range drop {
					if t.revs.Get(k) == nil {
						continue // dropped since the read, or below with an older one
					}
					// A write since the read may have changed the item.
					expired, err := t.expired(k, keep, cutoff)
					if err != nil {
						return err
					}
					if !expired {
						continue
					}
					id := string(k[8:24])
					chain, ok := chains[id]
					if !ok {
						if err := t.revsDown(k[8:24], func(r revLink) bool { chain = append(chain, r); return true }); err != nil {
							return err
						}
					}
					// The oldest first, up to this one: a chain ends at its
					// oldest revision kept.
					freed := map[revPos]int64{} // entries the dropped revisions held
					for rev := posOfKey(k).rev; len(chain) > 0 && chain[len(chain)-1].rev <= rev; chain = chain[:len(chain)-1] {
						r := &chain[len(chain)-1]
						if err := t.dropRevision(r); err != nil {
							return err
						}
						if r.entry.rev != 0 { // a pending revision holds no reference
							freed[r.entry]++
						}
						n++
					}
					chains[id] = chain
					if err := t.releaseEntries([]byte(id), chain, freed); err != nil {
						return err
					}
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

// expired reports whether the revision at key lk (older than cutoff)
// goes: it is not among its item's keep newest, or its item was deleted
// before cutoff and not restored, so a deleted item's history lasts MinAge
// after the delete and no longer.
func (t *txn) expired(lk []byte, keep, cutoff int64) (bool, error) {
	id, rev := lk[8:24], posOfKey(lk).rev
	latest, err := t.latestRev(id)
	if err != nil {
		return false, err
	}
	gone := latest.deleted && latest.time < cutoff && t.items.Get(id) == nil
	return latest.rev-rev >= keep || gone, nil
}

// dropRevision removes the oldest revision of its item, r, with its log
// entry and metadata reference (its entry's, releaseEntries drops);
// dropping a deleted item's latest drops its head.
func (t *txn) dropRevision(r *revLink) error {
	rec := r.record()
	if rec.deleted {
		dk := deletedKey(rec.drive, rec.path, rec.id)
		if v := t.deleted.Get(dk); len(v) == 16 && decodePos(v) == rec.pos() {
			if err := t.deleted.Delete(dk); err != nil {
				return err
			}
		}
	}
	if head, ok := t.itemHead(rec.id); ok && head == rec.pos() {
		if t.items.Get(rec.id) != nil {
			return fmt.Errorf("history: dropping the latest revision of live item %x", rec.id)
		}
		if err := t.revHeads.Delete(rec.id); err != nil {
			return err
		}
	}
	if err := t.revs.Delete(r.key); err != nil {
		return err
	}
	if err := t.revActor.Delete(append(actorPrefix(rec.actor), r.key...)); err != nil {
		return err
	}
	return t.unrefMeta(rec.id, rec.meta)
}

// releaseEntries drops the references dropped revisions of item u held
// (freed: per entry, how many), chain being u's revisions left.
func (t *txn) releaseEntries(u []byte, chain []revLink, freed map[revPos]int64) error {
	if len(freed) == 0 {
		return nil
	}
	keep, err := t.trimBases(u, chain)
	if err != nil {
		return err
	}
	for _, p := range slices.SortedFunc(maps.Keys(freed), func(a, b revPos) int { return cmp.Or(cmp.Compare(a.rev, b.rev), cmp.Compare(a.time, b.time)) }) {
		if err := t.addRefs(u, p, -freed[p], 0, keep); err != nil {
			return err
		}
	}
	return nil
}

// openHistory runs in Open's transaction: it remembers that history is off,
// and reports whether a gap left while it was off needs closing.
func openHistory(meta backend.Bucket, off bool) (gap bool, err error) {
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
		err := s.db.Update(context.Background(), func(tx backend.Tx) error {
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
			if err := t.storeHeads(); err != nil {
				return err
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
