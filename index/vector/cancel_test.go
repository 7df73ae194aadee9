package vector

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// countCtx counts its Err polls and cancels itself at the first one.
type countCtx struct {
	context.Context
	cancel context.CancelFunc
	polls  atomic.Int64
}

func (c *countCtx) Err() error {
	c.polls.Add(1)
	c.cancel()
	return c.Context.Err()
}

func TestIndex_SearchContextStopsScanning(t *testing.T) {
	const dims, n = 8, 2 * minShardRows
	rng := rand.New(rand.NewPCG(1, 2))
	for _, quant := range []bool{false, true} {
		x := NewWithOptions(dims, Options{Shards: 2})
		if quant {
			x = NewQuantized(dims, 4)
		}
		for id := range uint64(n) {
			v := make([]float32, dims)
			for i := range v {
				v[i] = rng.Float32() - 0.5
			}
			if err := x.Upsert(id+1, v); err != nil {
				t.Fatal(err)
			}
		}
		q := []float32{1, 0, 0, 0, 0, 0, 0, 0}
		if hs, err := x.SearchContext(context.Background(), q, 5, nil); err != nil || len(hs) != 5 {
			t.Fatalf("quant %v: uncanceled: %d hits, %v", quant, len(hs), err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		c := &countCtx{Context: ctx, cancel: cancel}
		if _, err := x.SearchContext(c, q, 5, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("quant %v: err = %v, want context.Canceled", quant, err)
		}
		// Each shard polls once, sees the cancel and stops; scanning on
		// would poll once per scanCheckRows rows (n/scanCheckRows times).
		if p := c.polls.Load(); p > int64(x.shards)+1 {
			t.Fatalf("quant %v: %d polls for %d shards: the scan went on after the cancel", quant, p, x.shards)
		}
	}
}
