package embed

import (
	"slices"
	"time"
)

// queryWaitBounds are the upper bounds of Stats.QueryWaitBuckets,
// around the 50 ms a query embedding should take at most.
var queryWaitBounds = []time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond,
	40 * time.Millisecond, 50 * time.Millisecond, 75 * time.Millisecond, 100 * time.Millisecond,
	250 * time.Millisecond, 500 * time.Millisecond, time.Second, 5 * time.Second,
}

// Stats counts what an Embedder did since it started.
type Stats struct {
	// Texts counts the texts embedded, indexed by Priority.
	Texts [numPriorities]int64
	// QueryWaits counts the query requests that got their vectors (one per
	// search query, or per window of a larger Query call), QueryWaitSum
	// their time from submission to their vectors, the wait behind other
	// runs included, and QueryWaitBuckets[i] those within
	// QueryWaitBounds()[i] (cumulative, as in a Prometheus histogram; nil
	// counts none).
	QueryWaits       int64
	QueryWaitSum     time.Duration
	QueryWaitBuckets []int64
}

// QueryWaitBounds returns the upper bounds of Stats.QueryWaitBuckets.
func QueryWaitBounds() []time.Duration { return slices.Clone(queryWaitBounds) }

// Stats returns what the worker did since it started.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.QueryWaitBuckets = slices.Clone(s.QueryWaitBuckets)
	return s
}

// countQuery records a query request that got its vectors; w.mu is held.
func (w *Worker) countQuery(r *request) {
	w.stats.CountQuery(w.now().Sub(r.submitted))
}

// CountQuery records a query embedding that took took from its submission
// to its vectors.
func (s *Stats) CountQuery(took time.Duration) {
	if s.QueryWaitBuckets == nil {
		s.QueryWaitBuckets = make([]int64, len(queryWaitBounds))
	}
	s.QueryWaits++
	s.QueryWaitSum += took
	for i, b := range queryWaitBounds {
		if took <= b {
			s.QueryWaitBuckets[i]++
		}
	}
}
