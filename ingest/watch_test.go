package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// watcher runs Watch on root and collects its calls as "changed rel" and
// "removed rel", rel being slash-separated and relative to root.
type watcher struct {
	t      *testing.T
	root   string
	events chan string
	seen   []string // every call received so far
}

func startWatch(t *testing.T, root string, o WalkOptions) *watcher {
	t.Helper()
	if o.Policy.AllowedRoots == nil {
		o.Policy.AllowedRoots = []string{root}
	}
	w := &watcher{t: t, root: root, events: make(chan string, 1000)}
	call := func(kind string) func(string) {
		return func(path string) {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				t.Errorf("%s outside %s", path, root)
			}
			w.events <- kind + " " + filepath.ToSlash(rel)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- Watch(ctx, root, o, ready, call("changed"), call("removed")) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Watch returned %v after cancel, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Watch did not return after cancel")
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Watch: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Watch not ready after 10s")
	}
	return w
}

// waitFor waits up to 10s for the call want and returns the calls received
// before it.
func (w *watcher) waitFor(want string) []string {
	w.t.Helper()
	start := len(w.seen)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-w.events:
			w.seen = append(w.seen, got)
			if got == want {
				return w.seen[start : len(w.seen)-1]
			}
		case <-deadline:
			w.t.Fatalf("no %q within 10s; calls so far: %q", want, w.seen)
		}
	}
}

func (w *watcher) write(rel, content string) {
	w.t.Helper()
	mustWrite(w.t, filepath.Join(w.root, filepath.FromSlash(rel)), content)
}

func (w *watcher) assertNever(calls ...string) {
	w.t.Helper()
	for _, call := range calls {
		if slices.Contains(w.seen, call) {
			w.t.Errorf("unexpected call %q; calls: %q", call, w.seen)
		}
	}
}

func TestWatch(t *testing.T) {
	root := mustTree(t, map[string]string{
		".gitignore":     "*.log\n",
		"a.txt":          "a",
		"old/keep.txt":   "k",
		"old/deep/x.txt": "x",
		"gone/g.txt":     "g",
	})
	outside := t.TempDir()
	w := startWatch(t, root, WalkOptions{})

	w.write("new.txt", "hello")
	w.waitFor("changed new.txt")

	w.write("ignored.log", "noise")
	w.write(".hidden", "noise")
	w.write("node_modules/pkg/index.js", "noise")
	w.write("server.pem", "secret")
	mustWrite(t, filepath.Join(outside, "target.txt"), "outside")
	mustSymlink(t, filepath.Join(outside, "target.txt"), filepath.Join(root, "escape.txt"))
	w.write("marker1.txt", "")
	w.waitFor("changed marker1.txt")
	w.assertNever("changed ignored.log", "changed .hidden", "changed node_modules/pkg/index.js", "changed server.pem", "changed escape.txt")

	w.write("sub/dir/f.txt", "in a new directory")
	w.waitFor("changed sub/dir/f.txt")
	w.write("sub/dir/later.txt", "in the new directory, once watched")
	w.waitFor("changed sub/dir/later.txt")

	if err := os.Remove(filepath.Join(root, "a.txt")); err != nil {
		t.Fatal(err)
	}
	w.waitFor("removed a.txt")

	if err := os.Rename(filepath.Join(root, "old"), filepath.Join(outside, "old")); err != nil {
		t.Fatal(err)
	}
	w.waitFor("removed old/deep/x.txt")
	w.waitFor("removed old/keep.txt")

	if err := os.RemoveAll(filepath.Join(root, "gone")); err != nil {
		t.Fatal(err)
	}
	w.waitFor("removed gone/g.txt")

	// Nothing under the directory moved away is reported any more.
	mustWrite(t, filepath.Join(outside, "old", "moved.txt"), "")

	w.write(".gitignore", "*.log\n*.tmp\n")
	w.write("x.tmp", "")
	w.write("marker2.txt", "")
	w.waitFor("changed marker2.txt")
	w.assertNever("changed x.tmp", "changed old/moved.txt")
}

func TestWatch_setupErrors(t *testing.T) {
	root := mustTree(t, map[string]string{"f.txt": ""})
	noop := func(string) {}
	tests := []struct {
		name string
		root string
		kind error
	}{
		{"outside the allowed roots", t.TempDir(), ErrRefused},
		{"a file", filepath.Join(root, "f.txt"), ErrInvalid},
		{"missing", filepath.Join(root, "missing"), ErrUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready := make(chan struct{})
			err := Watch(context.Background(), tt.root, WalkOptions{Policy: Policy{AllowedRoots: []string{root}}}, ready, noop, noop)
			if !errors.Is(err, tt.kind) {
				t.Errorf("Watch = %v, want kind %v", err, tt.kind)
			}
			select {
			case <-ready:
				t.Error("ready closed although setup failed")
			default:
			}
		})
	}
}

