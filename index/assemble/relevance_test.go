package assemble

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/vfs"
)

// newsletter is a contextual file that shares one word with invoicingTask,
// "sent", and nothing else.
const newsletter = `---
title: Newsletter
description: The monthly letter to subscribers.
loading: contextual
---
# Newsletter

The newsletter is sent to subscribers on the last Friday of the month.
`

// A contextual file that shares only a word frequent across the store with
// the task is no match: the word says nothing about the task. The file is
// listed as left out with its weak score and the word.
func TestBuild_CommonWordIsNoMatch(t *testing.T) {
	e := newEnv(t, true)
	e.write("self:/newsletter.md", newsletter)
	// "sent" in many notes of the store: a common word there.
	for i := range 20 {
		e.write(fmt.Sprintf("agent:/mail/report-%02d.md", i), fmt.Sprintf("# Weekly report %d\n\nThe report for week %d was sent to the team on Monday.\n", i, i))
	}
	e.withContextSet()

	res := e.build(Request{Task: invoicingTask})
	checkInvariants(t, e, res)
	if got := sectionRefs(res, KindContextual); !slices.Equal(got, []string{"self:/invoicing.md"}) {
		t.Errorf("contextual files %q, want only self:/invoicing.md", got)
	}
	o, ok := omission(res, "self:/newsletter.md")
	if !ok || o.Kind != KindContextual || !strings.HasPrefix(o.Reason, ReasonNoMatch) {
		t.Fatalf("self:/newsletter.md omission %+v (found %v), want %q", o, ok, ReasonNoMatch)
	}
	// The reason names the word it shares and its score.
	if !strings.Contains(o.Reason, `"sent"`) || !strings.Contains(o.Reason, "BM25 score ") {
		t.Errorf("reason %q does not name the shared word \"sent\" and the score", o.Reason)
	}
	// The invoicing file, which shares the task's distinctive words, is in.
	for _, s := range res.Sections {
		if s.Ref == "self:/invoicing.md" && (!slices.Contains(s.MatchedTerms, "invoice") || !slices.Contains(s.MatchedTerms, "refund")) {
			t.Errorf("invoicing.md matched %q; want invoice and refund among them", s.MatchedTerms)
		}
	}
	// A task the newsletter is about takes it in.
	res = e.build(Request{Task: "Write the newsletter for the subscribers."})
	if got := sectionRefs(res, KindContextual); !slices.Equal(got, []string{"self:/newsletter.md"}) {
		t.Errorf("contextual files %q for a newsletter task, want self:/newsletter.md", got)
	}
}

// Without store-wide statistics (the search index holds nothing yet) the
// contextual files are weighed by themselves, and the result says so.
func TestBuild_RelevanceWithoutIndexStats(t *testing.T) {
	e := newEnv(t, false)
	e.withContextSet()
	// An engine over an empty store: its index holds no chunks.
	empty := newEnv(t, false)
	res, err := NewBuilder(e.store, empty.eng, Options{}).Build(context.Background(), Request{Task: invoicingTask})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "contextual files were weighed")
	}
	if !found {
		t.Errorf("warnings %q do not say the contextual files were weighed without the store's statistics", res.Warnings)
	}
	if got := sectionRefs(res, KindContextual); !slices.Equal(got, []string{"self:/invoicing.md"}) {
		t.Errorf("contextual files %q, want self:/invoicing.md", got)
	}
}

// In a large store one rare word the task and a file share is a match,
// however small its share of the task (RelevantWeight), while the common
// word is still none.
func TestBuild_RareWordMatchesInALargeStore(t *testing.T) {
	e := newEnv(t, false)
	const refunds = "self:/refunds.md"
	e.write(refunds, "---\ntitle: Approvals\nloading: contextual\n---\n# Approvals\n\nA refund over 500 EUR needs a manager's approval.\n")
	e.write("self:/newsletter.md", newsletter)
	for i := range 400 {
		e.write(fmt.Sprintf("agent:/mail/report-%03d.md", i), fmt.Sprintf("# Weekly report %d\n\nThe report for week %d was sent to the team on Monday.\n", i, i))
	}
	e.withContextSet()

	res := e.build(Request{Task: invoicingTask})
	if got := sectionRefs(res, KindContextual); !slices.Equal(got, []string{"self:/invoicing.md", refunds}) {
		t.Errorf("contextual files %q, want self:/invoicing.md and %s", got, refunds)
	}
	if o, ok := omission(res, "self:/newsletter.md"); !ok || !strings.HasPrefix(o.Reason, ReasonNoMatch) {
		t.Errorf("self:/newsletter.md omission %+v (found %v), want %q", o, ok, ReasonNoMatch)
	}
	for _, s := range res.Sections {
		if s.Ref == refunds && !slices.Equal(s.MatchedTerms, []string{"refund"}) {
			t.Errorf("%s matched %q, want only refund", refunds, s.MatchedTerms)
		}
	}
	// It is the word's weight that admits the file, not its share.
	an, err := analyzer()
	if err != nil {
		t.Fatal(err)
	}
	q := analyzeTerms(an, invoicingTask)
	var terms []string
	for _, qt := range q {
		terms = append(terms, qt.term)
	}
	st, err := e.eng.TermStats(context.Background(), terms, "")
	if err != nil {
		t.Fatal(err)
	}
	_, content := e.read(refunds)
	_, body := vfs.SplitFrontmatter([]byte(content))
	ms, total, err := rank(context.Background(), q, []doc{newDoc(an, "Approvals", "", string(body))}, &st, false)
	if err != nil {
		t.Fatal(err)
	}
	if m := ms[0]; m.weight/total >= RelevantShare || m.weight < RelevantWeight {
		t.Errorf("%s holds %.2f of the task's weight %.2f: want a share under %v and a weight of at least %v", refunds, m.weight, total, RelevantShare, RelevantWeight)
	}
}
