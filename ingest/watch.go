package ingest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// DefaultDebounce is how long events for one path coalesce into one change
// unless WatchConfig.Debounce says otherwise.
const DefaultDebounce = 200 * time.Millisecond

// WatchConfig tunes WatchTree.
type WatchConfig struct {
	Walk WalkOptions
	// Debounce is how long events for one path coalesce, from its first;
	// 0 means DefaultDebounce.
	Debounce time.Duration
	// MaxDirs caps the directories watched; a tree that needs more makes
	// WatchTree return an ErrWatchLimit error. 0: only the kernel's limit.
	MaxDirs int
	// Ready, if set, is called once the initial watches are set, with the
	// number of directories watched.
	Ready func(dirs int)
}

// Change is one file's debounced change.
type Change struct {
	Path    string
	Removed bool      // removed, renamed away, or newly excluded by a .gitignore
	Inode   uint64    // the file's inode as last seen (for a removed file: before it went); 0 if unknown
	At      time.Time // the first event of the change
}

// Batch is the changes handed over together: those due at once, and any
// that queued while the previous batch was being applied.
type Batch struct {
	Changes []Change
	Dirs    int // directories watched when the batch was handed over
}

// Watch watches the directory tree at root with fsnotify and reports
// changes: changed(path) for each file created, written or chmodded (it may
// have become readable), removed(path) for each file removed or renamed away,
// including every file under a directory removed or renamed away. It is
// WatchTree with the default debounce and no cap, one call per change.
// ready, if non-nil, is closed once the initial watches are set.
func Watch(ctx context.Context, root string, o WalkOptions, ready chan<- struct{}, changed, removed func(path string)) error {
	cfg := WatchConfig{Walk: o}
	if ready != nil {
		cfg.Ready = func(int) { close(ready) }
	}
	return WatchTree(ctx, root, cfg, func(b Batch) {
		for _, c := range b.Changes {
			if ctx.Err() != nil {
				return
			}
			if c.Removed {
				removed(c.Path)
			} else {
				changed(c.Path)
			}
		}
	})
}

// WatchTree watches the directory tree at root with fsnotify and hands its
// changes to apply in batches. New directories are watched and their files
// reported. A changed .gitignore is applied to the tree as it stands (after
// the debounce): files it now excludes are reported removed, files it no
// longer excludes changed. After the kernel dropped events (a queue
// overflow) the tree is walked again and every file reported changed, those
// gone removed. Existing files are not reported at the start: walk the tree
// first.
//
// Files are filtered as Walk filters them. Those Walk reports refused
// (secrets, symlinks out of the tree or to directories) are not reported, as
// Add skips them; those it reports too large or unreadable are, and reading
// them will say why.
//
// Events for one path within cfg.Debounce of its first coalesce into one
// change, the latest kind winning; changes due within a quarter of the
// debounce of each other go out together, so the two halves of a rename
// (fsnotify reports the old name, then the new one, without a cookie) reach
// apply in one batch. Calls come from one goroutine, in order, and none
// comes after WatchTree returns; a slow apply does not make WatchTree miss
// events.
//
// WatchTree returns nil when ctx is done; a setup error; or, at any time, an
// ErrWatchLimit error when the tree needs more directory watches than
// cfg.MaxDirs or the kernel allows, or an ErrMissing one when the root
// itself is removed or renamed.
func WatchTree(ctx context.Context, root string, cfg WatchConfig, apply func(Batch)) error {
	if cfg.Debounce <= 0 {
		cfg.Debounce = DefaultDebounce
	}
	t, err := watchTree(ctx, root, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer t.fsw.Close()
	if cfg.Ready != nil {
		cfg.Ready(len(t.dirs))
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { t.out.deliver(ctx, apply) })
	defer wg.Wait()
	defer cancel()
	return t.run(ctx)
}

// tree is the state of a watched tree, owned by WatchTree's goroutine.
type tree struct {
	*walker
	fsw      *fsnotify.Watcher
	debounce time.Duration
	maxDirs  int
	dirs     map[string][]gitignore.Pattern // watched directory → patterns of its own .gitignore
	files    map[string]uint64              // files reported or known at the start → inode
	live     bool                           // past the initial walk: report what is found
	// During a resync: the files known before it, and whether every file
	// found is reported (after an overflow) or only those not known.
	before    map[string]uint64
	reportAll bool
	// stop is set when the tree can no longer be followed: a directory
	// could not be watched for want of watches, or the root went; run
	// returns it.
	stop error

	// Debouncing: changes wait in pending for the debounce from their
	// path's first event, then go to out in the order of those first events.
	pending map[string]pendingChange // path → the change; resyncKey: a .gitignore changed
	queue   []dueNotice              // due times ascend
	timer   *time.Timer              // runs while queue is not empty
	out     *outbox
}

// resyncKey is the pending key of a resync that a .gitignore change asked
// for; no file path is empty.
const resyncKey = ""

type pendingChange struct {
	removed bool
	inode   uint64
	at      time.Time
}

type dueNotice struct {
	path string
	due  time.Time
}

// watchTree watches every directory of the tree at root.
func watchTree(ctx context.Context, root string, cfg WatchConfig) (*tree, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, newError(ErrWatchLimit, root, "raise the kernel's limit: sysctl fs.inotify.max_user_instances=1024 (and in /etc/sysctl.d/ to keep it)",
			"Cannot watch %s: %v (the kernel's inotify instances, fs.inotify.max_user_instances, may be used up).", root, err)
	}
	t := &tree{
		fsw:      fsw,
		debounce: cfg.Debounce,
		maxDirs:  cfg.MaxDirs,
		dirs:     map[string][]gitignore.Pattern{},
		files:    map[string]uint64{},
		pending:  map[string]pendingChange{},
		timer:    time.NewTimer(time.Hour),
		out:      &outbox{ready: make(chan struct{}, 1)},
	}
	t.timer.Stop()
	var info fs.FileInfo
	if t.walker, info, err = newWalker(ctx, root, cfg.Walk, t.found); err == nil {
		if info.IsDir() {
			t.enterDir = t.watchDir
			err = t.walkDir(t.root, nil)
		} else {
			err = newError(ErrInvalid, root, "watch the directory that holds it", "%s is not a directory", root)
		}
	}
	if err != nil {
		fsw.Close()
		return nil, err
	}
	t.live = true
	t.out.dirs.Store(int64(len(t.dirs)))
	return t, nil
}

