package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// newTestPrinter writes items and progress to one buffer, so tests see their order.
func newTestPrinter(terminal bool) (*progressPrinter, *bytes.Buffer, *fakeClock) {
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	return newProgressPrinter(&buf, &buf, terminal, 0, clock.now), &buf, clock
}

func TestProgressPrinter_ProgressBar(t *testing.T) {
	p, buf, clock := newTestPrinter(true)
	p.progress(&ctxdv1.IngestProgress{Phase: "reading", ItemsTotal: 100})
	clock.advance(2 * time.Second)
	buf.Reset()
	p.progress(&ctxdv1.IngestProgress{
		Phase: "reading", ItemsDone: 50, ItemsTotal: 100, ChunksDone: 400, BytesDone: 1_234_567,
		ItemsPerSecond: 25, EtaSeconds: 2,
	})
	want := eraseLine + "reading [==========>         ]  50% 50/100 files, 400 chunks, 1.2 MB, 25 files/s, ETA 2s"
	if got := buf.String(); got != want {
		t.Errorf("progress line\n got %q\nwant %q", got, want)
	}
}

func TestProgressPrinter_ProgressComputedRate(t *testing.T) {
	p, buf, clock := newTestPrinter(false)
	p.progress(&ctxdv1.IngestProgress{Phase: "reading", ItemsDone: 0, ItemsTotal: 300})
	clock.advance(6 * time.Second)
	buf.Reset()
	// Without items_per_second and eta_seconds, both come from the first event's time.
	p.progress(&ctxdv1.IngestProgress{Phase: "reading", ItemsDone: 120, ItemsTotal: 300, ChunksDone: 5400, BytesDone: 12_100_000})
	want := "progress: reading 120/300 files, 5400 chunks, 12.1 MB, 20 files/s, ETA 9s\n"
	if got := buf.String(); got != want {
		t.Errorf("progress line\n got %q\nwant %q", got, want)
	}
}

// TestProgressPrinter_NothingYet prints no line for an operation that has
// found nothing yet.
func TestProgressPrinter_NothingYet(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		p, buf, _ := newTestPrinter(terminal)
		p.progress(&ctxdv1.IngestProgress{Phase: "walking"})
		p.progress(&ctxdv1.IngestProgress{Phase: "listing"})
		if buf.Len() != 0 {
			t.Errorf("terminal %v: printed %q before anything was found", terminal, buf.String())
		}
	}
}

