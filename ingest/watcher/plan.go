package watcher

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/vfs"
)

// plan is what a reconcile or a batch found to do.
type plan struct {
	changed   []ingest.FileSync // files with an item, maybe changed
	appeared  []appeared        // files without an item: new, or moved here
	vanished  []vanished        // items whose file is gone: missing, or moved
	unchanged int64             // files found unchanged by size and mtime
	failed    int64
}

// appeared is a file that has no item at its path.
type appeared struct {
	path    string
	size    int64
	modTime time.Time
	inode   uint64
	stat    bool // size and modTime are not known yet
}

// vanished is an item of the watch whose file is gone.
type vanished struct {
	item  *vfs.Item
	inode uint64 // the file's inode as the tree last saw it; 0 if unknown
	moved bool
}

// sizeTime keys vanished items by what a rename keeps of a file.
type sizeTime struct {
	size int64
	mod  int64 // UnixNano
}

// execute applies p: pairs moves, refreshes and adds files, and reports or
// deletes the items of vanished files.
func (r *run) execute(p *plan) Reconcile {
	res := Reconcile{Unchanged: p.unchanged, Failed: p.failed}
	sync := p.changed
	moves := map[int]bool{} // indexes in sync of moved items, whose refresh is part of the move
	if len(p.vanished) > 0 {
		byInode := map[uint64]*vanished{}
		bySizeTime := map[sizeTime][]*vanished{}
		for i := range p.vanished {
			v := &p.vanished[i]
			if v.inode != 0 {
				byInode[v.inode] = v
			}
			k := sizeTime{v.item.Origin.Size, v.item.Origin.ModTime.UnixNano()}
			bySizeTime[k] = append(bySizeTime[k], v)
		}
		for i := range p.appeared {
			a := &p.appeared[i]
			if v := r.movedFrom(a, byInode, bySizeTime, &res); v != nil {
				if it, ok := r.move(v, a.path); ok {
					v.moved = true
					res.Moved++
					moves[len(sync)] = true
					sync = append(sync, ingest.FileSync{Path: a.path, Existing: it})
					continue
				}
			}
			sync = append(sync, ingest.FileSync{Path: a.path})
		}
	} else {
		for _, a := range p.appeared {
			sync = append(sync, ingest.FileSync{Path: a.path})
		}
	}
	for i, ir := range r.m.in.SyncFiles(r.ctx, r.w.Drive, r.w.Tags, sync) {
		res.BytesRead += ir.Bytes
		switch {
		case moves[i] && (ir.Action == ingest.Unchanged || ir.Action == ingest.Skipped):
			continue
		case moves[i] && ir.Action == ingest.Updated: // moved and edited: counted as a move
			continue
		}
		switch ir.Action {
		case ingest.Added:
			res.Added++
		case ingest.Updated:
			res.Updated++
		case ingest.Unchanged, ingest.Skipped:
			res.Unchanged++
		case ingest.Missing:
			res.Missing++
		case ingest.Failed:
			res.Failed++
			if r.ctx.Err() == nil {
				r.recordError(ir.Err)
			}
		}
	}
	for _, v := range p.vanished {
		if v.moved || r.ctx.Err() != nil {
			continue
		}
		res.Missing++
		if !r.w.DeleteMissing {
			r.m.cfg.Log.Info("watched file vanished; its item is kept", "watch", r.w.ID, "ref", v.item.Ref(), "source", v.item.SourceURL)
			continue
		}
		if _, err := r.m.store.Delete(r.ctx, vfs.Ref{ID: v.item.ID}, false); err != nil && !errors.Is(err, vfs.ErrNotFound) {
			res.Failed++
			r.recordError(err)
		}
	}
	return res
}

// movedFrom returns the vanished item the appeared file is, if any: the one
// with its inode, else one with its size and mtime whose content hash the
// file has (the file is read for that; it would be read to be added anyway).
func (r *run) movedFrom(a *appeared, byInode map[uint64]*vanished, bySizeTime map[sizeTime][]*vanished, res *Reconcile) *vanished {
	if v := byInode[a.inode]; a.inode != 0 && v != nil && !v.moved {
		return v
	}
	if a.stat {
		fi, err := os.Stat(a.path)
		if err != nil {
			return nil
		}
		a.size, a.modTime = fi.Size(), fi.ModTime()
	}
	cands := bySizeTime[sizeTime{a.size, a.modTime.UnixNano()}]
	if len(cands) == 0 {
		return nil
	}
	hash, n, err := r.m.in.FileHash(a.path)
	res.BytesRead += n
	if err != nil {
		return nil
	}
	for _, v := range cands {
		if !v.moved && v.item.ContentHash == hash {
			return v
		}
	}
	return nil
}

// move moves v's item to the file at path and returns it as moved.
func (r *run) move(v *vanished, path string) (*vfs.Item, bool) {
	dst := vfs.Ref{Drive: v.item.Drive, Path: filepath.ToSlash(path)}
	// History records a move as one, not as the refresh the run's writes are.
	a := vfs.ActorFrom(r.ctx)
	a.Op = ""
	if _, err := r.m.store.Move(vfs.WithActor(r.ctx, a), vfs.Ref{ID: v.item.ID}, dst, vfs.ConflictError); err != nil {
		if r.ctx.Err() == nil {
			r.recordError(err)
		}
		return nil, false
	}
	info, err := r.m.store.Info(r.ctx, vfs.Ref{ID: v.item.ID})
	if err != nil {
		return nil, false
	}
	return &info.Item, true
}
