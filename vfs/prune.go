package vfs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// PruneQuery selects the items Prune removes: those neither returned by a
// search nor changed since Before.
type PruneQuery struct {
	// Before is the cutoff: an item qualifies when its last retrieval (if
	// any) and its last change are both before it.
	Before time.Time
	// Under limits the items to these directories; none: the whole store.
	Under []Ref
	// Limit is the most items returned (and deleted); 0 means 1000.
	Limit int
	// Keep, when set, spares the items it reports, besides those the store
	// never prunes (see Prune).
	Keep func(Item) bool
	// DryRun lists the items without deleting them.
	DryRun bool
}

// Pruned is an item Prune removed (or, in a dry run, would remove).
type Pruned struct {
	Item Item
	// DeleteRev is the revision recording its delete (revert to the one
	// before restores it); 0 in a dry run or with history off.
	DeleteRev int64
}

// MinPruneAge is the shortest PruneQuery.Before may lie in the past.
const MinPruneAge = 24 * time.Hour

// lastActive is when an item was last returned by a search or changed.
func lastActive(it *Item) time.Time {
	if it.LastRetrievedAt.After(it.UpdatedAt) {
		return it.LastRetrievedAt
	}
	return it.UpdatedAt
}

// Prune lists the items that no search returned and that did not change
// since q.Before, oldest activity first, and unless q.DryRun deletes them,
// each in a transaction of its own, as the context's actor: history keeps
// them as it keeps any deleted item, so each can be restored. It never
// prunes directories, context files (items declaring loading, and items
// under a context root) or items with an importance set. more reports
// whether more than q.Limit items qualified. A failed delete stops it and
// returns what was pruned before.
func (s *Store) Prune(ctx context.Context, q PruneQuery) (out []Pruned, more bool, err error) {
	if s.now().Sub(q.Before) < MinPruneAge {
		return nil, false, newError(ErrInvalid, "", "prune items unretrieved for a day or more (`ctxd prune --unretrieved 90d`)",
			"The cutoff %s is less than %s ago.", q.Before.Format(time.RFC3339), MinPruneAge)
	}
	limit := cmp.Or(q.Limit, defaultListLimit)
	var found []Item
	err = s.view(ctx, func(t *txn) error {
		found = found[:0]
		dirs := q.Under
		if len(dirs) == 0 {
			for _, d := range t.driveNames() {
				dirs = append(dirs, Ref{Drive: d, Path: "/"})
			}
		}
		seen := map[string]bool{}
		for _, dir := range dirs {
			var ferr error
			n := 0
			t.walkVisible(t.driveBucket(dir.Drive), dir.Drive, dir.Path, nil, func(_, v []byte) bool {
				if n++; n%checkEvery == 0 && ctx.Err() != nil {
					ferr = ctx.Err()
					return false
				}
				pv := decodePathVal(v)
				if pv.flags&flagDir != 0 {
					return true
				}
				it, err := t.item(pv.id)
				if err != nil {
					ferr = err
					return false
				}
				if seen[it.ID] || !lastActive(&it).Before(q.Before) || t.neverPruned(&it) || q.Keep != nil && q.Keep(it) {
					return true
				}
				seen[it.ID] = true
				found = append(found, it)
				return true
			})
			if ferr != nil {
				return ferr
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	slices.SortFunc(found, func(a, b Item) int {
		return cmp.Or(lastActive(&a).Compare(lastActive(&b)), cmp.Compare(a.Ref(), b.Ref()))
	})
	if more = len(found) > limit; more {
		found = found[:limit]
	}
	for _, it := range found {
		p := Pruned{Item: it}
		if !q.DryRun {
			ref := Ref{Drive: it.Drive, Path: it.Path}
			if _, err := s.Delete(ctx, ref, false); err != nil {
				if errors.Is(err, ErrNotFound) {
					continue // deleted meanwhile
				}
				return out, more, fmt.Errorf("prune %s: %w", ref, err)
			}
			if revs, err := s.History(ctx, ref, 1, 0); err == nil && len(revs) == 1 && revs[0].Deleted {
				p.DeleteRev = revs[0].Rev
			}
		}
		out = append(out, p)
	}
	return out, more, nil
}

// neverPruned reports whether it is an item Prune always spares: a context
// file, an item under a context root, or one with an importance set.
func (t *txn) neverPruned(it *Item) bool {
	if _, under := t.contextRoot(it); under || it.Loading != "" {
		return true
	}
	return it.Importance > 0 || slices.Contains(it.FrontmatterFields, fieldImportance)
}
