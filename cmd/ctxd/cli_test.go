package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/ctxd/ctxd/daemon"
	"github.com/ctxd/ctxd/internal/pgtest"
	"github.com/ctxd/ctxd/internal/testmodel"
)

// startDaemon runs a real daemon on a temp unix socket and returns the
// socket. Add may read files in the socket's directory.
func startDaemon(t *testing.T) string {
	t.Helper()
	cfg, dir := tempConfig(t)
	cfg.AllowedRoots = []string{dir}
	runDaemon(t, cfg)
	return cfg.Socket
}

// tempConfig is a socket-only daemon config without a model, its data and
// socket in dir, a short temp dir (unix socket paths are short) removed
// when the test ends.
func tempConfig(t *testing.T) (cfg daemon.Config, dir string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctxdcli")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg = daemon.DefaultConfig()
	cfg.DataDir, cfg.Socket, cfg.HTTP, cfg.ModelDir = filepath.Join(dir, "data"), filepath.Join(dir, "s.sock"), "", ""
	return cfg, dir
}

// runDaemon starts a real daemon with cfg and stops it when the test ends.
func runDaemon(t *testing.T, cfg daemon.Config) *daemon.Daemon {
	t.Helper()
	d, err := daemon.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Stop(ctx)
	})
	return d
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
		{"status before doctor", "", []string{"status"}, 0, "none since start", ""},
		{"status activity", "", []string{"status"}, 0, "searches/s over the last minute", ""},
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
		code, out, errOut = ctxd(t, s, "", "search", "sleeping otters", "--proximity", "off")
		if code != 0 {
			t.Fatalf("search: %d %s", code, errOut)
		}
		if strings.Contains(out, "work:/kb/other.md") && strings.Contains(out, "agent:/kb/otters.md") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasPrefix(out, "1. agent:/kb/otters.md  lines 1-3  (1.000)\n   Otters\n") || !strings.Contains(errOut, "BM25 mode") {
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
		// "sleeping" stands four words from "otters": 0.85 + 0.15/4² of the
		// score with the proximity rerank on; off by default in the BM25 mode
		// the search falls back to without a model.
		{[]string{"search", "sleeping otters", "--limit", "1"}, 0, "1. agent:/kb/otters.md  lines 1-3  (1.000)"},
		{[]string{"search", "sleeping otters", "--limit", "1", "--proximity", "on"}, 0, "(0.859)"},
		{[]string{"search", "x", "--proximity", "maybe"}, 2, ""},
		{[]string{"search", "x", "--recency", "off"}, 0, "no results"},
		{[]string{"doctor"}, 0, "ok\n"},
		{[]string{"status"}, 0, ", took "}, // the last doctor run
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

// TestCLI_RelativeSocket resolves a relative --socket against the working
// directory, as any other path argument.
func TestCLI_RelativeSocket(t *testing.T) {
	s := startDaemon(t)
	t.Chdir(filepath.Dir(s))
	for _, rel := range []string{filepath.Base(s), "./" + filepath.Base(s)} {
		if code, out, errOut := ctxd(t, rel, "", "status"); code != 0 || !strings.Contains(out, "items") {
			t.Errorf("status --socket %s: %d\n%s\n%s", rel, code, out, errOut)
		}
	}
}

// TestCLI_AddRefusedNamesFlag shows the hint of a refused source: the flag
// and the config key that would allow it.
func TestCLI_AddRefusedNamesFlag(t *testing.T) {
	s := startDaemon(t)
	code, _, errOut := ctxd(t, s, "", "add", "/etc/hostname")
	if code != 1 || !strings.Contains(errOut, "--allowed-root /etc") || !strings.Contains(errOut, "allowed_roots") {
		t.Errorf("add outside the roots: %d %s", code, errOut)
	}
}

// TestCLI_OversizeWrite explains a write far over the daemon's limit, which
// grpc refuses before the daemon sees it.
func TestCLI_OversizeWrite(t *testing.T) {
	cfg, _ := tempConfig(t)
	cfg.MaxContentBytes = 1 << 10
	runDaemon(t, cfg)
	code, _, errOut := ctxd(t, cfg.Socket, strings.Repeat("x", 4<<20), "write", "/big.txt")
	if code == 0 || !strings.Contains(errOut, "CONTENT_TOO_LARGE") || !strings.Contains(errOut, "--max-content-bytes") {
		t.Errorf("oversize write: %d %s", code, errOut)
	}
}

// TestMain lets TestDocs_CommandLine run this test binary as the ctxd
// command, and gives the migrate tests a PostgreSQL.
func TestMain(m *testing.M) {
	if os.Getenv("CTXD_TEST_AS_CLI") == "1" {
		os.Exit(Run(context.Background(), os.Args[1:]))
	}
	pgtest.Run(m)
}

// TestCLI_WriteContent writes the text given with --content, without
// reading stdin; --content and --file together are a usage error.
func TestCLI_WriteContent(t *testing.T) {
	s := startDaemon(t)
	const text = "# C\nfrom the flag\n"
	code, out, errOut := ctxd(t, s, "stdin is not read", "write", "/c.md", "--content", text)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("created agent:/c.md (%d bytes)", len(text))) {
		t.Fatalf("write --content: %d\n%s\n%s", code, out, errOut)
	}
	if _, out, _ := ctxd(t, s, "", "read", "/c.md"); out != text {
		t.Errorf("read = %q, want %q", out, text)
	}
	if code, out, errOut := ctxd(t, s, "stdin is not read", "write", "/e.md", "--content", ""); code != 0 || !strings.Contains(out, "(0 bytes)") {
		t.Errorf("write --content '': %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := ctxd(t, s, "", "write", "/f.md", "--content", "x", "--file", "x.md"); code != 2 || !strings.Contains(errOut, "--content") {
		t.Errorf("--content with --file: %d %s", code, errOut)
	}
}

// TestCLI_HintsNameFlags shows hints, which name request fields for API
// callers, with the flags a command-line user acts on.
func TestCLI_HintsNameFlags(t *testing.T) {
	s := startDaemon(t)
	tree := filepath.Join(filepath.Dir(s), "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "a.md"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		stdin string
		args  []string
	}{
		{"a\n", []string{"write", "/d/a.md"}},
		{"\x00\x01", []string{"write", "/b.bin", "--binary"}},
		{"", []string{"cp", "/d/a.md", "/d/b.md"}},
		{"", []string{"add", tree}},
	} {
		if code, _, errOut := ctxd(t, s, step.stdin, step.args...); code != 0 {
			t.Fatalf("ctxd %v: %s", step.args, errOut)
		}
	}
	tests := []struct {
		args  []string
		stdin string
		want  string // in the hint line
	}{
		{[]string{"write", "/d/a.md"}, "b\n", "pass --on-conflict overwrite to replace it"},
		{[]string{"rm", "/d"}, "", "pass -r to delete it"},
		{[]string{"cp", "/d", "work:/d"}, "", "pass -r to copy the directory"},
		{[]string{"cp", "/d/a.md", "/d/b.md"}, "", "pass --on-conflict overwrite to replace them, or --on-conflict skip to keep them"},
		{[]string{"add", tree, "--on-conflict", "error"}, "", "pass --on-conflict skip to add only what is new"},
		{[]string{"read", "/b.bin"}, "", "use read --raw to get its bytes"},
		{[]string{"write", "/n.md"}, "a\x00b", "(--binary)"},
		{[]string{"write", "/new.md", "--if-hash", strings.Repeat("0", 64)}, "x", "write without --if-hash"},
	}
	for _, tt := range tests {
		code, _, errOut := ctxd(t, s, tt.stdin, tt.args...)
		_, hint, _ := strings.Cut(errOut, "\nhint: ")
		if code != 1 || !strings.Contains(hint, tt.want) {
			t.Errorf("ctxd %v = %d\n%s\nwant a hint with %q", tt.args, code, errOut, tt.want)
		}
		for _, f := range cliFlagNames {
			if strings.Contains(hint, f.api) {
				t.Errorf("ctxd %v: hint names the API's %q: %s", tt.args, f.api, hint)
			}
		}
	}
}

// TestCLIFlagNames_FlagsExist keeps the mapping of API names to flags true
// to the commands: every flag it names is defined.
func TestCLIFlagNames_FlagsExist(t *testing.T) {
	var commands []*cobra.Command
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		commands = append(commands, cmd)
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk((&cli{}).rootCommand())
	defined := func(flag string) bool {
		for _, cmd := range commands {
			long, isLong := strings.CutPrefix(flag, "--")
			if isLong && cmd.Flags().Lookup(long) != nil || !isLong && cmd.Flags().ShorthandLookup(flag[1:]) != nil {
				return true
			}
		}
		return false
	}
	for _, f := range cliFlagNames {
		for _, word := range strings.Fields(f.cli) {
			if flag := strings.Trim(word, "()"); strings.HasPrefix(flag, "-") && !defined(flag) {
				t.Errorf("%q maps to %q, but no command has %s", f.api, f.cli, flag)
			}
		}
		if cliHint("x "+f.api+" y") != "x "+f.cli+" y" {
			t.Errorf("cliHint does not map %q to %q", f.api, f.cli)
		}
	}
}

// docCommandLineBlocks are the sh blocks TestDocs_CommandLine runs, in
// order: each is the first sh block of the section (a "## " heading) of the
// markdown file, and uses $ctxd.
var docCommandLineBlocks = []struct{ file, heading string }{
	{"README.md", "Five-minute tour"},
	{"docs/cli.md", "Command line"},
	{"docs/context.md", "Agent context"},
	{"docs/history.md", "History"},
	{"docs/sessions.md", "Sessions"},
}

// TestDocs_CommandLine runs the documentation's command-line examples (the
// blocks of docCommandLineBlocks, the README's tour first) in order through
// sh, as a reader would, against a fresh daemon ($ctxd is this test binary):
// every command succeeds, except that one whose line says "# fails" exits 1.
// The daemon serves HTTP too, so that the tour's `ctxd ui` prints a link. The tour's
// `claude mcp add NAME -- COMMAND` is checked by running COMMAND as an MCP
// host would and listing its tools. A second run must succeed too, so the
// examples never collide with what they left behind.
func TestDocs_CommandLine(t *testing.T) {
	var stmts []shellStatement
	for _, b := range docCommandLineBlocks {
		stmts = append(stmts, shellStatements(docBlock(t, b.file, b.heading, "$ctxd"))...)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, dir := tempConfig(t)
	cfg.AllowedRoots = []string{dir}
	cfg.HTTP, cfg.TokenFile = "127.0.0.1:0", filepath.Join(dir, "token")
	runDaemon(t, cfg)
	env := append(os.Environ(), "ctxd="+bin, "CTXD_TEST_AS_CLI=1", "CTXD_SOCKET="+cfg.Socket)
	for run := 1; run <= 2; run++ {
		for _, st := range stmts {
			if server, ok := strings.CutPrefix(st.cmd, "claude mcp add "); ok {
				_, server, _ = strings.Cut(server, " -- ")
				checkMCPServer(t, server, env)
				continue
			}
			cmd := exec.Command("sh", "-c", st.cmd)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			code := cmd.ProcessState.ExitCode()
			want := 0
			if strings.HasPrefix(st.comment, "fails") {
				want = 1
			}
			if code != want {
				t.Errorf("run %d: %s\nexit %d (%v), want %d:\n%s", run, st.cmd, code, err, want, out)
			}
		}
	}
}

// checkMCPServer starts server (a shell command) as an MCP host starts a
// stdio server and lists its tools: they must include context_search.
func checkMCPServer(t *testing.T, server string, env []string) {
	t.Helper()
	if server == "" {
		t.Error("claude mcp add without -- COMMAND")
		return
	}
	cmd := exec.Command("sh", "-c", server)
	cmd.Env = env
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "ctxd-docs-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Errorf("%s: connect as an MCP host: %v", server, err)
		return
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Errorf("%s: tools/list: %v", server, err)
		return
	}
	if !slices.ContainsFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "context_search" }) {
		t.Errorf("%s lists no context_search among %d tools", server, len(tools.Tools))
	}
}

