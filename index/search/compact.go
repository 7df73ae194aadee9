package search

import (
	"context"
	"errors"
	"time"
)

// DefaultCompactIdle is how long the lexical index goes without a write
// before the engine compacts it (Options.CompactIdle).
//
// A bulk ingest leaves the lexical index in about ten segments, and every
// search pays for each: both lexical legs look every query term up in every
// segment and walk a posting iterator per segment, and the substring leg
// expands each query word into up to lexical.MaxSubstringWords terms. On
// 100k wikipedia chunks, merging them into one (1.3 s on one core) took the
// daemon's BM25-mode searches from 2.7 to 2.1 ms at the median and from
// 10.6 to 7.9 ms at p99. Merging waits for a quiet index so that it
// never competes with an ingest, whose own merges Bleve keeps doing.
const DefaultCompactIdle = 5 * time.Second

// compaction is a lexical.Index.Compact running beside the run goroutine.
type compaction struct {
	cancel context.CancelFunc
	done   chan error // its result; buffered, so the compaction never waits
	start  time.Time
}

// compactTimer fires once the lexical index has gone CompactIdle without a
// write, unless compacting was considered since that write or is under way;
// otherwise it is nil and never fires.
func (e *Engine) compactTimer() <-chan time.Time {
	if e.opts.CompactIdle < 0 || e.compactChecked || e.compaction != nil || e.rebuildLex {
		return nil
	}
	return time.After(time.Until(e.lexWrittenAt.Add(e.opts.CompactIdle)))
}

// compactDone yields the running compaction's result; nil when none runs.
func (e *Engine) compactDone() <-chan error {
	if e.compaction == nil {
		return nil
	}
	return e.compaction.done
}

// maybeCompact starts compacting the lexical index when that pays
// (lexical.Segments.Worth). The merge runs beside the run goroutine, which
// goes on applying writes; a write meanwhile lands in a segment of its own.
func (e *Engine) maybeCompact(ctx context.Context) {
	e.compactChecked = true
	seg, err := e.lex.Segments()
	if err != nil {
		e.log.Warn("lexical index segments unknown; not compacting", "err", err)
		return
	}
	if !seg.Worth() {
		return
	}
	cctx, cancel := context.WithCancel(ctx)
	c := &compaction{cancel: cancel, done: make(chan error, 1), start: time.Now()}
	lex := e.lex
	go func() { c.done <- lex.Compact(cctx) }()
	e.compaction = c
	e.setCompacting(true)
	e.log.Info("compacting the lexical index", "segments", seg.Count, "documents", seg.Docs, "deleted", seg.Deleted)
}

// compacted ends the running compaction with its result.
func (e *Engine) compacted(err error) {
	c := e.compaction
	e.compaction = nil
	c.cancel()
	e.setCompacting(false)
	switch {
	case errors.Is(err, context.Canceled):
	case err != nil:
		e.log.Warn("compacting the lexical index failed; searches use its segments as they are", "err", err)
	default:
		seg, _ := e.lex.Segments()
		e.log.Info("compacted the lexical index", "segments", seg.Count, "took", time.Since(c.start).Round(time.Millisecond))
	}
}

// stopCompaction cancels a running compaction and waits for it to end.
func (e *Engine) stopCompaction() {
	if c := e.compaction; c != nil {
		c.cancel()
		e.compacted(<-c.done)
	}
}

func (e *Engine) setCompacting(on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state.Compacting = on
}
