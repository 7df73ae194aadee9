package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"google.golang.org/protobuf/proto"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Redraw intervals of the progress line: in place on a terminal, a new line
// otherwise (logs, CI), the first one plainRedraw after the start, so that a
// quick operation logs only its items and summary.
const (
	terminalRedraw = 100 * time.Millisecond
	plainRedraw    = 5 * time.Second
	barWidth       = 20
	// rateAfter is how long an operation runs before rates and ETAs are
	// shown: over less they are noise (a 3 ms add is not 30,000 files/s).
	rateAfter = time.Second
)

// growingTotal names the phases in which items_total still grows (ingest's
// walk of the trees and refresh's listing of the items): they show what was
// found so far, without fraction, rate or ETA.
var growingTotal = map[string]bool{"walking": true, "listing": true}

// eraseLine returns to the start of the line and clears it.
const eraseLine = "\r\x1b[K"

// progressPrinter renders the events of an ingest stream for people: item
// lines and the summary on out; failures, missing sources and the progress
// line on errOut. It is hand-written rather than built on a progress-bar
// library: two ANSI sequences suffice, the line must interleave with item
// lines, and it must turn into throttled plain lines in logs.
type progressPrinter struct {
	out, errOut io.Writer
	terminal    bool             // errOut is a terminal: redraw one line in place
	width       int              // terminal columns; 0 means do not truncate
	now         func() time.Time // the clock, fake in tests
	start       time.Time        // when the first event arrived
	drawn       time.Time        // when the progress line was last printed
	shown       bool             // the progress line is on the screen
	last        *ctxdv1.IngestProgress
	tally       *ctxdv1.IngestSummary // the items seen, for a stream cut short
}

func newProgressPrinter(out, errOut io.Writer, terminal bool, width int, now func() time.Time) *progressPrinter {
	return &progressPrinter{out: out, errOut: errOut, terminal: terminal, width: width, now: now, tally: &ctxdv1.IngestSummary{}}
}

// seen notes the time of the first event, the base of the computed rate.
func (p *progressPrinter) seen() time.Time {
	t := p.now()
	if p.start.IsZero() {
		p.start = t
	}
	return t
}

// progress records pr and prints it unless the line was printed too
// recently or there is nothing to show yet.
func (p *progressPrinter) progress(pr *ctxdv1.IngestProgress) {
	t := p.seen()
	p.last = pr
	if pr.ItemsDone == 0 && pr.ItemsTotal == 0 {
		return
	}
	last, every := cmp.Or(p.drawn, p.start), plainRedraw
	if p.terminal {
		last, every = p.drawn, terminalRedraw
	}
	if !last.IsZero() && t.Sub(last) < every {
		return
	}
	p.draw(t)
}

func (p *progressPrinter) draw(t time.Time) {
	p.drawn = t
	if !p.terminal {
		fmt.Fprintf(p.errOut, "progress: %s\n", p.line(t))
		return
	}
	line := p.line(t)
	if p.width > 1 && len(line) >= p.width {
		line = line[:p.width-1] // a wrapped line cannot be redrawn in place
	}
	fmt.Fprint(p.errOut, eraseLine+line)
	p.shown = true
}

// line renders the last progress event, with a bar on a terminal:
// "ingesting [=========>          ]  50% 50/100 files, 400 chunks, 1.2 MB, 25 files/s, ETA 2s",
// or while the total grows "walking 120 files found, 1.2 MB".
func (p *progressPrinter) line(t time.Time) string {
	pr := p.last
	var b strings.Builder
	b.WriteString(cmp.Or(pr.Phase, "working"))
	if growingTotal[pr.Phase] {
		fmt.Fprintf(&b, " %d files found, %s", pr.ItemsTotal, humanBytes(pr.BytesTotal))
		return b.String()
	}
	done, total := pr.ItemsDone, pr.ItemsTotal
	switch {
	case total > 0 && p.terminal:
		frac := min(float64(done)/float64(total), 1)
		fmt.Fprintf(&b, " %s %3.0f%% %d/%d files", bar(frac), 100*frac, done, total)
	case total > 0:
		fmt.Fprintf(&b, " %d/%d files", done, total)
	default:
		fmt.Fprintf(&b, " %d files", done)
	}
	fmt.Fprintf(&b, ", %d chunks, %s", pr.ChunksDone, humanBytes(pr.BytesDone))
	elapsed := t.Sub(p.start)
	if elapsed < rateAfter || done == 0 {
		return b.String()
	}
	rate := cmp.Or(pr.ItemsPerSecond, float64(done)/elapsed.Seconds())
	fmt.Fprintf(&b, ", %s files/s", humanRate(rate))
	eta := pr.EtaSeconds
	if eta == 0 && total > done {
		eta = float64(total-done) / rate
	}
	if eta > 0 {
		fmt.Fprintf(&b, ", ETA %s", formatETA(time.Duration(min(eta, 1e8)*float64(time.Second))))
	}
	return b.String()
}

