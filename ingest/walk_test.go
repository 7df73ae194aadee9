package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mustTree writes files (slash-separated paths relative to root) and returns root.
func mustTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		mustWrite(t, filepath.Join(root, filepath.FromSlash(rel)), content)
	}
	return root
}

// walkAll walks root and returns the entries keyed by slash path relative to
// root, and those paths in the order Walk reported them.
func walkAll(t *testing.T, root string, o WalkOptions) (map[string]Entry, []string) {
	t.Helper()
	if o.Policy.AllowedRoots == nil {
		o.Policy.AllowedRoots = []string{root}
	}
	entries := map[string]Entry{}
	var order []string
	err := Walk(context.Background(), root, o, func(e Entry) error {
		rel, err := filepath.Rel(root, e.Path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if _, dup := entries[rel]; dup {
			t.Errorf("%s reported twice", rel)
		}
		entries[rel] = e
		order = append(order, rel)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return entries, order
}

func sortedKeys(m map[string]Entry) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func assertPaths(t *testing.T, got map[string]Entry, want ...string) {
	t.Helper()
	slices.Sort(want)
	if keys := sortedKeys(got); !slices.Equal(keys, want) {
		t.Errorf("walked\n  %s\nwant\n  %s", strings.Join(keys, "\n  "), strings.Join(want, "\n  "))
	}
}

func assertErrKind(t *testing.T, entries map[string]Entry, rel string, kind error, inMessage string) {
	t.Helper()
	e, ok := entries[rel]
	if !ok {
		t.Errorf("%s not reported", rel)
		return
	}
	var ie *Error
	if !errors.As(e.Err, &ie) || !errors.Is(e.Err, kind) {
		t.Errorf("%s: Err = %v, want an *Error of kind %v", rel, e.Err, kind)
		return
	}
	if !strings.Contains(ie.Message, inMessage) {
		t.Errorf("%s: message %q does not mention %q", rel, ie.Message, inMessage)
	}
}

func TestWalk_gitignore(t *testing.T) {
	root := mustTree(t, map[string]string{
		".gitignore":        "# comment\n\n   \n*.log\ngen/\n/only-root.txt\ndocs/**/draft.md\r\n",
		"# comment":         "not a pattern",
		"a/b/x.log":         "",
		"a/b/x.txt":         "",
		"gen/out.txt":       "",
		"sub/gen":           "a file, not a directory",
		"sub/.gitignore":    "!keep.log\n",
		"sub/keep.log":      "",
		"sub/other.log":     "",
		"sub/deeper/k.log":  "",
		"only-root.txt":     "",
		"sub/only-root.txt": "",
		"docs/draft.md":     "",
		"docs/a/b/draft.md": "",
		"docs/final.md":     "",
		"other/draft.md":    "",
	})
	base := []string{"# comment", "a/b/x.txt", "sub/gen", "sub/keep.log", "sub/only-root.txt", "docs/final.md", "other/draft.md"}

	t.Run("gitignore files", func(t *testing.T) {
		got, _ := walkAll(t, root, WalkOptions{})
		assertPaths(t, got, base...)
	})
	t.Run("Exclude appended to the root .gitignore", func(t *testing.T) {
		// "!a/b/x.log" overrides the root's "*.log"; the nested "!keep.log"
		// overrides "sub/keep.log".
		got, _ := walkAll(t, root, WalkOptions{Exclude: []string{"other/", "!a/b/x.log", "sub/keep.log", "*.md"}})
		assertPaths(t, got, "# comment", "a/b/x.log", "a/b/x.txt", "sub/gen", "sub/keep.log", "sub/only-root.txt")
	})
}

// TestWalk_gitignorePatterns checks cases where go-git's matching alone
// differs from git's.
func TestWalk_gitignorePatterns(t *testing.T) {
	tests := []struct {
		name      string
		gitignore string
		files     []string
		want      []string
	}{
		{
			name:      "re-included directories do not re-include their files",
			gitignore: "*\n!*/\n!*.go\n",
			files:     []string{"main.go", "README", "src/lib.go", "src/data.txt", "src/deep/x.go", "src/deep/y.json"},
			want:      []string{"main.go", "src/lib.go", "src/deep/x.go"},
		},
		{
			name:      "dir/** matches below dir only",
			gitignore: "logs/**\n!logs/keep/\n!logs/keep/*.md\n",
			files:     []string{"logs/b.txt", "logs/keep/a.txt", "logs/keep/a.md", "other.txt"},
			want:      []string{"logs/keep/a.md", "other.txt"},
		},
		{
			name:      "a/*/** needs a directory between",
			gitignore: "a/*/**\n",
			files:     []string{"a/x.txt", "a/b/y.txt", "a/b/c/z.txt"},
			want:      []string{"a/x.txt"},
		},
		{
			name:      "a slash pattern matches at its depth only",
			gitignore: "src/*.txt\n",
			files:     []string{"src/a.txt", "src/sub/b.txt", "other/src/c.txt"},
			want:      []string{"src/sub/b.txt", "other/src/c.txt"},
		},
		{
			name:      "escaped and trailing-space patterns",
			gitignore: "\\#literal\n\\!bang\nspaced   \n",
			files:     []string{"#literal", "!bang", "spaced", "kept"},
			want:      []string{"kept"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{".gitignore": tt.gitignore}
			for _, f := range tt.files {
				files[f] = ""
			}
			got, _ := walkAll(t, mustTree(t, files), WalkOptions{})
			assertPaths(t, got, tt.want...)
		})
	}
}

func TestWalk_hiddenAndDefaultExcludes(t *testing.T) {
	root := mustTree(t, map[string]string{
		"visible.txt":               "",
		".dotfile":                  "",
		".hidden/a.txt":             "",
		".git/config":               "",
		"node_modules/x/index.js":   "",
		"lib/node_modules/y.js":     "",
		"lib/code.py":               "",
		"lib/__pycache__/code.pyc":  "",
		"vendor/github.com/x/x.go":  "",
		"notes/build.md":            "a file named like an excluded directory",
		"target/release/binary.txt": "",
	})
	t.Run("default", func(t *testing.T) {
		got, _ := walkAll(t, root, WalkOptions{})
		assertPaths(t, got, "visible.txt", "lib/code.py", "vendor/github.com/x/x.go", "notes/build.md")
	})
	t.Run("IncludeHidden", func(t *testing.T) {
		got, _ := walkAll(t, root, WalkOptions{IncludeHidden: true})
		assertPaths(t, got, "visible.txt", ".dotfile", ".hidden/a.txt", "lib/code.py", "vendor/github.com/x/x.go", "notes/build.md")
	})
}

func TestWalk_lexicalOrder(t *testing.T) {
	root := mustTree(t, map[string]string{"b.txt": "", "a/z.txt": "", "a.txt": "", "a/b/c.txt": "", "C.txt": ""})
	_, order := walkAll(t, root, WalkOptions{})
	want := []string{"C.txt", "a/b/c.txt", "a/z.txt", "a.txt", "b.txt"}
	if !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}

func TestWalk_symlinks(t *testing.T) {
	outside := mustTree(t, map[string]string{"target.txt": "outside"})
	root := mustTree(t, map[string]string{"inside.txt": "inside!", "sub/f.txt": ""})
	mustSymlink(t, filepath.Join(root, "inside.txt"), filepath.Join(root, "link-in.txt"))
	mustSymlink(t, "../inside.txt", filepath.Join(root, "sub", "relative-link.txt"))
	mustSymlink(t, filepath.Join(outside, "target.txt"), filepath.Join(root, "link-out.txt"))
	mustSymlink(t, filepath.Join(root, "sub"), filepath.Join(root, "dirlink"))
	mustSymlink(t, outside, filepath.Join(root, "dirlink-out"))
	mustSymlink(t, filepath.Join(root, "missing"), filepath.Join(root, "broken"))
	mustSymlink(t, filepath.Join(root, "sub"), filepath.Join(root, "node_modules"))

	got, _ := walkAll(t, root, WalkOptions{})
	assertPaths(t, got, "inside.txt", "link-in.txt", "sub/f.txt", "sub/relative-link.txt", "link-out.txt", "dirlink", "dirlink-out", "broken")
	for _, rel := range []string{"link-in.txt", "sub/relative-link.txt"} {
		if e := got[rel]; e.Err != nil || e.Size != int64(len("inside!")) || e.Path != filepath.Join(root, filepath.FromSlash(rel)) {
			t.Errorf("%s: %+v, want the link's path with the target's size", rel, e)
		}
	}
	assertErrKind(t, got, "link-out.txt", ErrRefused, "symlink escapes the tree")
	assertErrKind(t, got, "dirlink-out", ErrRefused, "symlink escapes the tree")
	assertErrKind(t, got, "dirlink", ErrRefused, "symlinked directory not followed")
	assertErrKind(t, got, "broken", ErrUnreadable, "broken symlink")
}

func TestWalk_unreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root reads any file, so the test runs again as nobody.
		runAsNobody(t, "^TestWalk_unreadable$")
		return
	}
	root := mustTree(t, map[string]string{"locked.txt": "x", "locked-dir/a.txt": "x", "z.txt": "x"})
	if err := os.Chmod(filepath.Join(root, "locked.txt"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "locked-dir"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "locked-dir"), 0o755) })

	got, _ := walkAll(t, root, WalkOptions{})
	assertPaths(t, got, "locked.txt", "locked-dir", "z.txt")
	assertErrKind(t, got, "locked.txt", ErrUnreadable, "permission denied")
	assertErrKind(t, got, "locked-dir", ErrUnreadable, "permission denied")
	if got["z.txt"].Err != nil {
		t.Errorf("z.txt after an unreadable directory: %v", got["z.txt"].Err)
	}
}