func (t *tree) run(ctx context.Context) error {
	for t.stop == nil {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-t.fsw.Events:
			t.handle(ev)
		case err := <-t.fsw.Errors:
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				t.resync(true)
			}
		case now := <-t.timer.C:
			t.flush(now)
		}
		t.out.dirs.Store(int64(len(t.dirs)))
	}
	return t.stop
}

// watchDir is the walker's enterDir hook.
func (t *tree) watchDir(dir string, own []gitignore.Pattern) error {
	if _, watched := t.dirs[dir]; !watched && t.maxDirs > 0 && len(t.dirs) >= t.maxDirs {
		return t.limitReached(newError(ErrWatchLimit, dir, "raise the watch's cap on directory watches (watch.max_dirs in the daemon config), or exclude directories",
			"The tree at %s has more than %d directories, the cap on directory watches.", t.root, t.maxDirs))
	}
	if err := t.fsw.Add(dir); err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return t.limitReached(newError(ErrWatchLimit, dir, "raise the kernel's limit: sysctl fs.inotify.max_user_watches=524288 (and in /etc/sysctl.d/ to keep it), or exclude directories",
				"Cannot watch %s: the kernel's inotify watches (fs.inotify.max_user_watches) are used up.", dir))
		}
		return newError(ErrUnreadable, dir, "check the directory's permissions, or exclude it", "cannot watch %s: %v", dir, err)
	}
	t.dirs[dir] = own
	return nil
}

// limitReached records err for run, which stops on it.
func (t *tree) limitReached(err error) error {
	if t.live {
		t.stop = err
	}
	return err
}

// found is the walker's fn.
func (t *tree) found(e Entry) error {
	if e.Err != nil && (errors.Is(e.Err, ErrRefused) || isDir(e.Path)) {
		return nil // kept out by the tree's rules, or not a file
	}
	t.files[e.Path] = e.Inode
	if !t.live {
		return nil
	}
	if _, known := t.before[e.Path]; t.before == nil || t.reportAll || !known {
		t.push(e.Path, false, e.Inode)
	}
	return nil
}

func (t *tree) handle(ev fsnotify.Event) {
	if ev.Name == t.root && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
		t.stop = newError(ErrMissing, t.root, "restore the directory, or remove the watch", "The watched directory %s was removed or renamed.", t.root)
		return
	}
	parent, name := filepath.Split(ev.Name)
	parent = filepath.Clean(parent)
	if _, watched := t.dirs[parent]; !watched {
		return // from a directory just removed
	}
	if name == ".gitignore" {
		t.dirs[parent] = t.ownPatterns(parent, t.rel(parent))
		t.push(resyncKey, false, 0)
		return
	}
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		t.gone(ev.Name)
	case ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) || ev.Has(fsnotify.Chmod):
		t.appeared(parent, ev.Name)
	}
}

// appeared runs the walker on a new or written path as if it were listing
// the path's directory.
func (t *tree) appeared(parent, path string) {
	if _, watched := t.dirs[path]; watched {
		return
	}
	info, err := os.Lstat(path)
	if err != nil {
		return // gone again; its removal is an event of its own
	}
	rel := t.rel(parent)
	t.stack = append(t.stack[:0], t.dirs[t.root]...)
	dir := t.root
	for _, seg := range rel {
		dir = filepath.Join(dir, seg)
		t.stack = append(t.stack, t.dirs[dir]...)
	}
	// A cancelled ctx stops the walker here, and run sees it too; a watch
	// limit is in t.stop.
	_ = t.entry(parent, rel, gitignore.NewMatcher(t.stack), fs.FileInfoToDirEntry(info))
}

