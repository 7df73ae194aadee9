package toolset_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/ctxd/ctxd/daemon"
	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/testmodel"
)

// env is a real daemon on a short temp unix socket and a Backend over a
// real connection to it.
type env struct {
	b    toolset.Backend
	conn *grpc.ClientConn
	dir  string // temp dir, inside the daemon's allowed roots
}

// startDaemon runs a daemon (no embedding model unless edit sets one).
func startDaemon(t *testing.T, edit func(*daemon.Config)) env {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctxdts")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := daemon.DefaultConfig()
	cfg.DataDir, cfg.Socket, cfg.TokenFile = filepath.Join(dir, "data"), filepath.Join(dir, "s.sock"), filepath.Join(dir, "token")
	cfg.HTTP, cfg.ModelDir = "", ""
	cfg.AllowedRoots = []string{dir}
	if edit != nil {
		edit(&cfg)
	}
	d, err := daemon.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return env{b: toolset.NewBackend(dialUnix(t, cfg.Socket)), conn: dialUnix(t, cfg.Socket), dir: dir}
}

func dialUnix(t *testing.T, socket string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// waitIndexed polls Status until the indexes have applied every change and
// nothing waits to be embedded.
func (e env) waitIndexed(t *testing.T) {
	t.Helper()
	admin := ctxdv1.NewAdminServiceClient(e.conn)
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
		if err == nil && st.Index.AppliedSequence >= st.Index.OutboxSequence && st.Embedding.PendingChunks == 0 && st.Embedding.PendingItems == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("indexes did not catch up: status %v, error %v", st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call runs a tool with args given as a JSON string and decodes its text.
func call(t *testing.T, b toolset.Backend, name, args string) (toolset.Result, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := toolset.Call(ctx, b, name, json.RawMessage(args))
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Text), &m); err != nil {
		t.Fatalf("%s(%s): text is not a JSON object: %v\n%s", name, args, err, r.Text)
	}
	if r.IsError != (m["is_error"] == true) {
		t.Fatalf("%s(%s): IsError %v but text %s", name, args, r.IsError, r.Text)
	}
	return r, m
}

// mustCall runs a tool that must succeed.
func mustCall(t *testing.T, b toolset.Backend, name, args string) map[string]any {
	t.Helper()
	r, m := call(t, b, name, args)
	if r.IsError {
		t.Fatalf("%s(%s) failed: %s", name, args, r.Text)
	}
	return m
}

// wantError runs a tool that must fail with errType, and returns its result.
func wantError(t *testing.T, b toolset.Backend, name, args, errType string) map[string]any {
	t.Helper()
	r, m := call(t, b, name, args)
	if !r.IsError {
		t.Fatalf("%s(%s) succeeded, want %s: %s", name, args, errType, r.Text)
	}
	if m["error_type"] != errType {
		t.Fatalf("%s(%s): error_type %v, want %s: %s", name, args, m["error_type"], errType, r.Text)
	}
	if len(m) != 4 || m["message"] == "" || m["next_action_hint"] == "" {
		t.Fatalf("%s(%s): want exactly is_error, error_type, message and a hint: %s", name, args, r.Text)
	}
	return m
}

// get walks a decoded JSON value along keys and array indexes.
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %q: not an object: %v", k, v)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at [%d]: not an array that long: %v", k, v)
			}
			v = a[k]
		}
	}
	return v
}