// TestDocs_API runs docs/api.md's grpcurl and curl examples in order
// through sh against a fresh daemon whose socket, token and HTTP address are
// where the examples look (localhost:7077 becomes the test's port). Each
// succeeds without an ErrorDetail, except the one whose line says "# fails".
// Lines that fetch from the internet are left out.
func TestDocs_API(t *testing.T) {
	grpcurl, err := filepath.Abs("../../.tmp/bin/grpcurl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(grpcurl); err != nil {
		t.Fatalf("%v: run make setup", err)
	}
	dir, err := os.MkdirTemp("", "ctxdreadme")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home, runtime := filepath.Join(dir, "home"), filepath.Join(dir, "run")
	for _, d := range []string{filepath.Join(home, "notes"), runtime} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "notes", "a.md"), []byte("# A\n\nhello notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := daemon.DefaultConfig()
	cfg.DataDir, cfg.ModelDir, cfg.HTTP = filepath.Join(dir, "data"), "", "127.0.0.1:0"
	cfg.Socket = filepath.Join(runtime, "ctxd", "ctxd.sock")
	cfg.TokenFile = filepath.Join(home, ".config", "ctxd", "token")
	cfg.AllowedRoots = []string{home}
	d := runDaemon(t, cfg)
	env := append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+runtime, "PATH="+filepath.Dir(grpcurl)+":"+os.Getenv("PATH"))
	var vars []string // the blocks' variable assignments, run before each later command
	for _, section := range []string{"grpcurl over the socket", "curl against the gateway"} {
		block := strings.ReplaceAll(docBlock(t, "docs/api.md", section, "$"), "localhost:7077", d.HTTPAddr().String())
		for _, st := range shellStatements(block) {
			if st.cmd[0] >= 'A' && st.cmd[0] <= 'Z' && strings.Contains(st.cmd, "=") {
				vars = append(vars, st.cmd)
				continue
			}
			if strings.Contains(st.cmd, "https://") {
				continue
			}
			cmd := exec.Command("sh", "-c", strings.Join(append(vars, st.cmd), "\n"))
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			failed := err != nil || strings.Contains(string(out), "ctxd.v1.ErrorDetail")
			if failed != strings.HasPrefix(st.comment, "fails") {
				t.Errorf("%s\nerror %v, output:\n%s", st.cmd, err, out)
			}
		}
	}
}