// gone reports a removed file, or every file under a removed directory.
func (t *tree) gone(path string) {
	if _, watched := t.dirs[path]; !watched {
		if inode, known := t.files[path]; known {
			delete(t.files, path)
			t.push(path, true, inode)
		}
		return
	}
	for dir := range t.dirs {
		if within(path, dir) {
			// A directory renamed away keeps its watch; a removed one lost it.
			_ = t.fsw.Remove(dir)
			delete(t.dirs, dir)
		}
	}
	var lost []string
	for file := range t.files {
		if within(path, file) {
			lost = append(lost, file)
		}
	}
	t.pushRemoved(lost, t.files)
	for _, file := range lost {
		delete(t.files, file)
	}
}

// resync walks the whole tree again, with the .gitignore files as they are
// now: files no longer found are reported removed, and files found that
// were not known changed, or, with all (after the kernel dropped events),
// every file found (readers compare size and time cheaply).
func (t *tree) resync(all bool) {
	oldDirs, before := t.dirs, t.files
	t.before, t.reportAll = before, all
	t.dirs, t.files = map[string][]gitignore.Pattern{}, map[string]uint64{}
	t.stack = t.stack[:0]
	_ = t.walkDir(t.root, nil) // as in appeared
	t.before = nil
	for dir := range oldDirs {
		if _, ok := t.dirs[dir]; !ok {
			_ = t.fsw.Remove(dir)
		}
	}
	var lost []string
	for file := range before {
		if _, ok := t.files[file]; !ok {
			lost = append(lost, file)
		}
	}
	t.pushRemoved(lost, before)
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// rel returns dir's path segments relative to the root.
func (t *tree) rel(dir string) []string {
	r, err := filepath.Rel(t.root, dir)
	if err != nil || r == "." {
		return nil
	}
	return strings.Split(r, string(filepath.Separator))
}

// pushRemoved reports files removed, in path order; inodes are what was
// known of them.
func (t *tree) pushRemoved(files []string, inodes map[string]uint64) {
	slices.Sort(files)
	for _, file := range files {
		t.push(file, true, inodes[file])
	}
}

func (t *tree) push(path string, removed bool, inode uint64) {
	now := time.Now()
	p, ok := t.pending[path]
	if !ok {
		p.at = now
		t.queue = append(t.queue, dueNotice{path, now.Add(t.debounce)})
		if len(t.queue) == 1 {
			t.timer.Reset(t.debounce)
		}
	}
	p.removed, p.inode = removed, inode
	t.pending[path] = p
}

// flush hands the changes due by now, and those due within a quarter of
// the debounce after, to the outbox.
func (t *tree) flush(now time.Time) {
	cut := now.Add(t.debounce / 4)
	var batch []Change
	for len(t.queue) > 0 && !t.queue[0].due.After(cut) {
		path := t.queue[0].path
		p := t.pending[path]
		delete(t.pending, path)
		t.queue = t.queue[1:]
		if path == resyncKey {
			t.resync(false)
			continue
		}
		batch = append(batch, Change{Path: path, Removed: p.removed, Inode: p.inode, At: p.at})
	}
	batch = t.pullRenamed(batch)
	t.out.push(batch)
	if len(t.queue) > 0 {
		t.timer.Reset(max(t.queue[0].due.Sub(now), 0))
	}
}

// pullRenamed adds to batch the new names of the files it has removed, if
// they wait yet (same inode): both halves of a rename then reach apply
// together, however late the second event came.
func (t *tree) pullRenamed(batch []Change) []Change {
	gone := map[uint64]bool{}
	for _, c := range batch {
		if c.Removed && c.Inode != 0 {
			gone[c.Inode] = true
		}
	}
	if len(gone) == 0 {
		return batch
	}
	pulled := map[string]bool{}
	for path, p := range t.pending {
		if path != resyncKey && !p.removed && gone[p.inode] {
			batch = append(batch, Change{Path: path, Inode: p.inode, At: p.at})
			pulled[path] = true
			delete(t.pending, path)
		}
	}
	if len(pulled) > 0 {
		t.queue = slices.DeleteFunc(t.queue, func(d dueNotice) bool { return pulled[d.path] })
	}
	return batch
}

// outbox queues changes for the delivering goroutine without bound, so a
// slow apply never stalls reading events (the kernel would drop them).
type outbox struct {
	mu      sync.Mutex
	changes []Change
	ready   chan struct{} // signalled after a push
	dirs    atomic.Int64  // directories watched, for Batch.Dirs
}

func (o *outbox) push(changes []Change) {
	if len(changes) == 0 {
		return
	}
	o.mu.Lock()
	o.changes = append(o.changes, changes...)
	o.mu.Unlock()
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

func (o *outbox) take() []Change {
	o.mu.Lock()
	defer o.mu.Unlock()
	changes := o.changes
	o.changes = nil
	return changes
}

func (o *outbox) deliver(ctx context.Context, apply func(Batch)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.ready:
		}
		if changes := o.take(); len(changes) > 0 && ctx.Err() == nil {
			apply(Batch{Changes: changes, Dirs: int(o.dirs.Load())})
		}
	}
}
