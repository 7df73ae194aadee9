package daemon

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// The benchmarks run a real daemon and call it over its unix socket with the
// generated client, as an agent harness would. Each reports latency
// percentiles (p50-ms, p99-ms) and throughput (ops/s) next to ns/op.

// latencies collects per-call durations from concurrent clients.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B, elapsed time.Duration) {
	slices.Sort(l.d)
	pct := func(p float64) float64 {
		return float64(l.d[int(p*float64(len(l.d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(l.d))/elapsed.Seconds(), "ops/s")
}

// runClients shares b.N calls among n concurrent clients and reports.
func runClients(b *testing.B, n int, call func(i int) error) {
	var next atomic.Int64
	var lat latencies
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	start := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := call(i); err != nil {
					failed.Store(err)
					return
				}
				lat.add(time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	lat.report(b, elapsed)
}

var sizes = []struct {
	name string
	n    int
}{{"1KB", 1 << 10}, {"100KB", 100 << 10}}

func BenchmarkRead(b *testing.B) {
	d := mustStart(b, testConfig(b))
	c := d.vfsClient(b)
	for _, size := range sizes {
		const items = 100
		content := strings.Repeat(strings.Repeat("x", 63)+"\n", size.n/64)
		for i := range items {
			writeText(b, c, fmt.Sprintf("/read%s/%d.txt", size.name, i), content)
		}
		for _, clients := range []int{1, 16} {
			b.Run(fmt.Sprintf("size=%s/clients=%d", size.name, clients), func(b *testing.B) {
				runClients(b, clients, func(i int) error {
					_, err := c.Read(context.Background(), &ctxdv1.ReadRequest{Ref: fmt.Sprintf("/read%s/%d.txt", size.name, i%items)})
					return err
				})
			})
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	d := mustStart(b, testConfig(b))
	c := d.vfsClient(b)
	for _, size := range sizes {
		content := strings.Repeat(strings.Repeat("y", 63)+"\n", size.n/64)
		for _, clients := range []int{1, 16} {
			b.Run(fmt.Sprintf("size=%s/clients=%d", size.name, clients), func(b *testing.B) {
				runClients(b, clients, func(i int) error {
					_, err := c.Write(context.Background(), &ctxdv1.WriteRequest{
						Ref:        fmt.Sprintf("/write%s/c%d/%d.txt", size.name, clients, i%1000),
						Body:       &ctxdv1.WriteRequest_Content{Content: content},
						OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE,
					})
					return err
				})
			})
		}
	}
}

func BenchmarkTree(b *testing.B) {
	d := mustStart(b, testConfig(b))
	c := d.vfsClient(b)
	const dirs, perDir = 100, 100
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perDir {
				writeText(b, c, fmt.Sprintf("tree:/dir%03d/item%03d.md", i, j), "# item\n")
			}
		}()
	}
	wg.Wait()
	b.Run("items=10000", func(b *testing.B) {
		runClients(b, 1, func(int) error {
			resp, err := c.Tree(context.Background(), &ctxdv1.TreeRequest{Ref: "tree:/", MaxDepth: 5, ItemsPerDir: 1000})
			if err == nil && len(resp.Root.Children) != dirs {
				err = fmt.Errorf("tree has %d dirs, want %d", len(resp.Root.Children), dirs)
			}
			return err
		})
	})
}
