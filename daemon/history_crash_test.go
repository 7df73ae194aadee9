package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// TestProcess_KillDuringWritesLosesNoRevision: 16 clients overwrite items
// of the real daemon, which is killed with SIGKILL mid-stream; after a
// restart every acknowledged write is a revision of its item, with its
// content readable, because revisions commit in the write's transaction.
func TestProcess_KillDuringWritesLosesNoRevision(t *testing.T) {
	dir := shortTempDir(t)
	dataDir, socket := filepath.Join(dir, "data"), filepath.Join(dir, "s.sock")
	p := startProcess(t, dataDir, socket)
	c := ctxdv1.NewVfsServiceClient(dial(t, "unix://"+socket))

	const sep = "\x00"
	acked := loadThenKill(t, p, 16, 400, func(w, i int) (string, error) {
		ref := fmt.Sprintf("agent:/w%d/item-%d.md", w, i%4) // each item gets several revisions
		content := fmt.Sprintf("writer %d, write %d\n", w, i)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: content},
			OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
		return ref + sep + content, err
	})

	// Restart on the killed store, then stop cleanly and read its history.
	startProcess(t, dataDir, socket).stop(t)
	s, err := vfs.Open(filepath.Join(dataDir, "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Verify(ctx); err != nil {
		t.Fatalf("Verify after kill -9: %v", err)
	}
	byRef := map[string]map[string]vfs.Revision{} // ref -> content hash -> revision
	for _, a := range acked {
		ref, content, _ := strings.Cut(a, sep)
		revs, ok := byRef[ref]
		if !ok {
			r, err := vfs.ParseRef(ref)
			if err != nil {
				t.Fatal(err)
			}
			list, err := s.History(ctx, r, vfs.MaxHistoryLimit, 0)
			if err != nil {
				t.Fatalf("History(%s): %v", ref, err)
			}
			revs = map[string]vfs.Revision{}
			for _, rev := range list {
				revs[rev.Hash] = rev
			}
			byRef[ref] = revs
		}
		rev, ok := revs[vfs.HashContent([]byte(content))]
		if !ok {
			t.Fatalf("acknowledged write of %q to %s has no revision after kill -9", content, ref)
		}
		if rev.Op != vfs.OpWrite || rev.Actor == "" {
			t.Errorf("%s revision %d: op %q actor %q, want a write with its actor", ref, rev.Rev, rev.Op, rev.Actor)
		}
		_, got, err := s.ReadRevision(ctx, vfs.Ref{ID: rev.ItemID}, rev.Rev)
		if err != nil || string(got) != content {
			t.Fatalf("ReadRevision(%s, %d) = %q, %v; want %q", ref, rev.Rev, got, err, content)
		}
	}
	t.Logf("%d acknowledged writes to %d items all have their revision after kill -9", len(acked), len(byRef))
}
