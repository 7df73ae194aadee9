package pgstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
)

// benchWriters is how many goroutines write at once: the 16 clients of
// the store's throughput goal (≥ 1,000 item writes/s on 2 cores).
const benchWriters = 16

// itemWrite does what one item write of the store does to its buckets,
// about 20 operations: lookups of the path and the item (a miss for a new
// item), the drive counter, a cursor over the item's revisions, puts of
// metadata, content, path, revision records and an outbox entry with its
// sequence, and a delete.
func itemWrite(tx backend.Tx, id int) error {
	key := binary.BigEndian.AppendUint64(nil, uint64(id))
	path := fmt.Appendf(nil, "/notes/%08d.md", id)
	b := func(name string) backend.Bucket { return tx.Bucket([]byte(name)) }
	b("paths").Get(path)
	b("items").Get(key)
	drives := b("drives")
	count := drives.Get([]byte("agent"))
	var n uint64
	if count != nil {
		n = binary.BigEndian.Uint64(count)
	}
	c := b("revisions").Cursor()
	for k, _ := c.Seek(key); k != nil && bytes.HasPrefix(k, key); k, _ = c.Next() {
	}
	rev := binary.BigEndian.AppendUint64(bytes.Clone(key), 1)
	seq, err := b("outbox").NextSequence()
	if err != nil {
		return err
	}
	for _, put := range []struct {
		bucket     string
		key, value []byte
	}{
		{"items", key, bytes.Repeat([]byte("m"), 300)},
		{"content", key, bytes.Repeat([]byte("c"), 2000)},
		{"paths", path, key},
		{"drives", []byte("agent"), binary.BigEndian.AppendUint64(nil, n+1)},
		{"revisions", rev, bytes.Repeat([]byte("r"), 80)},
		{"revision_actors", append([]byte("agent"), rev...), nil},
		{"outbox", binary.BigEndian.AppendUint64(nil, seq), key},
		{"text", key, []byte("searchable text")},
	} {
		if err := b(put.bucket).Put(put.key, put.value); err != nil {
			return err
		}
	}
	return b("deleted").Delete(path)
}

var benchBuckets = []string{"paths", "items", "drives", "revisions", "outbox", "content", "revision_actors", "text", "deleted"}

// BenchmarkWrite runs item writes from benchWriters goroutines, each its
// own transaction (Update) or sharing them (Batch, as the store writes),
// half of them overwriting existing items, and reports item writes/s and
// the latency percentiles of one write.
func BenchmarkWrite(b *testing.B) {
	for _, mode := range []string{"batch", "update"} {
		b.Run(mode, func(b *testing.B) {
			db := open(b)
			const existing = 2000
			ctx := context.Background()
			if err := db.Update(ctx, func(tx backend.Tx) error {
				for _, name := range benchBuckets {
					if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
						return err
					}
				}
				for i := range existing {
					if err := itemWrite(tx, i); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			write := db.Batch
			if mode == "update" {
				write = db.Update
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, benchWriters)
			latencies := make([][]time.Duration, benchWriters)
			b.ResetTimer()
			for w := range benchWriters {
				wg.Go(func() {
					for {
						i := int(next.Add(1))
						if i > b.N {
							return
						}
						id := i
						if i%2 == 0 {
							id = i % existing // an overwrite
						} else {
							id = existing + i
						}
						start := time.Now()
						if err := write(ctx, func(tx backend.Tx) error { return itemWrite(tx, id) }); err != nil {
							errs <- err
							return
						}
						latencies[w] = append(latencies[w], time.Since(start))
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
			all := slices.Concat(latencies...)
			slices.Sort(all)
			for _, p := range []int{50, 99} {
				b.ReportMetric(float64(all[len(all)*p/100].Microseconds())/1000, fmt.Sprintf("p%d-ms", p))
			}
		})
	}
}
