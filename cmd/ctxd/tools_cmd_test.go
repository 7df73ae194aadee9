package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ctxd/ctxd/daemon/toolset"
)

// TestCLI_Tools checks that `ctxd tools` prints the toolset's export in
// each format, without a daemon, and refuses an unknown format as a usage
// error.
func TestCLI_Tools(t *testing.T) {
	noDaemon := filepath.Join(t.TempDir(), "none.sock")
	for _, format := range toolset.Formats {
		code, out, errOut := ctxd(t, noDaemon, "", "tools", "--format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		want, err := toolset.Export(toolset.Tools(), format)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want)+"\n" {
			t.Errorf("%s: output differs from toolset.Export", format)
		}
	}
	code, out, _ := ctxd(t, noDaemon, "", "tools", "--format", "anthropic", "--scopes", "read,write")
	var tools []struct{ Name string }
	if err := json.Unmarshal([]byte(out), &tools); code != 0 || err != nil {
		t.Fatalf("--scopes: exit %d, %v", code, err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "context_write") || slices.Contains(names, "context_add") {
		t.Errorf("--scopes read,write: %v", names)
	}
	if code, _, errOut := ctxd(t, noDaemon, "", "tools", "--format", "yaml"); code != exitUsage {
		t.Errorf("unknown format: exit %d (%s), want %d", code, errOut, exitUsage)
	}
}
