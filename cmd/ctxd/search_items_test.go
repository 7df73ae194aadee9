package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCLI_SearchItemsAndMinScore(t *testing.T) {
	s := startDaemon(t)
	// Sections long enough that each is a chunk of its own.
	filler := strings.Repeat("Some words of plain description follow here. ", 25)
	for ref, text := range map[string]string{
		"agent:/kb/many.md": "# Narwhals\n\n## Tusks\n\nNarwhal tusks are teeth. " + filler + "\n\n## Diet\n\nNarwhal diet is fish. " + filler + "\n",
		"agent:/kb/one.md":  "A narwhal was seen. " + filler + "\n",
	} {
		if code, _, errOut := ctxd(t, s, text, "write", ref); code != 0 {
			t.Fatal(errOut)
		}
	}
	var out, errOut string
	for range 100 {
		var code int
		code, out, errOut = ctxd(t, s, "", "search", "narwhal", "--mode", "bm25", "--items", "--limit", "2", "--per-item", "2")
		if code != 0 {
			t.Fatalf("search: %d %s", code, errOut)
		}
		if strings.Contains(out, "2. agent:/kb/one.md") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Item 1 with its next best chunk indented under it (--per-item 2), then item 2.
	want := regexp.MustCompile(`^1\. agent:/kb/many\.md  lines \d+-\d+  \((1\.000)\)\n   Narwhals > \w+\n   .*Narwhal.*\n` +
		`   \+ lines \d+-\d+  \(\d\.\d{3}\)\n     Narwhals > \w+\n     .*Narwhal.*\n` +
		`2\. agent:/kb/one\.md  lines 1-1  \((\d\.\d{3})\)\n   .*narwhal.*\n$`)
	m := want.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("search --items output:\n%s", out)
	}
	// Chunk by chunk, the same limit is two chunks of many.md.
	if _, out, _ := ctxd(t, s, "", "search", "narwhal", "--mode", "bm25", "--limit", "2"); strings.Count(out, "agent:/kb/many.md") != 2 {
		t.Fatalf("search without --items:\n%s", out)
	}

	first, _ := strconv.ParseFloat(m[1], 64)
	second, _ := strconv.ParseFloat(m[2], 64)
	if first <= second {
		t.Fatalf("scores %v, %v", first, second)
	}
	floor := fmt.Sprintf("%.4f", (first+second)/2)
	code, out, errOut := ctxd(t, s, "", "search", "narwhal", "--mode", "bm25", "--items", "--min-score", floor)
	if code != 0 || !strings.HasPrefix(out, "1. agent:/kb/many.md") || strings.Contains(out, "one.md") {
		t.Fatalf("--min-score %s = %d\n%s%s", floor, code, out, errOut)
	}
	code, _, errOut = ctxd(t, s, "", "search", "narwhal", "--min-score", "1.5")
	if code == 0 || !strings.Contains(errOut, "--min-score") {
		t.Fatalf("--min-score 1.5 = %d %s", code, errOut)
	}
}
