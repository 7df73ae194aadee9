package assemble

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current results")

// Tasks of the golden tests: one about invoicing, one about deploying.
const (
	invoicingTask  = "A customer says their invoice was sent twice; refund the duplicate invoice."
	deploymentTask = "Deploy version 2.4 to production and tag the release."
)

// renderResult prints a Result diff-friendly: sections, omissions,
// warnings, totals, then the Markdown.
func renderResult(res Result) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tokens %d of %d\n\nsections:\n", res.TokensUsed, res.Budget)
	for _, s := range res.Sections {
		fmt.Fprintf(&b, "  %-10s %s tokens=%d score=%.3f", s.Kind, s.Ref, s.Tokens, s.Score)
		if s.Kind == KindChunk {
			fmt.Fprintf(&b, " lines=%d-%d heading=%q", s.StartLine, s.EndLine, s.Heading)
		}
		if len(s.MatchedTerms) > 0 {
			fmt.Fprintf(&b, " matched=%q", s.MatchedTerms)
		}
		b.WriteByte('\n')
	}
	b.WriteString("\nomitted:\n")
	for _, o := range res.Omitted {
		fmt.Fprintf(&b, "  %-10s %s heading=%q tokens=%d: %s\n", o.Kind, o.Ref, o.Heading, o.Tokens, o.Reason)
	}
	b.WriteString("\nwarnings:\n")
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "  %s\n", w)
	}
	b.WriteString("\nmarkdown:\n")
	b.WriteString(res.Markdown)
	return b.Bytes()
}

// checkGolden compares got with testdata/name.golden (rewritten with -update).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (generate it with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (rerun with -update and review the diff):\n%s", path, got)
	}
}

func sectionRefs(res Result, k Kind) []string {
	var out []string
	for _, s := range res.Sections {
		if s.Kind == k {
			out = append(out, s.Ref)
		}
	}
	return out
}

func omission(res Result, ref string) (Omission, bool) {
	for _, o := range res.Omitted {
		if o.Ref == ref {
			return o, true
		}
	}
	return Omission{}, false
}

// checkInvariants holds for every result: the Markdown's token count is
// TokensUsed, within the budget, and every section's ref labels it there.
func checkInvariants(t *testing.T, e *env, res Result) {
	t.Helper()
	if n := e.ix.Tokenizer().Count(res.Markdown); n != res.TokensUsed {
		t.Errorf("Markdown has %d tokens, TokensUsed says %d", n, res.TokensUsed)
	}
	if res.TokensUsed > res.Budget {
		t.Errorf("TokensUsed %d over the budget %d", res.TokensUsed, res.Budget)
	}
	whole := map[string]bool{}
	for _, s := range res.Sections {
		if !strings.Contains(res.Markdown, "### "+s.Ref) {
			t.Errorf("section %s is not labelled with its ref in the Markdown", s.Ref)
		}
		if s.Kind != KindChunk {
			whole[s.Item.ID] = true
		} else if whole[s.Item.ID] || s.Item.Loading != "" {
			t.Errorf("chunk of the context file %s included", s.Ref)
		}
	}
}

