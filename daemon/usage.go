package daemon

import (
	"context"
	"log/slog"
	"time"

	"github.com/ctxd/ctxd/vfs"
)

// usageFlushEvery is how often retrieval signals are written to the store.
const usageFlushEvery = time.Second

// usageRecorder records which items searches returned (retrieval count and
// time) off the search path: searches hand ids to a buffered channel and
// never wait; one goroutine writes them in batches. When the buffer is full
// the signal is dropped rather than slowing a search.
type usageRecorder struct {
	store   *vfs.Store
	log     *slog.Logger
	ids     chan []string
	stopped chan struct{}
}

func newUsageRecorder(store *vfs.Store, log *slog.Logger) *usageRecorder {
	u := &usageRecorder{store: store, log: log, ids: make(chan []string, 1024), stopped: make(chan struct{})}
	go u.run()
	return u
}

// record notes that a search returned these items.
func (u *usageRecorder) record(ids []string) {
	if len(ids) == 0 {
		return
	}
	select {
	case u.ids <- ids:
	default:
		u.log.Debug("retrieval signals dropped: recorder busy", "items", len(ids))
	}
}

func (u *usageRecorder) run() {
	defer close(u.stopped)
	tick := time.NewTicker(usageFlushEvery)
	defer tick.Stop()
	var pending []string
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if err := u.store.RecordRetrievals(context.Background(), pending, time.Now()); err != nil {
			u.log.Warn("recording retrievals failed", "err", err)
		}
		pending = pending[:0]
	}
	for {
		select {
		case ids, ok := <-u.ids:
			if !ok {
				flush()
				return
			}
			pending = append(pending, ids...)
		case <-tick.C:
			flush()
		}
	}
}

// close writes what is pending and stops.
func (u *usageRecorder) close() {
	close(u.ids)
	<-u.stopped
}
