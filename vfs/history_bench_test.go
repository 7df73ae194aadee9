package vfs

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
)

// BenchmarkHistory_WriteThroughput measures durable writes (each an
// acknowledged, fsynced transaction) from 16 concurrent writers with
// history on and off, in alternating rounds so both see the same machine.
// Every write overwrites one of its writer's 2 KB items with one line
// changed, so history archives the content each write replaces. Reported:
// writes/s per mode and the cost of history (goal: at most 15%).
func BenchmarkHistory_WriteThroughput(b *testing.B) {
	const writers, perWriter, itemsPerWriter = 16, 100, 4
	stores := [2]*Store{mustOpenStore(b, Options{HistoryOff: true}), mustOpenStore(b)}
	for _, s := range stores {
		if _, err := s.SetIndexing(ctx, paragraphChunker{"p1"}, "m1"); err != nil {
			b.Fatal(err)
		}
	}
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("paragraph %d: what the agent learned while working on the task, kept for later\n", i))
	}
	body := func(w, i int) []byte {
		l := append([]string(nil), lines...)
		l[i%len(l)] = fmt.Sprintf("writer %d changed this line in write %d\n", w, i)
		return []byte(strings.Join(l, ""))
	}
	round := func(s *Store, r int) time.Duration {
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		start := time.Now()
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					n := r*perWriter + i
					_, err := s.Write(ctx, WriteParams{Ref: Ref{Drive: "agent", Path: fmt.Sprintf("/w%d/item%d.md", w, n%itemsPerWriter)},
						Content: body(w, n), IsText: true, OnConflict: ConflictOverwrite})
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		d := time.Since(start)
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		return d
	}
	var took [2]time.Duration
	b.ResetTimer()
	for r := range b.N {
		for j := range 2 {
			mode := (r + j) % 2 // alternate which mode goes first
			took[mode] += round(stores[mode], r)
		}
	}
	b.StopTimer()
	writes := float64(b.N * writers * perWriter)
	off, on := writes/took[0].Seconds(), writes/took[1].Seconds()
	b.ReportMetric(off, "off-writes/s")
	b.ReportMetric(on, "on-writes/s")
	b.ReportMetric(100*(1-on/off), "history-cost-%")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkHistory_BytesPerEdit measures the disk bytes one revision costs
// when a 10 KB text item gets one-line edits: the growth of the bbolt
// file's pages in use over many edits, divided by the edits, with history on
// (before and after PruneHistory) and, for comparison, off; and the bytes
// the history buckets hold per revision. (The file itself grows in 16 MB
// steps, too coarse to divide.)
func BenchmarkHistory_BytesPerEdit(b *testing.B) {
	const edits = 1000
	measure := func(opts Options) (usedPerEdit, historyPerRev, beforeRepack float64) {
		s := mustOpenStore(b, opts)
		ref := Ref{Drive: "agent", Path: "/notes.md"}
		lines := tenKBLines()
		if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(strings.Join(lines, "")), IsText: true}); err != nil {
			b.Fatal(err)
		}
		used0 := storeBytes(b, s)
		for i := range edits {
			line := int64(i*37%len(lines)) + 1
			if _, err := s.Edit(ctx, ref, []Patch{{StartLine: line, EndLine: line, Content: fmt.Sprintf("edit %d replaced this line", i)}}, ""); err != nil {
				b.Fatal(err)
			}
		}
		usedBefore := storeBytes(b, s)
		if _, err := s.PruneHistory(ctx); err != nil { // stores the archived content as deltas
			b.Fatal(err)
		}
		used1 := storeBytes(b, s)
		return float64(used1-used0) / edits, float64(historyBytes(b, s)) / (edits + 1), float64(usedBefore-used0) / edits
	}
	var on, off [3]float64
	for range b.N {
		on[0], on[1], on[2] = measure(Options{})
		off[0], off[1], off[2] = measure(Options{HistoryOff: true})
	}
	b.ReportMetric(on[0], "disk-B/rev")
	b.ReportMetric(on[2], "disk-B/rev-before-prune")
	b.ReportMetric(off[0], "disk-B/edit-history-off")
	b.ReportMetric(on[1], "history-buckets-B/rev")
	b.ReportMetric(0, "ns/op")
}

// storeBytes returns the bytes of the pages s uses.
func storeBytes(b *testing.B, s *Store) (used int64) {
	b.Helper()
	u, err := s.db.Usage(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return u.Size - u.Free
}

// historyBytes returns the bytes the history buckets' pages hold.
func historyBytes(b *testing.B, s *Store) int64 {
	b.Helper()
	var n int64
	err := s.db.View(ctx, func(tx backend.Tx) error {
		for _, name := range []string{bucketRevs, bucketRevLog, bucketRevActor, bucketDeleted, bucketBlobs, bucketRepack} {
			n += tx.Bucket([]byte(name)).Stats().Used
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}
