package assemble

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/vfs"
)

// patterns is a memory category note grown by appending: two sections of
// entries, one restated often, a repeat, and a fenced example.
func patterns(entries int) string {
	var b strings.Builder
	b.WriteString("---\ntitle: Patterns\nloading: contextual\nagent-modification: true\n---\n# Patterns\n\n## Testing\n\n")
	for i := range entries {
		fmt.Fprintf(&b, "- Entry %d: run the race detector on package p%d before merging, and keep the fixture small.\n", i, i)
		if i%10 == 0 {
			b.WriteString("- Always wait for a condition in tests, never for a sleep.\n")
		}
	}
	b.WriteString("\n```go\nfor !ready() {\n\truntime.Gosched()\n}\n```\n\n## Deploys\n\n")
	for i := range entries {
		fmt.Fprintf(&b, "- Deploy note %d: tag release v1.%d and push the tag; CI deploys.\n", i, i)
	}
	return b.String()
}

func TestCompact(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	content := patterns(300)
	old := e.write("self:/patterns.md", content)
	ref := vfs.Ref{Drive: "self", Path: "/patterns.md"}
	count := e.ix.Tokenizer().Count
	block, body := vfs.SplitFrontmatter([]byte(content))
	before := count(string(body))
	if before <= DefaultCompactMinTokens {
		t.Fatalf("the note has %d tokens, not over the default threshold; the test proves nothing", before)
	}

	small, err := Compact(ctx, e.store, CompactRequest{Ref: ref, MinTokens: before + 1, Count: count})
	if err != nil || small.Compacted || small.TokensAfter != before {
		t.Fatalf("a file within min_tokens: %+v, %v", small, err)
	}
	dry, err := Compact(ctx, e.store, CompactRequest{Ref: ref, DryRun: true, Count: count})
	if err != nil || !dry.Compacted || dry.PreviousRev != 0 {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	if it, got := e.read("self:/patterns.md"); got != content || it.ContentHash != old.ContentHash {
		t.Fatal("a dry run changed the file")
	}

	res, err := Compact(ctx, e.store, CompactRequest{Ref: ref, Count: count, ExpectedHash: old.ContentHash})
	if err != nil {
		t.Fatal(err)
	}
	target := DefaultCompactMinTokens / 2
	if !res.Compacted || res.Method != CompactExtractive || res.TokensBefore != before || res.TokensAfter > target+target/10 || res.TokensAfter != count(res.Body) {
		t.Errorf("compacted %d -> %d tokens (target %d) by %s", res.TokensBefore, res.TokensAfter, target, res.Method)
	}
	if res.Body != dry.Body {
		t.Errorf("the dry run's body differs from the compaction's")
	}
	_, now := e.read("self:/patterns.md")
	if !strings.HasPrefix(now, string(block)) || now[len(block):] != res.Body {
		t.Errorf("the frontmatter was not kept byte for byte, or the body differs")
	}
	for _, want := range []string{
		"# Patterns", "## Testing", "## Deploys", // every heading
		"Entry 299:", "Deploy note 299:", // the newest entries of each section
		"older entries compacted; `ctxd read self:/patterns.md --rev",
		"for !ready() {\n\truntime.Gosched()\n}", // the fenced example, whole
	} {
		if !strings.Contains(res.Body, want) {
			t.Errorf("the compacted body lacks %q", want)
		}
	}
	if n := strings.Count(res.Body, "never for a sleep"); n != 1 {
		t.Errorf("an entry restated 30 times is kept %d times, want once", n)
	}
	if strings.Contains(res.Body, "Entry 0:") || strings.Contains(res.Body, "Deploy note 0:") {
		t.Errorf("the oldest entries were kept")
	}
	_, prev, err := e.store.ReadRevision(ctx, ref, res.PreviousRev)
	if err != nil || string(prev) != content {
		t.Errorf("revision %d does not hold the content before compaction (%v)", res.PreviousRev, err)
	}
	if revs, err := e.store.History(ctx, ref, 1, 0); err != nil || revs[0].Op != vfs.OpCompact {
		t.Errorf("the compaction is recorded as %+v (%v)", revs, err)
	}
	if _, err := Compact(ctx, e.store, CompactRequest{Ref: ref, Count: count, MinTokens: 1, ExpectedHash: old.ContentHash}); err == nil {
		t.Errorf("a compaction expecting the old content succeeded")
	}
}
