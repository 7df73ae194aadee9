package vfs

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestStore_Prune(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	clock := time.Now().Add(-100 * 24 * time.Hour) // items written 100 days ago
	s.now = func() time.Time { return clock }
	put := func(ref, content string, p WriteParams) {
		t.Helper()
		r, err := ParseRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		p.Ref, p.Content, p.IsText = r, []byte(content), true
		if _, err := s.Write(ctx, p); err != nil {
			t.Fatalf("write %s: %v", ref, err)
		}
	}
	put("agent:/old/never.md", "never searched for", WriteParams{})
	put("agent:/old/searched.md", "returned by a search last week", WriteParams{})
	put("agent:/old/important.md", "important", WriteParams{Importance: 0.5})
	put("agent:/old/fm.md", "---\nimportance: 0.2\n---\nimportant by its frontmatter", WriteParams{})
	put("agent:/old/contextual.md", "---\nloading: contextual\n---\na context file", WriteParams{})
	put("self:/notes.md", "under the default context root", WriteParams{})
	put("agent:/old/kept.md", "the caller keeps it", WriteParams{})
	put("work:/old.md", "another drive", WriteParams{})
	if _, err := s.MakeDir(ctx, Ref{Drive: "agent", Path: "/old/empty"}); err != nil {
		t.Fatal(err)
	}
	clock = time.Now().Add(-10 * 24 * time.Hour)
	put("agent:/recent.md", "changed ten days ago", WriteParams{})
	searched, err := s.Info(ctx, Ref{Drive: "agent", Path: "/old/searched.md"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordRetrievals(ctx, []string{searched.Item.ID}, time.Now().Add(-7*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	clock = time.Now()

	q := PruneQuery{Before: clock.Add(-90 * 24 * time.Hour), DryRun: true, Keep: func(it Item) bool { return it.Path == "/old/kept.md" }}
	refs := func(ps []Pruned) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Item.Ref())
		}
		return out
	}
	dry, more, err := s.Prune(ctx, q)
	if err != nil || more {
		t.Fatal(err, more)
	}
	want := []string{"agent:/old/never.md", "work:/old.md"}
	if got := refs(dry); !slices.Equal(got, want) {
		t.Fatalf("dry run lists %v, want %v", got, want)
	}
	if ok, _, err := s.Exists(ctx, Ref{Drive: "agent", Path: "/old/never.md"}); err != nil || !ok {
		t.Fatalf("a dry run deleted an item (%v)", err)
	}
	q.Limit = 1
	if one, more, err := s.Prune(ctx, q); err != nil || !more || len(one) != 1 {
		t.Errorf("limit 1: %v, more %v, %v", refs(one), more, err)
	}
	q.Limit, q.Under = 0, []Ref{{Drive: "agent", Path: "/old"}}
	q.DryRun = false
	done, _, err := s.Prune(ctx, q)
	if err != nil || !slices.Equal(refs(done), []string{"agent:/old/never.md"}) || done[0].DeleteRev == 0 {
		t.Fatalf("pruned %+v, %v; want agent:/old/never.md with its delete revision", done, err)
	}
	if ok, _, _ := s.Exists(ctx, Ref{Drive: "agent", Path: "/old/never.md"}); ok {
		t.Errorf("the pruned item is still there")
	}
	// Restorable from history.
	if _, err := s.Revert(ctx, Ref{Drive: "agent", Path: "/old/never.md"}, done[0].DeleteRev-1); err != nil {
		t.Errorf("revert of the pruned item: %v", err)
	}
	if _, err := s.Read(ctx, Ref{Drive: "agent", Path: "/old/never.md"}, 0, 0); err != nil {
		t.Errorf("the restored item: %v", err)
	}
	if _, _, err := s.Prune(ctx, PruneQuery{Before: clock.Add(-time.Hour)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a cutoff an hour ago: %v, want ErrInvalid", err)
	}
}