// TestCall_EveryTool drives every tool through Call against a real daemon,
// in the order an agent would use them, each step checking what the tool
// returned and, for changes, what the store holds afterwards.
func TestCall_EveryTool(t *testing.T) {
	e := startDaemon(t, nil)
	b := e.b
	const original = "alpha line\nbeta line\ngamma zebrafish\n"
	var hash, id string
	var revs []any
	file := filepath.Join(e.dir, "src", "host.md")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("# Host\n\nquokka facts\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hostRef := "disk:" + file
	steps := []struct {
		name, tool, args string
		check            func(t *testing.T, m map[string]any)
	}{
		{"write creates with the default drive", "context_write", `{"path":"/notes/a.md","content":` + strconv.Quote(original) + `,"tags":["t1"]}`, func(t *testing.T, m map[string]any) {
			if m["ref"] != "agent:/notes/a.md" || m["created"] != true || m["size_bytes"] != float64(len(original)) {
				t.Fatalf("write: %v", m)
			}
			if tree, _ := m["tree"].(string); !strings.Contains(tree, "a.md") {
				t.Fatalf("write returned no tree snapshot naming a.md: %v", m)
			}
		}},
		{"write a sibling on an explicit drive", "context_write", `{"drive":"agent","path":"notes/b.md","content":"bee\n"}`, func(t *testing.T, m map[string]any) {
			if m["ref"] != "agent:/notes/b.md" || !strings.Contains(m["tree"].(string), "a.md") {
				t.Fatalf("write b: %v", m)
			}
		}},
		{"read a window", "context_read", `{"path":"agent:/notes/a.md","offset":1,"limit":1}`, func(t *testing.T, m map[string]any) {
			if m["content"] != "beta line\n" || m["start_line"] != 2.0 || m["end_line"] != 2.0 || m["total_lines"] != 3.0 || m["has_more"] != true {
				t.Fatalf("read: %v", m)
			}
			hash, _ = m["content_hash"].(string)
			if len(hash) != 64 {
				t.Fatalf("read returned no content_hash: %v", m)
			}
		}},
		{"search bm25 finds it with leg ranks", "context_search", `{"queries":["zebrafish"],"mode":"bm25","filter":{"drives":["agent"]},"limit":5}`, func(t *testing.T, m map[string]any) {
			if get(t, m, "mode_used") != "bm25" || get(t, m, "results", 0, "ref") != "agent:/notes/a.md" {
				t.Fatalf("search: %v", m)
			}
			if r := get(t, m, "results", 0, "ranks", "bm25"); r != 1.0 {
				t.Fatalf("search: bm25 rank %v, want 1: %v", r, m)
			}
			if !strings.Contains(get(t, m, "results", 0, "snippet").(string), "zebrafish") {
				t.Fatalf("snippet lacks the match: %v", m)
			}
		}},
		{"search filter excludes other drives", "context_search", `{"queries":["zebrafish"],"mode":"bm25","filter":{"drives":["disk"]}}`, func(t *testing.T, m map[string]any) {
			if n := len(m["results"].([]any)); n != 0 {
				t.Fatalf("filtered search found %d results: %v", n, m)
			}
		}},
		{"edit with the read hash", "context_edit", "", func(t *testing.T, m map[string]any) {
			if m["lines_before"] != 3.0 || m["lines_after"] != 4.0 || m["content_hash"] == hash {
				t.Fatalf("edit: %v", m)
			}
		}},
		{"read the edit", "context_read", `{"path":"/notes/a.md"}`, func(t *testing.T, m map[string]any) {
			if m["content"] != "alpha line\nBETA\nBETA 2\ngamma zebrafish\n" || m["has_more"] != false {
				t.Fatalf("read after edit: %v", m)
			}
		}},
		{"info", "context_info", `{"path":"agent:/notes/a.md"}`, func(t *testing.T, m map[string]any) {
			if m["ref"] != "agent:/notes/a.md" || m["line_count"] != 4.0 || get(t, m, "tags", 0) != "t1" || m["created_at"] == nil {
				t.Fatalf("info: %v", m)
			}
			id, _ = m["id"].(string)
		}},
		{"read by item id", "context_read", "", func(t *testing.T, m map[string]any) {
			if m["ref"] != "agent:/notes/a.md" || m["total_lines"] != 4.0 {
				t.Fatalf("read by id: %v", m)
			}
		}},
		{"exists", "context_exists", `{"path":"/notes/a.md"}`, func(t *testing.T, m map[string]any) {
			if m["exists"] != true || m["is_dir"] != false {
				t.Fatalf("exists: %v", m)
			}
		}},
		{"exists on a directory", "context_exists", `{"path":"/notes"}`, func(t *testing.T, m map[string]any) {
			if m["exists"] != true || m["is_dir"] != true {
				t.Fatalf("exists dir: %v", m)
			}
		}},
		{"exists on nothing", "context_exists", `{"path":"/nope.md"}`, func(t *testing.T, m map[string]any) {
			if m["exists"] != false || m["ref"] != "agent:/nope.md" {
				t.Fatalf("exists missing: %v", m)
			}
		}},
		{"count lines", "context_count_lines", `{"path":"/notes/a.md"}`, func(t *testing.T, m map[string]any) {
			if m["lines"] != 4.0 {
				t.Fatalf("count_lines: %v", m)
			}
		}},
		{"dir size", "context_dir_size", `{"path":"/notes"}`, func(t *testing.T, m map[string]any) {
			want := len("alpha line\nBETA\nBETA 2\ngamma zebrafish\n") + len("bee\n")
			if m["size_bytes"] != float64(want) || m["item_count"] != 2.0 || m["ref"] != "agent:/notes" {
				t.Fatalf("dir_size: %v, want %d bytes", m, want)
			}
		}},
		// context_info answers what context_dir_size did, for a directory and a whole drive.
		{"info on a directory", "context_info", `{"path":"/notes"}`, func(t *testing.T, m map[string]any) {
			want := len("alpha line\nBETA\nBETA 2\ngamma zebrafish\n") + len("bee\n")
			if m["size_bytes"] != float64(want) || m["item_count"] != 2.0 || m["is_dir"] != true {
				t.Fatalf("info on a directory: %v, want %d bytes in 2 items", m, want)
			}
		}},
		{"info on a drive", "context_info", `{"path":"agent:/"}`, func(t *testing.T, m map[string]any) {
			if m["item_count"] != 2.0 || m["is_dir"] != true {
				t.Fatalf("info on a drive: %v", m)
			}
		}},
		{"tree of a directory", "context_tree", `{"drive":"agent","path":"/notes"}`, func(t *testing.T, m map[string]any) {
			tree, _ := m["tree"].(string)
			if !strings.Contains(tree, "a.md") || !strings.Contains(tree, "b.md") {
				t.Fatalf("tree: %v", m)
			}
		}},
		{"tree without arguments lists drives", "context_tree", `{}`, func(t *testing.T, m map[string]any) {
			if tree, _ := m["tree"].(string); !strings.Contains(tree, "(all drives)") || !strings.Contains(tree, "agent:/") {
				t.Fatalf("tree of drives: %v", m)
			}
		}},
		{"list drives", "context_list_drives", `{}`, func(t *testing.T, m map[string]any) {
			if get(t, m, "drives", 0, "name") != "agent" || get(t, m, "drives", 0, "item_count") != 2.0 {
				t.Fatalf("list_drives: %v", m)
			}
		}},
		{"copy across drives", "context_copy", `{"path":"/notes/a.md","to_drive":"work","to_path":"/copy.md"}`, func(t *testing.T, m map[string]any) {
			if m["copied_count"] != 1.0 || m["destination_ref"] != "work:/copy.md" {
				t.Fatalf("copy: %v", m)
			}
		}},
		{"read the copy", "context_read", `{"drive":"work","path":"/copy.md"}`, func(t *testing.T, m map[string]any) {
			if !strings.Contains(m["content"].(string), "BETA 2") {
				t.Fatalf("copy content: %v", m)
			}
		}},
		{"move", "context_move", `{"path":"work:/copy.md","to_path":"work:/moved/copy.md"}`, func(t *testing.T, m map[string]any) {
			if m["moved_count"] != 1.0 || m["destination_ref"] != "work:/moved/copy.md" {
				t.Fatalf("move: %v", m)
			}
		}},
		{"move left nothing behind", "context_exists", `{"path":"work:/copy.md"}`, func(t *testing.T, m map[string]any) {
			if m["exists"] != false {
				t.Fatalf("source still exists after move: %v", m)
			}
		}},
		{"delete a non-empty directory needs recursive", "context_delete", `{"path":"work:/moved"}`, nil},
		{"delete recursively", "context_delete", `{"path":"work:/moved","recursive":true}`, func(t *testing.T, m map[string]any) {
			if m["deleted_count"] != 1.0 {
				t.Fatalf("delete: %v", m)
			}
		}},
		{"history", "context_history", `{"path":"/notes/a.md"}`, func(t *testing.T, m map[string]any) {
			revs = m["revisions"].([]any)
			if len(revs) != 2 || get(t, revs, 0, "op") != "edit" || get(t, revs, 1, "op") != "write" || get(t, revs, 1, "rev") != 1.0 {
				t.Fatalf("history: %v", m)
			}
		}},
		{"revert to the first revision", "context_revert", `{"path":"/notes/a.md","rev":1}`, func(t *testing.T, m map[string]any) {
			if m["ref"] != "agent:/notes/a.md" || m["content_hash"] != hash || m["restored"] != false {
				t.Fatalf("revert: %v (want hash %s)", m, hash)
			}
		}},
		{"read the revert", "context_read", `{"path":"/notes/a.md"}`, func(t *testing.T, m map[string]any) {
			if m["content"] != original {
				t.Fatalf("read after revert: %v", m)
			}
		}},
		{"create a directory", "context_create_dir", `{"path":"/empty"}`, func(t *testing.T, m map[string]any) {
			if m["created"] != true || m["ref"] != "agent:/empty" {
				t.Fatalf("create_dir: %v", m)
			}
		}},
		{"create it again", "context_create_dir", `{"path":"/empty"}`, func(t *testing.T, m map[string]any) {
			if m["created"] != false {
				t.Fatalf("create_dir again: %v", m)
			}
		}},
		{"add a host file", "context_add", `{"sources":[` + strconv.Quote(file) + `],"tags":["host"]}`, func(t *testing.T, m map[string]any) {
			if get(t, m, "summary", "added") != 1.0 || get(t, m, "changed", 0, "ref") != hostRef || get(t, m, "changed", 0, "action") != "added" {
				t.Fatalf("add: %v", m)
			}
		}},
		{"add a missing file lists the failure", "context_add", `{"sources":[` + strconv.Quote(file+".missing") + `]}`, func(t *testing.T, m map[string]any) {
			f := get(t, m, "failures", 0)
			if get(t, m, "summary", "failed") != 1.0 || get(t, f, "error_type") != "source_unreadable" || !strings.Contains(get(t, f, "message").(string), ".missing") {
				t.Fatalf("add missing: %v", m)
			}
		}},
		{"refresh after the file changed", "context_refresh", "", func(t *testing.T, m map[string]any) {
			if get(t, m, "summary", "updated") != 1.0 || get(t, m, "changed", 0, "ref") != hostRef || get(t, m, "changed", 0, "action") != "updated" {
				t.Fatalf("refresh: %v", m)
			}
		}},
		{"refresh needs refs or all", "context_refresh", `{}`, nil},
		{"watch a tree", "context_watch_add", "", func(t *testing.T, m map[string]any) {
			if get(t, m, "watch", "status", "mode") != "WATCH_MODE_EVENTS" || get(t, m, "watch", "status", "files") != "1" ||
				get(t, m, "watch", "status", "last_reconcile", "added") != "1" {
				t.Fatalf("watch add: %v, want the tree's one file added and followed with events", m)
			}
		}},
		{"list the watches", "context_watch_list", `{}`, func(t *testing.T, m map[string]any) {
			if p, _ := get(t, m, "watches", 0, "path").(string); !strings.HasSuffix(p, "watched") {
				t.Fatalf("watch list: %v", m)
			}
		}},
		{"stop watching", "context_watch_remove", "", func(t *testing.T, m map[string]any) {
			if p, _ := get(t, m, "watch", "path").(string); !strings.HasSuffix(p, "watched") {
				t.Fatalf("watch remove: %v", m)
			}
		}},
		{"stop watching what is not watched", "context_watch_remove", `{"watch":"nope"}`, nil},
		{"find similar needs the embedding model", "context_find_similar", `{"text":"quokka facts"}`, nil}, // with it: TestCall_FindSimilarAndAddDedupe
		{"build context", "build_context", `{"task":"zebrafish","mode":"bm25"}`, func(t *testing.T, m map[string]any) {
			if !strings.Contains(m["markdown"].(string), "zebrafish") || m["budget"] != 4000.0 || m["tokens_used"].(float64) <= 0 {
				t.Fatalf("build_context: %v", m)
			}
			if get(t, m, "sections", 0, "ref") != "agent:/notes/a.md" || get(t, m, "sections", 0, "kind") != "chunk" {
				t.Fatalf("build_context sections: %v", m)
			}
		}},
		{"update beliefs", "update_beliefs", `{"body":"The sky is green here.\n"}`, func(t *testing.T, m map[string]any) {
			if m["ref"] != "self:/beliefs.md" {
				t.Fatalf("update_beliefs: %v", m)
			}
		}},
		{"update goals under an explicit root", "update_goals", `{"body":"Ship issue 12.\n","root":"self:"}`, func(t *testing.T, m map[string]any) {
			if m["ref"] != "self:/goals.md" {
				t.Fatalf("update_goals: %v", m)
			}
		}},
		{"beliefs kept their frontmatter", "context_read", `{"path":"self:/beliefs.md"}`, func(t *testing.T, m map[string]any) {
			c := m["content"].(string)
			if !strings.HasPrefix(c, "---\n") || !strings.Contains(c, "loading:") || !strings.HasSuffix(c, "The sky is green here.\n") {
				t.Fatalf("beliefs.md after update: %q", c)
			}
		}},
		{"update beliefs in a root never initialised", "update_beliefs", `{"body":"x","root":"self:/nobody/"}`, nil},
		{"watch a query", "context_watch_query", `{"name":"quokka-watch","queries":["quokka facts"]}`, func(t *testing.T, m map[string]any) {
			if m["name"] != "quokka-watch" || m["resource_uri"] != "ctxd-subscription://quokka-watch" {
				t.Fatalf("watch: %v", m)
			}
		}},
		{"read the watched query", "context_read_subscription", `{"name":"quokka-watch","peek":true}`, func(t *testing.T, m map[string]any) {
			if _, ok := m["matches"].([]any); !ok || m["remaining"] == nil {
				t.Fatalf("read subscription: %v, want matches and remaining", m)
			}
		}},
		{"read a query nobody watches", "context_read_subscription", `{"name":"nobody"}`, nil},
		{"remember without a working directory", "remember", `{"text":"Chose bbolt for the store.","kind":"decision"}`, func(t *testing.T, m map[string]any) {
			if ref, _ := m["ref"].(string); m["project"] != "default" || !strings.HasPrefix(ref, "session:/default/") || !strings.Contains(ref, "decision") || m["session_id"] == "" {
				t.Fatalf("remember: %v, want a decision in the default project", m)
			}
		}},
	}
	wantErrors := map[string]string{
		"delete a non-empty directory needs recursive": "directory_not_empty",
		"refresh needs refs or all":                    "invalid_argument",
		"find similar needs the embedding model":       "unavailable",
		"update beliefs in a root never initialised":   "not_found",
		"stop watching what is not watched":            "not_found",
		"read a query nobody watches":                  "not_found",
	}
	for _, s := range steps {
		args := s.args
		switch s.tool + "/" + s.name {
		case "context_search/search bm25 finds it with leg ranks":
			e.waitIndexed(t)
		case "context_edit/edit with the read hash":
			args = `{"path":"/notes/a.md","expected_hash":"` + hash + `","patches":[{"start_line":2,"end_line":2,"content":"BETA\nBETA 2"}]}`
		case "context_refresh/refresh after the file changed":
			if err := os.WriteFile(file, []byte("# Host\n\nquokka facts, revised\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args = `{"refs":[` + strconv.Quote(hostRef) + `]}`
		case "context_watch_add/watch a tree":
			watched := filepath.Join(e.dir, "watched")
			if err := os.MkdirAll(watched, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(watched, "w.md"), []byte("# W\n\nwallaby\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args = `{"path":` + strconv.Quote(watched) + `}`
		case "context_watch_remove/stop watching":
			args = `{"watch":` + strconv.Quote(filepath.Join(e.dir, "watched")) + `}`
		case "context_read/read by item id":
			args = `{"drive":"ignored","path":"` + id + `"}`
		case "build_context/build context":
			e.waitIndexed(t)
		case "update_beliefs/update beliefs":
			if _, err := b.Context.Init(context.Background(), &ctxdv1.InitRequest{}); err != nil {
				t.Fatal(err)
			}
		}
		if typ, ok := wantErrors[s.name]; ok {
			wantError(t, b, s.tool, args, typ)
			continue
		}
		t.Run(s.name, func(t *testing.T) { s.check(t, mustCall(t, b, s.tool, args)) })
	}
	// Every tool ran at least once.
	ran := map[string]bool{}
	for _, s := range steps {
		ran[s.tool] = true
	}
	for _, tool := range toolset.Tools() {
		if !ran[tool.Name] {
			t.Errorf("tool %s is not exercised", tool.Name)
		}
	}
}

// TestCall_NotFoundHintNamesNearbyItems checks the seed's recovery path: a
// read of a missing item is an error result, not_found, whose hint names
// the items next to it and the tool call that shows more.
func TestCall_NotFoundHintNamesNearbyItems(t *testing.T) {
	e := startDaemon(t, nil)
	mustCall(t, e.b, "context_write", `{"path":"/notes/readme.md","content":"r\n"}`)
	mustCall(t, e.b, "context_write", `{"path":"/notes/guide.md","content":"g\n"}`)
	for _, tool := range []string{"context_read", "context_info", "context_count_lines"} {
		m := wantError(t, e.b, tool, `{"path":"/notes/architecture.md"}`, "not_found")
		hint := m["next_action_hint"].(string)
		for _, want := range []string{"agent:/notes/readme.md", "agent:/notes/guide.md", "context_tree"} {
			if !strings.Contains(hint, want) {
				t.Errorf("%s: hint %q lacks %q", tool, hint, want)
			}
		}
		if !strings.Contains(m["message"].(string), "agent:/notes/architecture.md") {
			t.Errorf("%s: message does not name the ref: %v", tool, m)
		}
	}
}

// TestCall_BadArguments checks that arguments outside the schema are an
// invalid_argument result whose message and hint name the field, before any
// RPC (the backend here has no daemon).
func TestCall_BadArguments(t *testing.T) {
	b := toolset.NewBackend(dialUnix(t, filepath.Join(t.TempDir(), "none.sock")))
	for _, c := range []struct{ name, tool, args, field string }{
		{"unknown field", "context_read", `{"path":"/a.md","pathx":"/b.md"}`, "pathx"},
		{"wrong type", "context_read", `{"path":5}`, "path"},
		{"wrong type of a number", "context_read", `{"path":"/a.md","limit":"ten"}`, "limit"},
		{"fraction for an integer", "context_read", `{"path":"/a.md","limit":1.5}`, "limit"},
		{"negative offset", "context_read", `{"path":"/a.md","offset":-1}`, "offset"},
		{"missing path", "context_read", `{"drive":"agent"}`, "path"},
		{"missing path in empty args", "context_info", ``, "path"},
		{"enum", "context_write", `{"path":"/a.md","content":"x","on_conflict":"replace"}`, "on_conflict"},
		{"empty queries", "context_search", `{"queries":[]}`, "queries"},
		{"nested wrong type", "context_edit", `{"path":"/a.md","patches":[{"start_line":"1","end_line":1,"content":""}]}`, "patches[].start_line"},
		{"nested unknown field", "context_search", `{"queries":["q"],"filter":{"drive":["agent"]}}`, "filter"},
		{"history limit over its bound", "context_history", `{"path":"/a.md","limit":5000}`, "limit"},
		{"not an object", "context_read", `["/a.md"]`, "object"},
		{"not JSON", "context_read", `{"path":`, "object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := wantError(t, b, c.tool, c.args, "invalid_argument")
			if !strings.Contains(m["message"].(string), c.field) || !strings.Contains(m["next_action_hint"].(string), c.field) {
				t.Errorf("message and hint should name %q: %v", c.field, m)
			}
			if c.field != "object" && !strings.Contains(m["next_action_hint"].(string), "path (string, required)") && c.tool != "context_search" {
				t.Errorf("hint should describe the schema: %v", m)
			}
		})
	}
	t.Run("null means absent", func(t *testing.T) {
		// Decoding succeeds and the call reaches the (absent) daemon.
		wantError(t, b, "context_read", `{"path":"/a.md","limit":null}`, "unavailable")
	})
}

// TestCall_UnknownTool checks that an unknown name is an error result that
// lists the real tools.
func TestCall_UnknownTool(t *testing.T) {
	b := toolset.NewBackend(dialUnix(t, filepath.Join(t.TempDir(), "none.sock")))
	m := wantError(t, b, "context_frobnicate", `{}`, "invalid_argument")
	if !strings.Contains(m["message"].(string), "context_frobnicate") || !strings.Contains(m["next_action_hint"].(string), "context_read") {
		t.Errorf("unknown tool: %v", m)
	}
}

// TestCall_NoDaemon checks a status without an ErrorDetail: the error type
// is the gRPC code and the hint says how to start the daemon.
func TestCall_NoDaemon(t *testing.T) {
	b := toolset.NewBackend(dialUnix(t, filepath.Join(t.TempDir(), "none.sock")))
	m := wantError(t, b, "context_list_drives", `{}`, "unavailable")
	if !strings.Contains(m["next_action_hint"].(string), "ctxd serve") {
		t.Errorf("hint should say how to start the daemon: %v", m)
	}
}

// TestCall_Cancelled checks that a cancelled context stops the call and is
// reported as cancelled.
func TestCall_Cancelled(t *testing.T) {
	e := startDaemon(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := toolset.Call(ctx, e.b, "context_list_drives", nil)
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Text), &m); err != nil || !r.IsError || m["error_type"] != "cancelled" {
		t.Fatalf("cancelled call: %v %s", err, r.Text)
	}
}

// TestErrorResult_Shape checks the exact bytes of the seed's shape.
func TestErrorResult_Shape(t *testing.T) {
	r := toolset.ErrorResult(status.Error(codes.DeadlineExceeded, "too slow"))
	want := `{"is_error":true,"error_type":"deadline_exceeded","message":"too slow","next_action_hint":`
	if !r.IsError || !strings.HasPrefix(r.Text, want) {
		t.Fatalf("got %s, want prefix %s", r.Text, want)
	}
	st, err := status.New(codes.PermissionDenied, "agents may not change soul.md").WithDetails(&ctxdv1.ErrorDetail{
		Type: ctxdv1.ErrorType_ERROR_TYPE_READ_ONLY, NextActionHint: "Ask the owner."})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toolset.ErrorResult(st.Err()).Text, `{"is_error":true,"error_type":"read_only","message":"agents may not change soul.md","next_action_hint":"Ask the owner."}`; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// TestExport checks every format structurally: every tool present in
// order, wrapped as the format wants, with an object schema whose every
// property (nested ones too) has a description; and that the output is
// deterministic.
func TestExport(t *testing.T) {
	tools := toolset.Tools()
	if len(tools) != 25 {
		t.Errorf("%d tools, want 25: the tool issue's 21, context_find_similar, remember and the three watch tools, context_watch_query and context_read_subscription, less the three context_info answers", len(tools))
	}
	for _, format := range toolset.Formats {
		t.Run(format, func(t *testing.T) {
			out, err := toolset.Export(tools, format)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := toolset.Export(toolset.Tools(), format)
			if string(out) != string(again) {
				t.Fatal("export is not deterministic")
			}
			var list []map[string]any
			if err := json.Unmarshal(out, &list); err != nil {
				t.Fatal(err)
			}
			if len(list) != len(tools) {
				t.Fatalf("%d entries, want %d", len(list), len(tools))
			}
			for i, entry := range list {
				var fn map[string]any
				var schema any
				switch format {
				case "mcp":
					fn, schema = entry, entry["inputSchema"]
					ann, _ := entry["annotations"].(map[string]any)
					if entry["title"] != tools[i].Title || ann["readOnlyHint"] != tools[i].Annotations.ReadOnly || ann["destructiveHint"] != tools[i].Annotations.Destructive || ann["title"] != nil {
						t.Errorf("%v: title or annotations wrong: %v", entry["name"], entry)
					}
				case "openai":
					if entry["type"] != "function" {
						t.Errorf("entry %d: type %v, want function", i, entry["type"])
					}
					fn, _ = entry["function"].(map[string]any)
					schema = fn["parameters"]
				case "anthropic":
					fn, schema = entry, entry["input_schema"]
				}
				if fn["name"] != tools[i].Name || fn["description"] != tools[i].Description || len(tools[i].Description) < 80 {
					t.Errorf("entry %d: name %v / description %v, want %s with its description", i, fn["name"], fn["description"], tools[i].Name)
				}
				s, _ := schema.(map[string]any)
				if s["type"] != "object" {
					t.Fatalf("%s: schema is not an object: %v", tools[i].Name, schema)
				}
				if _, ok := s["properties"].(map[string]any); !ok {
					t.Fatalf("%s: schema has no properties: %v", tools[i].Name, schema)
				}
				checkDescriptions(t, tools[i].Name, s)
			}
		})
	}
	if _, err := toolset.Export(tools, "yaml"); err == nil || !strings.Contains(err.Error(), "openai") {
		t.Errorf("unknown format: %v", err)
	}
}

// checkDescriptions fails for any property, at any depth, without a
// description, and for any non-object type list (null unions confuse
// function-calling APIs).
func checkDescriptions(t *testing.T, where string, s map[string]any) {
	t.Helper()
	if _, ok := s["type"].(string); !ok && s["type"] != nil {
		t.Errorf("%s: type %v is not a single type", where, s["type"])
	}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		ps := p.(map[string]any)
		if d, _ := ps["description"].(string); len(d) < 10 {
			t.Errorf("%s.%s has no description", where, name)
		}
		checkDescriptions(t, where+"."+name, ps)
	}
	if items, ok := s["items"].(map[string]any); ok {
		checkDescriptions(t, where+"[]", items)
	}
}

// TestTools_Annotations pins the annotations the issue names and the
// scopes every tool needs.
func TestTools_Annotations(t *testing.T) {
	destructive := []string{"context_delete", "context_move", "context_write", "context_revert"}
	for _, tool := range toolset.Tools() {
		a := tool.Annotations
		switch {
		case slices.Equal(tool.Scopes, []string{"read"}):
			if !a.ReadOnly || !a.Idempotent || a.Destructive {
				t.Errorf("%s reads only: annotations %+v", tool.Name, a)
			}
		case a.ReadOnly:
			t.Errorf("%s needs %v but is marked read-only", tool.Name, tool.Scopes)
		}
		if slices.Contains(destructive, tool.Name) && !a.Destructive {
			t.Errorf("%s should be destructive", tool.Name)
		}
		if a.OpenWorld != slices.Contains(tool.Scopes, "ingest") {
			t.Errorf("%s: open-world %v with scopes %v; only host-reading tools are", tool.Name, a.OpenWorld, tool.Scopes)
		}
	}
}

// TestAllowed checks the scope filter.
func TestAllowed(t *testing.T) {
	names := func(tools []toolset.Tool) []string {
		var n []string
		for _, t := range tools {
			n = append(n, t.Name)
		}
		return n
	}
	all := names(toolset.Tools())
	allowed := func(scopes ...string) []toolset.Tool { return toolset.Allowed(toolset.Tools(), scopes) }
	readWrite := names(allowed("read", "write"))
	for _, want := range []string{"context_read", "context_write", "update_beliefs", "build_context"} {
		if !slices.Contains(readWrite, want) {
			t.Errorf("read+write lacks %s: %v", want, readWrite)
		}
	}
	for _, not := range []string{"context_add", "context_refresh"} {
		if slices.Contains(readWrite, not) {
			t.Errorf("read+write (no ingest) offers %s", not)
		}
	}
	for _, tool := range allowed("read") {
		if !tool.Annotations.ReadOnly {
			t.Errorf("read-only caller offered %s", tool.Name)
		}
	}
	if got := names(allowed("read", "write", "ingest")); !slices.Equal(got, all) {
		t.Errorf("read+write+ingest: %v, want all %v", got, all)
	}
	if got := names(allowed("admin")); !slices.Equal(got, all) {
		t.Errorf("admin: %v, want all", got)
	}
	if got := allowed(); len(got) != 0 {
		t.Errorf("no scopes: %v", names(got))
	}
}

// TestCall_SearchHybrid runs context_search with the real embedding model:
// hybrid mode is used and a result carries its vector leg's rank.
func TestCall_SearchHybrid(t *testing.T) {
	e := startDaemon(t, func(c *daemon.Config) { c.ModelDir, c.OnnxRuntimeLib = testmodel.Dir(t), testmodel.ORTLib(t) })
	mustCall(t, e.b, "context_write", `{"path":"/pets/quokka.md","content":"# Quokka\n\nThe quokka is a small marsupial that lives on Rottnest Island.\n"}`)
	mustCall(t, e.b, "context_write", `{"path":"/ops/deploy.md","content":"# Deploy\n\nRun the release pipeline, then tag the build.\n"}`)
	e.waitIndexed(t)
	m := mustCall(t, e.b, "context_search", `{"queries":["island animal"],"limit":2}`)
	if m["mode_used"] != "hybrid" || get(t, m, "results", 0, "ref") != "agent:/pets/quokka.md" {
		t.Fatalf("hybrid search: %v", m)
	}
	if r, ok := get(t, m, "results", 0, "ranks", "vector").(float64); !ok || r < 1 {
		t.Fatalf("no vector rank: %v", m)
	}
}
