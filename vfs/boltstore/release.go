package boltstore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultReleaseIdle is how long the store goes without an access before
// DB lets go of the file pages accesses mapped (Options.ReleaseIdle).
const DefaultReleaseIdle = time.Second

// releaser lets go of the file pages store accesses mapped once the store
// has gone ReleaseIdle without one. bbolt reads through a shared map of the
// whole file, and every page a read touches stays mapped, with neighbours
// the kernel maps around each fault: searches over 100k chunks touched
// every page of the 250 MB file within a few hundred queries, and all of
// it counted in the daemon's resident set though it is the kernel's page
// cache. Releasing the map (ReleasePages) hands it back: the pages stay
// cached, and the next read of one maps it again without I/O.
//
// Only an idle store is released: under load every released page is
// faulted in again, which cost vector searches 8% at the median and 15% at
// p99 when released every 250 ms (45% and 2x every 50 ms) for 3-10% less
// peak memory. At rest the daemon keeps no more of the file than it holds
// itself. The timer is armed by the first access after a release, so an
// idle store wakes nothing.
type releaser struct {
	idle    time.Duration // <= 0: never release
	release func() error
	open    func() int // read transactions open now

	// busy is set by an access since the timer last fired. Accesses only
	// read it once it is set, so a busy store's transactions do not all
	// write one shared word.
	busy   atomic.Bool
	armed  atomic.Bool
	mu     sync.Mutex
	timer  *time.Timer
	closed bool
}

// touched records an access and arms the timer unless it is armed.
func (r *releaser) touched() {
	if r.idle <= 0 {
		return
	}
	if !r.busy.Load() {
		r.busy.Store(true)
	}
	if r.armed.Load() || !r.armed.CompareAndSwap(false, true) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.arm()
}

// arm starts the timer; the caller holds mu.
func (r *releaser) arm() {
	switch {
	case r.closed:
	case r.timer == nil:
		r.timer = time.AfterFunc(r.idle, r.fire)
	default:
		r.timer.Reset(r.idle)
	}
}

// fire releases the pages if nothing accessed the store since the timer
// last fired, and waits another interval otherwise.
func (r *releaser) fire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy.Swap(false) || r.open() > 0 {
		r.arm()
		return
	}
	// An access from here on arms the timer anew.
	r.armed.Store(false)
	// An error (the file closed meanwhile, or madvise refusing the range)
	// leaves the pages mapped, which costs resident memory, never data.
	_ = r.release()
}

// stop ends the releases; one running finishes on its own.
func (r *releaser) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
}

// walkReleaseEvery is how often ReleasingWhile lets go of the pages a walk
// mapped: a walk maps the file at about a gigabyte a second, so it holds
// tens of megabytes at a time.
const walkReleaseEvery = 10 * time.Millisecond

// ReleasingWhile runs walk, which reads much of the file once (DiskUsage
// reads every page), and lets go of the pages it mapped every
// walkReleaseEvery while it runs and once when it ends. Without it the
// walk's peak is the whole file, at start and at every measurement. walk
// may hold a read transaction: each release opens its own, and a remap
// waiting for walk's to end holds them off until then.
func (d *DB) ReleasingWhile(walk func() error) error {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(walkReleaseEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				// An error leaves pages mapped, which costs resident
				// memory, never data; the last release reports it.
				_ = d.ReleasePages()
			}
		}
	}()
	err := walk()
	close(done)
	<-stopped
	if rerr := d.ReleasePages(); rerr != nil {
		err = errors.Join(err, fmt.Errorf("release the pages the walk read: %w", rerr))
	}
	return err
}