func TestBuild_Golden(t *testing.T) {
	e := newEnv(t, true)
	e.withContextSet()
	always := []string{"self:/soul.md", "self:/beliefs.md", "self:/goals.md", "self:/capabilities.md", "self:/a-style.md"}

	t.Run("invoicing", func(t *testing.T) {
		res := e.build(Request{Task: invoicingTask})
		checkInvariants(t, e, res)
		if got := sectionRefs(res, KindAlways); !slices.Equal(got, always) {
			t.Errorf("always files %q, want %q", got, always)
		}
		if got := sectionRefs(res, KindContextual); !slices.Equal(got, []string{"self:/invoicing.md"}) {
			t.Errorf("contextual files %q, want only self:/invoicing.md", got)
		}
		s := res.Sections[len(always)]
		if !slices.Contains(s.MatchedTerms, "invoice") || !slices.Contains(s.MatchedTerms, "refund") || s.Score <= 0 {
			t.Errorf("invoicing.md matched %q with score %v; want invoice and refund among them", s.MatchedTerms, s.Score)
		}
		if o, ok := omission(res, "self:/deploy.md"); !ok || !strings.HasPrefix(o.Reason, ReasonNoMatch) {
			t.Errorf("self:/deploy.md omission %+v (found %v), want %q", o, ok, ReasonNoMatch)
		}
		chunks := sectionRefs(res, KindChunk)
		if len(chunks) == 0 || chunks[0] != "agent:/notes/billing.md" {
			t.Errorf("chunks %q, want agent:/notes/billing.md first", chunks)
		}
		if !strings.Contains(res.Markdown, "### agent:/notes/billing.md, lines ") || !strings.Contains(res.Markdown, ": Billing notes > Duplicate invoices\n") {
			t.Errorf("the billing chunk is not labelled with ref, lines and heading:\n%s", res.Markdown)
		}
		checkGolden(t, "invoicing", renderResult(res))
	})

	t.Run("deployment", func(t *testing.T) {
		res := e.build(Request{Task: deploymentTask})
		checkInvariants(t, e, res)
		if got := sectionRefs(res, KindAlways); !slices.Equal(got, always) {
			t.Errorf("always files %q, want %q", got, always)
		}
		if got := sectionRefs(res, KindContextual); !slices.Equal(got, []string{"self:/deploy.md"}) {
			t.Errorf("contextual files %q, want only self:/deploy.md", got)
		}
		if o, ok := omission(res, "self:/invoicing.md"); !ok || !strings.HasPrefix(o.Reason, ReasonNoMatch) {
			t.Errorf("self:/invoicing.md omission %+v (found %v), want %q", o, ok, ReasonNoMatch)
		}
		// Not in pieces either, though the search finds its chunk.
		if strings.Contains(res.Markdown, "self:/invoicing.md") {
			t.Errorf("the invoicing file is part of the deployment context:\n%s", res.Markdown)
		}
		found := false
		for _, o := range res.Omitted {
			found = found || o.Ref == "self:/invoicing.md" && o.Kind == KindChunk && strings.HasPrefix(o.Reason, ReasonContextFile)
		}
		if !found {
			t.Errorf("the invoicing file's chunk is not listed as a context file's: %+v", res.Omitted)
		}
		checkGolden(t, "deployment", renderResult(res))
	})

	t.Run("tight budget", func(t *testing.T) {
		full := e.build(Request{Task: invoicingTask})
		var chunks []Section
		filesTokens := full.TokensUsed
		for _, s := range full.Sections {
			if s.Kind == KindChunk {
				chunks = append(chunks, s)
				filesTokens -= s.Tokens
			}
		}
		if len(chunks) == 0 {
			t.Fatal("the full context has no chunks to drop")
		}
		filesTokens -= e.ix.Tokenizer().Count(groupHeaders[KindChunk])
		// Room for every file and a few tokens, not for a chunk.
		res := e.build(Request{Task: invoicingTask, Budget: filesTokens + 3})
		checkInvariants(t, e, res)
		if n := len(sectionRefs(res, KindChunk)); n != 0 {
			t.Errorf("%d chunks included in a budget with room for the files only", n)
		}
		if got, want := len(res.Sections), len(full.Sections)-len(chunks); got != want {
			t.Errorf("%d sections, want every file section (%d)", got, want)
		}
		for _, c := range chunks {
			found := false
			for _, o := range res.Omitted {
				if o.Kind == KindChunk && o.Ref == c.Ref && o.Heading == c.Heading && strings.HasPrefix(o.Reason, ReasonBudget) && o.Tokens == c.Tokens {
					found = true
				}
			}
			if !found {
				t.Errorf("dropped chunk %s (%s) is not reported as over budget with its %d tokens: %+v", c.Ref, c.Heading, c.Tokens, res.Omitted)
			}
		}
		checkGolden(t, "tight", renderResult(res))

		// Tighter than the always files: the first ones take the budget,
		// later sections are tried and left out, each reported.
		res = e.build(Request{Task: invoicingTask, Budget: full.Sections[0].Tokens + 20})
		checkInvariants(t, e, res)
		if len(res.Sections) == 0 || res.Sections[0].Ref != "self:/soul.md" {
			t.Errorf("sections %q, want soul.md first", sectionRefs(res, KindAlways))
		}
		if len(res.Sections)+len(res.Omitted) < len(full.Sections) {
			t.Errorf("%d sections and %d omissions account for fewer than the %d sections of the full context", len(res.Sections), len(res.Omitted), len(full.Sections))
		}
	})
}

func TestBuild_SkipsChunksOfWholeFiles(t *testing.T) {
	e := newEnv(t, true)
	e.withContextSet()
	// A task in the invoicing file's own words: the search finds its chunk,
	// which must not come twice.
	res := e.build(Request{Task: "credit notes against the original invoice", Search: search.Request{Mode: search.BM25}})
	checkInvariants(t, e, res)
	o, ok := omission(res, "self:/invoicing.md")
	if !ok || o.Kind != KindChunk || !strings.HasPrefix(o.Reason, ReasonWholeFile) || o.Tokens == 0 {
		t.Errorf("the invoicing file's chunk is not reported as part of a whole file: %+v", res.Omitted)
	}
}

