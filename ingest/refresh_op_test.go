package ingest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ctxd/ctxd/vfs"
)

// TestRefresh_RecordsItsOperation checks that history records the write a
// refresh makes as a refresh, by the actor who asked for it.
func TestRefresh_RecordsItsOperation(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	in, s := newTestIngester(t, root)
	writeFiles(t, root, map[string]string{"n.md": "first\n"})
	if _, err := in.Add(ctx, AddOptions{Sources: []string{root}}, Sink{}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"n.md": "second, longer\n"})
	ref := diskRef(filepath.Join(root, "n.md"))
	bob := vfs.WithActor(ctx, vfs.Actor{Name: "bob"})
	if sum, err := in.Refresh(bob, RefreshOptions{Refs: []vfs.Ref{ref}}, Sink{}); err != nil || sum.Updated != 1 {
		t.Fatalf("refresh = %+v, %v", sum, err)
	}
	revs, err := s.History(ctx, ref, 1, 0)
	if err != nil || len(revs) != 1 {
		t.Fatalf("History = %+v, %v", revs, err)
	}
	if r := revs[0]; r.Op != vfs.OpRefresh || r.Actor != "bob" {
		t.Fatalf("latest revision: op %q by %q; want %q by bob", r.Op, r.Actor, vfs.OpRefresh)
	}
}
