package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/ingest/watcher"
)

// watchTree writes files (relative path → content) under a fresh directory.
func watchTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		writeTreeFile(t, filepath.Join(root, rel), content)
	}
	return root
}

func writeTreeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bm25Refs searches conn in BM25 mode.
func bm25Refs(t *testing.T, conn *grpc.ClientConn, text string) []string {
	t.Helper()
	return resultRefs(doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Limit: 10,
		Queries: []*ctxdv1.SearchQuery{{Text: text}}}))
}

func listWatches(t *testing.T, conn *grpc.ClientConn) []*ctxdv1.Watch {
	t.Helper()
	resp, err := ctxdv1.NewWatchServiceClient(conn).ListWatches(context.Background(), &ctxdv1.ListWatchesRequest{})
	if err != nil {
		t.Fatalf("ListWatches: %v", err)
	}
	return resp.GetWatches()
}

// startStoppable starts a daemon with cfg and returns it with a stop func
// (also run at cleanup).
func startStoppable(t *testing.T, cfg Config) (*testDaemon, func()) {
	t.Helper()
	d, err := Start(context.Background(), cfg, slogDiscard())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	t.Cleanup(stop)
	return &testDaemon{Daemon: d, cfg: cfg}, stop
}

// TestWatchService_persistsAcrossRestart: AddWatch ingests the tree and
// answers once it is searchable; edits arrive while the daemon runs; a
// restart reconciles what changed while it was down; RemoveWatch keeps the
// items.
func TestWatchService_persistsAcrossRestart(t *testing.T) {
	root := watchTree(t, map[string]string{"a.md": "# A\n\naardvark notes\n", "sub/b.md": "# B\n\nbadger notes\n", "c.md": "# C\n\ncheetah\n"})
	cfg := testConfig(t)
	cfg.AllowedRoots = []string{root}
	d, stop := startStoppable(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	wc := ctxdv1.NewWatchServiceClient(conn)

	resp, err := wc.AddWatch(context.Background(), &ctxdv1.AddWatchRequest{Path: root, DebounceMs: 50, Tags: []string{"w"}})
	if err != nil {
		t.Fatal(err)
	}
	w := resp.GetWatch()
	if resp.GetExisted() || w.GetStatus().GetMode() != ctxdv1.WatchMode_WATCH_MODE_EVENTS || w.GetStatus().GetFiles() != 3 ||
		w.GetStatus().GetLastReconcile().GetAdded() != 3 || w.GetReplicaId() == "" || w.GetCreatedAt() == nil || w.GetDebounceMs() != 50 {
		t.Fatalf("AddWatch = %v; want a new watch following 3 files with events", resp)
	}
	if refs := bm25Refs(t, conn, "aardvark"); len(refs) != 1 {
		t.Errorf("search right after AddWatch found %v; want a.md", refs)
	}
	again, err := wc.AddWatch(context.Background(), &ctxdv1.AddWatchRequest{Path: root + "/"})
	if err != nil || !again.GetExisted() || again.GetWatch().GetId() != w.GetId() {
		t.Errorf("AddWatch of the same path = %v, %v; want the existing watch", again, err)
	}

	writeTreeFile(t, filepath.Join(root, "a.md"), "# A\n\naardvark and zebrafinch\n")
	waitFor(t, 20*time.Second, "the edit searchable", func() bool { return len(bm25Refs(t, conn, "zebrafinch")) == 1 })

	st, err := ctxdv1.NewAdminServiceClient(conn).Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil || len(st.GetWatches()) != 1 || st.GetWatches()[0].GetId() != w.GetId() || st.GetWatches()[0].GetStatus().GetLastEventAt() == nil {
		t.Fatalf("Status watches = %v, %v; want the watch with its last event", st.GetWatches(), err)
	}
	_ = d
	stop()

	// While the daemon is down: an edit, a new file, a removal.
	writeTreeFile(t, filepath.Join(root, "sub/b.md"), "# B\n\nbadger and quokka\n")
	writeTreeFile(t, filepath.Join(root, "d.md"), "# D\n\ndugong\n")
	if err := os.Remove(filepath.Join(root, "c.md")); err != nil {
		t.Fatal(err)
	}
	startStoppable(t, cfg)
	conn = dial(t, "unix://"+cfg.Socket)
	var listed []*ctxdv1.Watch
	waitFor(t, 20*time.Second, "the reconcile at start", func() bool {
		listed = listWatches(t, conn)
		return len(listed) == 1 && listed[0].GetStatus().GetMode() == ctxdv1.WatchMode_WATCH_MODE_EVENTS
	})
	rec := listed[0].GetStatus().GetLastReconcile()
	if rec.GetAdded() != 1 || rec.GetUpdated() != 1 || rec.GetMissing() != 1 || rec.GetUnchanged() != 1 || listed[0].GetStatus().GetLastReconcileAt() == nil {
		t.Errorf("reconcile at start = %v; want 1 added, 1 updated, 1 missing, 1 unchanged", rec)
	}
	waitFor(t, 20*time.Second, "the changes made while down searchable", func() bool {
		return len(bm25Refs(t, conn, "quokka")) == 1 && len(bm25Refs(t, conn, "dugong")) == 1
	})
	if refs := bm25Refs(t, conn, "cheetah"); len(refs) != 1 {
		t.Errorf("the item of the removed c.md: %v; want it kept", refs)
	}

	rm, err := ctxdv1.NewWatchServiceClient(conn).RemoveWatch(context.Background(), &ctxdv1.RemoveWatchRequest{Watch: root})
	if err != nil || rm.GetWatch().GetId() != w.GetId() {
		t.Fatalf("RemoveWatch = %v, %v", rm, err)
	}
	if ws := listWatches(t, conn); len(ws) != 0 {
		t.Errorf("after RemoveWatch: %v", ws)
	}
	if refs := bm25Refs(t, conn, "aardvark"); len(refs) != 1 {
		t.Errorf("after RemoveWatch the items are gone: %v", refs)
	}
}

// TestWatchService_badRequests: every bound answers INVALID_ARGUMENT (or
// NOT_FOUND) with a hint.
func TestWatchService_badRequests(t *testing.T) {
	root := watchTree(t, map[string]string{"a/x.md": "x", "b/y.md": "y", "f.md": "f"})
	cfg := testConfig(t)
	cfg.AllowedRoots = []string{root}
	cfg.Limits.MaxWatches, cfg.Limits.MaxWatchExcludes = 1, 2
	d := mustStart(t, cfg)
	wc := ctxdv1.NewWatchServiceClient(dial(t, "unix://"+d.cfg.Socket))
	if _, err := wc.AddWatch(context.Background(), &ctxdv1.AddWatchRequest{Path: filepath.Join(root, "a")}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  *ctxdv1.AddWatchRequest
		code codes.Code
		hint string
	}{
		{"no path", &ctxdv1.AddWatchRequest{}, codes.InvalidArgument, "absolute path"},
		{"relative", &ctxdv1.AddWatchRequest{Path: "docs"}, codes.InvalidArgument, "absolute path"},
		{"a file", &ctxdv1.AddWatchRequest{Path: filepath.Join(root, "f.md")}, codes.InvalidArgument, "directory"},
		{"outside the allowed roots", &ctxdv1.AddWatchRequest{Path: t.TempDir()}, codes.PermissionDenied, "allowed_roots"},
		{"overlapping", &ctxdv1.AddWatchRequest{Path: root}, codes.InvalidArgument, "watch rm"},
		{"too many excludes", &ctxdv1.AddWatchRequest{Path: filepath.Join(root, "b"), Exclude: []string{"a", "b", "c"}}, codes.InvalidArgument, "limits.max_watch_excludes"},
		{"a long exclude", &ctxdv1.AddWatchRequest{Path: filepath.Join(root, "b"), Exclude: []string{strings.Repeat("x", 1025)}}, codes.InvalidArgument, "Shorten"},
		{"a bad exclude", &ctxdv1.AddWatchRequest{Path: filepath.Join(root, "b"), Exclude: []string{"#x"}}, codes.InvalidArgument, "gitignore"},
		{"debounce", &ctxdv1.AddWatchRequest{Path: filepath.Join(root, "b"), DebounceMs: 60001}, codes.InvalidArgument, "debounce"},
		{"too many watches", &ctxdv1.AddWatchRequest{Path: filepath.Join(root, "b")}, codes.InvalidArgument, "limits.max_watches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wc.AddWatch(context.Background(), tt.req)
			code, ed := errorDetail(t, err)
			if code != tt.code || !strings.Contains(ed.GetNextActionHint(), tt.hint) {
				t.Errorf("AddWatch = %v (hint %q); want %v with a hint mentioning %q", err, ed.GetNextActionHint(), tt.code, tt.hint)
			}
		})
	}
	_, err := wc.RemoveWatch(context.Background(), &ctxdv1.RemoveWatchRequest{Watch: "nope"})
	if code, ed := errorDetail(t, err); code != codes.NotFound || !strings.Contains(ed.GetNextActionHint(), "watch list") {
		t.Errorf("RemoveWatch of an unknown watch = %v; want NOT_FOUND with a hint", err)
	}
}

