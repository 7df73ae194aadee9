package openai

import (
	"context"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/embed"
)

func TestSlots_QueriesAheadOfDocuments(t *testing.T) {
	s := newSlots(1)
	ctx := context.Background()
	if err := s.acquire(ctx, embed.Background); err != nil {
		t.Fatal(err)
	}
	// The backlog holds the one document slot; a query still goes.
	if err := s.acquire(ctx, embed.Query); err != nil {
		t.Fatal(err)
	}
	got := make(chan embed.Priority, 2)
	waiting := func(p embed.Priority, n int) {
		for {
			s.mu.Lock()
			k := len(s.waiters[p])
			s.mu.Unlock()
			if k == n {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	for _, p := range []embed.Priority{embed.Background, embed.Prompt} {
		go func() {
			if err := s.acquire(ctx, p); err == nil {
				got <- p
			}
		}()
		waiting(p, 1)
	}
	s.release() // the query's: the document slot is still taken
	select {
	case p := <-got:
		t.Fatalf("priority %d got a slot while the document slot was taken", p)
	default:
	}
	s.release() // the backlog's: the Prompt waiter goes first
	if p := <-got; p != embed.Prompt {
		t.Fatalf("priority %d went first, want Prompt", p)
	}
	s.release()
	if p := <-got; p != embed.Background {
		t.Fatalf("priority %d went second, want Background", p)
	}
	// A waiter whose context ends leaves the queue.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- s.acquire(cctx, embed.Background) }()
	waiting(embed.Background, 1)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("acquire returned nil after its context ended")
	}
	s.release()
	if s.inUse != 0 {
		t.Fatalf("inUse %d after every release", s.inUse)
	}
}
