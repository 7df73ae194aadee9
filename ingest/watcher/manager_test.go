package watcher

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/internal/pgtest"
	"github.com/ctxd/ctxd/vfs"
)

// env is a store, a tree, and a manager over them.
type env struct {
	t     *testing.T
	store *vfs.Store
	root  string
	cfg   Config
}

func newEnv(t *testing.T, files map[string]string) *env {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(root, name), content)
	}
	s, err := vfs.Open(filepath.Join(t.TempDir(), "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &env{t: t, store: s, root: root, cfg: Config{ReplicaID: "r1", Policy: ingest.Policy{AllowedRoots: []string{root}}, ScanInterval: time.Hour}}
}

// manager starts a manager; it is closed at cleanup (or before, by the test).
func (e *env) manager() *Manager {
	e.t.Helper()
	m := New(e.store, ingest.New(e.store, ingest.Config{Policy: e.cfg.Policy}), e.cfg)
	if err := m.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(m.Close)
	return m
}

func (e *env) path(rel string) string { return filepath.Join(e.root, filepath.FromSlash(rel)) }

func (e *env) ref(rel string) vfs.Ref {
	return vfs.Ref{Drive: "disk", Path: filepath.ToSlash(e.path(rel))}
}

// item returns the item of rel, or nil.
func (e *env) item(rel string) *vfs.Item {
	e.t.Helper()
	info, err := e.store.Info(context.Background(), e.ref(rel))
	if errors.Is(err, vfs.ErrNotFound) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return &info.Item
}

func (e *env) content(rel string) string {
	e.t.Helper()
	_, b, err := e.store.ReadRaw(context.Background(), e.ref(rel))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func (e *env) revisions(rel string) int {
	e.t.Helper()
	revs, err := e.store.History(context.Background(), e.ref(rel), 100, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(revs)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing after 20s with what says.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 20s: %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, not waiting for time to pass
	}
}

func status(t *testing.T, m *Manager, id string) Status {
	t.Helper()
	states, err := m.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.Watch.ID == id {
			return s.Status
		}
	}
	t.Fatalf("watch %s not listed", id)
	return Status{}
}

func (e *env) add(m *Manager, w Watch) State {
	e.t.Helper()
	if w.Path == "" {
		w.Path = e.root
	}
	st, existed, err := m.Add(context.Background(), w)
	if err != nil || existed {
		e.t.Fatalf("Add = %v, existed %v", err, existed)
	}
	return st
}

// TestManager_events: a watched tree edited, extended, renamed, deleted,
// saved the way editors save, and its .gitignore changed, all while the
// manager runs.
func TestManager_events(t *testing.T) {
	e := newEnv(t, map[string]string{
		".gitignore": "*.log\n",
		"a.md":       "alpha",
		"b.md":       "bravo",
		"sub/c.md":   "charlie",
		"skip.log":   "ignored for now",
	})
	m := e.manager()
	st := e.add(m, Watch{Debounce: 100 * time.Millisecond})
	if st.Status.Mode != ModeEvents || st.Status.Files != 3 || st.Status.LastReconcile.Added != 3 || st.Status.WatchedDirs != 2 {
		t.Fatalf("after Add: %+v; want events mode, 3 files added, 2 directories watched", st.Status)
	}
	if e.content("a.md") != "alpha" || e.item("skip.log") != nil {
		t.Fatal("the first reconcile did not ingest the tree as Walk sees it")
	}
	id := st.Watch.ID
	applied := func() Reconcile { return status(t, m, id).Applied }

	// An edit.
	writeFile(t, e.path("a.md"), "alpha edited")
	waitFor(t, "the edit of a.md applied", func() bool { return e.content("a.md") == "alpha edited" })

	// A new file, in a new directory.
	writeFile(t, e.path("new/d.md"), "delta")
	waitFor(t, "new/d.md added", func() bool { return e.item("new/d.md") != nil })

	// A rename is a move: the item keeps its id and history.
	b := e.item("b.md")
	if err := os.Rename(e.path("b.md"), e.path("sub/b-renamed.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b.md moved", func() bool { return applied().Moved == 1 })
	moved := e.item("sub/b-renamed.md")
	if moved.ID != b.ID || e.item("b.md") != nil || moved.SourceURL != e.path("sub/b-renamed.md") || applied().Moved != 1 {
		t.Errorf("after the rename: item %+v (b was %s), b.md still there: %v, applied %+v; want b's item moved, pointing at its new file",
			moved, b.ID, e.item("b.md") != nil, applied())
	}
	if revs, err := e.store.History(context.Background(), e.ref("sub/b-renamed.md"), 1, 0); err != nil || len(revs) != 1 || revs[0].Op != "move" {
		t.Errorf("b's latest revision = %+v, %v; want one recording the move as op move", revs, err)
	}

	// A directory renamed: each file under it a move.
	c := e.item("sub/c.md")
	if err := os.Rename(e.path("sub"), e.path("sub-renamed")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "sub/ moved", func() bool { return applied().Moved >= 3 })
	if got := e.item("sub-renamed/c.md"); got == nil || got.ID != c.ID || e.item("sub/c.md") != nil || e.item("sub-renamed/b-renamed.md") == nil || applied().Moved != 3 {
		t.Errorf("after renaming sub/: c.md %+v (id was %s), old item left: %v, applied %+v; want both files moved", got, c.ID, e.item("sub/c.md") != nil, applied())
	}
	if err := os.Rename(e.path("sub-renamed"), e.path("sub")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "sub/ moved back", func() bool { return applied().Moved == 5 })

	// An editor's atomic save: write a temp file, rename it over the target.
	a := e.item("a.md")
	writeFile(t, e.path("a.md.tmp1234"), "alpha saved atomically")
	if err := os.Rename(e.path("a.md.tmp1234"), e.path("a.md")); err != nil {
		t.Fatal(err)
	}
	// vim's probe and backup files.
	writeFile(t, e.path("4913"), "")
	if err := os.Remove(e.path("4913")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, e.path("sub/c.md~"), "charlie backup")
	waitFor(t, "the atomic save of a.md applied", func() bool { return e.content("a.md") == "alpha saved atomically" })
	if got := e.item("a.md"); got.ID != a.ID || e.item("a.md.tmp1234") != nil || e.item("4913") != nil || e.item("sub/c.md~") != nil {
		t.Errorf("after the atomic save: a.md id %s (was %s), temp items: %v %v %v; want the same item updated and no temp file stored",
			got.ID, a.ID, e.item("a.md.tmp1234") != nil, e.item("4913") != nil, e.item("sub/c.md~") != nil)
	}

	// A deletion: reported missing, the item kept.
	missing := applied().Missing
	if err := os.Remove(e.path("sub/c.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deletion of sub/c.md reported", func() bool { return applied().Missing == missing+1 })
	if e.item("sub/c.md") == nil {
		t.Error("the item of a deleted file was deleted; want it kept")
	}

	// .gitignore: new.md/ excluded now (reported missing, kept), *.log included.
	writeFile(t, e.path(".gitignore"), "new/\n")
	waitFor(t, "skip.log included", func() bool { return e.item("skip.log") != nil })
	waitFor(t, "new/d.md excluded", func() bool { return applied().Missing == missing+2 })
	if e.item("new/d.md") == nil {
		t.Error("the item of a file newly excluded was deleted; want it kept")
	}
	writeFile(t, e.path("new/e.md"), "echo")
	writeFile(t, e.path("marker.md"), "marker")
	waitFor(t, "marker.md added", func() bool { return e.item("marker.md") != nil })
	if e.item("new/e.md") != nil {
		t.Error("a file the changed .gitignore excludes was added")
	}
	waitFor(t, "nothing pending", func() bool { return status(t, m, id).Pending == 0 })
	if st := status(t, m, id); st.Errors != 0 || st.LastEventAt.IsZero() || st.Lag <= 0 {
		t.Errorf("status %+v; want no errors, a last event and a lag", st)
	}
}

// TestManager_deleteMissing deletes the item of a vanished file.
func TestManager_deleteMissing(t *testing.T) {
	e := newEnv(t, map[string]string{"a.md": "alpha", "b.md": "bravo"})
	m := e.manager()
	e.add(m, Watch{DeleteMissing: true, Debounce: 20 * time.Millisecond})
	if err := os.Remove(e.path("a.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a.md's item deleted", func() bool { return e.item("a.md") == nil })
	if e.item("b.md") == nil {
		t.Error("b.md's item went too")
	}
}

// TestManager_reconcileAtStart: what changed while no manager ran is
// applied at start, reading only the files that changed.
func TestManager_reconcileAtStart(t *testing.T) {
	files := map[string]string{".gitignore": "", "a.md": "alpha", "b.md": "bravo", "c.md": "charlie", "x.md": "x-ray"}
	for i := range 20 {
		files[filepath.Join("same", string(rune('a'+i))+".md")] = strings.Repeat("unchanged ", 50)
	}
	e := newEnv(t, files)
	m := e.manager()
	id := e.add(m, Watch{Tags: []string{"watched"}}).Watch.ID
	b := e.item("b.md")
	m.Close()

	// While down: an edit, a new file, a deletion, a rename, an exclusion.
	writeFile(t, e.path("a.md"), "alpha, edited while down")
	writeFile(t, e.path("d.md"), "delta, new while down")
	if err := os.Remove(e.path("c.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.path("moved"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(e.path("b.md"), e.path("moved/b.md")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, e.path(".gitignore"), "x.md\n")

	m2 := e.manager()
	waitFor(t, "the reconcile at start", func() bool { return status(t, m2, id).Mode == ModeEvents })
	st := status(t, m2, id)
	want := Reconcile{Added: 1, Updated: 1, Moved: 1, Missing: 2, Unchanged: 20,
		BytesRead: int64(len("alpha, edited while down") + len("delta, new while down") + len("bravo"))}
	if st.LastReconcile != want {
		t.Errorf("reconcile at start: %+v, want %+v (the bytes of the edited, new and moved files only)", st.LastReconcile, want)
	}
	if e.content("a.md") != "alpha, edited while down" || e.item("d.md") == nil || e.item("c.md") == nil || e.item("x.md") == nil {
		t.Error("the reconcile did not apply the edit and the new file, or dropped the items of the removed and excluded files")
	}
	if got := e.item("moved/b.md"); got == nil || got.ID != b.ID || e.item("b.md") != nil {
		t.Errorf("moved/b.md = %+v; want b.md's item (id %s), moved", got, b.ID)
	}
	if n := e.revisions("same/a.md"); n != 1 {
		t.Errorf("an unchanged file's item has %d revisions, want 1", n)
	}
	if got := e.item("d.md"); got == nil || len(got.Tags) != 1 || got.Tags[0] != "watched" {
		t.Errorf("d.md = %+v; want the watch's tag", got)
	}
}

// TestManager_scanning: a tree over the cap on directory watches is
// scanned, said so in its status, and its changes still arrive.
func TestManager_scanning(t *testing.T) {
	e := newEnv(t, map[string]string{"a.md": "alpha", "sub/b.md": "bravo"})
	e.cfg.MaxDirs, e.cfg.ScanInterval = 1, 20*time.Millisecond
	m := e.manager()
	st := e.add(m, Watch{})
	if st.Status.Mode != ModeScanning || !strings.Contains(st.Status.Reason, "max_dirs") || st.Status.WatchedDirs != 0 {
		t.Fatalf("status %+v; want scanning, with a reason naming max_dirs", st.Status)
	}
	if e.item("sub/b.md") == nil {
		t.Fatal("the first scan did not ingest the tree")
	}
	writeFile(t, e.path("sub/b.md"), "bravo, edited")
	writeFile(t, e.path("sub/new.md"), "new")
	waitFor(t, "the edit found by a scan", func() bool { return e.content("sub/b.md") == "bravo, edited" && e.item("sub/new.md") != nil })
}

// TestManager_failedRoot: a watch whose tree is gone at start fails, keeps
// its items, and recovers when the tree is back.
func TestManager_failedRoot(t *testing.T) {
	e := newEnv(t, map[string]string{"tree/a.md": "alpha"})
	e.cfg.ScanInterval = 20 * time.Millisecond
	m := e.manager()
	id := e.add(m, Watch{Path: e.path("tree")}).Watch.ID
	m.Close()
	if err := os.Rename(e.path("tree"), e.path("elsewhere")); err != nil {
		t.Fatal(err)
	}
	m2 := e.manager()
	waitFor(t, "the watch failed", func() bool { return status(t, m2, id).Mode == ModeFailed })
	if st := status(t, m2, id); !strings.Contains(st.Reason, "tree") || st.Errors == 0 || e.item("tree/a.md") == nil {
		t.Errorf("status %+v, item kept %v; want the reason naming the tree, an error, and the item kept", st, e.item("tree/a.md") != nil)
	}
	if err := os.Rename(e.path("elsewhere"), e.path("tree")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watch recovered", func() bool { return status(t, m2, id).Mode == ModeEvents })

	// Its root going while it runs fails it too.
	if err := os.Rename(e.path("tree"), e.path("elsewhere")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watch failed when its root went", func() bool { return status(t, m2, id).Mode == ModeFailed })
	if e.item("tree/a.md") == nil {
		t.Error("the item of a watch whose root went was deleted")
	}
}

func TestManager_Add_refuses(t *testing.T) {
	e := newEnv(t, map[string]string{"a.md": "alpha", "sub/b.md": "bravo"})
	e.cfg.MaxWatches = 2
	m := e.manager()
	first := e.add(m, Watch{Path: e.path("sub")})
	tests := []struct {
		name string
		w    Watch
		kind error
	}{
		{"relative", Watch{Path: "sub"}, ErrInvalid},
		{"a file", Watch{Path: e.path("a.md")}, ErrInvalid},
		{"missing", Watch{Path: e.path("nope")}, ErrInvalid},
		{"outside the allowed roots", Watch{Path: t.TempDir()}, ingest.ErrRefused},
		{"around a watched tree", Watch{Path: e.root}, ErrInvalid},
		{"bad drive", Watch{Path: e.root, Drive: "Bad Drive"}, vfs.ErrInvalid},
		{"bad exclude", Watch{Path: e.root, Exclude: []string{"#comment"}}, ingest.ErrInvalid},
		{"bad tag", Watch{Path: e.root, Tags: []string{" "}}, vfs.ErrInvalid},
		{"debounce", Watch{Path: e.root, Debounce: 2 * time.Minute}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := m.Add(context.Background(), tt.w)
			if !errors.Is(err, tt.kind) {
				t.Errorf("Add = %v, want kind %v", err, tt.kind)
			}
		})
	}
	again, existed, err := m.Add(context.Background(), Watch{Path: e.path("sub") + "/"})
	if err != nil || !existed || again.Watch.ID != first.Watch.ID {
		t.Errorf("Add of a watched path = %+v, %v, %v; want the existing watch", again.Watch, existed, err)
	}
	for _, dir := range []string{"other-tree-a", "other-tree-b"} {
		if err := os.Mkdir(e.path(dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.add(m, Watch{Path: e.path("other-tree-a")})
	_, _, err = m.Add(context.Background(), Watch{Path: e.path("other-tree-b")})
	if !errors.Is(err, ErrLimit) {
		t.Errorf("a third watch with MaxWatches 2: %v, want ErrLimit", err)
	}
}

func TestMain(m *testing.M) { pgtest.Run(m) }

// TestManager_adopt: a watch carrying another replica's id runs on a store
// of its own (a store copied by ctxd migrate); on a shared store only one
// carrying the local id is adopted, by one replica.
func TestManager_adopt(t *testing.T) {
	e := newEnv(t, map[string]string{"a.md": "alpha"})
	e.cfg.ReplicaID = "pg-replica-1"
	m := e.manager()
	id := e.add(m, Watch{}).Watch.ID
	m.Close()
	e.cfg.ReplicaID = "local"
	m = e.manager()
	waitFor(t, "the watch adopted on a store of its own", func() bool { return status(t, m, id).Mode == ModeEvents })
	if states, err := m.List(context.Background()); err != nil || states[0].Watch.ReplicaID != "local" {
		t.Fatalf("List = %+v, %v; want the watch adopted by replica local", states, err)
	}
	m.Close()

	// The same record on a shared store: its replica ids are the replicas'.
	loc := pgtest.NewDatabase(t)
	pg, err := vfs.Open(loc, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	recs, err := e.store.ListRecords(context.Background(), recordKind)
	if err != nil || len(recs) != 1 {
		t.Fatalf("ListRecords = %v, %v", recs, err)
	}
	if err := pg.PutRecord(context.Background(), recordKind, recs[0].Name, recs[0].Value); err != nil {
		t.Fatal(err)
	}
	e.store = pg
	e.cfg.LocalID = "local"
	e.cfg.ReplicaID = "replica-a"
	a := e.manager()
	e.cfg.ReplicaID = "replica-b"
	b := e.manager()
	waitFor(t, "one replica adopting the watch", func() bool {
		return status(t, a, id).Mode == ModeEvents || status(t, b, id).Mode == ModeEvents
	})
	sa, sb := status(t, a, id), status(t, b, id)
	if (sa.Mode == ModeRemote) == (sb.Mode == ModeRemote) {
		t.Errorf("modes %v and %v; want the watch run by one replica, remote on the other", sa.Mode, sb.Mode)
	}
	other := New(pg, ingest.New(pg, ingest.Config{Policy: e.cfg.Policy}), Config{ReplicaID: "replica-c", LocalID: "local", Policy: e.cfg.Policy})
	defer other.Close()
	if err := other.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := status(t, other, id); st.Mode != ModeRemote {
		t.Errorf("a third replica: mode %v, want remote (adopted already)", st.Mode)
	}
}
