package daemon

import (
	"context"
	"sync"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// snapshotTimeout bounds one shared directory snapshot read.
const snapshotTimeout = 30 * time.Second

// snapshots shares the directory snapshots Write returns among concurrent
// writes to one directory, as commits share an fsync. A snapshot reads every
// key below the directory (its sizes need them): one per write made a
// directory written by 16 clients cost 16 walks of it, and on PostgreSQL
// each walk ships the listing. Here at most one read per directory (and
// access) runs at a time; writes that ask meanwhile wait for the next read,
// which starts after they committed, so each still sees its own write.
type snapshots struct {
	mu      sync.Mutex
	running map[snapshotKey]bool
	next    map[snapshotKey]*snapshotRead
}

type snapshotKey struct {
	drive, path, access string
}

// snapshotRead is one shared read: done closes once tree and err are set.
type snapshotRead struct {
	done chan struct{}
	tree *ctxdv1.TreeResponse
	err  error
}

// get returns the snapshot of dir as ctx's access sees it, read after the
// call began.
func (g *snapshots) get(ctx context.Context, dir vfs.Ref, read func(context.Context) (*ctxdv1.TreeResponse, error)) (*ctxdv1.TreeResponse, error) {
	access := vfs.AccessFrom(ctx)
	key := snapshotKey{dir.Drive, dir.Path, access.String()}
	g.mu.Lock()
	if g.next == nil {
		g.running, g.next = map[snapshotKey]bool{}, map[snapshotKey]*snapshotRead{}
	}
	r := g.next[key]
	if r == nil {
		r = &snapshotRead{done: make(chan struct{})}
		g.next[key] = r
	}
	if !g.running[key] {
		g.running[key] = true
		go g.run(key, vfs.WithAccess(context.Background(), access), read)
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.tree, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run serves key's reads one after another until none is waiting.
func (g *snapshots) run(key snapshotKey, base context.Context, read func(context.Context) (*ctxdv1.TreeResponse, error)) {
	for {
		g.mu.Lock()
		r := g.next[key]
		if r == nil {
			delete(g.running, key)
			g.mu.Unlock()
			return
		}
		delete(g.next, key)
		g.mu.Unlock()
		ctx, cancel := context.WithTimeout(base, snapshotTimeout)
		r.tree, r.err = read(ctx)
		cancel()
		close(r.done)
	}
}
