package daemon

import (
	"context"
	"slices"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestDaemon_IndexedAt checks that an item's indexed_at is set once its
// chunks are searchable, never before its updated_at, and that a write or an
// edit clears it until the new content is indexed.
func TestDaemon_IndexedAt(t *testing.T) {
	d := mustStart(t, testConfig(t))
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	admin := ctxdv1.NewAdminServiceClient(conn)
	ctx := context.Background()
	const ref = "agent:/notes/indexed.md"

	// indexed waits for the indexes, then checks that ref is marked and
	// that BM25 finds it for word, and returns when it was indexed.
	indexed := func(word string) time.Time {
		t.Helper()
		waitIndexed(t, admin, 30*time.Second)
		info, err := c.Info(ctx, &ctxdv1.InfoRequest{Ref: ref})
		if err != nil {
			t.Fatal(err)
		}
		it := info.Item
		if it.IndexedAt == nil {
			t.Fatalf("indexes caught up, but %s has no indexed_at", ref)
		}
		at, updated := it.IndexedAt.AsTime(), it.UpdatedAt.AsTime()
		if at.Before(updated) {
			t.Fatalf("indexed_at %v precedes updated_at %v", at, updated)
		}
		res := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Queries: []*ctxdv1.SearchQuery{{Text: word}}})
		if got := resultRefs(res); !slices.Contains(got, ref) {
			t.Fatalf("%s has indexed_at, but BM25 %q finds %v", ref, word, got)
		}
		return at
	}

	if w := writeText(t, c, ref, "# Ledger\n\nquokka sightings\n"); w.Item.IndexedAt != nil {
		t.Fatalf("a fresh write reports indexed_at %v", w.Item.IndexedAt.AsTime())
	}
	first := indexed("quokka")

	e, err := c.Edit(ctx, &ctxdv1.EditRequest{Ref: ref, Patches: []*ctxdv1.Patch{{StartLine: 3, EndLine: 3, Content: "wombat sightings"}}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Item.IndexedAt != nil {
		t.Fatalf("the edit response keeps indexed_at %v of the old content", e.Item.IndexedAt.AsTime())
	}
	second := indexed("wombat")
	if !second.After(first) {
		t.Fatalf("indexed_at %v after the edit, %v before", second, first)
	}

	if w := writeText(t, c, ref, "# Ledger\n\nnumbat sightings\n"); w.Item.IndexedAt != nil {
		t.Fatalf("an overwrite reports indexed_at %v of the old content", w.Item.IndexedAt.AsTime())
	}
	if third := indexed("numbat"); !third.After(second) {
		t.Fatalf("indexed_at %v after the overwrite, %v before", third, second)
	}
}