// TestProgressPrinter_Walking counts the files a walk has found, with no
// fraction, rate or ETA: the total still grows.
func TestProgressPrinter_Walking(t *testing.T) {
	p, buf, clock := newTestPrinter(false)
	p.progress(&ctxdv1.IngestProgress{Phase: "walking", ItemsTotal: 3})
	clock.advance(10 * time.Second)
	buf.Reset()
	p.progress(&ctxdv1.IngestProgress{Phase: "walking", ItemsDone: 2, ItemsTotal: 120, BytesTotal: 1_200_000, ItemsPerSecond: 50, EtaSeconds: 3})
	if got, want := buf.String(), "progress: walking 120 files found, 1.2 MB\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestProgressPrinter_NoRateAtFirst leaves rate and ETA out until a second
// has passed: over less they are noise.
func TestProgressPrinter_NoRateAtFirst(t *testing.T) {
	p, buf, clock := newTestPrinter(true)
	p.progress(&ctxdv1.IngestProgress{Phase: "reading", ItemsDone: 1, ItemsTotal: 100, ItemsPerSecond: 1000, EtaSeconds: 0.1})
	clock.advance(500 * time.Millisecond)
	p.progress(&ctxdv1.IngestProgress{Phase: "reading", ItemsDone: 2, ItemsTotal: 100, ItemsPerSecond: 4, EtaSeconds: 24.5})
	want := eraseLine + "reading [>                   ]   1% 1/100 files, 0 chunks, 0 B" +
		eraseLine + "reading [>                   ]   2% 2/100 files, 0 chunks, 0 B"
	if got := buf.String(); got != want {
		t.Errorf("first second\n got %q\nwant %q", got, want)
	}
	clock.advance(4500 * time.Millisecond)
	buf.Reset()
	p.progress(&ctxdv1.IngestProgress{Phase: "reading", ItemsDone: 50, ItemsTotal: 100})
	if got, want := buf.String(), eraseLine+"reading [==========>         ]  50% 50/100 files, 0 chunks, 0 B, 10 files/s, ETA 5s"; got != want {
		t.Errorf("after 5s\n got %q\nwant %q", got, want)
	}
}

// TestProgressPrinter_QuickPlain logs no progress line for an operation
// shorter than the plain redraw interval: its items and summary say it all.
func TestProgressPrinter_QuickPlain(t *testing.T) {
	p, buf, clock := newTestPrinter(false)
	p.progress(&ctxdv1.IngestProgress{Phase: "ingesting", ItemsTotal: 30})
	clock.advance(40 * time.Millisecond)
	p.progress(&ctxdv1.IngestProgress{Phase: "ingesting", ItemsDone: 30, ItemsTotal: 30})
	if buf.Len() != 0 {
		t.Errorf("printed %q", buf.String())
	}
}

// TestProgressPrinter_SummaryRate gives a rate only for runs of a second or more.
func TestProgressPrinter_SummaryRate(t *testing.T) {
	for _, tt := range []struct {
		seconds float64
		want    string
	}{
		{0.001, "411 B in 0.0s\n"},
		{2, "411 B in 2.0s (15 files/s)\n"},
	} {
		p, buf, _ := newTestPrinter(false)
		p.summary(&ctxdv1.IngestSummary{Added: 30, Bytes: 411, Seconds: tt.seconds})
		if got := buf.String(); !strings.HasSuffix(got, tt.want) {
			t.Errorf("summary after %gs = %q, want it to end %q", tt.seconds, got, tt.want)
		}
	}
}

func TestProgressPrinter_ProgressUnknownTotal(t *testing.T) {
	p, buf, _ := newTestPrinter(true)
	p.progress(&ctxdv1.IngestProgress{ItemsDone: 7, BytesDone: 10})
	if got, want := buf.String(), eraseLine+"working 7 files, 0 chunks, 10 B"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestProgressPrinter_ProgressThrottle(t *testing.T) {
	for _, tc := range []struct {
		name     string
		terminal bool
		gap      time.Duration
		want     int // progress lines printed
	}{
		{"plain 1s apart", false, time.Second, 0}, // the first plain line comes 5s after the start
		{"plain 6s apart", false, 6 * time.Second, 1},
		{"terminal 50ms apart", true, 50 * time.Millisecond, 1},
		{"terminal 200ms apart", true, 200 * time.Millisecond, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, buf, clock := newTestPrinter(tc.terminal)
			p.progress(&ctxdv1.IngestProgress{Phase: "reading", ItemsDone: 1, ItemsTotal: 10})
			clock.advance(tc.gap)
			p.progress(&ctxdv1.IngestProgress{Phase: "reading", ItemsDone: 2, ItemsTotal: 10})
			marker := "progress: "
			if tc.terminal {
				marker = eraseLine
			}
			if got := strings.Count(buf.String(), marker); got != tc.want {
				t.Errorf("printed %d times, want %d:\n%q", got, tc.want, buf.String())
			}
			if !tc.terminal && strings.ContainsAny(buf.String(), "\r[%") {
				t.Errorf("plain progress has terminal controls or a bar: %q", buf.String())
			}
		})
	}
}

func TestProgressPrinter_Item(t *testing.T) {
	p, buf, clock := newTestPrinter(true)
	p.progress(&ctxdv1.IngestProgress{Phase: "reading", ItemsDone: 1, ItemsTotal: 4})
	clock.advance(10 * time.Millisecond)
	buf.Reset()
	p.item(&ctxdv1.IngestItemResult{Ref: "disk:/abs/a.md", Action: ctxdv1.IngestAction_INGEST_ACTION_ADDED, ChunksQueued: 12, ChunksReused: 3})
	got := buf.String()
	wantPrefix := eraseLine + "added    disk:/abs/a.md  (12 chunks to embed, 3 reused)\n" + eraseLine + "reading "
	if !strings.HasPrefix(got, wantPrefix) {
		t.Errorf("item over a progress line\n got %q\nwant prefix %q", got, wantPrefix)
	}
}

func TestProgressPrinter_ItemStreams(t *testing.T) {
	var out, errOut bytes.Buffer
	p := newProgressPrinter(&out, &errOut, false, 0, time.Now)
	for _, r := range []*ctxdv1.IngestItemResult{
		{Ref: "disk:/a", Action: ctxdv1.IngestAction_INGEST_ACTION_UPDATED, ChunksQueued: 1},
		{Ref: "disk:/b", Action: ctxdv1.IngestAction_INGEST_ACTION_UNCHANGED},
		{Ref: "disk:/c", Action: ctxdv1.IngestAction_INGEST_ACTION_SKIPPED},
		{Ref: "disk:/d", Action: ctxdv1.IngestAction_INGEST_ACTION_MISSING, ErrorMessage: "no such file"},
		{Source: "https://e.com/x", Action: ctxdv1.IngestAction_INGEST_ACTION_FAILED, ErrorMessage: "HTTP 500"},
	} {
		p.item(r)
	}
	if want := "updated  disk:/a  (1 chunks to embed, 0 reused)\nskipped  disk:/c\n"; out.String() != want {
		t.Errorf("stdout\n got %q\nwant %q", out.String(), want)
	}
	if want := "missing  disk:/d: no such file\nfailed   https://e.com/x: HTTP 500\n"; errOut.String() != want {
		t.Errorf("stderr\n got %q\nwant %q", errOut.String(), want)
	}
	s := p.tallied()
	if s.Updated != 1 || s.Unchanged != 1 || s.Skipped != 1 || s.Missing != 1 || s.Failed != 1 || s.ChunksQueued != 1 {
		t.Errorf("tally = %v", s)
	}
}

func TestProgressPrinter_Summary(t *testing.T) {
	p, buf, _ := newTestPrinter(true)
	p.progress(&ctxdv1.IngestProgress{Phase: "embedding", ItemsDone: 1, ItemsTotal: 2})
	buf.Reset()
	p.summary(&ctxdv1.IngestSummary{
		Added: 120, Updated: 3, Unchanged: 20506, Skipped: 0, Missing: 1, Failed: 2,
		ChunksQueued: 4512, ChunksReused: 830, Bytes: 310_200_000, Seconds: 41.3,
	})
	want := eraseLine + "added 120, updated 3, unchanged 20506, skipped 0, missing 1, failed 2; " +
		"4,512 chunks to embed, 830 reused; 310.2 MB in 41.3s (500 files/s)\n"
	if got := buf.String(); got != want {
		t.Errorf("summary\n got %q\nwant %q", got, want)
	}
	if p.shown {
		t.Error("progress line still marked shown after the summary")
	}
}

func TestProgress_formatETA(t *testing.T) {
	for d, want := range map[time.Duration]string{
		400 * time.Millisecond:   "0s",
		21 * time.Second:         "21s",
		59600 * time.Millisecond: "1m00s",
		185 * time.Second:        "3m05s",
		3720 * time.Second:       "1h02m",
		50 * time.Hour:           "50h00m",
	} {
		if got := formatETA(d); got != want {
			t.Errorf("formatETA(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestProgress_humanBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0:                 "0 B",
		999:               "999 B",
		1000:              "1.0 kB",
		12_100_000:        "12.1 MB",
		999_960:           "1.0 MB",
		310_249_999:       "310.2 MB",
		3 * 1_000_000_000: "3.0 GB",
	} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
