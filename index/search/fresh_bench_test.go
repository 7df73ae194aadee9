package search

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkEngine_ReadYourWrites measures what reading one's writes costs,
// over CTXD_BENCH_RYW_ITEMS notes (default 5,000), in bm25 mode:
//   - idle: searches with nothing pending, the wait on and off in
//     alternate searches (so that drift on a shared machine hits both
//     alike): p50/p99 of each, and p50/p99 of the wait's own check;
//   - write-then-search: a write followed at once by a search for the word
//     only it holds, the wait on and off alternately: the search's and the
//     pair's p50/p99 with the wait, and the share of searches that missed
//     their write without it.
func BenchmarkEngine_ReadYourWrites(b *testing.B) {
	n := 5000
	if s := os.Getenv("CTXD_BENCH_RYW_ITEMS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("CTXD_BENCH_RYW_ITEMS: %v", err)
		}
	}
	e := newEnv(b)
	e.reopen(Options{})
	vocab := fillNotes(e, n)
	e.sync()
	ctx := context.Background()
	on, off := DefaultWriteWait, time.Duration(-1)
	search := func(text string) (Response, time.Duration) {
		t0 := time.Now()
		resp, err := e.eng.Search(ctx, Request{Mode: BM25, Queries: []Query{{Text: text}}, Limit: 10})
		if err != nil {
			b.Fatal(err)
		}
		return resp, time.Since(t0)
	}

	b.Run(fmt.Sprintf("idle/items=%d", n), func(b *testing.B) {
		var withWait, without, check []time.Duration
		i := 0
		for b.Loop() {
			q := vocab[i%len(vocab)] + " " + vocab[(i*7+3)%len(vocab)]
			e.eng.opts.WriteWait = []time.Duration{on, off}[i%2]
			resp, d := search(q)
			if resp.Stale != "" {
				b.Fatalf("stale with nothing pending: %s", resp.Stale)
			}
			if i%2 == 0 {
				withWait = append(withWait, d)
				t0 := time.Now()
				if _, err := e.eng.awaitWrites(ctx, true, true); err != nil {
					b.Fatal(err)
				}
				check = append(check, time.Since(t0))
			} else {
				without = append(without, d)
			}
			i++
		}
		e.eng.opts.WriteWait = on
		reportPercentiles(b, withWait, "wait")
		reportPercentiles(b, without, "nowait")
		reportPercentiles(b, check, "check")
	})

	written := 0 // across runs (-count), which share the index: every note is new
	b.Run(fmt.Sprintf("write-then-search/items=%d", n), func(b *testing.B) {
		var searchLat, pairLat []time.Duration
		missed, withoutWait := 0, 0
		i := 0
		for b.Loop() {
			word := fmt.Sprintf("fresh%07dword", written)
			path := fmt.Sprintf("/fresh/%07d.md", written)
			written++
			wait := []time.Duration{on, off}[i%2]
			e.eng.opts.WriteWait = wait
			t0 := time.Now()
			e.write("notes:"+path, "written then searched: "+word)
			resp, d := search(word)
			pair := time.Since(t0)
			found := len(resp.Results) > 0 && resp.Results[0].Path == path
			if wait == on {
				if !found {
					b.Fatalf("write %d not found with the wait (stale %q)", i, resp.Stale)
				}
				searchLat, pairLat = append(searchLat, d), append(pairLat, pair)
			} else {
				withoutWait++
				if !found {
					missed++
				}
			}
			i++
		}
		e.eng.opts.WriteWait = on
		reportPercentiles(b, searchLat, "search")
		reportPercentiles(b, pairLat, "pair")
		if withoutWait > 0 {
			b.ReportMetric(100*float64(missed)/float64(withoutWait), "missed-without-wait-%")
		}
	})
}

// reportPercentiles reports the p50 and p99 of lat in microseconds, named
// after what.
func reportPercentiles(b *testing.B, lat []time.Duration, what string) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Nanoseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), what+"-p50-us")
	b.ReportMetric(pct(0.99), what+"-p99-us")
}
