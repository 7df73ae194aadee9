package main

import (
	"strings"
	"testing"
)

// TestCLI_Diff prints the last change and a chosen pair of revisions, says
// when nothing changed, and refuses a bad --context with the API's hint.
func TestCLI_Diff(t *testing.T) {
	s := startDaemon(t)
	for _, content := range []string{"one\ntwo\n", "one\n2\n", "one\n2\nthree\n"} {
		if code, _, errOut := ctxd(t, s, content, "write", "notes:/d.md", "--on-conflict", "overwrite"); code != 0 {
			t.Fatal(errOut)
		}
	}
	steps := []struct {
		args             []string
		code             int
		wantOut, wantErr string
	}{
		{[]string{"diff", "notes:/d.md"}, 0, "--- notes:/d.md@2\n+++ notes:/d.md@current\n@@ -1,2 +1,3 @@\n one\n 2\n+three\n", ""},
		{[]string{"diff", "notes:/d.md", "--from", "1", "--to", "2"}, 0, "-two\n+2\n", ""},
		{[]string{"diff", "notes:/d.md", "--from", "2", "--to", "2"}, 0, "no change between revision 2 and revision 2", ""},
		{[]string{"diff", "notes:/d.md", "--context", "101"}, 1, "", "hint: Pass 0 (3 lines) up to 100"},
	}
	for _, st := range steps {
		code, out, errOut := ctxd(t, s, "", st.args...)
		if code != st.code || !strings.Contains(out, st.wantOut) || !strings.Contains(errOut, st.wantErr) {
			t.Errorf("ctxd %v = %d\nstdout: %s\nstderr: %s", st.args, code, out, errOut)
		}
	}
}

// TestCLI_UI prints a one-time sign-in link on the daemon's HTTP listener,
// and explains what to do when the daemon has none.
func TestCLI_UI(t *testing.T) {
	cfg, _ := tempConfig(t)
	runDaemon(t, cfg)
	code, out, errOut := ctxd(t, cfg.Socket, "", "ui")
	if code != 1 || out != "" || !strings.Contains(errOut, "--http") {
		t.Errorf("ctxd ui without HTTP = %d %q %q", code, out, errOut)
	}

	cfg, _ = tempConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	cfg.TokenFile = cfg.DataDir + "/token"
	d := runDaemon(t, cfg)
	code, out, errOut = ctxd(t, cfg.Socket, "", "ui")
	prefix := "http://" + d.HTTPAddr().String() + "/ui/#signin="
	if code != 0 || !strings.HasPrefix(out, prefix) || len(strings.TrimSpace(out)) != len(prefix)+32 || !strings.Contains(errOut, "works once") {
		t.Errorf("ctxd ui = %d %q %q, want a link starting %s", code, out, errOut, prefix)
	}
}
