package vfs

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Delete removes an item, or a directory and everything below it when
// recursive is set ("drive:/" deletes the whole drive). It returns the number
// of items removed.
func (s *Store) Delete(ctx context.Context, ref Ref, recursive bool) (int64, error) {
	var count int64
	err := s.update(ctx, func(t *txn) error {
		t.op = OpDelete
		count = 0
		n, err := t.lookup(ref)
		if err != nil {
			return err
		}
		if !n.exists() {
			return t.notFound(n)
		}
		if err := t.access.CheckChange(n.drive, n.path); err != nil { // a directory above what the caller may see
			return err
		}
		var keys [][]byte
		if n.val != nil {
			keys = append(keys, n.key)
		}
		below := 0
		subtree(t.driveBucket(n.drive), n.path, func(k, _ []byte) {
			keys = append(keys, bytes.Clone(k))
			below++
		})
		if below > 0 && !recursive {
			r := n.ref()
			return newError(ErrDirNotEmpty, r, "pass recursive=true to delete it with everything below it",
				"%s is a directory with %d items below it.", r, below)
		}
		if err := t.guardRemove(n.drive, keys); err != nil {
			return err
		}
		// Keys are collected first: deleting under a live cursor skips entries.
		for _, k := range keys {
			if err := t.removeItem(n.drive, k); err != nil {
				return err
			}
		}
		count = int64(len(keys))
		return nil
	})
	return count, err
}

// Copy copies an item, or with recursive a directory, to dst. If dst is an
// existing directory the source is copied inside it. Copies get new ids.
func (s *Store) Copy(ctx context.Context, src, dst Ref, recursive bool, oc OnConflict) (TransferResult, error) {
	return s.transfer(ctx, src, dst, false, recursive, oc)
}

// Move moves an item or a directory to dst, keeping ids, in one transaction.
// If dst is an existing directory the source moves inside it. Items skipped
// because of ConflictSkip stay at the source.
func (s *Store) Move(ctx context.Context, src, dst Ref, oc OnConflict) (TransferResult, error) {
	return s.transfer(ctx, src, dst, true, true, oc)
}

// transferOp is one source entry and where it goes.
type transferOp struct {
	srcKey  []byte
	srcVal  []byte
	dstPath string
	dstVal  []byte // the item being replaced, if any
	skip    bool
	merge   bool // placeholder onto an existing directory: nothing to write
}

func (s *Store) transfer(ctx context.Context, src, dst Ref, move, recursive bool, oc OnConflict) (TransferResult, error) {
	verb := "copy"
	if move {
		verb = "move"
	}
	if oc < ConflictError || oc > ConflictSkip {
		return TransferResult{}, newError(ErrInvalid, src.String(), "use on_conflict error, overwrite or skip", "Unknown on_conflict value %d.", oc)
	}
	var res TransferResult
	err := s.update(ctx, func(t *txn) error {
		t.op = verb // OpCopy or OpMove
		res = TransferResult{}
		sn, err := t.lookup(src)
		if err != nil {
			return err
		}
		if !sn.exists() {
			return t.notFound(sn)
		}
		if err := t.access.CheckChange(sn.drive, sn.path); err != nil {
			return err
		}
		dn, err := t.lookup(dst)
		if err != nil {
			return err
		}
		srcRef := sn.ref()
		srcDir := sn.isDir()
		if srcDir && !recursive {
			return newError(ErrIsDir, srcRef, "pass recursive=true to copy the directory with everything below it",
				"%s is a directory.", srcRef)
		}
		// Unix semantics: into an existing directory (a drive root always is one).
		dstPath := dn.path
		if (dn.isDir() || dn.path == "/") && sn.path != "/" {
			dstPath = joinPath(dn.path, baseName(sn.path))
		}
		dstRef := FormatRef(dn.drive, dstPath)
		if err := t.access.CheckChange(dn.drive, dstPath); err != nil {
			return err
		}
		sameDrive := sn.drive == dn.drive
		if sameDrive && dstPath == sn.path {
			return newError(ErrInvalid, srcRef, "choose a different destination",
				"Cannot %s %s onto itself.", verb, srcRef)
		}
		if srcDir && sameDrive && isUnder(dstPath, sn.path) {
			return newError(ErrInvalid, srcRef, "choose a destination outside "+srcRef,
				"Cannot %s the directory %s into itself (%s).", verb, srcRef, dstRef)
		}
		if srcDir && sameDrive && isUnder(sn.path, dstPath) {
			return newError(ErrConflict, dstRef, "move it to a destination that does not contain it",
				"Cannot %s %s to %s: the destination already contains the source.", verb, srcRef, dstRef)
		}

		// Plan every entry and check every destination before writing anything.
		sb := t.driveBucket(sn.drive)
		db := t.driveBucket(dn.drive)
		var ops []transferOp
		if sn.val != nil {
			ops = append(ops, transferOp{srcKey: sn.key, srcVal: bytes.Clone(sn.val), dstPath: dstPath})
		}
		subtree(sb, sn.path, func(k, v []byte) {
			rel := keyPath(k[len(dirPrefix(sn.path))-1:]) // "/x/y", relative to the source
			ops = append(ops, transferOp{srcKey: bytes.Clone(k), srcVal: bytes.Clone(v), dstPath: joinRel(dstPath, rel)})
		})
		fileAncestors := map[string]bool{}
		var conflicts []string
		for i := range ops {
			op := &ops[i]
			opRef := FormatRef(dn.drive, op.dstPath)
			srcIsDir := op.srcVal[0]&flagDir != 0
			var dv []byte
			dstChildren := false
			if db != nil {
				dv = db.Get(pathKey(op.dstPath))
				dstChildren = hasPrefix(db, dirPrefix(op.dstPath))
			}
			dstIsDir := dstChildren || (dv != nil && dv[0]&flagDir != 0)
			switch {
			case srcIsDir && dv != nil && !dstIsDir:
				return newError(ErrNotDir, opRef, "remove or rename that item, or choose another destination",
					"Cannot %s %s to %s: %s is an item, not a directory.", verb, srcRef, dstRef, opRef)
			case srcIsDir && dv != nil:
				// Placeholder onto placeholder; an implicit destination
				// directory instead gets the placeholder, staying explicit.
				op.merge = true
				continue
			case !srcIsDir && dstIsDir:
				return newError(ErrConflict, opRef, "choose another destination, or delete that directory first",
					"Cannot %s %s to %s: %s is a directory.", verb, srcRef, dstRef, opRef)
			}
			if db != nil {
				for p := parentOf(op.dstPath); p != "/"; p = parentOf(p) {
					bad, seen := fileAncestors[p]
					if !seen {
						v := db.Get(pathKey(p))
						bad = v != nil && v[0]&flagDir == 0
						fileAncestors[p] = bad
					}
					if bad {
						a := FormatRef(dn.drive, p)
						return newError(ErrNotDir, a, "remove or rename that item, or choose another destination",
							"Cannot %s %s to %s: %s is an item, not a directory.", verb, srcRef, dstRef, a)
					}
				}
			}
			if dv != nil {
				op.dstVal = bytes.Clone(dv)
				conflicts = append(conflicts, opRef)
				op.skip = oc == ConflictSkip
			}
		}
		if len(conflicts) > 0 && oc == ConflictError {
			return newError(ErrConflict, conflicts[0], "pass on_conflict=overwrite to replace them, or on_conflict=skip to keep them",
				"Cannot %s %s to %s: %s already exists (%d conflicting items).", verb, srcRef, dstRef, conflicts[0], len(conflicts))
		}

		for _, op := range ops {
			if op.skip {
				res.Skipped++
				continue
			}
			var err error
			if move {
				err = t.moveOne(sn.drive, dn.drive, op)
			} else {
				err = t.copyOne(dn.drive, op)
			}
			if err != nil {
				return err
			}
			if !op.merge {
				res.Count++
			}
		}
		res.Destination = dstRef
		return nil
	})
	return res, err
}

