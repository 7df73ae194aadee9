package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
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

// TestWatch_debounce coalesces a path's events, the latest kind winning, and
// keeps the order of the paths' first events.
func TestWatch_debounce(t *testing.T) {
	tr := &tree{pending: map[string]bool{}, timer: time.NewTimer(time.Hour), out: &outbox{ready: make(chan struct{}, 1)}}
	tr.push("a", false)
	tr.push("b", false)
	tr.push("a", true)
	tr.push("c", true)
	tr.push("c", false)
	tr.flush(time.Now()) // nothing due yet
	if got := tr.out.take(); len(got) != 0 {
		t.Fatalf("flushed before due: %v", got)
	}
	tr.flush(time.Now().Add(debounceWindow))
	want := []notice{{"a", true}, {"b", false}, {"c", false}}
	if got := tr.out.take(); !slices.Equal(got, want) {
		t.Errorf("flushed %v, want %v", got, want)
	}
	tr.push("a", false)
	tr.flush(time.Now().Add(debounceWindow))
	if got := tr.out.take(); !slices.Equal(got, []notice{{"a", false}}) {
		t.Errorf("a path's next event after a flush: %v", got)
	}
}

// TestWatch_resync reports everything again, and what vanished as removed,
// as after the kernel dropped events.
func TestWatch_resync(t *testing.T) {
	root := mustTree(t, map[string]string{"a.txt": "", "d/b.txt": "", "d/c.log": ""})
	tr, err := watchTree(context.Background(), root, WalkOptions{Policy: Policy{AllowedRoots: []string{root}}, Exclude: []string{"*.log"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.fsw.Close()
	if err := os.RemoveAll(filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(root, "e", "new.txt"), "")

	tr.resync()
	tr.flush(time.Now().Add(debounceWindow))
	want := []notice{
		{filepath.Join(root, "a.txt"), false},
		{filepath.Join(root, "e", "new.txt"), false},
		{filepath.Join(root, "d", "b.txt"), true},
	}
	if got := tr.out.take(); !slices.Equal(got, want) {
		t.Errorf("resync reported %v, want %v", got, want)
	}
	if _, ok := tr.dirs[filepath.Join(root, "e")]; !ok {
		t.Error("the new directory is not watched after resync")
	}
}
