package openai

import (
	"sync"
	"time"
)

// breaker stops calls to an endpoint that keeps failing: after threshold
// failures in a row it opens for cooldown, during which calls fail at once;
// then one call goes through as a probe (half-open): its success closes
// the breaker, its failure opens it for another cooldown.
type breaker struct {
	threshold int
	cooldown  time.Duration
	now       func() time.Time

	mu        sync.Mutex
	failures  int       // in a row
	openUntil time.Time // zero while closed
	probing   bool      // the half-open probe is in flight
	last      error     // the last failure
	changed   chan struct{}
}

func newBreaker(threshold int, cooldown time.Duration) *breaker {
	return &breaker{threshold: threshold, cooldown: cooldown, now: time.Now, changed: make(chan struct{})}
}

// admit says whether a call may go now. If not, open says whether the
// breaker is open (else a probe is in flight), and changed closes when the
// state next changes.
func (b *breaker) admit() (ok, open bool, changed <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.openUntil.IsZero():
		return true, false, nil
	case b.probing:
		return false, false, b.changed
	case b.now().Before(b.openUntil):
		return false, true, b.changed
	}
	b.probing = true
	return true, false, nil
}

// record reports the outcome of an admitted call.
func (b *breaker) record(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		if b.failures == 0 && b.openUntil.IsZero() {
			return
		}
		b.failures, b.openUntil, b.probing, b.last = 0, time.Time{}, false, nil
		b.signal()
		return
	}
	b.failures++
	b.last = err
	if b.probing || b.failures >= b.threshold {
		b.openUntil, b.probing = b.now().Add(b.cooldown), false
		b.signal()
	}
}

// abandon reports an admitted call that ended without an outcome (its
// caller went away): a probe lets the next call probe instead.
func (b *breaker) abandon() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.probing {
		b.probing = false
		b.signal()
	}
}

// state returns, while the breaker is open or probing, the failures in a
// row, the last one and when the next probe may go; open is false while
// closed.
func (b *breaker) state() (open bool, failures int, last error, retryAt time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.openUntil.IsZero(), b.failures, b.last, b.openUntil
}

func (b *breaker) signal() {
	close(b.changed)
	b.changed = make(chan struct{})
}