// docBlock returns the first sh block of the section with the given "## "
// heading in the markdown file (relative to the repository's root); it must
// contain want.
func docBlock(t *testing.T, file, heading, want string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("../..", file))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## "+heading+"\n")
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, found := strings.Cut(block, "```")
	if !found || !strings.Contains(block, want) {
		t.Fatalf("no sh block with %s in the %s section of %s", want, heading, file)
	}
	return block
}

// shellStatement is one command of a documentation block and the comment on its line.
type shellStatement struct{ cmd, comment string }

// shellStatements splits a sh block at newlines and semicolons outside
// quotes, dropping comments; a quoted string may span lines.
func shellStatements(block string) []shellStatement {
	var out []shellStatement
	var cur strings.Builder
	var quote rune
	var line []string // statements of the current line
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			line = append(line, s)
		}
		cur.Reset()
	}
	endLine := func(comment string) {
		flush()
		for _, s := range line {
			out = append(out, shellStatement{s, strings.TrimSpace(comment)})
		}
		line = nil
	}
	for i := 0; i < len(block); i++ {
		ch := rune(block[i])
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
			cur.WriteRune(ch)
		case ch == '"' || ch == '\'':
			quote = ch
			cur.WriteRune(ch)
		case ch == ';':
			flush()
		case ch == '\n':
			endLine("")
		case ch == '#' && (i == 0 || block[i-1] == ' '):
			end := strings.IndexByte(block[i:], '\n')
			if end < 0 {
				end = len(block) - i
			}
			endLine(block[i+1 : i+end])
			i += end
		default:
			cur.WriteRune(ch)
		}
	}
	endLine("")
	return out
}

