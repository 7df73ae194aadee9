package daemon

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestWrite_SharedSnapshotsSeeOwnWrite: concurrent writes to one directory
// share directory snapshot reads, and each still gets a snapshot taken
// after its own write committed, which lists its item.
func TestWrite_SharedSnapshotsSeeOwnWrite(t *testing.T) {
	d := mustStart(t, testConfig(t))
	c := d.vfsClient(t)
	const rounds, writers = 8, 16 // writers <= the snapshot's 20 items per directory
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				name := fmt.Sprintf("w%02d.md", w)
				resp, err := c.Write(context.Background(), &ctxdv1.WriteRequest{
					Ref:  fmt.Sprintf("snap:/r%d/%s", round, name),
					Body: &ctxdv1.WriteRequest_Content{Content: "note\n"},
				})
				if err != nil {
					errs <- err
					return
				}
				var names []string
				for _, ch := range resp.GetTree().GetRoot().GetChildren() {
					names = append(names, ch.GetName())
				}
				if !slices.Contains(names, name) {
					errs <- fmt.Errorf("round %d: the snapshot after writing %s lists %v", round, name, names)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}
