package watcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/vfs"
)

// run is one watch running: its goroutine, and its status.
type run struct {
	m      *Manager
	w      Watch
	drive  string
	walk   ingest.WalkOptions
	ctx    context.Context // the run's: writes carry the watch as their actor
	cancel context.CancelFunc
	done   chan struct{} // closed when loop returns
	// started is closed when the first reconcile is over, done or failed.
	started   chan struct{}
	startOnce sync.Once

	apply sync.Mutex // one reconcile or batch at a time

	mu sync.Mutex // guards st
	st Status
}

func newRun(m *Manager, w Watch) *run {
	ctx, cancel := context.WithCancel(m.ctx)
	// History names the watch as the actor of what it writes.
	ctx = vfs.WithActor(ctx, vfs.Actor{Name: "watch:" + w.ID, Op: vfs.OpRefresh})
	return &run{
		m: m, w: w, drive: w.drive(), ctx: ctx, cancel: cancel, done: make(chan struct{}), started: make(chan struct{}),
		walk: ingest.WalkOptions{
			Exclude: append(slices.Clone(EditorTempFiles), w.Exclude...), IncludeHidden: w.IncludeHidden,
			MaxFileBytes: m.store.MaxContentBytes(), Policy: m.cfg.Policy,
		},
		st: Status{Mode: ModeStarting},
	}
}

// stop stops the run and waits for it.
func (r *run) stop() {
	r.cancel()
	<-r.done
}

func (r *run) status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

func (r *run) update(fn func(st *Status)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(&r.st)
}

// loop follows the tree with events until it needs more watches than it
// may have (then scans until stopped) or fails (then retries every scan
// interval).
func (r *run) loop() {
	defer close(r.done)
	defer r.markStarted()
	for r.ctx.Err() == nil {
		err := r.follow()
		switch {
		case r.ctx.Err() != nil:
			return
		case errors.Is(err, ingest.ErrWatchLimit):
			r.m.cfg.Log.Warn("watch falls back to scanning", "watch", r.w.ID, "path", r.w.Path, "reason", err)
			r.scan(reasonOf(err))
			return
		}
		r.fail(err)
		if !r.sleep() {
			return
		}
	}
}

// follow watches the tree with kernel events, reconciles it once the
// watches are set, and applies events until ctx ends or WatchTree stops. A
// reconcile that fails stops following too: the loop retries both.
func (r *run) follow() error {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	ready := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- ingest.WatchTree(ctx, r.w.Path, ingest.WatchConfig{
			Walk: r.walk, Debounce: r.w.Debounce, MaxDirs: r.m.cfg.MaxDirs,
			Ready: func(dirs int) {
				r.update(func(st *Status) { st.WatchedDirs = int64(dirs) })
				close(ready)
			},
		}, r.applyBatch)
	}()
	select {
	case <-ready:
	case err := <-errc:
		return err
	}
	// Events that arrive meanwhile wait for the reconcile (r.apply).
	if err := r.reconcile(); err != nil {
		cancel()
		<-errc
		return err
	}
	r.update(func(st *Status) { st.Mode, st.Reason = ModeEvents, "" })
	r.markStarted()
	err := <-errc
	if err == nil && r.ctx.Err() == nil {
		err = errors.New("the watch stopped") // WatchTree returns nil only when ctx ends
	}
	return err
}

// scan reconciles the tree every scan interval until the run stops.
func (r *run) scan(reason string) {
	reason += "; scanned every " + r.m.cfg.ScanInterval.String() + " instead"
	r.update(func(st *Status) { st.Mode, st.Reason, st.WatchedDirs = ModeScanning, reason, 0 })
	for {
		if err := r.reconcile(); err != nil && r.ctx.Err() == nil {
			r.recordError(err)
		}
		r.markStarted()
		if !r.sleep() {
			return
		}
	}
}

