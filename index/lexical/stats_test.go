package lexical

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestIndex_TermStats(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	// "invoic" (stemmed) is in the text of three docs, in the title of a
	// fourth; "sent" in all of them.
	var docs []Doc
	for i := range 6 {
		d := Doc{ID: fmt.Sprint(i), Text: "The report was sent."}
		if i < 3 {
			d.Text += " Invoices are due."
		}
		if i == 3 {
			d.Title = "Invoicing"
		}
		docs = append(docs, d)
	}
	mustApply(t, x, docs, nil, 1)
	ctx := context.Background()
	st, err := x.TermStats(ctx, []string{"invoic", "sent", "absent", "Invoices"}, "")
	if err != nil {
		t.Fatal(err)
	}
	// Terms are looked up as given: "Invoices" is not an analysed term.
	if want := []uint64{3, 6, 0, 0}; st.Docs != 6 || !slices.Equal(st.DF, want) {
		t.Errorf("TermStats = %d docs, df %v; want 6 docs, df %v", st.Docs, st.DF, want)
	}
	// Deleted documents no longer count.
	mustApply(t, x, nil, []string{"0", "5"}, 2)
	if st, err = x.TermStats(ctx, []string{"invoic", "sent"}, ""); err != nil {
		t.Fatal(err)
	}
	if want := []uint64{2, 4}; st.Docs != 4 || !slices.Equal(st.DF, want) {
		t.Errorf("after deletes: %d docs, df %v; want 4 docs, df %v", st.Docs, st.DF, want)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := x.TermStats(cctx, []string{"sent"}, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	x.Close()
	if _, err := x.TermStats(ctx, nil, ""); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v, want ErrClosed", err)
	}
}

func TestIndex_TermStats_Except(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	// "invoic" is in three docs, two of them under notes:/own; "sent" in
	// three, two under notes:/own. Two applies make two segments.
	docs := []Doc{
		{ID: "a", Drive: "notes", Path: "/own/a.md", Text: "Invoices are due."},
		{ID: "b", Drive: "notes", Path: "/own/deep/b.md", Text: "The invoice was sent."},
		{ID: "c", Drive: "notes", Path: "/own/c.md", Text: "The report was sent."},
		{ID: "d", Drive: "notes", Path: "/other/d.md", Text: "Invoicing is monthly."},
		{ID: "e", Drive: "work", Path: "/own/e.md", Text: "Sent nothing."},
	}
	mustApply(t, x, docs[:2], nil, 1)
	mustApply(t, x, docs[2:], nil, 2)
	ctx := context.Background()
	for _, tc := range []struct {
		except string
		docs   uint64
		df     []uint64
	}{
		{"", 5, []uint64{3, 3, 0}},
		{"notes:/own", 2, []uint64{1, 1, 0}},
		{"notes:/own/", 2, []uint64{1, 1, 0}},
		{"notes:/own/deep", 4, []uint64{2, 2, 0}},
		{"notes:/nothing", 5, []uint64{3, 3, 0}},
		{"/own", 1, []uint64{1, 0, 0}},
	} {
		st, err := x.TermStats(ctx, []string{"invoic", "sent", "absent"}, tc.except)
		if err != nil || st.Docs != tc.docs || !slices.Equal(st.DF, tc.df) {
			t.Errorf("TermStats except %q = %d docs, df %v, %v; want %d docs, df %v", tc.except, st.Docs, st.DF, err, tc.docs, tc.df)
		}
	}
	// A deleted document under the prefix is not taken off twice.
	mustApply(t, x, nil, []string{"a"}, 3)
	if st, err := x.TermStats(ctx, []string{"invoic"}, "notes:/own"); err != nil || st.Docs != 2 || !slices.Equal(st.DF, []uint64{1}) {
		t.Errorf("after a delete: %d docs, df %v, %v; want 2 docs, df [1]", st.Docs, st.DF, err)
	}
	if _, err := x.TermStats(ctx, []string{"sent"}, "own"); !errors.Is(err, ErrInvalidFilter) {
		t.Errorf("except %q: %v, want ErrInvalidFilter", "own", err)
	}
}