// changeKinds is changes as "path removed" pairs, for comparing.
func changeKinds(cs []Change) []string {
	var out []string
	for _, c := range cs {
		kind := "changed"
		if c.Removed {
			kind = "removed"
		}
		out = append(out, kind+" "+c.Path)
	}
	return out
}

// TestWatch_debounce coalesces a path's events, the latest kind winning, and
// keeps the order of the paths' first events.
func TestWatch_debounce(t *testing.T) {
	tr := &tree{debounce: DefaultDebounce, pending: map[string]pendingChange{}, timer: time.NewTimer(time.Hour), out: &outbox{ready: make(chan struct{}, 1)}}
	tr.push("a", false, 1)
	tr.push("b", false, 2)
	tr.push("a", true, 1)
	tr.push("c", true, 3)
	tr.push("c", false, 4)
	tr.flush(time.Now().Add(-DefaultDebounce)) // nothing due yet, even with the slack
	if got := tr.out.take(); len(got) != 0 {
		t.Fatalf("flushed before due: %v", got)
	}
	tr.flush(time.Now().Add(DefaultDebounce))
	got := tr.out.take()
	if want := []string{"removed a", "changed b", "changed c"}; !slices.Equal(changeKinds(got), want) {
		t.Errorf("flushed %v, want %v", changeKinds(got), want)
	}
	if len(got) == 3 && (got[0].Inode != 1 || got[2].Inode != 4 || got[0].At.IsZero()) {
		t.Errorf("flushed %+v, want the latest inode and the first event's time", got)
	}
	tr.push("a", false, 1)
	tr.flush(time.Now().Add(DefaultDebounce))
	if got := changeKinds(tr.out.take()); !slices.Equal(got, []string{"changed a"}) {
		t.Errorf("a path's next event after a flush: %v", got)
	}
}

