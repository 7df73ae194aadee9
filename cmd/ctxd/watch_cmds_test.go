package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_Watch adds, lists and removes a watch, and shows it in status;
// a scanning watch says why.
func TestCLI_Watch(t *testing.T) {
	cfg, dir := tempConfig(t)
	cfg.AllowedRoots = []string{dir}
	cfg.Watch.MaxDirs = 1
	runDaemon(t, cfg)
	s := cfg.Socket
	tree := filepath.Join(dir, "tree")
	flat := filepath.Join(dir, "flat")
	for path, content := range map[string]string{filepath.Join(tree, "a.md"): "alpha", filepath.Join(tree, "sub", "b.md"): "bravo", filepath.Join(flat, "c.md"): "charlie"} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	code, out, errOut := ctxd(t, s, "", "watch", "add", flat, "--debounce", "300ms", "--tag", "w")
	if code != 0 || !strings.Contains(out, "watching "+flat) || !strings.Contains(out, "1 files, 1 added") {
		t.Fatalf("watch add = %d %s %s", code, out, errOut)
	}
	code, out, _ = ctxd(t, s, "", "watch", "add", flat)
	if code != 0 || !strings.Contains(out, "watched already") {
		t.Errorf("watch add again = %d %s", code, out)
	}
	code, out, errOut = ctxd(t, s, "", "watch", "add", tree)
	if code != 0 || !strings.Contains(out, "note: "+tree+" is scanned") || !strings.Contains(out, "watch.max_dirs") {
		t.Errorf("watch add of a tree over max_dirs = %d %s %s; want a note that it is scanned, and why", code, out, errOut)
	}
	code, out, _ = ctxd(t, s, "", "watch", "list")
	if code != 0 || !strings.Contains(out, "mode") || !strings.Contains(out, flat) || !strings.Contains(out, "events") ||
		!strings.Contains(out, "scanning: ") || !strings.Contains(out, "+1 ~0 >0 -0 =0 !0") {
		t.Errorf("watch list = %d %s", code, out)
	}
	code, out, _ = ctxd(t, s, "", "--json", "watch", "ls")
	var listed struct {
		Watches []struct {
			ID         string `json:"id"`
			Path       string `json:"path"`
			DebounceMS string `json:"debounce_ms"`
		} `json:"watches"`
	}
	if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil || len(listed.Watches) != 2 || listed.Watches[0].Path != flat || listed.Watches[0].DebounceMS != "300" {
		t.Fatalf("--json watch ls = %d %s (%v)", code, out, err)
	}
	code, out, _ = ctxd(t, s, "", "status")
	if code != 0 || !strings.Contains(out, listed.Watches[1].ID) || !strings.Contains(out, "scanning") {
		t.Errorf("status = %d %s; want the watches listed", code, out)
	}
	code, out, _ = ctxd(t, s, "", "watch", "rm", listed.Watches[1].ID)
	if code != 0 || !strings.Contains(out, "stopped watching "+tree) {
		t.Errorf("watch rm ID = %d %s", code, out)
	}
	t.Chdir(dir)
	code, out, _ = ctxd(t, s, "", "watch", "rm", "flat")
	if code != 0 || !strings.Contains(out, "stopped watching "+flat) || !strings.Contains(out, "items are kept") {
		t.Errorf("watch rm DIR = %d %s", code, out)
	}
	code, _, errOut = ctxd(t, s, "", "watch", "rm", "flat")
	if code != 1 || !strings.Contains(errOut, "NOT_FOUND") || !strings.Contains(errOut, "hint: ") {
		t.Errorf("watch rm of what is not watched = %d %s", code, errOut)
	}
	code, _, errOut = ctxd(t, s, "", "watch", "add", flat, "--debounce", "2m")
	if code != 2 || !strings.Contains(errOut, "--debounce") {
		t.Errorf("watch add --debounce 2m = %d %s; want a usage error", code, errOut)
	}
	code, out, _ = ctxd(t, s, "", "read", "disk:"+filepath.ToSlash(filepath.Join(flat, "c.md")))
	if code != 0 || out != "charlie" {
		t.Errorf("the watched file's item after rm = %d %q; want it kept", code, out)
	}
}