// sleep waits a scan interval; false: the run stopped meanwhile.
func (r *run) sleep() bool {
	t := time.NewTimer(r.m.cfg.ScanInterval)
	defer t.Stop()
	select {
	case <-r.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (r *run) markStarted() { r.startOnce.Do(func() { close(r.started) }) }

// fail records that the tree cannot be followed.
func (r *run) fail(err error) {
	r.m.cfg.Log.Warn("watch failed; retrying", "watch", r.w.ID, "path", r.w.Path, "err", err, "retry_in", r.m.cfg.ScanInterval)
	r.recordError(err)
	r.update(func(st *Status) {
		st.Mode, st.Reason, st.WatchedDirs = ModeFailed, reasonOf(err)+" (retried every "+r.m.cfg.ScanInterval.String()+")", 0
	})
	r.markStarted()
}

func (r *run) recordError(err error) {
	r.update(func(st *Status) {
		st.Errors++
		st.LastError, st.LastErrorAt = err.Error(), time.Now()
	})
}

// reasonOf is an error's message with its hint, for Status.Reason.
func reasonOf(err error) string {
	var ie *ingest.Error
	if errors.As(err, &ie) && ie.Hint != "" {
		return ie.Message + " (" + ie.Hint + ")"
	}
	return err.Error()
}

// reconcile compares the whole tree with its items and applies the
// difference (see the package doc).
func (r *run) reconcile() error {
	r.apply.Lock()
	defer r.apply.Unlock()
	start := time.Now()
	var p plan
	var failed int64
	walked := map[string]ingest.Entry{}
	var unlisted []string // directories that could not be listed
	err := ingest.Walk(r.ctx, r.w.Path, r.walk, func(e ingest.Entry) error {
		switch {
		case e.Err != nil && e.Path == r.w.Path:
			return e.Err // the root cannot be listed: nothing is known of the tree
		case e.Err != nil && isDir(e.Path):
			unlisted = append(unlisted, e.Path)
		case e.Err != nil && !errors.Is(e.Err, ingest.ErrRefused) && !errors.Is(e.Err, ingest.ErrTooLarge):
			failed++
			r.recordError(e.Err)
		}
		walked[e.Path] = e // a file it cannot read is not missing
		return nil
	})
	if err != nil {
		return err
	}
	stored, err := r.items()
	if err != nil {
		return err
	}
	// What is below a directory that could not be listed is not missing.
	for _, dir := range unlisted {
		failed++
		r.recordError(fmt.Errorf("cannot list %s; its items are left as they are", dir))
		for path := range stored {
			if within(dir, path) {
				delete(stored, path)
			}
		}
	}
	var files int64
	for path, e := range walked {
		if e.Err != nil {
			delete(stored, path)
			continue
		}
		files++
		it, ok := stored[path]
		switch {
		case !ok:
			p.appeared = append(p.appeared, appeared{path: path, size: e.Size, modTime: e.ModTime})
		case it.Origin.Size == e.Size && it.Origin.ModTime.Equal(e.ModTime):
			p.unchanged++
		default:
			p.changed = append(p.changed, ingest.FileSync{Path: path, Existing: it})
		}
		delete(stored, path)
	}
	for _, it := range stored {
		p.vanished = append(p.vanished, vanished{item: it})
	}
	res := r.execute(&p)
	res.Failed += failed
	took := time.Since(start)
	r.update(func(st *Status) {
		st.Files = files
		st.LastReconcileAt, st.LastReconcileTook, st.LastReconcile = time.Now(), took, res
		if res.Added+res.Updated+res.Moved+res.Missing > 0 {
			st.LastEventAt = time.Now()
		}
	})
	r.m.cfg.Log.Info("watch reconciled", "watch", r.w.ID, "path", r.w.Path, "took", took, "added", res.Added, "updated", res.Updated,
		"moved", res.Moved, "missing", res.Missing, "unchanged", res.Unchanged, "failed", res.Failed, "bytes_read", res.BytesRead)
	return r.ctx.Err()
}

// items lists the items the watch wrote below its root, by file path: those
// whose source is the file at their own path.
func (r *run) items() (map[string]*vfs.Item, error) {
	out := map[string]*vfs.Item{}
	dir := vfs.Ref{Drive: r.drive, Path: filepath.ToSlash(r.w.Path)}
	token := ""
	for {
		entries, next, err := r.m.store.List(r.ctx, dir, true, 1000, token)
		if errors.Is(err, vfs.ErrNotFound) {
			return out, nil // nothing stored below the root yet
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if it := e.Item; it != nil && !it.IsDir && it.SourceURL == filepath.FromSlash(it.Path) {
				out[it.SourceURL] = it
			}
		}
		if next == "" {
			return out, nil
		}
		token = next
	}
}

// applyBatch applies a batch of events.
func (r *run) applyBatch(b ingest.Batch) {
	r.update(func(st *Status) { st.Pending += int64(len(b.Changes)); st.WatchedDirs = int64(b.Dirs) })
	r.apply.Lock()
	defer r.apply.Unlock()
	var p plan
	first := b.Changes[0].At
	for _, c := range b.Changes {
		first = minTime(first, c.At)
		ref := vfs.Ref{Drive: r.drive, Path: filepath.ToSlash(c.Path)}
		info, err := r.m.store.Info(r.ctx, ref)
		var it *vfs.Item
		switch {
		case err == nil && !info.Item.IsDir && (info.Item.SourceURL == c.Path || !c.Removed):
			it = &info.Item
		case err != nil && !errors.Is(err, vfs.ErrNotFound):
			if r.ctx.Err() == nil {
				r.recordError(err)
				p.failed++
			}
			continue
		}
		switch {
		case c.Removed && it != nil:
			p.vanished = append(p.vanished, vanished{item: it, inode: c.Inode})
		case c.Removed: // never an item: a temp file, or one excluded
		case it != nil:
			p.changed = append(p.changed, ingest.FileSync{Path: c.Path, Existing: it})
		default:
			p.appeared = append(p.appeared, appeared{path: c.Path, inode: c.Inode, stat: true})
		}
	}
	res := r.execute(&p)
	now := time.Now()
	r.update(func(st *Status) {
		st.Pending -= int64(len(b.Changes))
		st.Files += res.Added - res.Missing
		st.Applied.add(res)
		if res.Added+res.Updated+res.Moved+res.Missing+res.Failed > 0 {
			st.LastEventAt, st.Lag = now, now.Sub(first)
		}
	})
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