// TestWatchService_scopesAndHTTP: a read-only token is refused, an ingest
// token may add, list and remove watches, over gRPC and JSON/HTTP.
func TestWatchService_scopesAndHTTP(t *testing.T) {
	root := watchTree(t, map[string]string{"a.md": "# A\n\naardvark\n"})
	cfg := testConfig(t)
	cfg.GRPCTCP, cfg.HTTP = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AllowedRoots = []string{root}
	cfg.Tokens = []TokenConfig{
		{Name: "reader", SHA256: sha256Hex("reader-token"), Scopes: []string{"read"}},
		{Name: "writer", SHA256: sha256Hex("writer-token"), Scopes: []string{"read", "write"}},
		{Name: "ingester", SHA256: sha256Hex("ingest-token"), Scopes: []string{"read", "write", "ingest"}},
	}
	d := mustStart(t, cfg)
	wc := ctxdv1.NewWatchServiceClient(dial(t, "passthrough:///"+d.GRPCAddr().String()))
	for _, secret := range []string{"reader-token", "writer-token"} {
		_, err := wc.AddWatch(bearer(secret), &ctxdv1.AddWatchRequest{Path: root})
		if code, ed := errorDetail(t, err); code != codes.PermissionDenied || !strings.Contains(ed.GetNextActionHint(), "ingest") {
			t.Errorf("AddWatch with %s = %v; want PERMISSION_DENIED naming the ingest scope", secret, err)
		}
		if _, err := wc.ListWatches(bearer(secret), &ctxdv1.ListWatchesRequest{}); err == nil {
			t.Errorf("ListWatches with %s answered", secret)
		}
	}

	base := "http://" + d.HTTPAddr().String()
	code, body := httpCall(t, http.MethodPost, base+"/v1/watches", `{"path": "`+root+`", "debounceMs": 100}`, "reader-token")
	if code != http.StatusForbidden {
		t.Errorf("POST /v1/watches with a read token: %d %s", code, body)
	}
	code, body = httpCall(t, http.MethodPost, base+"/v1/watches", `{"path": "`+root+`", "debounceMs": 100}`, "ingest-token")
	var added struct {
		Watch struct {
			ID     string `json:"id"`
			Status struct {
				Mode  string `json:"mode"`
				Files string `json:"files"`
			} `json:"status"`
		} `json:"watch"`
	}
	if err := json.Unmarshal(body, &added); code != http.StatusOK || err != nil || added.Watch.Status.Mode != "WATCH_MODE_EVENTS" || added.Watch.Status.Files != "1" {
		t.Fatalf("POST /v1/watches = %d %s", code, body)
	}
	code, body = httpCall(t, http.MethodGet, base+"/v1/watches", "", "ingest-token")
	if code != http.StatusOK || !strings.Contains(string(body), added.Watch.ID) {
		t.Errorf("GET /v1/watches = %d %s", code, body)
	}
	code, body = httpCall(t, http.MethodPost, base+"/v1/watches/remove", `{"watch": "`+added.Watch.ID+`"}`, "ingest-token")
	if code != http.StatusOK || !strings.Contains(string(body), root) {
		t.Errorf("POST /v1/watches/remove = %d %s", code, body)
	}
}

