package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/daemon"
)

// startDaemon runs a real daemon on a temp unix socket and returns the
// socket. Add may read files in the socket's directory.
func startDaemon(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctxdcli")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := daemon.DefaultConfig()
	cfg.DataDir, cfg.Socket, cfg.HTTP, cfg.ModelDir = filepath.Join(dir, "data"), filepath.Join(dir, "s.sock"), "", ""
	cfg.AllowedRoots = []string{dir}
	d, err := daemon.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Stop(ctx)
	})
	return cfg.Socket
}

// ctxd runs the CLI with args against socket and returns exit code, stdout, stderr.
func ctxd(t *testing.T, socket, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runWith(context.Background(), append([]string{"--socket", socket}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCLI_Workflow(t *testing.T) {
	s := startDaemon(t)
	steps := []struct {
		name     string
		stdin    string
		args     []string
		wantCode int
		wantOut  string // substring of stdout
		wantErr  string // substring of stderr
	}{
		{"write", "line one\nline two\nline three\n", []string{"write", "agent:/notes/a.md", "--tag", "x"}, 0, "created agent:/notes/a.md (29 bytes)", ""},
		{"write again conflicts", "new\n", []string{"write", "agent:/notes/a.md"}, 1, "", "PATH_CONFLICT"},
		{"write skip", "new\n", []string{"write", "agent:/notes/a.md", "--on-conflict", "skip"}, 0, "skipped", ""},
		{"read window", "", []string{"read", "agent:/notes/a.md", "--offset", "1", "--limit", "1"}, 0, "line two\n", ""},
		{"edit", "", []string{"edit", "/notes/a.md", "--start", "2", "--end", "2", "--content", "LINE TWO"}, 0, "3 -> 3 lines", ""},
		{"read edited", "", []string{"read", "/notes/a.md"}, 0, "line one\nLINE TWO\nline three\n", ""},
		{"wc", "", []string{"wc", "/notes/a.md"}, 0, "3 /notes/a.md", ""},
		{"cp", "", []string{"cp", "/notes/a.md", "work:/copy.md"}, 0, "copied 1 items to work:/copy.md", ""},
		{"mv", "", []string{"mv", "work:/copy.md", "work:/moved/copy.md"}, 0, "moved 1 items", ""},
		{"mkdir", "", []string{"mkdir", "/empty"}, 0, "created agent:/empty", ""},
		{"tree", "", []string{"tree", "agent:/"}, 0, "a.md", ""},
		{"ls", "", []string{"ls", "agent:/notes"}, 0, "agent:/notes/a.md", ""},
		{"drives", "", []string{"drives"}, 0, "work", ""},
		{"du", "", []string{"du", "agent:/notes"}, 0, "29\tagent:/notes (1 items)", ""},
		{"info", "", []string{"info", "/notes/a.md"}, 0, "text/markdown", ""},
		{"exists yes", "", []string{"exists", "/notes/a.md"}, 0, "yes", ""},
		{"exists no", "", []string{"exists", "/notes/zzz.md"}, 1, "no", ""},
		{"not found hint", "", []string{"read", "/notes/b.md"}, 1, "", "hint: Nearby items under agent:/notes: agent:/notes/a.md"},
		{"rm dir needs -r", "", []string{"rm", "/notes"}, 1, "", "DIRECTORY_NOT_EMPTY"},
		{"rm -r", "", []string{"rm", "-r", "/notes"}, 0, "deleted 1 items", ""},
		{"bad ref", "", []string{"read", "Bad:/x"}, 1, "", "INVALID_ARGUMENT"},
		{"bad flag", "", []string{"write", "/x", "--on-conflict", "maybe"}, 2, "", "--on-conflict"},
		{"status", "", []string{"status"}, 0, "items:", ""},
	}
	for _, st := range steps {
		code, out, errOut := ctxd(t, s, st.stdin, st.args...)
		if code != st.wantCode || !strings.Contains(out, st.wantOut) || !strings.Contains(errOut, st.wantErr) {
			t.Fatalf("%s: ctxd %v = %d\nstdout: %s\nstderr: %s\nwant code %d, stdout ~ %q, stderr ~ %q",
				st.name, st.args, code, out, errOut, st.wantCode, st.wantOut, st.wantErr)
		}
	}
}

func TestCLI_JSON(t *testing.T) {
	s := startDaemon(t)
	if code, _, errOut := ctxd(t, s, "hello", "write", "/j.txt"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, _ := ctxd(t, s, "", "--json", "info", "/j.txt")
	var info struct {
		Item struct {
			Ref       string `json:"ref"`
			SizeBytes string `json:"size_bytes"`
		} `json:"item"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || code != 0 || info.Item.Ref != "agent:/j.txt" || info.Item.SizeBytes != "5" {
		t.Fatalf("--json info = %d %s (%v)", code, out, err)
	}
	code, _, errOut := ctxd(t, s, "", "--json", "read", "/nope.txt")
	var st struct {
		Code    int `json:"code"`
		Details []struct {
			Type string `json:"type"`
		} `json:"details"`
	}
	if err := json.Unmarshal([]byte(errOut), &st); err != nil || code != 1 || st.Code != 5 || len(st.Details) != 1 || st.Details[0].Type != "ERROR_TYPE_NOT_FOUND" {
		t.Fatalf("--json error = %d %s (%v)", code, errOut, err)
	}
}

func TestCLI_WriteFileAndBinary(t *testing.T) {
	s := startDaemon(t)
	f := filepath.Join(t.TempDir(), "blob.bin")
	blob := []byte{0x89, 'P', 'N', 'G', 0, 0xff}
	if err := os.WriteFile(f, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := ctxd(t, s, "", "write", "/b.bin", "--file", f, "--binary"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, _ := ctxd(t, s, "", "read", "/b.bin", "--raw")
	if code != 0 || out != string(blob) {
		t.Errorf("raw read = %d %q", code, out)
	}
	code, _, errOut := ctxd(t, s, "", "read", "/b.bin")
	if code != 1 || !strings.Contains(errOut, "NO_TEXT_CONTENT") {
		t.Errorf("text read of binary = %d %s", code, errOut)
	}
	// Invalid UTF-8 text is refused with a precise error, not stored mangled.
	code, _, errOut = ctxd(t, s, string(blob), "write", "/b.txt")
	if code != 1 || !strings.Contains(errOut, "UTF-8") {
		t.Errorf("invalid UTF-8 write = %d %s", code, errOut)
	}
}

func TestCLI_NoDaemon(t *testing.T) {
	code, _, errOut := ctxd(t, filepath.Join(t.TempDir(), "none.sock"), "", "--timeout", "2s", "drives")
	if code != 1 || !strings.Contains(errOut, "cannot reach the daemon") || !strings.Contains(errOut, "ctxd serve") {
		t.Errorf("no daemon: %d %s", code, errOut)
	}
}

func TestCLI_EditPatchesFile(t *testing.T) {
	s := startDaemon(t)
	ctxd(t, s, "a\nb\nc\n", "write", "/p.txt")
	patches := `[{"start_line":3,"end_line":3,"content":"C"},{"start_line":1,"end_line":0,"content":"top"}]`
	if code, _, errOut := ctxd(t, s, patches, "edit", "/p.txt", "--patches", "-"); code != 0 {
		t.Fatal(errOut)
	}
	if _, out, _ := ctxd(t, s, "", "read", "/p.txt"); out != "top\na\nb\nC\n" {
		t.Errorf("after patches: %q", out)
	}
	code, _, errOut := ctxd(t, s, `[{"start":1}]`, "edit", "/p.txt", "--patches", "-")
	if code != 2 || !strings.Contains(errOut, "--patches") {
		t.Errorf("malformed patches file: %d %s", code, errOut)
	}
}

func TestCLI_ModelPull(t *testing.T) {
	src, err := filepath.Abs("../../.cache/models/all-MiniLM-L6-v2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, "model.onnx")); err != nil {
		t.Fatalf("%v: run make setup", err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(src)))
	defer srv.Close()
	models := t.TempDir()
	code, out, errOut := ctxd(t, "unused.sock", "", "model", "pull", srv.URL, "--models-dir", models)
	if code != 0 || !strings.Contains(out, filepath.Join(models, "all-MiniLM-L6-v2")) {
		t.Fatalf("model pull = %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = ctxd(t, "unused.sock", "", "model", "pull", srv.URL+"/nope", "--models-dir", models)
	if code != 1 || !strings.Contains(errOut, "not published") {
		t.Errorf("pull of a missing model = %d %s", code, errOut)
	}
}

func TestCLI_SearchDoctorReindex(t *testing.T) {
	s := startDaemon(t)
	for ref, text := range map[string]string{
		"agent:/kb/otters.md": "# Otters\n\nSea otters hold hands while sleeping.\n",
		"work:/kb/other.md":   "Sleeping is good for people too.\n",
	} {
		if code, _, errOut := ctxd(t, s, text, "write", ref); code != 0 {
			t.Fatal(errOut)
		}
	}
	// The index applies writes in the background, within milliseconds.
	var out, errOut string
	for i := 0; i < 100; i++ {
		var code int
		code, out, errOut = ctxd(t, s, "", "search", "sleeping otters")
		if code != 0 {
			t.Fatalf("search: %d %s", code, errOut)
		}
		if strings.Contains(out, "work:/kb/other.md") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasPrefix(out, "1. agent:/kb/otters.md  (1.000)\n   Otters\n") || !strings.Contains(errOut, "BM25 mode") {
		t.Fatalf("search output:\n%s\nstderr: %s", out, errOut)
	}
	steps := []struct {
		args     []string
		wantCode int
		wantOut  string
	}{
		{[]string{"search", "sleeping", "--drive", "work"}, 0, "1. work:/kb/other.md"},
		{[]string{"search", "otters", "--path", "work:/kb"}, 0, "no results"},
		{[]string{"search", "x", "--mode", "fuzzy"}, 2, ""},
		{[]string{"doctor"}, 0, "ok\n"},
		{[]string{"reindex"}, 0, "reindexed 2 chunks"},
		{[]string{"search", "hands", "--limit", "1"}, 0, "agent:/kb/otters.md"},
	}
	for _, st := range steps {
		code, out, errOut := ctxd(t, s, "", st.args...)
		if code != st.wantCode || !strings.Contains(out, st.wantOut) {
			t.Fatalf("ctxd %v = %d\nstdout: %s\nstderr: %s", st.args, code, out, errOut)
		}
	}
}

func TestCLI_AddRefresh(t *testing.T) {
	s := startDaemon(t)
	tree := filepath.Join(filepath.Dir(s), "tree")
	if err := os.MkdirAll(filepath.Join(tree, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"a.md": "# A\n\nalpha notes\n", "sub/b.txt": "bravo\n", "server.key": "secret\n"} {
		if err := os.WriteFile(filepath.Join(tree, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A relative path is resolved against the CLI's working directory.
	t.Chdir(filepath.Dir(tree))
	code, out, errOut := ctxd(t, s, "", "add", "tree")
	if code != 0 || !strings.Contains(out, "added    disk:"+filepath.Join(tree, "a.md")) ||
		!strings.Contains(out, "added 2, updated 0, unchanged 0, skipped 1") {
		t.Fatalf("add: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := ctxd(t, s, "", "search", "alpha", "--mode", "bm25"); code != 0 || !strings.Contains(out, "disk:"+filepath.Join(tree, "a.md")) {
		t.Errorf("search after add: %d %s", code, out)
	}
	if code, out, _ := ctxd(t, s, "", "add", tree); code != 0 || !strings.Contains(out, "skipped 3") {
		t.Errorf("second add: %d %s", code, out)
	}
	if err := os.WriteFile(filepath.Join(tree, "a.md"), []byte("# A\n\nalpha notes, revised\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(tree, "sub/b.txt")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = ctxd(t, s, "", "refresh", "--all")
	if code != 0 || !strings.Contains(out, "updated  disk:"+filepath.Join(tree, "a.md")) ||
		!strings.Contains(errOut, "missing  disk:"+filepath.Join(tree, "sub/b.txt")) || !strings.Contains(out, "updated 1, unchanged 0, skipped 0, missing 1") {
		t.Errorf("refresh: %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = ctxd(t, s, "", "refresh", "--all", "--json")
	if code != 0 || !strings.Contains(out, `"summary":`) || !strings.Contains(out, `"missing":"1"`) {
		t.Errorf("refresh --json: %d %s", code, out)
	}
	// A source outside the allowed roots fails the command.
	if code, _, errOut := ctxd(t, s, "", "add", "/etc/hostname"); code != 1 || !strings.Contains(errOut, "outside the allowed roots") {
		t.Errorf("add outside the roots: %d %s", code, errOut)
	}
	if code, _, errOut := ctxd(t, s, "", "refresh"); code != 2 || !strings.Contains(errOut, "--all") {
		t.Errorf("refresh without refs: %d %s", code, errOut)
	}
}
