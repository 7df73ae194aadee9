package inspector

import (
	"bytes"
	"strings"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestExplanation_Rendered: a result's SearchExplanation (filled by the
// daemon's explain support) renders every part: each leg's rank, score,
// weight and contribution, the fusion, the priors, the terms and the
// matched question; without one, the legs' ranks are shown.
func TestExplanation_Rendered(t *testing.T) {
	in := New(nil, nil)
	resp := &ctxdv1.SearchResponse{Results: []*ctxdv1.SearchResult{{
		Ref: "notes:/a.md", Score: 0.5,
		Explanation: &ctxdv1.SearchExplanation{
			Legs: []*ctxdv1.LegContribution{
				{Leg: ctxdv1.SearchLeg_SEARCH_LEG_BM25, Rank: 2, Score: 7.25, Weight: 1, Contribution: 0.0161},
				{Leg: ctxdv1.SearchLeg_SEARCH_LEG_VECTOR, Rank: 0, Score: 0, Weight: 1.5},
			},
			RrfK: 60, Fused: 0.0161, FusedMax: 0.0410,
			Factors:      []*ctxdv1.ScoreFactor{{Name: "recency", Factor: 1.08, Detail: "written 2 days ago"}},
			MatchedTerms: []string{"rollback", "canary"}, MissingTerms: []string{"kubernetes"},
			MatchedQuestion: "How do I roll back?",
		},
	}, {
		Ref: "notes:/b.md", LegRanks: []*ctxdv1.LegRank{{Leg: ctxdv1.SearchLeg_SEARCH_LEG_SUBSTRING, Rank: 1, Score: 3}},
	}}}
	var buf bytes.Buffer
	if err := in.pages.ExecuteTemplate(&buf, "search", searchView{Form: formValues{"q": "roll back"}, Resp: resp}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{
		"<td>bm25</td><td>2</td><td>7.2500</td><td>1.0000</td><td>0.0161</td>",
		"<td>vector</td><td>—</td>",
		"Fused 0.0161 of at most 0.0410 (RRF k = 60)",
		"<td>recency</td><td>1.0800</td><td>written 2 days ago</td>",
		"Matched terms: rollback, canary", "Missing terms: kubernetes", "Matched question: How do I roll back?",
		"This daemon gives no full explanation", "<td>substring</td><td>1</td><td>3.0000</td>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the search page lacks %q:\n%s", want, html)
		}
	}
}

func TestParentRef(t *testing.T) {
	for ref, want := range map[string]string{
		"notes:/a/b": "notes:/a", "notes:/a/b/": "notes:/a", "notes:/a": "notes:/", "notes:/": "", "notes:": "", "": "",
	} {
		if got := parentRef(ref); got != want {
			t.Errorf("parentRef(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestSplitFrontmatter(t *testing.T) {
	for _, c := range []struct{ text, fm, body string }{
		{"---\ntags: [a]\n---\n# T\n", "tags: [a]\n", "# T\n"},
		{"---\ntags: [a]\n---", "tags: [a]\n", ""},
		{"---\nunclosed\n# T\n", "", "---\nunclosed\n# T\n"},
		{"# T\n---\nx\n---\n", "", "# T\n---\nx\n---\n"},
		{"", "", ""},
	} {
		if fm, body := splitFrontmatter(c.text); fm != c.fm || body != c.body {
			t.Errorf("splitFrontmatter(%q) = %q, %q; want %q, %q", c.text, fm, body, c.fm, c.body)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	if got, err := parseSince("90m", now); err != nil || !got.Equal(now.Add(-90*time.Minute)) {
		t.Errorf("90m = %v, %v", got, err)
	}
	if got, err := parseSince("2026-11-24T09:00:00Z", now); err != nil || !got.Equal(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("RFC 3339 = %v, %v", got, err)
	}
	for _, bad := range []string{"-1h", "yesterday"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
