package daemon

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ctxd/ctxd/vfs"
)

// On a shared store the daemon checks every storeProbeEvery that the store
// answers a bounded read (storeProbeTimeout), and at once when a call finds
// it unreachable.
const (
	storeProbeEvery   = time.Second
	storeProbeTimeout = 2 * time.Second
)

// storeHealth tracks whether the store answers. While it does not, the
// standard health service reports NOT_SERVING, overall and for every ctxd
// service, calls that need the store answer UNAVAILABLE with a hint, and
// Status says why; once the store answers again (the connection pool
// reconnects by itself) everything serves again, without a restart.
type storeHealth struct {
	health *health.Server
	info   *storeInfo
	log    *slog.Logger
	kick   chan struct{} // a call found the store unreachable: probe now

	mu       sync.Mutex
	services []string // the ctxd services, set once they are registered
	down     bool
	reason   string
	since    time.Time
}

func newStoreHealth(hs *health.Server, info *storeInfo, log *slog.Logger) *storeHealth {
	return &storeHealth{health: hs, info: info, log: log, kick: make(chan struct{}, 1)}
}

// serving remembers the ctxd services among names and sets them (and the
// overall status) SERVING, unless a call has found the store out of reach.
func (h *storeHealth) serving(names []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.services = h.services[:0]
	for _, n := range names {
		if strings.HasPrefix(n, "ctxd.") {
			h.services = append(h.services, n)
		}
	}
	if h.down {
		h.setStatus(healthpb.HealthCheckResponse_NOT_SERVING)
		return
	}
	h.setStatus(healthpb.HealthCheckResponse_SERVING)
}

// state reports whether the store is unreachable, why and since when.
func (h *storeHealth) state() (down bool, reason string, since time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.down, h.reason, h.since
}

// failed records that a call found the store unreachable and asks the
// probe to check it now.
func (h *storeHealth) failed(err error) {
	h.set(err)
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// set records the outcome of a probe or a call (err nil: the store
// answered) and turns health over when it changes.
func (h *storeHealth) set(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if down := err != nil; down == h.down {
		if down {
			h.reason = h.info.scrub(err.Error())
		}
		return
	}
	if err != nil {
		h.down, h.reason, h.since = true, h.info.scrub(err.Error()), time.Now()
		h.log.Warn("store unreachable; health reports NOT_SERVING until it answers", "store", h.info.location, "err", h.reason)
		h.setStatus(healthpb.HealthCheckResponse_NOT_SERVING)
		return
	}
	h.log.Info("store reachable again; health reports SERVING", "store", h.info.location, "after", time.Since(h.since).Round(time.Millisecond))
	h.down, h.reason, h.since = false, "", time.Time{}
	h.setStatus(healthpb.HealthCheckResponse_SERVING)
}

// setStatus sets the overall status and every ctxd service's; the caller
// holds h.mu. After health.Server.Shutdown (the daemon stopping) it does
// nothing.
func (h *storeHealth) setStatus(st healthpb.HealthCheckResponse_ServingStatus) {
	h.health.SetServingStatus("", st)
	for _, n := range h.services {
		h.health.SetServingStatus(n, st)
	}
}

// probe checks the store every storeProbeEvery, and when kicked, until ctx
// ends.
func (h *storeHealth) probe(ctx context.Context, store *vfs.Store) {
	tick := time.NewTicker(storeProbeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-h.kick:
		}
		pctx, cancel := context.WithTimeout(ctx, storeProbeTimeout)
		_, err := store.OutboxSeq(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		h.set(err)
	}
}