// TestWatchService_scanningFallback: a tree over watch.max_dirs is scanned,
// and ListWatches and Status say so and why.
func TestWatchService_scanningFallback(t *testing.T) {
	root := watchTree(t, map[string]string{"a.md": "alpha", "sub/b.md": "bravo", "sub/deeper/c.md": "charlie"})
	cfg := testConfig(t)
	cfg.AllowedRoots = []string{root}
	cfg.Watch.MaxDirs, cfg.Watch.ScanInterval = 2, Duration{50 * time.Millisecond}
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)
	resp, err := ctxdv1.NewWatchServiceClient(conn).AddWatch(context.Background(), &ctxdv1.AddWatchRequest{Path: root})
	if err != nil {
		t.Fatal(err)
	}
	if st := resp.GetWatch().GetStatus(); st.GetMode() != ctxdv1.WatchMode_WATCH_MODE_SCANNING || !strings.Contains(st.GetReason(), "watch.max_dirs") || st.GetFiles() != 3 {
		t.Fatalf("status %v; want scanning because of watch.max_dirs, 3 files", st)
	}
	st, err := ctxdv1.NewAdminServiceClient(conn).Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil || len(st.GetWatches()) != 1 || st.GetWatches()[0].GetStatus().GetMode() != ctxdv1.WatchMode_WATCH_MODE_SCANNING {
		t.Fatalf("Status watches = %v, %v; want the scanning watch", st.GetWatches(), err)
	}
	writeTreeFile(t, filepath.Join(root, "sub/deeper/c.md"), "charlie and wombat")
	waitFor(t, 20*time.Second, "a scan to find the edit", func() bool { return len(bm25Refs(t, conn, "wombat")) == 1 })
}

