package toolset_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxd/ctxd/daemon"
	"github.com/ctxd/ctxd/internal/testmodel"
)

// TestCall_FindSimilarAndAddDedupe: context_find_similar finds a copy of a
// stored note (never the note itself) and of a text; context_add with
// dedupe lists the skipped copy with the item it repeats.
func TestCall_FindSimilarAndAddDedupe(t *testing.T) {
	e := startDaemon(t, func(c *daemon.Config) { c.ModelDir, c.OnnxRuntimeLib = testmodel.Dir(t), testmodel.ORTLib(t) })
	const note = "# Deployment\\n\\nRun the canary release in staging before rolling out to production, and watch the error rate for an hour.\\n"
	mustCall(t, e.b, "context_write", `{"path":"/kb/deploy.md","content":"`+note+`"}`)
	mustCall(t, e.b, "context_write", `{"path":"/kb/copy.md","content":"`+note+`"}`)
	mustCall(t, e.b, "context_write", `{"path":"/kb/bread.md","content":"# Bread\n\nKnead the dough for ten minutes and bake it at 220 degrees.\n"}`)
	e.waitIndexed(t)

	m := mustCall(t, e.b, "context_find_similar", `{"path":"/kb/deploy.md"}`)
	if n := len(m["items"].([]any)); n != 1 || get(t, m, "items", 0, "ref") != "agent:/kb/copy.md" ||
		get(t, m, "items", 0, "coverage") != 1.0 || get(t, m, "items", 0, "similarity").(float64) < 0.999 || get(t, m, "target_chunks") != 1.0 {
		t.Fatalf("similar to /kb/deploy.md: %v", m)
	}
	m = mustCall(t, e.b, "context_find_similar", `{"text":"`+note+`","threshold":0.95,"filter":{"path_prefixes":["agent:/kb/"]}}`)
	if n := len(m["items"].([]any)); n != 2 {
		t.Fatalf("similar to the text: %v", m)
	}
	wantError(t, e.b, "context_find_similar", `{}`, "invalid_argument")
	wantError(t, e.b, "context_find_similar", `{"path":"/kb/deploy.md","text":"x"}`, "invalid_argument")
	wantError(t, e.b, "context_find_similar", `{"text":"x","threshold":2}`, "invalid_argument")

	src := filepath.Join(e.dir, "inbox")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "copy.md"), []byte("# Deployment\n\nRun the canary release in staging before rolling out to production, and watch the error rate for an hour.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m = mustCall(t, e.b, "context_add", `{"sources":["`+src+`"],"dedupe":0.9}`)
	if get(t, m, "summary", "skipped") != 1.0 || get(t, m, "duplicates", 0, "ref") != "disk:"+filepath.ToSlash(filepath.Join(src, "copy.md")) {
		t.Fatalf("context_add with dedupe: %v", m)
	}
	if dup := get(t, m, "duplicates", 0, "duplicate_of"); dup != "agent:/kb/deploy.md" && dup != "agent:/kb/copy.md" {
		t.Fatalf("duplicate of %v", dup)
	}
}