func TestBuild_LongTask(t *testing.T) {
	e := newEnv(t, true)
	e.withContextSet()
	// A pasted page: many words, most of them nowhere in the store.
	var sb strings.Builder
	sb.WriteString(invoicingTask)
	for i := range 200 {
		fmt.Fprintf(&sb, " filler%dword", i)
	}
	res := e.build(Request{Task: sb.String()})
	checkInvariants(t, e, res)
	var reduced string
	for _, w := range res.Warnings {
		if _, r, ok := strings.Cut(w, "most informative words only: "); ok {
			reduced = r
		}
	}
	if reduced == "" || len(reduced) >= sb.Len() {
		t.Fatalf("warnings %q do not report the task reduced", res.Warnings)
	}
	if got := sectionRefs(res, KindContextual); !slices.Equal(got, []string{"self:/invoicing.md"}) {
		t.Errorf("contextual files %q, want self:/invoicing.md", got)
	}
	for _, s := range res.Sections {
		for _, m := range s.MatchedTerms {
			if !slices.Contains(strings.Fields(reduced), m) {
				t.Errorf("%s matched %q, which is not among the key terms %q", s.Ref, m, reduced)
			}
		}
	}
}

func TestBuild_Roots(t *testing.T) {
	e := newEnv(t, true)
	e.withContextSet()
	e.write("self:/researcher/soul.md", "---\nloading: always\n---\n# Researcher\n\nI read papers.\n")
	e.write("self:/researcher/notes.md", "# Not a context file\n\nNo frontmatter.\n")
	e.sync()
	res := e.build(Request{Roots: []string{"self:/researcher/", "self:/nobody/"}})
	if got := sectionRefs(res, KindAlways); !slices.Equal(got, []string{"self:/researcher/soul.md"}) {
		t.Errorf("always files %q, want only self:/researcher/soul.md", got)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "self:/nobody") {
		t.Errorf("warnings %q, want one about the empty root self:/nobody/", res.Warnings)
	}
	// Overlapping roots list a file once.
	res = e.build(Request{Roots: []string{"self:/", "self:/researcher/"}})
	if n := len(sectionRefs(res, KindAlways)); n != 6 {
		t.Errorf("%d always files, want 6 (%q)", n, sectionRefs(res, KindAlways))
	}
}

func TestBuild_Limits(t *testing.T) {
	e := newEnv(t, false)
	b := NewBuilder(e.store, e.eng, Options{Limits: search.Limits{MaxTokenBudget: 1000, MaxQueryBytes: 10, MaxFilterValues: 2}})
	for _, tc := range []struct {
		name  string
		req   Request
		limit Limit
	}{
		{"budget", Request{Budget: 1001}, LimitBudget},
		{"task", Request{Task: "eleven byte"}, LimitTaskBytes},
		{"roots", Request{Roots: []string{"a:/", "b:/", "c:/"}}, LimitRoots},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.Build(context.Background(), tc.req)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != tc.limit || !errors.Is(err, vfs.ErrInvalid) || le.Hint == "" {
				t.Fatalf("err %v, want a *LimitError for %d with a hint", err, tc.limit)
			}
		})
	}
	if _, err := b.Build(context.Background(), Request{Budget: -1}); !errors.Is(err, vfs.ErrInvalid) {
		t.Errorf("negative budget: %v, want vfs.ErrInvalid", err)
	}
	if _, err := b.Build(context.Background(), Request{Roots: []string{"not a ref"}}); !errors.Is(err, vfs.ErrInvalid) {
		t.Errorf("bad root: %v, want vfs.ErrInvalid", err)
	}
}

func TestBuild_WithoutModel(t *testing.T) {
	e := newEnv(t, false)
	e.withContextSet()
	res := e.build(Request{Task: invoicingTask})
	if len(res.Warnings) < 2 || !strings.Contains(res.Warnings[0], "estimated") || !strings.Contains(res.Warnings[1], "BM25") {
		t.Errorf("warnings %q, want the token estimate and the BM25 fallback", res.Warnings)
	}
	if est := estimateTokens(res.Markdown); res.TokensUsed < est {
		t.Errorf("TokensUsed %d is below the estimate of the Markdown (%d)", res.TokensUsed, est)
	}
	if got := sectionRefs(res, KindContextual); !slices.Equal(got, []string{"self:/invoicing.md"}) {
		t.Errorf("contextual files %q without a model, want self:/invoicing.md", got)
	}
	if len(sectionRefs(res, KindChunk)) == 0 {
		t.Error("no chunks from the BM25 search")
	}
}