// TestWatchService_postgres: a watch stored on PostgreSQL is reconciled
// after its replica restarts, and another replica lists it as remote.
func TestWatchService_postgres(t *testing.T) {
	_, url := pgStore(t)
	root := watchTree(t, map[string]string{"a.md": "# A\n\naardvark\n", "b.md": "# B\n\nbadger\n"})
	cfg := replicaConfig(t, url)
	cfg.AllowedRoots = []string{root}
	a := startReplica(t, cfg)
	resp, err := ctxdv1.NewWatchServiceClient(a.conn).AddWatch(context.Background(), &ctxdv1.AddWatchRequest{Path: root})
	if err != nil {
		t.Fatal(err)
	}
	b := startReplica(t, replicaConfig(t, url))
	if ws := listWatches(t, b.conn); len(ws) != 1 || ws[0].GetStatus().GetMode() != ctxdv1.WatchMode_WATCH_MODE_REMOTE || ws[0].GetReplicaId() != resp.GetWatch().GetReplicaId() {
		t.Errorf("the other replica lists %v; want the watch as remote, of replica %s", ws, resp.GetWatch().GetReplicaId())
	}
	a.stop()
	writeTreeFile(t, filepath.Join(root, "b.md"), "# B\n\nbadger and numbat\n")
	writeTreeFile(t, filepath.Join(root, "c.md"), "# C\n\ncapybara\n")
	a = startReplica(t, cfg)
	waitFor(t, 30*time.Second, "the reconcile at start on PostgreSQL", func() bool {
		ws := listWatches(t, a.conn)
		return len(ws) == 1 && ws[0].GetStatus().GetMode() == ctxdv1.WatchMode_WATCH_MODE_EVENTS
	})
	rec := listWatches(t, a.conn)[0].GetStatus().GetLastReconcile()
	if rec.GetAdded() != 1 || rec.GetUpdated() != 1 || rec.GetUnchanged() != 1 {
		t.Errorf("reconcile = %v; want 1 added, 1 updated, 1 unchanged", rec)
	}
	waitFor(t, 30*time.Second, "the changes searchable", func() bool {
		return slices.Equal(a.bm25(t, "numbat"), []string{"disk:" + filepath.ToSlash(filepath.Join(root, "b.md"))}) && len(a.bm25(t, "capybara")) == 1
	})
}

