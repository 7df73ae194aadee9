package vfs

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/benchenv"
	"github.com/ctxd/ctxd/internal/pgtest"
	"github.com/ctxd/ctxd/vfs/backend"
)

// BenchmarkHistory_Cost measures what history costs durable writes (make
// bench-history): 16 concurrent writers, each write an acknowledged,
// fsynced transaction, into a store with history off and one with it on.
// Every write overwrites one of its writer's 2 KB items with one line
// changed, so history archives the content each write replaces. A round
// alternates the modes in 5 slices each, so both see the same machine; a
// first slice per mode, not measured, creates the items. It prints writes/s
// and the bytes written per write (bbolt's pages; on PostgreSQL, what is
// sent to the server) per mode and round, then the bytes per write with
// the 16 writes in one transaction (independent of how many writes bbolt's
// batches gathered): on bbolt and, when CTXD_BENCH_HISTORY_BACKENDS names
// it ("bolt,postgres"), then on PostgreSQL, whose lines print first; last
// the line "history cost_pct=<median over rounds of (1 - on/off)*100>" of bbolt.
// CTXD_BENCH_HISTORY_ROUNDS (3) and CTXD_BENCH_HISTORY_WRITES (writes per
// writer and round, 200) size it.
func BenchmarkHistory_Cost(b *testing.B) {
	rounds, perWriter := benchenv.Int(b, "CTXD_BENCH_HISTORY_ROUNDS", 3), benchenv.Int(b, "CTXD_BENCH_HISTORY_WRITES", 200)
	backends := strings.Split(cmp.Or(os.Getenv("CTXD_BENCH_HISTORY_BACKENDS"), "bolt"), ",")
	// bbolt runs first, before a PostgreSQL server started for the other
	// run could still be checkpointing what it was sent, and prints last.
	slices.Sort(backends)
	var out strings.Builder
	for range b.N {
		out.Reset()
		var lines []string
		for _, be := range backends {
			var res strings.Builder
			var loc func() string
			switch be {
			case "bolt":
				loc = func() string { return filepath.Join(b.TempDir(), "ctxd.db") }
			case "postgres":
				loc = func() string { return pgtest.NewDatabase(b) }
			default:
				b.Fatalf("CTXD_BENCH_HISTORY_BACKENDS names %q: pass bolt, postgres or both, comma-separated", be)
			}
			costs := historyCost(b, loc, rounds, perWriter, &res)
			line := fmt.Sprintf("history cost_pct=%.1f\n", median(costs))
			if be != "bolt" {
				line = "history backend=" + be + line[len("history"):]
			}
			res.WriteString(line)
			lines = append(lines, res.String())
		}
		slices.Reverse(lines) // bbolt's last
		for _, l := range lines {
			out.WriteString(l)
		}
	}
	fmt.Print(out.String())
}

