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
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// debounceWindow is how long events for one path coalesce into one call.
const debounceWindow = 200 * time.Millisecond

// Watch watches the directory tree at root with fsnotify and reports
// changes: changed(path) for each file created, written or chmodded (it may
// have become readable), removed(path) for each file removed or renamed away,
// including every file under a directory removed or renamed away. New
// directories are watched and their files reported. A changed .gitignore
// applies to later events. Existing files are not reported at the start:
// walk the tree first.
//
// Files are filtered as Walk filters them. Those Walk reports refused
// (secrets, symlinks out of the tree or to directories) are not reported, as
// Add skips them; those it reports too large or unreadable are, and reading
// them will say why.
//
// Events for one path within 200ms of its first coalesce into one call, the
// latest kind winning. Calls come from one goroutine, in order, and none
// comes after Watch returns; a slow callback does not make Watch miss events.
//
// Watch returns nil when ctx is done, or a setup error; ready, if non-nil,
// is closed once the initial watches are set.
func Watch(ctx context.Context, root string, o WalkOptions, ready chan<- struct{}, changed, removed func(path string)) error {
	t, err := watchTree(ctx, root, o)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer t.fsw.Close()
	if ready != nil {
		close(ready)
	}
	var wg sync.WaitGroup
	wg.Go(func() { t.out.deliver(ctx, changed, removed) })
	defer wg.Wait()
	t.run(ctx)
	return nil
}

// tree is the state of a watched tree, owned by Watch's goroutine.
type tree struct {
	*walker
	fsw   *fsnotify.Watcher
	dirs  map[string][]gitignore.Pattern // watched directory → patterns of its own .gitignore
	files map[string]bool                // files reported or known at the start
	live  bool                           // past the initial walk: report what is found

	// Debouncing: notices wait in pending for debounceWindow from their
	// path's first event, then go to out in the order of those first events.
	pending map[string]bool // path → removed; the latest event's kind wins
	queue   []dueNotice     // due times ascend
	timer   *time.Timer     // runs while queue is not empty
	out     *outbox
}

type dueNotice struct {
	path string
	due  time.Time
}

// watchTree watches every directory of the tree at root.
func watchTree(ctx context.Context, root string, o WalkOptions) (*tree, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, newError(ErrUnreadable, root, "raise fs.inotify.max_user_instances", "cannot watch %s: %v", root, err)
	}
	t := &tree{
		fsw:     fsw,
		dirs:    map[string][]gitignore.Pattern{},
		files:   map[string]bool{},
		pending: map[string]bool{},
		timer:   time.NewTimer(time.Hour),
		out:     &outbox{ready: make(chan struct{}, 1)},
	}
	t.timer.Stop()
	var info fs.FileInfo
	if t.walker, info, err = newWalker(ctx, root, o, t.found); err == nil {
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
	return t, nil
}

func (t *tree) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-t.fsw.Events:
			t.handle(ev)
		case err := <-t.fsw.Errors:
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				t.resync()
			}
		case now := <-t.timer.C:
			t.flush(now)
		}
	}
}

// watchDir is the walker's enterDir hook.
func (t *tree) watchDir(dir string, own []gitignore.Pattern) error {
	if err := t.fsw.Add(dir); err != nil {
		return newError(ErrUnreadable, dir, "raise fs.inotify.max_user_watches, or exclude directories", "cannot watch %s: %v", dir, err)
	}
	t.dirs[dir] = own
	return nil
}

// found is the walker's fn.
func (t *tree) found(e Entry) error {
	if e.Err != nil && (errors.Is(e.Err, ErrRefused) || isDir(e.Path)) {
		return nil // kept out by the tree's rules, or not a file
	}
	t.files[e.Path] = true
	if t.live {
		t.push(e.Path, false)
	}
	return nil
}

func (t *tree) handle(ev fsnotify.Event) {
	parent, name := filepath.Split(ev.Name)
	parent = filepath.Clean(parent)
	if _, watched := t.dirs[parent]; !watched {
		return // from a directory just removed
	}
	if name == ".gitignore" {
		t.dirs[parent] = t.ownPatterns(parent, t.rel(parent))
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
	// Only a cancelled ctx stops the walker here, and run sees it too.
	_ = t.entry(parent, rel, gitignore.NewMatcher(t.stack), fs.FileInfoToDirEntry(info))
}

// gone reports a removed file, or every file under a removed directory.
func (t *tree) gone(path string) {
	if _, watched := t.dirs[path]; !watched {
		if t.files[path] {
			delete(t.files, path)
			t.push(path, true)
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
			delete(t.files, file)
		}
	}
	t.pushRemoved(lost)
}

// resync walks the whole tree again after the kernel dropped events: every
// file is reported changed (readers compare size and time cheaply) and the
// files no longer there removed.
func (t *tree) resync() {
	oldDirs, oldFiles := t.dirs, t.files
	t.dirs, t.files = map[string][]gitignore.Pattern{}, map[string]bool{}
	t.stack = t.stack[:0]
	_ = t.walkDir(t.root, nil) // as in appeared
	for dir := range oldDirs {
		if _, ok := t.dirs[dir]; !ok {
			_ = t.fsw.Remove(dir)
		}
	}
	var lost []string
	for file := range oldFiles {
		if !t.files[file] {
			lost = append(lost, file)
		}
	}
	t.pushRemoved(lost)
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

func (t *tree) pushRemoved(files []string) {
	slices.Sort(files)
	for _, file := range files {
		t.push(file, true)
	}
}

func (t *tree) push(path string, removed bool) {
	if _, ok := t.pending[path]; !ok {
		t.queue = append(t.queue, dueNotice{path, time.Now().Add(debounceWindow)})
		if len(t.queue) == 1 {
			t.timer.Reset(debounceWindow)
		}
	}
	t.pending[path] = removed
}

// flush hands the notices due by now to the outbox.
func (t *tree) flush(now time.Time) {
	for len(t.queue) > 0 && !t.queue[0].due.After(now) {
		path := t.queue[0].path
		t.out.push(notice{path, t.pending[path]})
		delete(t.pending, path)
		t.queue = t.queue[1:]
	}
	if len(t.queue) > 0 {
		t.timer.Reset(t.queue[0].due.Sub(now))
	}
}

type notice struct {
	path    string
	removed bool
}

// outbox queues notices for the delivering goroutine without bound, so a
// slow callback never stalls reading events (the kernel would drop them).
type outbox struct {
	mu      sync.Mutex
	notices []notice
	ready   chan struct{} // signalled after a push
}

func (o *outbox) push(n notice) {
	o.mu.Lock()
	o.notices = append(o.notices, n)
	o.mu.Unlock()
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

func (o *outbox) take() []notice {
	o.mu.Lock()
	defer o.mu.Unlock()
	notices := o.notices
	o.notices = nil
	return notices
}

func (o *outbox) deliver(ctx context.Context, changed, removed func(path string)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.ready:
		}
		for _, n := range o.take() {
			if ctx.Err() != nil {
				return
			}
			if n.removed {
				removed(n.path)
			} else {
				changed(n.path)
			}
		}
	}
}
