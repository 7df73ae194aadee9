package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/testmodel"
)

func TestCLI_SimilarAndAddDedupe(t *testing.T) {
	cfg, dir := tempConfig(t)
	cfg.AllowedRoots = []string{dir}
	cfg.ModelDir, cfg.OnnxRuntimeLib = testmodel.Dir(t), testmodel.ORTLib(t)
	runDaemon(t, cfg)
	s := cfg.Socket
	const note = "# Deployment\n\nRun the canary release in staging before rolling out to production, and watch the error rate for an hour.\n"
	for ref, text := range map[string]string{"agent:/a.md": note, "agent:/b.md": note, "agent:/bread.md": "# Bread\n\nKnead the dough for ten minutes and bake it at 220 degrees.\n"} {
		if code, _, errOut := ctxd(t, s, text, "write", ref); code != 0 {
			t.Fatal(errOut)
		}
	}
	// The items are embedded in the background; until then similar says so.
	var out, errOut string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var code int
		if code, out, errOut = ctxd(t, s, "", "similar", "agent:/a.md"); code == 0 && strings.Contains(out, "agent:/b.md") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("similar agent:/a.md: %d\n%s%s", code, out, errOut)
		}
	}
	if !regexp.MustCompile(`^1\. agent:/b\.md  similarity 1\.000  coverage 1\.00\n   # Deployment Run the canary.*\n$`).MatchString(out) {
		t.Fatalf("similar agent:/a.md:\n%s", out)
	}
	code, out, errOut := ctxd(t, s, note, "similar", "--text", "-", "--json", "--threshold", "0.95")
	var resp struct {
		Items []struct {
			Ref      string
			Coverage float64
		}
	}
	if err := json.Unmarshal([]byte(out), &resp); code != 0 || err != nil || len(resp.Items) != 2 || resp.Items[0].Coverage != 1 {
		t.Fatalf("similar --text - --json: %d %v\n%s%s", code, err, out, errOut)
	}
	if code, out, _ := ctxd(t, s, "", "similar", "--text", "Quantum chromodynamics of gluon fields."); code != 0 || out != "no similar items (1 chunks compared)\n" {
		t.Fatalf("unrelated text: %d %q", code, out)
	}
	for _, args := range [][]string{{"similar"}, {"similar", "agent:/a.md", "--text", "x"}, {"similar", "agent:/a.md", "--threshold", "2"}} {
		if code, _, errOut := ctxd(t, s, "", args...); code == 0 || errOut == "" {
			t.Errorf("%v: exit %d", args, code)
		}
	}

	// add --dedupe skips the copy and adds the distinct file.
	src := filepath.Join(dir, "inbox")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"copy.md": note, "new.md": "# Lumber\n\nA solar kiln dries lumber in a few weeks.\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errOut := ctxd(t, s, "", "add", src, "--dedupe=1.5"); code == 0 || !strings.Contains(errOut, "--dedupe") {
		t.Fatalf("--dedupe=1.5: %d %s", code, errOut)
	}
	code, out, errOut = ctxd(t, s, "", "add", src, "--dedupe")
	if code != 0 || !regexp.MustCompile(`skipped +disk:\S+/copy\.md  \(duplicate of agent:/(a|b)\.md\)`).MatchString(out) ||
		!regexp.MustCompile(`added +disk:\S+/new\.md`).MatchString(out) {
		t.Fatalf("add --dedupe: %d\n%s%s", code, out, errOut)
	}
}