// historyCost runs rounds of 16 writers against a store with history off
// and one with it on (opened at locations loc returns), writing what each
// round measured to out, and returns each round's cost in percent.
func historyCost(b *testing.B, loc func() string, rounds, perWriter int, out *strings.Builder) []float64 {
	const writers, itemsPerWriter = 16, 4
	var stores [2]*Store
	for i, opts := range []Options{{HistoryOff: true}, {}} {
		s, err := Open(loc(), opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		if _, err := s.SetIndexing(ctx, paragraphChunker{"p1"}, "m1"); err != nil {
			b.Fatal(err)
		}
		stores[i] = s
	}
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("paragraph %d: what the agent learned while working on the task, kept for later\n", i))
	}
	body := func(w, i int) []byte {
		l := slices.Clone(lines)
		l[i%len(l)] = fmt.Sprintf("writer %d changed this line in write %d\n", w, i)
		return []byte(strings.Join(l, ""))
	}
	var next [2]int // per store: how many writes each writer has made
	// write is writer w's write number next[mode]+i into stores[mode].
	write := func(mode, w, i int) WriteParams {
		n := next[mode] + i
		return WriteParams{Ref: Ref{Drive: "agent", Path: fmt.Sprintf("/w%d/item%d.md", w, n%itemsPerWriter)},
			Content: body(w, n), IsText: true, OnConflict: ConflictOverwrite}
	}
	// slice has each writer write perSlice times into stores[mode]; it
	// returns the time taken and the bytes the process wrote (the store's
	// pages on bbolt; what is sent to the server on PostgreSQL).
	slice := func(mode, perSlice int) (time.Duration, int64) {
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		w0 := wchar(b)
		start := time.Now()
		for w := range writers {
			wg.Go(func() {
				for i := range perSlice {
					if _, err := stores[mode].Write(ctx, write(mode, w, i)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		d := time.Since(start)
		next[mode] += perSlice
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		return d, wchar(b) - w0
	}
	// Rounds alternate the modes in slices, so that load from elsewhere
	// on the machine falls on both alike.
	const slices = 5
	perSlice := max(perWriter/slices, 1)
	for mode := range stores { // unmeasured: the items, the file's first growth
		slice(mode, perSlice)
	}
	var costs []float64
	for r := range rounds {
		var took [2]time.Duration
		var wrote [2]int64
		for i := range 2 * slices {
			mode := (r + i) % 2
			d, n := slice(mode, perSlice)
			took[mode], wrote[mode] = took[mode]+d, wrote[mode]+n
		}
		writes := float64(slices * perSlice * writers)
		off, on := writes/took[0].Seconds(), writes/took[1].Seconds()
		costs = append(costs, 100*(1-on/off))
		fmt.Fprintf(out, "round %d: history off %.0f writes/s (%.1f KB written per write), on %.0f writes/s (%.1f KB), cost %.1f%%\n",
			r+1, off, float64(wrote[0])/writes/1024, on, float64(wrote[1])/writes/1024, costs[r])
	}
	// What concurrency leaves out: each writer's write in one transaction
	// of 16 (WriteBatch), so the bytes per write do not depend on how many
	// writes bbolt's batches happened to gather.
	var wrote [2]int64
	const batches = 25
	for mode := range stores {
		w0 := wchar(b)
		for range batches {
			ps := make([]WriteParams, writers)
			for w := range ps {
				ps[w] = write(mode, w, 0)
			}
			if _, err := stores[mode].WriteBatch(ctx, ps); err != nil {
				b.Fatal(err)
			}
			next[mode]++
		}
		wrote[mode] = wchar(b) - w0
	}
	fmt.Fprintf(out, "in transactions of 16 writes: history off %.1f KB written per write, on %.1f KB\n",
		float64(wrote[0])/(batches*writers)/1024, float64(wrote[1])/(batches*writers)/1024)
	return costs
}

// median returns the middle of xs (the mean of the two middle ones when even).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
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
		for _, name := range []string{bucketRevs, bucketRevActor, bucketDeleted, bucketBlobs, bucketRepack} {
			n += tx.Bucket([]byte(name)).Stats().Used
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// wchar returns the bytes this process has passed to write calls.
func wchar(b *testing.B) int64 {
	io, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Fatal(err)
	}
	for l := range strings.Lines(string(io)) {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("/proc/self/io has no wchar")
	return 0
}

// BenchmarkHistory_Read is what reading history costs on bbolt and on
// PostgreSQL in the same run (make bench-history), where an item's
// revisions are a chain of point reads (a round trip each on PostgreSQL):
// a 10 KB item edited 200 times, one line each, then pruned once (its
// archived content stored as deltas). The cases list a page of 50
// revisions (the newest, and the one before revision 100) and read the
// content of the oldest revision.
func BenchmarkHistory_Read(b *testing.B) {
	const edits = 200
	for _, backend := range []string{"bolt", "postgres"} {
		b.Run("backend="+backend, func(b *testing.B) {
			s := openBenchStore(b, backend)
			ref := Ref{Drive: "agent", Path: "/notes.md"}
			lines := tenKBLines()
			if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(strings.Join(lines, "")), IsText: true}); err != nil {
				b.Fatal(err)
			}
			for i := range edits {
				line := int64(i*37%len(lines)) + 1
				if _, err := s.Edit(ctx, ref, []Patch{{StartLine: line, EndLine: line, Content: fmt.Sprintf("edit %d replaced this line", i)}}, ""); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := s.PruneHistory(ctx); err != nil {
				b.Fatal(err)
			}
			for _, c := range []struct {
				name string
				run  func() (int, error)
			}{
				{"list=newest-50", func() (int, error) { revs, err := s.History(ctx, ref, 50, 0); return len(revs), err }},
				{"list=50-before-100", func() (int, error) { revs, err := s.History(ctx, ref, 50, 100); return len(revs), err }},
				{"read=oldest", func() (int, error) { _, body, err := s.ReadRevision(ctx, ref, 1); return len(body), err }},
			} {
				b.Run(c.name, func(b *testing.B) {
					for range b.N {
						if n, err := c.run(); err != nil || n == 0 {
							b.Fatalf("%s: %d, %v", c.name, n, err)
						}
					}
				})
			}
		})
	}
}
