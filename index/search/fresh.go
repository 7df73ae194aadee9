package search

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultWriteWait is how long a search waits at most for the indexes to
// apply the writes acknowledged before it started (Options.WriteWait). A
// search that asks the applier to hurry waits for one Bleve batch made
// durable: 3 to 6 ms at p50 and up to about 100 ms at p99 on 2 busy cores
// (BenchmarkEngine_ReadYourWrites); one that meets a bulk ingest may wait
// for the pass in flight too (up to applyBatch entries or applyBytes of
// text). One second covers both with room, and stays well below what an
// agent's tool call or a person at a prompt would take for a hang.
const DefaultWriteWait = time.Second

// fresh publishes how far searches see the store: the outbox sequence
// through which each index has applied every change (Bleve makes a batch
// visible to new searches before its Batch call returns; the vector leg
// under e.mu). Only the run goroutine publishes; searches read it.
type fresh struct {
	lex, vec atomic.Uint64
	mu       sync.Mutex
	changed  chan struct{} // closed, and replaced, at each publish
}

// publish records what the run goroutine has applied and wakes the searches
// waiting for it. Without a model the vector leg has nothing to apply: it is
// as far as the lexical index. The sequences are not monotonic: a model
// that appears brings a vector leg that may trail.
func (e *Engine) publish() {
	lex, vec := e.lexSeq, e.lexSeq
	if e.vec != nil {
		vec = e.vecSeq
	}
	f := &e.fresh
	if f.lex.Load() == lex && f.vec.Load() == vec && f.changed != nil {
		return
	}
	f.mu.Lock()
	f.lex.Store(lex)
	f.vec.Store(vec)
	if f.changed != nil {
		close(f.changed)
	}
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// seen returns the sequence through which the chosen legs see the store.
func (e *Engine) seen(lexical, vector bool) uint64 {
	seq := uint64(1<<64 - 1)
	if lexical {
		seq = e.fresh.lex.Load()
	}
	if vector {
		seq = min(seq, e.fresh.vec.Load())
	}
	return seq
}

// seenChanged is seen with a channel closed when that may have changed.
func (e *Engine) seenChanged(lexical, vector bool) (uint64, <-chan struct{}) {
	e.fresh.mu.Lock()
	ch := e.fresh.changed
	e.fresh.mu.Unlock()
	return e.seen(lexical, vector), ch
}

// awaitWrites makes a search read its writes: it waits until the chosen
// legs (lexical: BM25 and substring; vector) see every change the store had
// committed when it was called, so that whatever any client was told was
// written is found. It asks the run goroutine to apply at once instead of
// after its batching delay. It waits at most Options.WriteWait, and at most
// half the time left before ctx's deadline (the other half is the
// search's). It returns why the search then answers from indexes that
// trail the store (Response.Stale), or "" when they do not, or ctx's error
// when ctx ends. With WriteWait negative it does nothing.
func (e *Engine) awaitWrites(ctx context.Context, lexical, vector bool) (string, error) {
	wait := e.opts.WriteWait
	if wait < 0 {
		return "", nil
	}
	target, err := e.store.OutboxSeq(ctx)
	if err != nil {
		return "", err
	}
	if e.seen(lexical, vector) >= target {
		return "", nil
	}
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)/2)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		seq, changed := e.seenChanged(lexical, vector)
		if seq >= target {
			return "", nil
		}
		select {
		case e.hurry <- struct{}{}:
		default: // already asked
		}
		select {
		case <-changed:
		case <-timer.C:
			return e.staleReason(lexical, vector, target, wait), nil
		case <-ctx.Done():
			return "", ctx.Err()
		case <-e.stopped:
			return "", errStopped
		}
	}
}

// staleReason says how far the chosen legs trail target after a wait, and
// what holds them when a rebuild or Doctor does; "" when they have caught
// up after all.
func (e *Engine) staleReason(lexical, vector bool, target uint64, wait time.Duration) string {
	seq := e.seen(lexical, vector)
	if seq >= target {
		return ""
	}
	e.mu.RLock()
	rebuilding, checking := e.state.Rebuilding, e.state.Checking
	e.mu.RUnlock()
	why := ""
	switch {
	case rebuilding:
		why = " (an index is being rebuilt meanwhile)"
	case checking:
		why = " (ctxd doctor holds the indexes meanwhile)"
	}
	return fmt.Sprintf("the search index trails the store by %d changes after waiting %s%s: results may miss the latest writes; search again for them",
		target-seq, wait.Round(time.Millisecond), why)
}