// item prints one item's line, clearing the progress line around it.
// Unchanged items are only counted.
func (p *progressPrinter) item(r *ctxdv1.IngestItemResult) {
	p.seen()
	p.count(r)
	ref := cmp.Or(r.Ref, r.Source)
	var line string
	w := p.out
	switch r.Action {
	case ctxdv1.IngestAction_INGEST_ACTION_UNCHANGED:
		return
	case ctxdv1.IngestAction_INGEST_ACTION_ADDED, ctxdv1.IngestAction_INGEST_ACTION_UPDATED:
		line = fmt.Sprintf("%-8s %s  (%d chunks to embed, %d reused)", actionWord(r.Action), ref, r.ChunksQueued, r.ChunksReused)
	case ctxdv1.IngestAction_INGEST_ACTION_MISSING, ctxdv1.IngestAction_INGEST_ACTION_FAILED:
		line, w = fmt.Sprintf("%-8s %s: %s", actionWord(r.Action), ref, r.ErrorMessage), p.errOut
		if hint := r.GetError().GetNextActionHint(); hint != "" {
			line += "\nhint: " + cliHint(hint)
		}
	default:
		line = fmt.Sprintf("%-8s %s", actionWord(r.Action), ref)
		if r.DuplicateOf != "" {
			line += "  (duplicate of " + r.DuplicateOf + ")"
		}
	}
	shown := p.shown
	p.clear()
	fmt.Fprintln(w, line)
	if shown {
		p.draw(p.now())
	}
}

// count adds an item to the tally.
func (p *progressPrinter) count(r *ctxdv1.IngestItemResult) {
	s := p.tally
	switch r.Action {
	case ctxdv1.IngestAction_INGEST_ACTION_ADDED:
		s.Added++
	case ctxdv1.IngestAction_INGEST_ACTION_UPDATED:
		s.Updated++
	case ctxdv1.IngestAction_INGEST_ACTION_UNCHANGED:
		s.Unchanged++
	case ctxdv1.IngestAction_INGEST_ACTION_SKIPPED:
		s.Skipped++
	case ctxdv1.IngestAction_INGEST_ACTION_MISSING:
		s.Missing++
	case ctxdv1.IngestAction_INGEST_ACTION_FAILED:
		s.Failed++
	}
	s.ChunksQueued += r.ChunksQueued
	s.ChunksReused += r.ChunksReused
}

// tallied is the summary of the items seen so far, for a stream that ended
// without one (an interrupted --watch).
func (p *progressPrinter) tallied() *ctxdv1.IngestSummary {
	s := proto.CloneOf(p.tally)
	s.Bytes = p.last.GetBytesDone()
	if !p.start.IsZero() {
		s.Seconds = p.now().Sub(p.start).Seconds()
	}
	return s
}

// summary clears the progress line and prints the closing summary:
// "added 120, updated 3, unchanged 20506, skipped 0, missing 1, failed 2;
// 4,512 chunks to embed, 830 reused; 310.2 MB in 41.3s (500 files/s)".
func (p *progressPrinter) summary(s *ctxdv1.IngestSummary) {
	p.clear()
	fmt.Fprintf(p.out, "added %d, updated %d, unchanged %d, skipped %d, missing %d, failed %d; ",
		s.Added, s.Updated, s.Unchanged, s.Skipped, s.Missing, s.Failed)
	fmt.Fprint(p.out, grouped.Sprintf("%d chunks to embed, %d reused; ", s.ChunksQueued, s.ChunksReused))
	fmt.Fprintf(p.out, "%s in %.1fs", humanBytes(s.Bytes), s.Seconds)
	if files := s.Added + s.Updated + s.Unchanged + s.Skipped + s.Missing + s.Failed; s.Seconds >= rateAfter.Seconds() && files > 0 {
		fmt.Fprintf(p.out, " (%s files/s)", humanRate(float64(files)/s.Seconds))
	}
	fmt.Fprintln(p.out)
}

// clear erases the progress line if it is shown.
func (p *progressPrinter) clear() {
	if p.shown {
		fmt.Fprint(p.errOut, eraseLine)
		p.shown = false
	}
}

// grouped prints numbers with thousands separators.
var grouped = message.NewPrinter(language.English)

func actionWord(a ctxdv1.IngestAction) string {
	return strings.ToLower(strings.TrimPrefix(a.String(), "INGEST_ACTION_"))
}

// bar draws frac (0 to 1) as "[=====>    ]".
func bar(frac float64) string {
	n := int(frac * barWidth)
	if n >= barWidth {
		return "[" + strings.Repeat("=", barWidth) + "]"
	}
	return "[" + strings.Repeat("=", n) + ">" + strings.Repeat(" ", barWidth-n-1) + "]"
}

// humanBytes formats n in decimal units: "999 B", "12.1 MB".
func humanBytes(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	unit := -1
	for f >= 999.95 && unit < len("kMGTPE")-1 {
		f /= 1000
		unit++
	}
	return fmt.Sprintf("%.1f %cB", f, "kMGTPE"[unit])
}

// humanRate keeps one decimal for slow rates: "0.4", "12", "850".
func humanRate(r float64) string {
	if r < 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.0f", r)
}

// formatETA rounds d to whole seconds: "21s", "3m05s", "1h02m".
func formatETA(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
}