// TestWatch_resync reports everything again, and what vanished as removed,
// as after the kernel dropped events.
func TestWatch_resync(t *testing.T) {
	root := mustTree(t, map[string]string{"a.txt": "", "d/b.txt": "", "d/c.log": ""})
	tr, err := watchTree(context.Background(), root, WatchConfig{Debounce: DefaultDebounce,
		Walk: WalkOptions{Policy: Policy{AllowedRoots: []string{root}}, Exclude: []string{"*.log"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.fsw.Close()
	if err := os.RemoveAll(filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(root, "e", "new.txt"), "")

	tr.resync(true)
	tr.flush(time.Now().Add(DefaultDebounce))
	want := []string{
		"changed " + filepath.Join(root, "a.txt"),
		"changed " + filepath.Join(root, "e", "new.txt"),
		"removed " + filepath.Join(root, "d", "b.txt"),
	}
	if got := changeKinds(tr.out.take()); !slices.Equal(got, want) {
		t.Errorf("resync reported %v, want %v", got, want)
	}
	if _, ok := tr.dirs[filepath.Join(root, "e")]; !ok {
		t.Error("the new directory is not watched after resync")
	}
}

// batchWatcher runs WatchTree and hands over its batches.
type batchWatcher struct {
	batches chan Batch
	done    chan error
}

func startWatchTree(t *testing.T, root string, cfg WatchConfig) *batchWatcher {
	t.Helper()
	cfg.Walk.Policy.AllowedRoots = []string{root}
	w := &batchWatcher{batches: make(chan Batch, 100), done: make(chan error, 1)}
	ready := make(chan struct{})
	cfg.Ready = func(int) { close(ready) }
	ctx, cancel := context.WithCancel(context.Background())
	go func() { w.done <- WatchTree(ctx, root, cfg, func(b Batch) { w.batches <- b }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-w.done; err != nil {
			t.Errorf("WatchTree returned %v after cancel", err)
		}
	})
	select {
	case <-ready:
	case err := <-w.done:
		t.Fatalf("WatchTree: %v", err)
	}
	return w
}

// next returns the next batch's changes, relative to root.
func (w *batchWatcher) next(t *testing.T, root string) []Change {
	t.Helper()
	select {
	case b := <-w.batches:
		for i := range b.Changes {
			b.Changes[i].Path, _ = filepath.Rel(root, b.Changes[i].Path)
		}
		return b.Changes
	case <-time.After(10 * time.Second):
		t.Fatal("no batch within 10s")
	}
	return nil
}

// TestWatchTree_renameInOneBatch: both names of a rename arrive in one
// batch, the old one removed with the file's inode, the new one changed
// with the same inode, so a reader can pair them into a move.
func TestWatchTree_renameInOneBatch(t *testing.T) {
	root := mustTree(t, map[string]string{"a.txt": "a"})
	w := startWatchTree(t, root, WatchConfig{Debounce: 50 * time.Millisecond})
	if err := os.Rename(filepath.Join(root, "a.txt"), filepath.Join(root, "b.txt")); err != nil {
		t.Fatal(err)
	}
	got := w.next(t, root)
	if want := []string{"removed a.txt", "changed b.txt"}; !slices.Equal(changeKinds(got), want) {
		t.Fatalf("batch %v, want %v", changeKinds(got), want)
	}
	if got[0].Inode == 0 || got[0].Inode != got[1].Inode {
		t.Errorf("inodes %d and %d, want the same file's", got[0].Inode, got[1].Inode)
	}
}

// TestWatchTree_gitignoreChange applies a changed .gitignore to the files
// already there: newly excluded ones removed, newly included ones changed.
func TestWatchTree_gitignoreChange(t *testing.T) {
	root := mustTree(t, map[string]string{".gitignore": "*.log\n", "a.txt": "a", "b.log": "b", "d/c.txt": "c"})
	w := startWatchTree(t, root, WatchConfig{Debounce: 50 * time.Millisecond})
	mustWrite(t, filepath.Join(root, ".gitignore"), "*.txt\n")
	got := changeKinds(w.next(t, root))
	slices.Sort(got)
	if want := []string{"changed b.log", "removed a.txt", "removed d/c.txt"}; !slices.Equal(got, want) {
		t.Errorf("after the .gitignore change: %v, want %v", got, want)
	}
}

// TestWatchTree_maxDirs: a tree over the cap fails at setup, and a watched
// tree that grows past it stops with ErrWatchLimit.
func TestWatchTree_maxDirs(t *testing.T) {
	root := mustTree(t, map[string]string{"a/f.txt": "", "b/f.txt": ""})
	err := WatchTree(context.Background(), root, WatchConfig{MaxDirs: 2, Walk: WalkOptions{Policy: Policy{AllowedRoots: []string{root}}}}, func(Batch) {})
	if !errors.Is(err, ErrWatchLimit) {
		t.Errorf("WatchTree of 3 directories with MaxDirs 2 = %v, want ErrWatchLimit", err)
	}

	ready := make(chan int, 1)
	done := make(chan error, 1)
	go func() {
		done <- WatchTree(context.Background(), root, WatchConfig{MaxDirs: 3, Ready: func(n int) { ready <- n },
			Walk: WalkOptions{Policy: Policy{AllowedRoots: []string{root}}}}, func(Batch) {})
	}()
	if n := <-ready; n != 3 {
		t.Errorf("Ready(%d), want 3 directories", n)
	}
	if err := os.Mkdir(filepath.Join(root, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ie *Error
		if !errors.As(err, &ie) || !errors.Is(err, ErrWatchLimit) || !strings.Contains(ie.Hint, "max_dirs") {
			t.Errorf("WatchTree after a 4th directory = %v, want ErrWatchLimit with a hint naming max_dirs", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WatchTree did not stop when the tree outgrew its cap")
	}
}

// TestWatch_renameHalvesTogether: the new name of a renamed file comes
// with its removal even when its own event came later than the slack.
func TestWatch_renameHalvesTogether(t *testing.T) {
	tr := &tree{debounce: DefaultDebounce, pending: map[string]pendingChange{}, timer: time.NewTimer(time.Hour), out: &outbox{ready: make(chan struct{}, 1)}}
	tr.push("old", true, 7)
	tr.push("other", false, 8)
	due := time.Now().Add(DefaultDebounce)
	// The new name's event came an hour later: far past the slack.
	tr.pending["new"] = pendingChange{inode: 7, at: due}
	tr.queue = append(tr.queue, dueNotice{"new", due.Add(time.Hour)})
	tr.flush(due)
	got := changeKinds(tr.out.take())
	if want := []string{"removed old", "changed other", "changed new"}; !slices.Equal(got, want) {
		t.Errorf("flushed %v, want %v: the new name pulled forward", got, want)
	}
	if len(tr.queue) != 0 || len(tr.pending) != 0 {
		t.Errorf("left queued %v, pending %v", tr.queue, tr.pending)
	}
}
