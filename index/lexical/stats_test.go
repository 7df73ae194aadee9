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
	st, err := x.TermStats(ctx, []string{"invoic", "sent", "absent", "Invoices"})
	if err != nil {
		t.Fatal(err)
	}
	// Terms are looked up as given: "Invoices" is not an analysed term.
	if want := []uint64{3, 6, 0, 0}; st.Docs != 6 || !slices.Equal(st.DF, want) {
		t.Errorf("TermStats = %d docs, df %v; want 6 docs, df %v", st.Docs, st.DF, want)
	}
	// Deleted documents no longer count.
	mustApply(t, x, nil, []string{"0", "5"}, 2)
	if st, err = x.TermStats(ctx, []string{"invoic", "sent"}); err != nil {
		t.Fatal(err)
	}
	if want := []uint64{2, 4}; st.Docs != 4 || !slices.Equal(st.DF, want) {
		t.Errorf("after deletes: %d docs, df %v; want 4 docs, df %v", st.Docs, st.DF, want)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := x.TermStats(cctx, []string{"sent"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	x.Close()
	if _, err := x.TermStats(ctx, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v, want ErrClosed", err)
	}
}
