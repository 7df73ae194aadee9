package session

import (
	"context"
	"time"
)

// ExpireEvery is how often Run expires events.
const ExpireEvery = time.Hour

// Run does the background work of sessions until ctx ends: it expires
// events past their TTL every ExpireEvery (and once at the start), and
// writes the Summarizer's digest of each session End queued for it.
func (s *Sessions) Run(ctx context.Context) {
	tick := time.NewTicker(ExpireEvery)
	defer tick.Stop()
	expire := func() {
		n, err := s.Expire(ctx, time.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			s.opts.Log.Error("expiring session events failed; retrying in an hour", "err", err)
		case n > 0:
			s.opts.Log.Info("session events expired", "events", n)
		}
	}
	expire()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			expire()
		case k := <-s.enrich:
			if d, err := s.writeDigest(ctx, k, true); err != nil && ctx.Err() == nil {
				s.opts.Log.Warn("the enricher's digest was not written; the extractive one stays", "session", k.ref().String(), "err", err)
			} else if d.EnricherError != "" {
				s.opts.Log.Warn("the enricher could not write the digest; the extractive one stays", "session", k.ref().String(), "err", d.EnricherError)
			}
		}
	}
}
