package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// waitSearchable polls a bm25 search until ref is among its results: the
// index applies writes in the background, within milliseconds.
func waitSearchable(t *testing.T, socket, query, ref string) {
	t.Helper()
	for range 200 {
		if code, out, _ := ctxd(t, socket, "", "search", query, "--mode", "bm25", "--limit", "50"); code == 0 && strings.Contains(out, ref) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never became searchable for %q", ref, query)
}

// TestCLI_InitAndUpdate creates the context files once, then replaces a
// body from stdin and from --file while the frontmatter stays byte for byte.
func TestCLI_InitAndUpdate(t *testing.T) {
	s := startDaemon(t)
	code, out, errOut := ctxd(t, s, "", "init")
	for _, name := range []string{"soul", "beliefs", "goals", "capabilities"} {
		if code != 0 || !strings.Contains(out, "created  self:/"+name+".md") {
			t.Fatalf("init = %d\n%s%s\nwant self:/%s.md created", code, out, errOut, name)
		}
	}
	if code, out, _ := ctxd(t, s, "", "init"); code != 0 || strings.Contains(out, "created") || !strings.Contains(out, "exists   self:/soul.md") {
		t.Errorf("second init = %d\n%s", code, out)
	}
	if code, out, _ := ctxd(t, s, "", "init", "--root", "self:/researcher/"); code != 0 || !strings.Contains(out, "created  self:/researcher/soul.md") {
		t.Errorf("init --root = %d\n%s", code, out)
	}
	if code, out, _ := ctxd(t, s, "", "info", "self:/soul.md"); code != 0 || !regexp.MustCompile(`loading:\s+always\n`).MatchString(out) ||
		!regexp.MustCompile(`agent-modification:\s+false\n`).MatchString(out) {
		t.Errorf("info soul.md = %d\n%s", code, out)
	}

	_, before, _ := ctxd(t, s, "", "read", "self:/beliefs.md")
	if !strings.HasPrefix(before, "---\n") {
		t.Fatalf("beliefs.md has no frontmatter:\n%s", before)
	}
	end := strings.Index(before[4:], "\n---\n") + 4 + len("\n---\n")
	frontmatter := before[:end]
	for _, tt := range []struct {
		name string
		args []string
		body string
	}{
		{"stdin", nil, "- the user prefers short answers\n"},
		{"file", []string{"--file", filepath.Join(t.TempDir(), "b.md")}, "- the user works in UTC\n"},
	} {
		stdin := tt.body
		if tt.args != nil {
			if err := os.WriteFile(tt.args[1], []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			stdin = "stdin is not read"
		}
		code, out, errOut := ctxd(t, s, stdin, append([]string{"context", "update", "self:/beliefs.md"}, tt.args...)...)
		sum := sha256.Sum256([]byte(frontmatter + tt.body))
		if code != 0 || out != hex.EncodeToString(sum[:])+"\n" {
			t.Errorf("update from %s = %d %q %s, want the new hash", tt.name, code, out, errOut)
		}
		if _, got, _ := ctxd(t, s, "", "read", "self:/beliefs.md"); got != frontmatter+tt.body {
			t.Errorf("after update from %s:\n%q\nwant\n%q", tt.name, got, frontmatter+tt.body)
		}
	}
	// --if-hash guards against a concurrent change.
	code, _, errOut = ctxd(t, s, "x\n", "context", "update", "self:/beliefs.md", "--if-hash", strings.Repeat("0", 64))
	if code != 1 || !strings.Contains(errOut, "CONTENT_CHANGED") {
		t.Errorf("update --if-hash mismatch = %d %s", code, errOut)
	}
	if code, _, errOut := ctxd(t, s, "x\n", "context", "update", "self:/nope.md"); code != 1 || !strings.Contains(errOut, "NOT_FOUND") {
		t.Errorf("update of a missing file = %d %s", code, errOut)
	}
}

// TestCLI_WriteWarnsOnBadFrontmatter stores malformed frontmatter as text
// and says so on stderr; the write succeeds.
func TestCLI_WriteWarnsOnBadFrontmatter(t *testing.T) {
	s := startDaemon(t)
	const text = "---\nloading: sometimes\ntags: [a\n---\nbody\n"
	code, out, errOut := ctxd(t, s, text, "write", "/bad.md")
	if code != 0 || !strings.Contains(out, "created agent:/bad.md") || !strings.Contains(errOut, "warning: ") {
		t.Fatalf("write with bad frontmatter = %d\n%s\n%s", code, out, errOut)
	}
	if _, got, _ := ctxd(t, s, "", "read", "/bad.md"); got != text {
		t.Errorf("stored %q, want %q", got, text)
	}
	code, out, errOut = ctxd(t, s, "", "edit", "/bad.md", "--start", "5", "--end", "5", "--content", "new body")
	if code != 0 || !strings.Contains(out, "edited") || !strings.Contains(errOut, "warning: ") {
		t.Errorf("edit keeping bad frontmatter = %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := ctxd(t, s, "---\ntags: [ok]\n---\nfine\n", "write", "/good.md"); code != 0 || errOut != "" {
		t.Errorf("write with good frontmatter = %d, stderr %q", code, errOut)
	}
}

// TestCLI_ContextBuild assembles a task's context: always files in order,
// the contextual file about invoicing only for an invoicing task, chunks
// labelled with refs, and a tight budget reported on stderr.
func TestCLI_ContextBuild(t *testing.T) {
	s := startDaemon(t)
	files := map[string]string{
		"self:/soul.md":          "---\nloading: always\n---\nYou are a careful bookkeeping assistant.\n",
		"self:/beliefs.md":       "---\nloading: always\nagent-modification: true\n---\nThe user pays suppliers on Fridays.\n",
		"self:/invoicing.md":     "---\nloading: contextual\ntitle: Invoicing rules\n---\nEvery invoice carries a VAT number; overdue invoices get a reminder after 14 days.\n",
		"self:/deploy.md":        "---\nloading: contextual\n---\nDeployments go out with kubectl rollout after the staging check.\n",
		"work:/notes/dunning.md": "# Dunning\n\nSend the second invoice reminder by registered mail.\n",
	}
	for ref, text := range files {
		if code, _, errOut := ctxd(t, s, text, "write", ref); code != 0 {
			t.Fatalf("write %s: %s", ref, errOut)
		}
	}
	// The files were written in map order: wait for each, or the build may
	// run before one of them is searchable.
	waitSearchable(t, s, "invoice reminder", "work:/notes/dunning.md")
	waitSearchable(t, s, "kubectl rollout", "self:/deploy.md")
	waitSearchable(t, s, "VAT number", "self:/invoicing.md")

	code, out, errOut := ctxd(t, s, "", "context", "build", "write the overdue invoice reminder")
	if code != 0 {
		t.Fatalf("build = %d\n%s", code, errOut)
	}
	soul, beliefs := strings.Index(out, "careful bookkeeping"), strings.Index(out, "Fridays")
	if soul < 0 || beliefs < soul {
		t.Errorf("always files missing or out of order (soul at %d, beliefs at %d):\n%s", soul, beliefs, out)
	}
	if !strings.Contains(out, "VAT number") || strings.Contains(out, "kubectl") {
		t.Errorf("invoicing task: want invoicing.md and not deploy.md:\n%s", out)
	}
	if !strings.Contains(out, "work:/notes/dunning.md") || !strings.Contains(out, "registered mail") {
		t.Errorf("invoicing task: want the dunning chunk labelled with its ref:\n%s", out)
	}
	if strings.Contains(out, "loading: always") {
		t.Errorf("frontmatter rendered into the context:\n%s", out)
	}
	if !regexp.MustCompile(`\d+ sections, \d+ of 4000 tokens`).MatchString(errOut) ||
		!strings.Contains(errOut, "search chunks skipped because their file is in the context: 1\n") || strings.Contains(errOut, "file included whole") {
		t.Errorf("build stderr lacks the token summary, or lists the chunk of invoicing.md: %s", errOut)
	}

	code, out, _ = ctxd(t, s, "", "context", "build", "roll out the deployment with kubectl", "--path", "self:/")
	if code != 0 || !strings.Contains(out, "kubectl rollout") || strings.Contains(out, "VAT number") {
		t.Errorf("deployment task = %d: want deploy.md and not invoicing.md:\n%s", code, out)
	}

	// JSON: the sections and what matched.
	code, out, errOut = ctxd(t, s, "", "--json", "context", "build", "write the overdue invoice reminder", "--drive", "work")
	var r struct {
		Sections []struct {
			Kind         string   `json:"kind"`
			Ref          string   `json:"ref"`
			MatchedTerms []string `json:"matched_terms"`
		} `json:"sections"`
		Markdown   string `json:"markdown"`
		Budget     int    `json:"budget"`
		TokensUsed int    `json:"tokens_used"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("--json build = %d %v\n%s%s", code, err, out, errOut)
	}
	kinds := map[string]string{}
	for _, sec := range r.Sections {
		kinds[sec.Ref] = sec.Kind
		if sec.Ref == "self:/invoicing.md" && len(sec.MatchedTerms) == 0 {
			t.Errorf("contextual section without matched terms: %+v", sec)
		}
	}
	if kinds["self:/soul.md"] != "always" || kinds["self:/invoicing.md"] != "contextual" || kinds["work:/notes/dunning.md"] != "chunk" || r.Budget != 4000 {
		t.Errorf("--json sections = %v, budget %d", kinds, r.Budget)
	}

	// One token short of what the full context took: the chunk, rendered
	// last, no longer fits and is reported as omitted, never cut silently;
	// the files stay.
	tight := fmt.Sprint(r.TokensUsed - 1)
	code, out, errOut = ctxd(t, s, "", "context", "build", "write the overdue invoice reminder", "--drive", "work", "--budget", tight)
	if code != 0 || !strings.Contains(out, "careful bookkeeping") || !strings.Contains(out, "VAT number") || strings.Contains(out, "registered mail") ||
		!regexp.MustCompile(`omitted chunk work:/notes/dunning\.md \(Dunning\): over budget: .*\(\d+ tokens\)`).MatchString(errOut) {
		t.Errorf("budget %s = %d\n%s\nstderr:\n%s", tight, code, out, errOut)
	}

	if code, _, errOut := ctxd(t, s, "", "context", "build", "x", "--mode", "fuzzy"); code != 2 || !strings.Contains(errOut, "--mode") {
		t.Errorf("bad --mode = %d %s", code, errOut)
	}
	if code, _, errOut := ctxd(t, s, "", "context", "build", "x", "--budget", "100000000"); code != 1 || !strings.Contains(errOut, "--budget") {
		t.Errorf("budget over the limit = %d %s", code, errOut)
	}
}

// TestCLI_History follows one item through write, edit, revert, delete and
// restore, and the audit log across the store.
func TestCLI_History(t *testing.T) {
	s := startDaemon(t)
	const v1, v2 = "first\n", "first\nsecond\n"
	steps := []struct {
		stdin string
		args  []string
		want  string
	}{
		{v1, []string{"write", "/h.md"}, "created"},
		{"", []string{"edit", "/h.md", "--start", "2", "--end", "0", "--content", "second"}, "1 -> 2 lines"},
		{"", []string{"read", "/h.md", "--rev", "1"}, v1},
		{"", []string{"revert", "/h.md", "--to", "1"}, "reverted agent:/h.md to revision 1"},
		{"", []string{"read", "/h.md"}, v1},
		{"", []string{"read", "/h.md", "--rev", "2"}, v2},
		{"", []string{"rm", "/h.md"}, "deleted 1 items"},
	}
	for _, st := range steps {
		if code, out, errOut := ctxd(t, s, st.stdin, st.args...); code != 0 || !strings.Contains(out, st.want) {
			t.Fatalf("ctxd %v = %d\n%s%s\nwant %q", st.args, code, out, errOut, st.want)
		}
	}
	code, out, errOut := ctxd(t, s, "", "history", "/h.md")
	rows := regexp.MustCompile(`(?m)^(\d+)\s+\S+\s+owner\s+(\w+)`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1]+":"+r[2])
	}
	if code != 0 || strings.Join(got, " ") != "4:delete 3:revert 2:edit 1:write" {
		t.Fatalf("history = %d %v\n%s%s", code, got, out, errOut)
	}
	if code, out, _ := ctxd(t, s, "", "history", "/h.md", "--limit", "2"); code != 0 || strings.Contains(out, "edit") {
		t.Errorf("history --limit 2 = %d\n%s", code, out)
	}

	code, out, _ = ctxd(t, s, "", "deleted")
	if code != 0 || !strings.Contains(out, "ctxd revert agent:/h.md --to 3") {
		t.Fatalf("deleted = %d\n%s", code, out)
	}
	if code, out, errOut := ctxd(t, s, "", "revert", "agent:/h.md", "--to", "3"); code != 0 || !strings.Contains(out, "restored agent:/h.md to revision 3") {
		t.Fatalf("restore = %d\n%s%s", code, out, errOut)
	}
	if _, out, _ := ctxd(t, s, "", "read", "/h.md"); out != v1 {
		t.Errorf("restored content %q, want %q", out, v1)
	}
	if _, out, _ := ctxd(t, s, "", "deleted", "agent:/"); !strings.Contains(out, "no deleted items") {
		t.Errorf("deleted after the restore:\n%s", out)
	}

	code, out, _ = ctxd(t, s, "", "log", "--actor", "owner", "--since", "1h")
	if code != 0 || strings.Count(out, "agent:/h.md") != 5 || !strings.Contains(out, "revert") {
		t.Errorf("log = %d\n%s", code, out)
	}
	if code, out, _ := ctxd(t, s, "", "log", "--actor", "harness"); code != 0 || strings.Contains(out, "agent:/h.md") {
		t.Errorf("log --actor harness = %d\n%s", code, out)
	}
	if code, out, _ := ctxd(t, s, "", "log", "--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)); code != 0 || strings.Contains(out, "agent:/h.md") {
		t.Errorf("log --since the future = %d\n%s", code, out)
	}
	code, out, errOut = ctxd(t, s, "", "log", "--limit", "2", "--json")
	var page struct {
		Revisions []struct {
			Rev string `json:"rev"`
			Op  string `json:"op"`
		} `json:"revisions"`
		NextPageToken string `json:"next_page_token"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || code != 0 || len(page.Revisions) != 2 || page.Revisions[0].Op != "revert" || page.NextPageToken == "" {
		t.Fatalf("log --json = %d %v\n%s%s", code, err, out, errOut)
	}
	if code, out, _ := ctxd(t, s, "", "log", "--limit", "2", "--page-token", page.NextPageToken); code != 0 || !strings.Contains(out, "revert") || !strings.Contains(out, "edit") {
		t.Errorf("log second page = %d\n%s", code, out)
	}

	for _, tt := range []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"log", "--since", "yesterday"}, 2, "--since"},
		{[]string{"revert", "/h.md"}, 2, "--to"},
		{[]string{"read", "/h.md", "--rev", "1", "--limit", "1"}, 2, "--rev"},
		{[]string{"read", "/h.md", "--rev", "99"}, 1, "NOT_FOUND"},
		{[]string{"history", "/never.md"}, 1, "NOT_FOUND"},
	} {
		if code, _, errOut := ctxd(t, s, "", tt.args...); code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("ctxd %v = %d %s, want %d and %q", tt.args, code, errOut, tt.wantCode, tt.wantErr)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"24h":                  now.Add(-24 * time.Hour),
		"90m":                  now.Add(-90 * time.Minute),
		"2026-11-24T09:00:00Z": time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC),
	} {
		if got, err := parseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"-1h", "today", "2026-11-24"} {
		if _, err := parseSince(in, now); err == nil {
			t.Errorf("parseSince(%q) accepted", in)
		}
	}
}
