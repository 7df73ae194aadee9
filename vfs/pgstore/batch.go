package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
)

// maxBatchSize bounds how many Batch calls share one transaction.
const maxBatchSize = 1000

// errTrySolo tells a Batch caller whose fn failed to run it alone, to get
// its own error.
var errTrySolo = errors.New("pgstore: batch member failed; run alone")

// batch gathers Batch calls that share one write transaction, as bbolt's
// DB.Batch does: it runs backend.BatchDelay after its first call, or at
// once when maxBatchSize calls wait.
type batch struct {
	db    *DB
	timer *time.Timer
	once  sync.Once
	calls []*call
}

// call is one Batch caller. mu is held while fn runs, so a caller that
// leaves (its context ended) never returns while its fn still runs.
type call struct {
	ctx  context.Context
	fn   func(backend.Tx) error
	done chan error
	mu   sync.Mutex
	gone bool
}

// Batch is Update whose transaction may be shared with concurrent callers.
// If one member's fn fails the transaction rolls back, that member runs
// alone to get its own error and the others run again together: fn may
// run more than once. A caller whose ctx ends while it waits returns
// ctx.Err() and its fn does not run again; if its batch was already
// committing, its writes may still commit.
func (db *DB) Batch(ctx context.Context, fn func(backend.Tx) error) error {
	if err := db.checkOpen(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &call{ctx: ctx, fn: fn, done: make(chan error, 1)}
	db.batchMu.Lock()
	if db.batch == nil {
		b := &batch{db: db}
		b.timer = time.AfterFunc(backend.BatchDelay, b.trigger)
		db.batch = b
	}
	b := db.batch
	b.calls = append(b.calls, c)
	if len(b.calls) >= maxBatchSize {
		db.batch = nil
		go b.trigger()
	}
	db.batchMu.Unlock()

	select {
	case err := <-c.done:
		if err == errTrySolo {
			return db.Update(ctx, fn)
		}
		return err
	case <-ctx.Done():
		c.mu.Lock()
		c.gone = true
		c.mu.Unlock()
		select {
		case err := <-c.done:
			if err != errTrySolo {
				return err // it finished meanwhile
			}
		default:
		}
		return ctx.Err()
	}
}

func (b *batch) trigger() { b.once.Do(b.run) }

func (b *batch) run() {
	db := b.db
	db.batchMu.Lock()
	b.timer.Stop()
	if db.batch == b {
		db.batch = nil
	}
	calls := b.calls
	db.batchMu.Unlock()

	for len(calls) > 0 {
		ctx, cancel := allDone(calls)
		failed := -1
		err := db.Update(ctx, func(btx backend.Tx) error {
			failed = -1
			for i, c := range calls {
				if err := c.run(btx); err != nil {
					if btx.(*tx).failure() == nil {
						failed = i // fn's own failure, not the transaction's
					}
					return err
				}
			}
			return nil
		})
		cancel()
		if failed < 0 {
			for _, c := range calls {
				c.done <- err
			}
			return
		}
		calls[failed].done <- errTrySolo
		calls = append(calls[:failed:failed], calls[failed+1:]...)
	}
}

// run calls the member's fn unless its caller left.
func (c *call) run(t backend.Tx) (err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("pgstore: batch function panicked: %v", p)
		}
	}()
	return c.fn(t)
}

// allDone returns a context that ends once every call's context has ended:
// a batch goes on while anyone still waits for it.
func allDone(calls []*call) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	var left atomic.Int64
	left.Store(int64(len(calls)))
	stops := make([]func() bool, len(calls))
	for i, c := range calls {
		stops[i] = context.AfterFunc(c.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
