package ingest

import (
	"context"
	"log/slog"
	"time"
)

// revalidateRetry is how long an item whose re-validation failed is left
// alone, so that a dead site is not fetched again on every search.
const revalidateRetry = 10 * time.Minute

// Revalidator re-validates fetched items that searches return once their TTL
// has passed, off the search path: searches hand over ids and never wait,
// and one goroutine makes the conditional GETs. The search that notices a
// stale page answers from what is stored; later searches see the refresh.
type Revalidator struct {
	in      *Ingester
	log     *slog.Logger
	ids     chan []string
	cancel  context.CancelFunc
	stopped chan struct{}
	failed  map[string]time.Time // id -> when its re-validation last failed; run's only
}

// NewRevalidator starts the goroutine that re-validates through in; Close
// stops it.
func NewRevalidator(in *Ingester, log *slog.Logger) *Revalidator {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Revalidator{in: in, log: log, ids: make(chan []string, 64), cancel: cancel, stopped: make(chan struct{}), failed: map[string]time.Time{}}
	go r.run(ctx)
	return r
}

// Notice hands over the item ids a search returned; it never blocks.
func (r *Revalidator) Notice(ids []string) {
	select {
	case r.ids <- ids:
	default:
	}
}

func (r *Revalidator) run(ctx context.Context) {
	defer close(r.stopped)
	for {
		select {
		case <-ctx.Done():
			return
		case ids := <-r.ids:
			r.revalidate(ctx, ids)
		}
	}
}

func (r *Revalidator) revalidate(ctx context.Context, ids []string) {
	now := time.Now()
	for id, t := range r.failed {
		if now.Sub(t) > revalidateRetry {
			delete(r.failed, id)
		}
	}
	due := ids[:0:0]
	for _, id := range ids {
		if _, ok := r.failed[id]; !ok {
			due = append(due, id)
		}
	}
	for id, res := range r.in.Revalidate(ctx, due) {
		switch res.Action {
		case Failed, Missing:
			r.failed[id] = now
			r.log.Info("re-validating a fetched item failed", "ref", res.Ref, "err", res.Err)
		default:
			r.log.Debug("re-validated a fetched item", "ref", res.Ref, "action", res.Action)
		}
	}
}

// Close cancels fetches in flight and stops.
func (r *Revalidator) Close() {
	r.cancel()
	<-r.stopped
}
