package search

import "time"

// Observer is told how long searches and their legs take (Options.Observe);
// the daemon turns that into metrics, which this package knows nothing of.
// Its methods are called on the search's goroutines: they must be cheap and
// safe for concurrent use.
type Observer interface {
	// ObserveLeg is called after a leg of one query ran, with how long it
	// took: BM25 and substring each, and the vector leg including the
	// query's embedding.
	ObserveLeg(leg Leg, took time.Duration)
	// ObserveSearch is called when Search returns, with the mode it ran in
	// (the requested one when it failed) and whether it failed.
	ObserveSearch(mode Mode, took time.Duration, failed bool)
}

// observeLeg reports leg's time since start to Options.Observe, if set.
func (e *Engine) observeLeg(leg Leg, start time.Time) {
	if o := e.opts.Observe; o != nil {
		o.ObserveLeg(leg, time.Since(start))
	}
}

// observeSearch reports a search's time since start to Options.Observe, if
// set; Search defers it.
func (e *Engine) observeSearch(req *Request, start time.Time, resp *Response, err *error) {
	o := e.opts.Observe
	if o == nil {
		return
	}
	mode := req.Mode
	if *err == nil {
		mode = resp.Mode
	}
	o.ObserveSearch(mode, time.Since(start), *err != nil)
}

// Positions returns the outbox sequence through which each index has
// applied every change: the lexical one (BM25 and substring) and the
// vector one. Applied is the lower of the two.
func (e *Engine) Positions() (lexical, vector uint64) {
	return e.fresh.lex.Load(), e.fresh.vec.Load()
}
