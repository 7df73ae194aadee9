package metrics

import (
	"sync"
	"time"
)

// rateWindow is the span Rate averages over, in one-second slots.
const rateWindow = 60

// Rate counts events per second over the last minute (or since it was
// made, when that is less). It keeps a count per second in a ring, so Add
// and PerSecond cost the same however many events there are.
type Rate struct {
	now   func() time.Time
	start time.Time

	mu     sync.Mutex
	second [rateWindow]int64 // the Unix second each slot counts
	count  [rateWindow]int64
}

// NewRate returns a Rate whose clock is now.
func NewRate(now func() time.Time) *Rate {
	return &Rate{now: now, start: now()}
}

// Add counts n events now.
func (r *Rate) Add(n int64) {
	sec := r.now().Unix()
	i := sec % rateWindow
	r.mu.Lock()
	if r.second[i] != sec {
		r.second[i], r.count[i] = sec, 0
	}
	r.count[i] += n
	r.mu.Unlock()
}

// PerSecond is the events a second over the last minute: the events of
// the last 60 seconds (this one included) over 60, or over the seconds
// since the Rate was made when fewer (at least one).
func (r *Rate) PerSecond() float64 {
	now := r.now()
	sec := now.Unix()
	var sum int64
	r.mu.Lock()
	for i := range r.second {
		if s := r.second[i]; s > sec-rateWindow && s <= sec {
			sum += r.count[i]
		}
	}
	r.mu.Unlock()
	span := min(max(now.Sub(r.start).Seconds(), 1), rateWindow)
	return float64(sum) / span
}