func TestBuild_Cancelled(t *testing.T) {
	e := newEnv(t, false)
	e.withContextSet()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.builder().Build(ctx, Request{Task: invoicingTask}); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

// TestBuild_ReadsItsWrites: a note written just before a Build is among
// its chunks, each of 50 times, and the result is not stale: the chunk
// search waits for the index to apply the write.
func TestBuild_ReadsItsWrites(t *testing.T) {
	e := newEnv(t, false)
	e.withContextSet()
	for i := range 50 {
		word := fmt.Sprintf("buildryw%02dmark", i)
		ref := fmt.Sprintf("agent:/notes/ryw-%02d.md", i)
		e.write(ref, "# Fresh\n\nA note written just now about "+word+".\n")
		res := e.build(Request{Task: "What do we know about " + word + "?", Search: search.Request{Mode: search.BM25}})
		if got := sectionRefs(res, KindChunk); !slices.Contains(got, ref) || res.Stale != "" {
			t.Fatalf("build %d right after writing %s: chunks %q, stale %q", i, ref, got, res.Stale)
		}
	}
}

// TestBuild_PromptOptions checks what a session's recall asks of Build: the
// caller's own sections within the budget, a prompt's context without the
// always files, only chunks the prompt matches, and out-of-scope items left
// out unlisted.
func TestBuild_PromptOptions(t *testing.T) {
	e := newEnv(t, true)
	e.withContextSet()
	e.write("session:/other/s1/events/e1.md", "The duplicate invoice was refunded as a credit note.")
	e.sync()

	t.Run("extra sections after the always files", func(t *testing.T) {
		goals := Section{Kind: KindGoals, Ref: "session:/p/s0/digest.md", Text: "- [ ] refund the duplicate invoice\n"}
		digest := Section{Kind: KindDigest, Ref: "session:/p/s0/digest.md", Text: strings.Repeat("A long digest line. ", 400)}
		res := e.build(Request{Budget: 1500, Extra: []Section{goals, digest}})
		checkInvariants(t, e, res)
		if got := sectionRefs(res, KindGoals); !slices.Equal(got, []string{goals.Ref}) {
			t.Errorf("goals sections %q", got)
		}
		if !strings.Contains(res.Markdown, "## Open goals from earlier sessions") || strings.Index(res.Markdown, "## Open goals") < strings.Index(res.Markdown, "## Persistent context") {
			t.Errorf("the goals group is missing or before the always files:\n%s", res.Markdown)
		}
		if o, ok := omission(res, digest.Ref); !ok || o.Kind != KindDigest || !strings.HasPrefix(o.Reason, ReasonBudget) {
			t.Errorf("the digest over the budget is not listed as omitted: %+v", res.Omitted)
		}
	})
	t.Run("a prompt that matches", func(t *testing.T) {
		res := e.build(Request{Task: invoicingTask, SkipAlways: true, MatchChunks: true, Search: search.Request{Mode: search.BM25}})
		checkInvariants(t, e, res)
		if got := sectionRefs(res, KindAlways); len(got) != 0 {
			t.Errorf("always files %q with SkipAlways", got)
		}
		if got := sectionRefs(res, KindContextual); !slices.Equal(got, []string{"self:/invoicing.md"}) {
			t.Errorf("contextual files %q, want the invoicing file", got)
		}
		chunks := sectionRefs(res, KindChunk)
		if !slices.Contains(chunks, "agent:/notes/billing.md") || slices.Contains(chunks, "agent:/notes/recipes.md") {
			t.Errorf("chunks %q: want the billing notes and not the recipes", chunks)
		}
		if o, ok := omission(res, "agent:/notes/recipes.md"); ok && !strings.HasPrefix(o.Reason, ReasonNoMatch) {
			t.Errorf("the recipes chunk is omitted for %q, want no match", o.Reason)
		}
	})
	t.Run("a prompt nothing matches", func(t *testing.T) {
		res := e.build(Request{Task: "Which telescope and eyepiece suit a beginner astronomer observing Jupiter?", SkipAlways: true, MatchChunks: true, Search: search.Request{Mode: search.BM25}})
		if res.Markdown != "" || len(res.Sections) != 0 {
			t.Errorf("sections %+v for a prompt nothing matches:\n%s", res.Sections, res.Markdown)
		}
	})
	t.Run("excluded items", func(t *testing.T) {
		task := "duplicate invoice refunded as a credit note"
		res := e.build(Request{Task: task, SkipAlways: true, MatchChunks: true, Search: search.Request{Mode: search.BM25}})
		if !slices.Contains(sectionRefs(res, KindChunk), "session:/other/s1/events/e1.md") {
			t.Fatalf("the event is not found without Exclude; the test proves nothing: %q", sectionRefs(res, KindChunk))
		}
		res = e.build(Request{Task: task, SkipAlways: true, MatchChunks: true, Search: search.Request{Mode: search.BM25},
			Exclude: func(drive, path string) bool { return drive == "session" }})
		if slices.Contains(sectionRefs(res, KindChunk), "session:/other/s1/events/e1.md") {
			t.Errorf("an excluded item is in the context")
		}
		if _, ok := omission(res, "session:/other/s1/events/e1.md"); ok {
			t.Errorf("an excluded item is listed as omitted")
		}
	})
}
