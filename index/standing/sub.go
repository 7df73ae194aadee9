package standing

import (
	"context"
	"math"
	"sync"
	"sync/atomic"

	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// Sub is one registered standing query and its stream of events.
type Sub struct {
	hub     *Hub
	id      string
	owner   string
	q       Query
	terms   [][]string  // by query text, analysed
	vecs    [][]float32 // by query text; nil without the vector leg
	filter  search.FilterMatch
	access  vfs.Access
	stopCtx func() bool // guarded by mu
	// durable is set for a durable subscription (def): its matches go to
	// its inbox.
	durable bool
	def     Durable

	// from: the hub pushes matches of changes above it. ready is the
	// sequence Ready's token names. Replay covers (replayFrom, replayTo]
	// before the live pushes; it is read by Next only.
	from, ready          uint64
	replayFrom, replayTo uint64
	replay               []Event
	replayed             bool
	// held is replayFrom while a replay is pending (the hub keeps the
	// outbox above it from being trimmed, see Hub.Hold), else MaxUint64.
	held atomic.Uint64

	events chan Event // live pushes, bounded: full cuts the stream off

	mu       sync.Mutex
	versions map[string]int64 // item id -> the version pushed (its UpdatedAt)
	err      error            // why the stream ended
	done     chan struct{}    // closed when it ended
}

// ID names the subscription.
func (s *Sub) ID() string { return s.id }

// Ready is the sequence the stream starts after (for Ready's token).
func (s *Sub) Ready() uint64 { return s.ready }

// admits reports whether d passes the query's filter and the stream's access.
func (s *Sub) admits(d *vfs.IndexDoc) bool {
	return s.access.Allows(d.Drive, d.Path) && s.filter(d.Drive, d.Path, d.Mime, d.Tags, d.Time)
}

func (s *Sub) lexicalMin() float64 {
	if s.q.MinScore > 0 {
		return s.q.MinScore
	}
	return DefaultLexicalMin
}

func (s *Sub) vectorMin() float64 {
	if s.q.MinScore > 0 {
		return s.q.MinScore
	}
	return DefaultVectorMin
}

// fresh reports whether version v of item id is not yet pushed, and
// records it as pushed.
func (s *Sub) fresh(id string, v int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.versions[id]; ok && old == v {
		return false
	}
	if len(s.versions) >= maxVersions {
		n := 0
		for k := range s.versions {
			delete(s.versions, k)
			if n++; n >= maxVersions/2 {
				break
			}
		}
	}
	s.versions[id] = v
	return true
}

// push queues a live event without blocking; a full queue ends the stream.
func (s *Sub) push(ev Event) {
	select {
	case s.events <- ev:
	default:
		if s.end(ErrCutOff) {
			s.hub.cutOffs.Add(1)
		}
	}
}

// end ends the stream with err, once; it reports whether this call did.
func (s *Sub) end(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false
	}
	s.err = err
	close(s.done)
	return true
}

// Close unregisters the subscription.
func (s *Sub) Close() {
	s.end(context.Canceled)
	s.mu.Lock()
	stop := s.stopCtx
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	h := s.hub
	h.mu.Lock()
	if h.subs[s] {
		delete(h.subs, s)
		h.gen++
	}
	h.mu.Unlock()
}

// Next returns the stream's next event: first what resuming replays (a Gap
// when the outbox no longer holds part of it), then live pushes. It returns
// ErrCutOff, ErrClosed or ctx's error when the stream ends.
func (s *Sub) Next(ctx context.Context) (Event, error) {
	for !s.replayed || len(s.replay) > 0 {
		if len(s.replay) > 0 {
			ev := s.replay[0]
			s.replay = s.replay[1:]
			return ev, nil
		}
		if err := s.replayMore(ctx); err != nil {
			return Event{}, err
		}
	}
	select {
	case ev := <-s.events:
		return ev, nil
	default:
	}
	select {
	case ev := <-s.events:
		return ev, nil
	case <-s.done:
		s.mu.Lock()
		defer s.mu.Unlock()
		return Event{}, s.err
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// replayMore matches the next batch of the outbox entries the stream
// resumes over, for this subscription alone.
func (s *Sub) replayMore(ctx context.Context) error {
	defer s.holdReplay()
	if s.replayFrom >= s.replayTo {
		s.replayed = true
		return nil
	}
	h := s.hub
	changes, retained, err := h.store.Changes(ctx, s.replayFrom, batchChanges)
	if err != nil {
		return err
	}
	if retained > s.replayFrom+1 {
		to := min(retained-1, s.replayTo)
		s.replay = append(s.replay, Event{Gap: &Gap{From: s.replayFrom + 1, To: to,
			Reason: "the store's outbox no longer holds these changes, so they were not matched; search to catch up"}})
		s.replayFrom = to
		if len(changes) == 0 || to == s.replayTo {
			return nil
		}
	}
	n := 0
	for n < len(changes) && changes[n].Seq <= s.replayTo {
		n++
	}
	changes = changes[:n]
	if len(changes) == 0 {
		s.replayFrom = s.replayTo
		return nil
	}
	m, err := h.newMatcher(ctx, []*Sub{s}, nil)
	if err != nil {
		return err
	}
	matches, err := h.matchChanges(ctx, changes, m)
	if err != nil {
		return err
	}
	for _, pm := range matches {
		s.replay = append(s.replay, Event{Match: pm.match})
	}
	s.replayFrom = changes[len(changes)-1].Seq
	return nil
}

// holdReplay keeps the outbox entries the stream has yet to replay from
// being trimmed, and lets them go once it has replayed them.
func (s *Sub) holdReplay() {
	if s.replayFrom < s.replayTo {
		s.held.Store(s.replayFrom)
	} else {
		s.held.Store(math.MaxUint64)
	}
}