func TestWalk_tooLarge(t *testing.T) {
	root := mustTree(t, map[string]string{"small.txt": "small", "huge.bin": ""})
	const huge = 100 << 20
	if err := os.Truncate(filepath.Join(root, "huge.bin"), huge); err != nil {
		t.Fatal(err)
	}
	got, _ := walkAll(t, root, WalkOptions{MaxFileBytes: 10 << 20})
	assertErrKind(t, got, "huge.bin", ErrTooLarge, "limit")
	if got["huge.bin"].Size != huge {
		t.Errorf("huge.bin Size = %d, want %d", got["huge.bin"].Size, huge)
	}
	if e := got["small.txt"]; e.Err != nil || e.Size != 5 || e.ModTime.IsZero() {
		t.Errorf("small.txt: %+v", e)
	}

	got, _ = walkAll(t, root, WalkOptions{})
	if err := got["huge.bin"].Err; err != nil {
		t.Errorf("no limit: huge.bin Err = %v", err)
	}
}

func TestWalk_secrets(t *testing.T) {
	root := mustTree(t, map[string]string{
		"server.pem": "", ".env": "", ".env.example": "", "keys/id_rsa.pub": "", ".ssh/config": "", "main.go": "",
	})
	mustSymlink(t, filepath.Join(root, ".env"), filepath.Join(root, "harmless.txt"))

	got, _ := walkAll(t, root, WalkOptions{IncludeHidden: true})
	assertPaths(t, got, "server.pem", ".env", ".env.example", "keys/id_rsa.pub", ".ssh/config", "main.go", "harmless.txt")
	for _, rel := range []string{"server.pem", ".env", ".ssh/config", "harmless.txt"} {
		assertErrKind(t, got, rel, ErrRefused, "looks like a secret")
	}
	for _, rel := range []string{".env.example", "keys/id_rsa.pub", "main.go"} {
		if err := got[rel].Err; err != nil {
			t.Errorf("%s: Err = %v, want nil", rel, err)
		}
	}

	got, _ = walkAll(t, root, WalkOptions{IncludeHidden: true, Policy: Policy{AllowedRoots: []string{root}, AllowSecrets: true}})
	for rel, e := range got {
		if e.Err != nil {
			t.Errorf("AllowSecrets: %s: Err = %v", rel, e.Err)
		}
	}
}

