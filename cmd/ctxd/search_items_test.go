package main

import (
	"encoding/json"
	"fmt"
	"math"
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

// TestCLI_SearchExplain: --explain prints under each result the legs'
// ranks and shares, the fused score over its most, the factors and the
// matched terms; --json carries the explanation, whose parts multiply out
// to the score.
func TestCLI_SearchExplain(t *testing.T) {
	s := startDaemon(t)
	if code, _, errOut := ctxd(t, s, "Sea otters hold hands while sleeping.\n", "write", "agent:/kb/otters.md"); code != 0 {
		t.Fatal(errOut)
	}
	var out, errOut string
	for range 100 { // the index applies writes in the background, within milliseconds
		var code int
		code, out, errOut = ctxd(t, s, "", "search", "sleeping otters whales", "--mode", "bm25", "--proximity", "on", "--explain")
		if code != 0 {
			t.Fatalf("search --explain: %d %s", code, errOut)
		}
		if strings.HasPrefix(out, "1. ") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// "sleeping" stands four words from "otters" (1/4²) and no "whales"
	// follows "otters" (0): closeness 1/32, proximity 0.85 + 0.15/32. The
	// substring leg finds nothing for the three words, so fusion is
	// divided by what BM25 alone can give.
	want := regexp.MustCompile(`^1\. agent:/kb/otters\.md  lines 1-1  \(0\.855\)\n   .*\n` +
		`   why: query 1, fused 0\.0164 of 0\.0164 \(rrf k 60\)\n` +
		`     bm25       rank 1, score [\d.]+, weight 1: \+0\.0164\n` +
		`     substring  missed\n` +
		`     × proximity 0\.8547  closeness 0\.0312\n` +
		`     × recency   1\.0000  not aged: recency does not apply to this item\n` +
		`     terms      matched: sleep otter; missing: whale\n$`)
	if !want.MatchString(out) {
		t.Fatalf("search --explain output:\n%s", out)
	}
	if _, out, _ := ctxd(t, s, "", "search", "sleeping otters", "--mode", "bm25"); strings.Contains(out, "why:") {
		t.Fatalf("search without --explain explains:\n%s", out)
	}
	code, out, errOut := ctxd(t, s, "", "--json", "search", "sleeping otters", "--mode", "bm25", "--explain")
	var resp struct {
		Results []struct {
			Score       float64
			Explanation struct {
				Fused    float64
				FusedMax float64 `json:"fused_max"`
				Factors  []struct{ Factor float64 }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &resp); code != 0 || err != nil || len(resp.Results) != 1 {
		t.Fatalf("--json search --explain = %d %v\n%s%s", code, err, out, errOut)
	}
	r := resp.Results[0]
	score := r.Explanation.Fused / r.Explanation.FusedMax
	for _, f := range r.Explanation.Factors {
		score *= f.Factor
	}
	if len(r.Explanation.Factors) == 0 || math.Abs(score-r.Score) > 1e-12 {
		t.Fatalf("--json explanation gives %v, the score is %v:\n%s", score, r.Score, out)
	}
}
