package openai

import (
	"context"
	"sync"

	"github.com/ctxd/ctxd/index/embed"
)

// slots bounds the requests in flight: documents take up to n, and queries
// one more, so a query never waits behind the backlog's requests, only
// behind other queries. Waiters are served highest priority first, then in
// arrival order.
type slots struct {
	n int

	mu      sync.Mutex
	inUse   int
	waiters [embed.Query + 1][]chan struct{}
}

func newSlots(n int) *slots { return &slots{n: n} }

// limit is how many requests may be in flight when one at priority p starts.
func (s *slots) limit(p embed.Priority) int {
	if p == embed.Query {
		return s.n + 1
	}
	return s.n
}

// acquire waits for a slot at priority p; release gives it back. It
// returns ctx's error if ctx ends first.
func (s *slots) acquire(ctx context.Context, p embed.Priority) error {
	s.mu.Lock()
	if s.inUse < s.limit(p) && !s.higherWaiting(p) {
		s.inUse++
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.waiters[p] = append(s.waiters[p], ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, w := range s.waiters[p] {
			if w == ch {
				s.waiters[p] = append(s.waiters[p][:i], s.waiters[p][i+1:]...)
				return ctx.Err()
			}
		}
		// Granted as ctx ended: pass the slot on.
		s.inUse--
		s.grant()
		return ctx.Err()
	}
}

// higherWaiting reports whether a request at priority p or above waits;
// the caller holds mu.
func (s *slots) higherWaiting(p embed.Priority) bool {
	for q := p; q <= embed.Query; q++ {
		if len(s.waiters[q]) > 0 {
			return true
		}
	}
	return false
}

func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inUse--
	s.grant()
}

// grant hands free slots to waiters, highest priority first; the caller
// holds mu.
func (s *slots) grant() {
	for p := embed.Query; p >= embed.Background; p-- {
		for len(s.waiters[p]) > 0 && s.inUse < s.limit(p) {
			close(s.waiters[p][0])
			s.waiters[p] = s.waiters[p][1:]
			s.inUse++
		}
		if len(s.waiters[p]) > 0 {
			return // lower priorities wait behind it
		}
	}
}