// joinRel appends a relative path ("/x/y") to dir.
func joinRel(dir, rel string) string {
	if dir == "/" {
		return rel
	}
	return dir + rel
}

// retitle keeps a title that the user chose, and renames one that was the
// default (the old last segment).
func retitle(it *Item, newPath string) {
	if it.Title == baseName(it.Path) {
		it.Title = baseName(newPath)
	}
	it.Path = newPath
}

func (t *txn) copyOne(dstDrive string, op transferOp) error {
	if op.merge {
		return nil
	}
	pv := decodePathVal(op.srcVal)
	it, err := t.item(pv.id)
	if err != nil {
		return err
	}
	content := bytes.Clone(t.content.Get(pv.id))
	before, fmLen := chunkDoc(&it, it.MimeType), it.FrontmatterLen
	it.Drive = dstDrive
	retitle(&it, op.dstPath)
	applyFrontmatter(&it, content, editCallerFields(&it)) // its warning was given when the source was written
	chunksFrom := pv.id
	if after := chunkDoc(&it, it.MimeType); after.Title != before.Title || after.Description != before.Description || it.FrontmatterLen != fmLen {
		chunksFrom = nil // the chunks embed other text than the source's
	}
	it.CreatedAt, it.UpdatedAt = t.now, t.now
	it.IndexedAt, it.RetrievalCount, it.LastRetrievedAt = time.Time{}, 0, time.Time{}
	if op.dstVal != nil {
		// Overwriting keeps the replaced item's identity, as Write does.
		old, err := t.item(decodePathVal(op.dstVal).id)
		if err != nil {
			return err
		}
		it.ID, it.CreatedAt = old.ID, old.CreatedAt
	} else {
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("new id: %w", err)
		}
		it.ID = id.String()
	}
	if err := t.putItem(&it, content, op.dstVal, chunksFrom); err != nil {
		return err
	}
	dst, err := parseID(it.ID)
	if err != nil {
		return err
	}
	return t.setItemQuestions(dst, t.itemQuestions(pv.id)) // the copy answers them too
}

func (t *txn) moveOne(srcDrive, dstDrive string, op transferOp) error {
	if op.merge {
		// The destination directory already exists; drop the source placeholder.
		return t.removeItem(srcDrive, op.srcKey)
	}
	if op.dstVal != nil {
		if err := t.removeItem(dstDrive, pathKey(op.dstPath)); err != nil {
			return err
		}
	}
	pv := decodePathVal(op.srcVal)
	it, err := t.item(pv.id)
	if err != nil {
		return err
	}
	if err := t.guardChange(&it); err != nil { // the source goes away
		return err
	}
	if err := t.driveBucket(srcDrive).Delete(op.srcKey); err != nil {
		return fmt.Errorf("move %s: %w", it.Ref(), err)
	}
	if err := t.addCounts(srcDrive, -1, -pv.size); err != nil {
		return err
	}
	it.Drive = dstDrive
	retitle(&it, op.dstPath)
	// Searchable again under the new ref once the index applies the move.
	it.UpdatedAt, it.IndexedAt = t.now, time.Time{}
	return t.putItem(&it, nil, nil, nil)
}
