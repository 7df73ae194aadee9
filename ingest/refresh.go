package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ctxd/ctxd/vfs"
)

// RefreshOptions select the items to refresh.
type RefreshOptions struct {
	Refs      []vfs.Ref // items, or directories whose items are all refreshed
	All       bool      // every item that has a source
	Force     bool      // read sources even when size, mtime or validators say unchanged
	StaleOnly bool      // skip URL items whose TTL has not passed
}

// listPage is how many items a refresh lists per store read.
const listPage = 1000

// Refresh re-reads the sources of stored items: files by size and mtime, then
// content hash; URLs by conditional GET. Items without a source (agent
// notes) are skipped; a source that is gone is reported missing and the item
// kept.
func (in *Ingester) Refresh(ctx context.Context, o RefreshOptions, sink Sink) (Summary, error) {
	if !o.All && len(o.Refs) == 0 {
		return Summary{}, newError(ErrInvalid, "", "pass item or directory refs, or all", "Refresh needs refs or all.")
	}
	op := newOp(sink, "listing")
	items, err := in.collect(ctx, o)
	if err != nil {
		return op.summary(), err
	}
	op.addTotal(int64(len(items)), 0)
	op.setPhase("refreshing")
	in.parallel(ctx, len(items), func(i int) {
		op.report(in.refreshItem(ctx, &items[i], o), 0)
	})
	return op.summary(), ctx.Err()
}

// collect lists the items o selects, each once.
func (in *Ingester) collect(ctx context.Context, o RefreshOptions) ([]vfs.Item, error) {
	var items []vfs.Item
	seen := map[string]bool{}
	add := func(it *vfs.Item) {
		if !it.IsDir && !seen[it.ID] && (!o.All || it.SourceURL != "") {
			seen[it.ID] = true
			items = append(items, *it)
		}
	}
	var dirs []vfs.Ref
	if o.All {
		drives, err := in.store.ListDrives(ctx)
		if err != nil {
			return nil, err
		}
		for _, d := range drives {
			dirs = append(dirs, vfs.Ref{Drive: d.Name, Path: "/"})
		}
	}
	for _, r := range o.Refs {
		info, err := in.store.Info(ctx, r)
		if err != nil {
			return nil, err
		}
		if info.Item.IsDir {
			dirs = append(dirs, vfs.Ref{Drive: info.Item.Drive, Path: info.Item.Path})
		} else {
			add(&info.Item)
		}
	}
	for _, d := range dirs {
		token := ""
		for {
			entries, next, err := in.store.List(ctx, d, true, listPage, token)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				if e.Item != nil {
					add(e.Item)
				}
			}
			if next == "" {
				break
			}
			token = next
		}
	}
	return items, nil
}

// refreshItem refreshes one stored item from the source it records.
func (in *Ingester) refreshItem(ctx context.Context, it *vfs.Item, o RefreshOptions) ItemResult {
	// History records what this writes as a refresh, by whoever asked.
	a := vfs.ActorFrom(ctx)
	a.Op = vfs.OpRefresh
	ctx = vfs.WithActor(ctx, a)
	src := source{drive: it.Drive, path: it.Path}
	switch {
	case IsURL(it.SourceURL):
		src.fetchURL = it.SourceURL
		if o.StaleOnly && fresh(it, time.Now()) {
			return ItemResult{Ref: src.ref(), Source: it.SourceURL, Action: Unchanged}
		}
	case filepath.IsAbs(it.SourceURL):
		src.file = it.SourceURL
	default:
		return ItemResult{Ref: it.Ref(), Source: it.SourceURL, Action: Skipped,
			Err: newError(ErrInvalid, it.Ref(), "write it again to change it", "%s has no file or URL source to refresh from.", it.Ref())}
	}
	return in.sync(ctx, src, it, syncArgs{force: o.Force})
}

// fresh reports whether a fetched item's TTL has not passed at now.
func fresh(it *vfs.Item, now time.Time) bool {
	return it.Origin.TTL > 0 && now.Before(it.Origin.CheckedAt.Add(it.Origin.TTL))
}

// Revalidate refreshes those of the items with ids that came from URLs and
// whose TTL has passed, as a search noticing them asks; results are by id.
func (in *Ingester) Revalidate(ctx context.Context, ids []string) map[string]ItemResult {
	out := map[string]ItemResult{}
	now := time.Now()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] { // a search returns several chunks of an item
			continue
		}
		seen[id] = true
		info, err := in.store.Info(ctx, vfs.Ref{ID: id})
		if err != nil || !IsURL(info.Item.SourceURL) || fresh(&info.Item, now) {
			continue
		}
		out[id] = in.refreshItem(ctx, &info.Item, RefreshOptions{})
	}
	return out
}

// Watch keeps the directory trees among o.Sources fresh after an Add: a file
// created or changed is ingested (or refreshed) and reported; a removed file
// is reported missing and its item kept. It returns when ctx is done.
func (in *Ingester) Watch(ctx context.Context, o AddOptions, sink Sink, ready chan<- struct{}) error {
	var roots []source
	for _, raw := range o.Sources {
		src, err := classify(raw, o.Drive)
		if err != nil || src.file == "" {
			continue
		}
		if fi, err := os.Stat(src.file); err == nil && fi.IsDir() {
			roots = append(roots, src)
		}
	}
	if len(roots) == 0 {
		return newError(ErrInvalid, "", "watch directories, not single files or URLs", "None of the sources is a directory to watch.")
	}
	var mu sync.Mutex // one sink call at a time across roots
	emit := func(r ItemResult) {
		mu.Lock()
		defer mu.Unlock()
		if sink.Item != nil {
			sink.Item(r)
		}
	}
	wo := WalkOptions{Exclude: o.Exclude, IncludeHidden: o.IncludeHidden, MaxFileBytes: in.store.MaxContentBytes(), Policy: in.cfg.Policy}
	ttl := o.TTL
	errs := make(chan error, len(roots))
	readies := make([]chan struct{}, len(roots))
	for i, root := range roots {
		readies[i] = make(chan struct{})
		fileSource := func(path string) source {
			s := root
			s.file, s.path = path, filepath.ToSlash(path)
			return s
		}
		changed := func(path string) {
			s := fileSource(path)
			o2 := o
			o2.OnConflict, o2.TTL = vfs.ConflictOverwrite, ttl
			if r := in.addOne(ctx, job{src: s}, o2); r.Action != Unchanged {
				emit(r)
			}
		}
		removed := func(path string) {
			s := fileSource(path)
			if ok, isDir, err := in.store.Exists(ctx, vfs.Ref{Drive: s.drive, Path: s.path}); err != nil || !ok || isDir {
				return
			}
			emit(ItemResult{Ref: s.ref(), Source: path, Action: Missing,
				Err: newError(ErrMissing, path, "restore the file, or delete the item if it should go", "%s was removed; its item is kept.", path)})
		}
		go func() { errs <- Watch(ctx, root.file, wo, readies[i], changed, removed) }()
	}
	for i := range readies {
		select {
		case <-readies[i]:
		case err := <-errs:
			return err
		}
	}
	if ready != nil {
		close(ready)
	}
	var first error
	for range roots {
		if err := <-errs; err != nil && first == nil && !errors.Is(err, context.Canceled) {
			first = err
		}
	}
	return first
}