// TestCLI_RefusesMalformedInput: a ref with "//" and an --exclude glob that
// could match nothing are INVALID_ARGUMENT, each with a hint to fix it.
func TestCLI_RefusesMalformedInput(t *testing.T) {
	s := startDaemon(t)
	ctxd(t, s, "x\n", "write", "/notes/plan.md")
	code, _, errOut := ctxd(t, s, "", "read", "agent:/notes//plan.md")
	if code != 1 || !strings.Contains(errOut, "INVALID_ARGUMENT") || !strings.Contains(errOut, `hint: use "agent:/notes/plan.md" instead`) {
		t.Errorf("read with //: %d %s", code, errOut)
	}
	tree := filepath.Join(filepath.Dir(s), "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := ctxd(t, s, "", "add", tree, "--exclude", "*.csv", "--exclude", "[ab")
	if code != 1 || !strings.Contains(errOut, `INVALID_ARGUMENT: The exclude pattern "[ab"`) || strings.Contains(out+errOut, "added") {
		t.Errorf("add --exclude '[ab': %d\n%s\n%s", code, out, errOut)
	}
}

// TestCLI_StatusShowsEnricher shows the question enricher's line when an
// endpoint is configured, with its password redacted.
func TestCLI_StatusShowsEnricher(t *testing.T) {
	cfg, _ := tempConfig(t)
	cfg.Enricher.Endpoint, cfg.Enricher.Model = "http://me:secret@127.0.0.1:9/v1", "llama3.2"
	runDaemon(t, cfg)
	code, out, errOut := ctxd(t, cfg.Socket, "", "status")
	if code != 0 || !strings.Contains(out, "question enricher:") || !strings.Contains(out, "llama3.2 at http://me:xxxxx@127.0.0.1:9/v1") ||
		strings.Contains(out, "secret") {
		t.Errorf("status = %d\n%s\n%s", code, out, errOut)
	}
}

func TestCLI_Import(t *testing.T) {
	s := startDaemon(t)
	lines := `{"ref":"imp:/a.md","content":"alpha","tags":["x"]}
{"ref":"imp:/b.md","content":"beta"}

{"ref":"imp:/c.bin","data":"AAEC"}
`
	code, out, errOut := ctxd(t, s, lines, "import", "--batch", "2")
	if code != 0 || out != "imported 3 items: 3 created, 0 updated, 0 skipped; WriteBatch calls: 2\n" {
		t.Fatalf("import = %d %q %q", code, out, errOut)
	}
	if code, out, _ := ctxd(t, s, "", "read", "imp:/c.bin", "--raw"); code != 0 || out != "\x00\x01\x02" {
		t.Errorf("imported binary = %d %q", code, out)
	}
	code, out, _ = ctxd(t, s, lines, "import", "--on-conflict", "skip")
	if code != 0 || out != "imported 3 items: 0 created, 0 updated, 3 skipped; WriteBatch calls: 1\n" {
		t.Errorf("import again with skip = %d %q", code, out)
	}

	// The second batch (lines 3-4) fails on line 4: the first batch stays
	// written, nothing of the second is.
	bad := `{"ref":"imp:/d.md","content":"d"}
{"ref":"imp:/e.md","content":"e"}
{"ref":"imp:/f.md","content":"f"}
{"ref":"imp:/a.md","content":"again"}
`
	code, _, errOut = ctxd(t, s, bad, "import", "--batch", "2")
	if code != 1 || !strings.Contains(errOut, "nothing of lines 3-4 was written") || !strings.Contains(errOut, "items[1] (imp:/a.md)") {
		t.Fatalf("failing import = %d %q", code, errOut)
	}
	for ref, want := range map[string]int{"imp:/d.md": 0, "imp:/e.md": 0, "imp:/f.md": 1} {
		if code, _, _ := ctxd(t, s, "", "exists", ref); code != want {
			t.Errorf("exists %s = %d, want %d", ref, code, want)
		}
	}

	code, _, errOut = ctxd(t, s, "{\"ref\":\"imp:/g.md\",\"content\":\"g\"}\nnot json\n", "import")
	if code != 2 || !strings.Contains(errOut, "line 2 is not a WriteRequest") || !strings.Contains(errOut, "the 1 lines since were not sent") {
		t.Errorf("malformed line = %d %q", code, errOut)
	}
	if code, _, _ := ctxd(t, s, "", "exists", "imp:/g.md"); code != 1 {
		t.Error("the line before a malformed one was written although its batch was never sent")
	}
}

// TestCLI_StatusWhileLoading runs `ctxd status` from the moment the daemon
// serves until the model runs: the embedding line says what is loading or
// that embedding is available, never "unavailable: " with no reason (what
// it printed right after start).
func TestCLI_StatusWhileLoading(t *testing.T) {
	cfg, _ := tempConfig(t)
	cfg.ModelDir, cfg.OnnxRuntimeLib = testmodel.Dir(t), testmodel.ORTLib(t)
	runDaemon(t, cfg)
	line := regexp.MustCompile(`(?m)^embedding:\s+(.*)$`)
	deadline := time.Now().Add(time.Minute)
	for {
		code, out, errOut := ctxd(t, cfg.Socket, "", "status")
		m := line.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("status = %d\n%s\n%s", code, out, errOut)
		}
		if m[1] == "available" {
			return
		}
		if !strings.HasPrefix(m[1], "loading the embedding model ") || !strings.Contains(m[1], cfg.ModelDir) {
			t.Fatalf("embedding line %q before the model runs, want what is loading", m[1])
		}
		if time.Now().After(deadline) {
			t.Fatalf("model not available after a minute: %q", m[1])
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAvailability renders each state of a status line.
func TestAvailability(t *testing.T) {
	for _, tt := range []struct {
		ok, loading bool
		reason      string
		want        string
	}{
		{true, false, "", "available"},
		{false, true, "loading the embedding model m from /d into ONNX Runtime", "loading the embedding model m from /d into ONNX Runtime"},
		{false, false, "no model configured (model_dir is empty)", "unavailable: no model configured (model_dir is empty)"},
		{false, false, "", "unavailable (the daemon gave no reason)"},
	} {
		if got := availability(tt.ok, tt.loading, tt.reason); got != tt.want {
			t.Errorf("availability(%v, %v, %q) = %q, want %q", tt.ok, tt.loading, tt.reason, got, tt.want)
		}
	}
}