func TestWalk_rootIsFile(t *testing.T) {
	root := mustTree(t, map[string]string{".gitignore": "*.md\n", ".hidden.md": "hello", "big.txt": "0123456789", "server.pem": ""})
	o := WalkOptions{Policy: Policy{AllowedRoots: []string{root}}}

	var got []Entry
	file := filepath.Join(root, ".hidden.md")
	if err := Walk(context.Background(), file, o, func(e Entry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Path != file || got[0].Size != 5 || got[0].Err != nil {
		t.Errorf("a file named explicitly: got %+v", got)
	}

	got = nil
	o.MaxFileBytes = 5
	if err := Walk(context.Background(), filepath.Join(root, "big.txt"), o, func(e Entry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !errors.Is(got[0].Err, ErrTooLarge) {
		t.Errorf("a file over the limit: got %+v", got)
	}

	for _, path := range []string{filepath.Join(root, "server.pem"), "/etc/hostname", filepath.Join(root, "missing")} {
		err := Walk(context.Background(), path, o, func(e Entry) error {
			t.Errorf("%s: fn called with %+v", path, e)
			return nil
		})
		if !errors.Is(err, ErrRefused) && !errors.Is(err, ErrUnreadable) {
			t.Errorf("Walk(%s) = %v, want a refusal or unreadable error", path, err)
		}
	}
}

func TestWalk_stops(t *testing.T) {
	root := mustTree(t, map[string]string{"a.txt": "", "b.txt": "", "c.txt": ""})
	o := WalkOptions{Policy: Policy{AllowedRoots: []string{root}}}

	stop := errors.New("stop")
	calls := 0
	err := Walk(context.Background(), root, o, func(Entry) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("fn error: Walk = %v after %d calls, want %v after 1", err, calls, stop)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = Walk(ctx, root, o, func(Entry) error { calls++; cancel(); return nil })
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("cancelled: Walk = %v after %d calls, want %v after 1", err, calls, context.Canceled)
	}
}

// TestWalk_manyFiles walks 20,000 files under nested .gitignore files; the
// time is logged (run with -v), not asserted.
func TestWalk_manyFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 20,000 files")
	}
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, ".gitignore"), "*.log\n/skip/\n")
	for d := range 200 {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		mustWrite(t, filepath.Join(dir, ".gitignore"), "!keep.log\n*.tmp\n")
		for f := range 100 {
			mustWrite(t, filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), "")
		}
		mustWrite(t, filepath.Join(dir, "keep.log"), "")
		mustWrite(t, filepath.Join(dir, "x.log"), "")
		mustWrite(t, filepath.Join(dir, "x.tmp"), "")
	}
	o := WalkOptions{Policy: Policy{AllowedRoots: []string{root}}, Exclude: []string{"*.bak", "docs/**/draft.md"}}
	start := time.Now()
	n := 0
	if err := Walk(context.Background(), root, o, func(e Entry) error {
		if e.Err != nil {
			t.Errorf("%s: %v", e.Path, e.Err)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("walked %d files in %v", n, time.Since(start))
	if want := 200 * 101; n != want {
		t.Errorf("walked %d files, want %d", n, want)
	}
}

// runAsNobody runs the tests matching pattern in a copy of this test binary
// as user nobody, in a temp dir nobody can use, and fails if they do not pass.
func runAsNobody(t *testing.T, pattern string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctxd-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ingest.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run="+pattern, "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: ") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

// TestWalk_invalidExclude refuses, before reading anything, exclude patterns
// that could match nothing (a malformed glob, an empty pattern, a comment),
// naming the pattern; Add fails as a whole with nothing written.
func TestWalk_invalidExclude(t *testing.T) {
	root := mustTree(t, map[string]string{"a.md": "a\n", "b.csv": "b\n"})
	good := []string{"*.csv", "build/", "!keep.md", "docs/**/draft-*", `\#notes`, "[a-z]*.go", "a]"}
	if err := CheckPatterns(good); err != nil {
		t.Errorf("CheckPatterns(%q) = %v", good, err)
	}
	for _, bad := range []string{"[abc", "src/a[.go", `trailing\`, "x/[b-]/y", "", "   ", "# a comment"} {
		t.Run(bad, func(t *testing.T) {
			o := WalkOptions{Exclude: []string{"*.csv", bad}, Policy: Policy{AllowedRoots: []string{root}}}
			err := Walk(context.Background(), root, o, func(e Entry) error {
				t.Errorf("walked %s", e.Path)
				return nil
			})
			var e *Error
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &e) || !strings.Contains(e.Message, fmt.Sprintf("%q", bad)) || !strings.Contains(e.Hint, "--exclude") {
				t.Errorf("Walk = %v (%+v), want ErrInvalid naming %q and --exclude", err, e, bad)
			}
			in, s := newTestIngester(t, root)
			var rec recorder
			_, err = in.Add(context.Background(), AddOptions{Sources: []string{root}, Exclude: []string{bad}}, rec.sink())
			if !errors.Is(err, ErrInvalid) || len(rec.items) != 0 {
				t.Errorf("Add = %v, items %v; want ErrInvalid before any item", err, rec.items)
			}
			if st, err := s.Stats(context.Background()); err != nil || st.ItemCount != 0 {
				t.Errorf("store after a refused Add: %+v, %v", st, err)
			}
		})
	}
}
