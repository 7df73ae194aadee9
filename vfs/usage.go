package vfs

import (
	"context"
	"log/slog"
	"time"
)

// usageFlushEvery is how often retrieval signals are written to the store.
const usageFlushEvery = time.Second

// UsageRecorder records which items searches returned (retrieval count and
// time) off the search path: searches hand ids to a buffered channel and
// never wait; one goroutine writes them in batches. When the buffer is full
// the signal is dropped rather than slowing a search.
type UsageRecorder struct {
	store   *Store
	log     *slog.Logger
	ids     chan []string
	stopped chan struct{}
}

// NewUsageRecorder starts the goroutine that writes retrieval signals to
// store; Close stops it.
func NewUsageRecorder(store *Store, log *slog.Logger) *UsageRecorder {
	u := &UsageRecorder{store: store, log: log, ids: make(chan []string, 1024), stopped: make(chan struct{})}
	go u.run()
	return u
}

// Record notes that a search returned these items; it never blocks.
func (u *UsageRecorder) Record(ids []string) {
	if len(ids) == 0 {
		return
	}
	select {
	case u.ids <- ids:
	default:
		u.log.Debug("retrieval signals dropped: recorder busy", "items", len(ids))
	}
}

func (u *UsageRecorder) run() {
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

// Close writes what is pending and stops.
func (u *UsageRecorder) Close() {
	close(u.ids)
	<-u.stopped
}
