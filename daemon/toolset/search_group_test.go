package toolset_test

import (
	"strconv"
	"strings"
	"testing"
)

// TestCall_SearchGroupByItemAndMinScore: context_search with group_by
// "item" returns one result per item with its further chunks, and
// min_score drops weaker results; a min_score over 1 is refused.
func TestCall_SearchGroupByItemAndMinScore(t *testing.T) {
	e := startDaemon(t, nil)
	// Sections long enough that the chunker keeps each a chunk of its own.
	filler := strings.Repeat("Some words of plain description follow here. ", 25)
	mustCall(t, e.b, "context_write", `{"path":"/kb/many.md","content":"# Narwhals\n\n## Tusks\n\nNarwhal tusks are teeth. `+filler+`\n\n## Diet\n\nNarwhal diet is fish. `+filler+`\n"}`)
	mustCall(t, e.b, "context_write", `{"path":"/kb/one.md","content":"A narwhal was seen. `+filler+`\n"}`)
	e.waitIndexed(t)

	chunks := mustCall(t, e.b, "context_search", `{"queries":["narwhal"],"mode":"bm25","limit":2}`)
	if get(t, chunks, "results", 1, "ref") != "agent:/kb/many.md" {
		t.Fatalf("chunk grouping: the test needs two chunks of many.md first: %v", chunks)
	}
	m := mustCall(t, e.b, "context_search", `{"queries":["narwhal"],"mode":"bm25","limit":2,"group_by":"item"}`)
	if get(t, m, "results", 0, "ref") != "agent:/kb/many.md" || get(t, m, "results", 1, "ref") != "agent:/kb/one.md" {
		t.Fatalf("item grouping: %v", m)
	}
	more := get(t, m, "results", 0, "more_chunks").([]any)
	if len(more) == 0 || !strings.Contains(get(t, more, 0, "heading").(string), "Narwhals") {
		t.Fatalf("item grouping, more chunks of many.md: %v", m)
	}
	floor := (get(t, m, "results", 0, "score").(float64) + get(t, m, "results", 1, "score").(float64)) / 2
	m = mustCall(t, e.b, "context_search", `{"queries":["narwhal"],"mode":"bm25","group_by":"item","min_score":`+jsonNum(floor)+`}`)
	if n := len(m["results"].([]any)); n != 1 || get(t, m, "results", 0, "ref") != "agent:/kb/many.md" {
		t.Fatalf("min_score %v: %v", floor, m)
	}
	wantError(t, e.b, "context_search", `{"queries":["narwhal"],"min_score":2}`, "invalid_argument")
	wantError(t, e.b, "context_search", `{"queries":["narwhal"],"group_by":"items"}`, "invalid_argument")
}

func jsonNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