// TestWatchService_limitedToken: a token limited to a drive watches only
// into it, and lists and removes only the watches it could see.
func TestWatchService_limitedToken(t *testing.T) {
	root := watchTree(t, map[string]string{"mine/a.md": "alpha", "owners/b.md": "bravo"})
	cfg := testConfig(t)
	cfg.GRPCTCP = "127.0.0.1:0"
	cfg.AllowedRoots = []string{root}
	cfg.Tokens = []TokenConfig{{Name: "ing", SHA256: sha256Hex("ing-token"), Scopes: []string{"read", "write", "ingest"}, Drives: []string{"agent"}}}
	d := mustStart(t, cfg)
	limited := ctxdv1.NewWatchServiceClient(dial(t, "passthrough:///"+d.GRPCAddr().String()))
	owner := ctxdv1.NewWatchServiceClient(dial(t, "unix://"+cfg.Socket))
	ctx := bearer("ing-token")

	_, err := limited.AddWatch(ctx, &ctxdv1.AddWatchRequest{Path: filepath.Join(root, "mine")})
	if code, _ := errorDetail(t, err); code != codes.PermissionDenied {
		t.Errorf("AddWatch into disk: with a token limited to agent: = %v, want PERMISSION_DENIED", err)
	}
	mine, err := limited.AddWatch(ctx, &ctxdv1.AddWatchRequest{Path: filepath.Join(root, "mine"), Drive: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := owner.AddWatch(context.Background(), &ctxdv1.AddWatchRequest{Path: filepath.Join(root, "owners")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := limited.ListWatches(ctx, &ctxdv1.ListWatchesRequest{})
	if err != nil || len(resp.GetWatches()) != 1 || resp.GetWatches()[0].GetId() != mine.GetWatch().GetId() {
		t.Errorf("ListWatches with the limited token = %v, %v; want its own watch only", resp.GetWatches(), err)
	}
	_, err = limited.RemoveWatch(ctx, &ctxdv1.RemoveWatchRequest{Watch: theirs.GetWatch().GetId()})
	if code, _ := errorDetail(t, err); code != codes.NotFound {
		t.Errorf("RemoveWatch of the owner's watch with the limited token = %v, want NOT_FOUND", err)
	}
	if _, err := limited.RemoveWatch(ctx, &ctxdv1.RemoveWatchRequest{Watch: mine.GetWatch().GetId()}); err != nil {
		t.Errorf("RemoveWatch of its own watch: %v", err)
	}
}

// TestWatchToProto: every field of a watch and its status reaches the message.
func TestWatchToProto(t *testing.T) {
	at := time.Date(2026, 11, 28, 1, 2, 3, 0, time.UTC)
	st := watcher.State{
		Watch: watcher.Watch{ID: "w1", Path: "/t", Drive: "d", Exclude: []string{"x"}, IncludeHidden: true, Tags: []string{"g"},
			Debounce: 1500 * time.Millisecond, DeleteMissing: true, ReplicaID: "r", CreatedAt: at},
		Status: watcher.Status{Mode: watcher.ModeScanning, Reason: "why", Files: 7, LastEventAt: at.Add(time.Second),
			LastReconcileAt: at.Add(2 * time.Second), LastReconcileTook: 250 * time.Millisecond,
			LastReconcile: watcher.Reconcile{Added: 1, Updated: 2, Moved: 3, Missing: 4, Unchanged: 5, Failed: 6},
			Lag:           210 * time.Millisecond, Pending: 8, Errors: 9, LastError: "boom", LastErrorAt: at.Add(3 * time.Second), WatchedDirs: 10},
	}
	want := &ctxdv1.Watch{Id: "w1", Path: "/t", Drive: "d", Exclude: []string{"x"}, IncludeHidden: true, Tags: []string{"g"},
		DebounceMs: 1500, DeleteMissing: true, ReplicaId: "r", CreatedAt: timeToProto(at),
		Status: &ctxdv1.WatchStatus{Mode: ctxdv1.WatchMode_WATCH_MODE_SCANNING, Reason: "why", Files: 7,
			LastEventAt: timeToProto(at.Add(time.Second)), LastReconcileAt: timeToProto(at.Add(2 * time.Second)), LastReconcileMs: 250,
			LastReconcile: &ctxdv1.WatchReconcile{Added: 1, Updated: 2, Moved: 3, Missing: 4, Unchanged: 5, Failed: 6},
			LagMs:         210, Pending: 8, ErrorCount: 9, LastError: "boom", LastErrorAt: timeToProto(at.Add(3 * time.Second)), WatchedDirs: 10}}
	if got := WatchToProto(st); !proto.Equal(got, want) {
		t.Errorf("WatchToProto = %v\nwant %v", got, want)
	}
	for mode := watcher.ModeStarting; mode <= watcher.ModeFailed; mode++ {
		if watchModesToProto[mode] == ctxdv1.WatchMode_WATCH_MODE_UNSPECIFIED {
			t.Errorf("mode %v has no API value", mode)
		}
	}
}
