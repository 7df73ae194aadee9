package embed

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// windowBatches is how many batches' worth of texts a caller tokenizes and
// sorts by length at a time. Larger windows pad less; the window also
// bounds the token ids a caller holds (two windows: the one queued and the
// next, tokenized while the worker runs the first).
const windowBatches = 8

// documentShare is the part of the worker's time documents get while
// queries keep arriving: with queries and documents both waiting, and
// documents owed time, the worker runs one small document batch before the
// next query batch. It must stay below 0.5: a query never waits behind two
// document runs. 45%, not less: under 64 clients searching back to back on
// two cores the searches' own CPU slows every run, and 30% of the worker's
// time gave the backlog only 15% of its quiet rate (make bench-load).
const documentShare = 0.45

// bulkQuiet is how long after the last query the Background backlog runs in
// bulk batches (Options.BulkBatchTokens): a search session keeps the worker
// on the small runs a query waits behind.
const bulkQuiet = 5 * time.Second

// Priority orders the worker's queues. At every batch boundary the worker
// runs the highest priority that has texts waiting, except that documents
// (Prompt, then Background) get documentShare of the worker's time while
// queries keep arriving: a query waits for at most the one batch in flight,
// one small document batch, and the queries queued before it.
type Priority int

// Priorities, lowest first.
const (
	// Background is the ingest backlog: document texts nobody waits for.
	Background Priority = iota
	// Prompt is document texts a caller waits for, such as an explicit
	// re-embed of a few items: they go ahead of the backlog.
	Prompt
	// Query is search queries, embedded with the query prefix; queries
	// waiting together share batches.
	Query
	numPriorities
)

// Worker is the one goroutine that owns a Model. Callers from many goroutines
// submit texts with Embed; each caller tokenizes its own texts (a window at a
// time), and the worker groups them into batches bounded by Options.MaxBatch
// and Options.MaxBatchTokens, so a run's memory and duration are bounded
// whatever the callers submit. Query texts go ahead of waiting documents,
// and Prompt documents ahead of the Background backlog, at batch
// boundaries; while queries keep arriving, documents still get
// documentShare of the worker's time in small runs. While no query has come
// for bulkQuiet, Background runs take up to Options.BulkBatchTokens; a query
// arriving during such a run stops it (its texts run again later), so it
// never waits behind one.
type Worker struct {
	m    *Model
	spec Spec

	mu     sync.Mutex
	queues [numPriorities][]*request // requests with texts not yet taken into a batch, FIFO
	// retry holds the texts of a stopped bulk run, to run before the rest
	// of the Background queue.
	retry     []slot
	lastQuery time.Time // when the last Query request was submitted
	bulkRun   bool      // a bulk run is in flight
	stopping  bool      // the bulk run in flight was told to stop
	preempted int       // bulk runs stopped for a query
	closed    bool
	// credit is the worker time documents are owed: query runs add
	// documentShare/(1-documentShare) of their duration while documents
	// wait; document runs taken ahead of a waiting query (fair runs)
	// subtract theirs. It is reset when no document waits.
	credit  time.Duration
	fair    bool             // the run in flight (or the last one) is a fair run
	accrues bool             // the run in flight is a query run with documents waiting
	now     func() time.Time // times runs and queries (tests replace it)
	stats   Stats

	wake   chan struct{} // a request was queued; capacity 1
	quit   chan struct{}
	exited chan struct{}

	closeOnce sync.Once
	closeErr  error
	pending   atomic.Int64
}

// request is one window of an Embed call. The worker goroutine owns every
// field after submission; the caller reads err only after done closes.
type request struct {
	ctx   context.Context
	prio  Priority
	items []item      // tokenized texts, shortest first
	out   [][]float32 // the window's vectors, indexed by item.i

	submitted time.Time // when it was queued
	next      int       // first item not yet taken into a batch
	left      int       // items not yet embedded
	finished  bool      // done closed
	err       error
	done      chan struct{}
}

// item is one tokenized text of a request.
type item struct {
	i   int // index into request.out
	ids []int64
}

// slot is one item of a batch.
type slot struct {
	r *request
	k int // index into r.items
}

// NewWorker starts the goroutine that owns m. Close stops it and closes m.
func NewWorker(m *Model) *Worker {
	w := &Worker{
		m:      m,
		spec:   m.Spec(),
		wake:   make(chan struct{}, 1),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
		now:    time.Now,
		stats:  Stats{QueryWaitBuckets: make([]int64, len(queryWaitBounds))},
	}
	go w.loop()
	return w
}

// Spec returns the model's description.
func (w *Worker) Spec() Spec { return w.spec }

// Pending returns the number of texts queued and not yet embedded.
func (w *Worker) Pending() int { return int(w.pending.Load()) }

// Embed returns one vector per text, in order (see Model.Embed), however many
// texts there are: query texts at Query priority, documents at Background
// priority. It returns ctx's error if ctx ends first (the texts not yet run
// are then dropped without running) and ErrClosed after Close.
func (w *Worker) Embed(ctx context.Context, texts []string, query bool) ([][]float32, error) {
	p := Background
	if query {
		p = Query
	}
	return w.EmbedAt(ctx, texts, p)
}

// EmbedAt is Embed at priority p; texts are documents unless p is Query.
func (w *Worker) EmbedAt(ctx context.Context, texts []string, p Priority) ([][]float32, error) {
	select {
	case <-w.quit:
		return nil, ErrClosed
	default:
	}
	if p < Background || p >= numPriorities {
		return nil, fmt.Errorf("embed: unknown priority %d", p)
	}
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	// Windows still queued when this returns early are dropped unrun.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := newVectors(len(texts), w.spec.Dimensions)
	step := windowBatches * w.m.opts.MaxBatch
	var prev *request
	for start := 0; start < len(texts); start += step {
		end := min(start+step, len(texts))
		r := w.newRequest(ctx, texts[start:end], out[start:end], p)
		if err := w.submit(r); err != nil {
			return nil, err
		}
		if prev != nil {
			if err := wait(ctx, prev); err != nil {
				return nil, err
			}
		}
		prev = r
	}
	if err := wait(ctx, prev); err != nil {
		return nil, err
	}
	return out, nil
}

// newRequest tokenizes a window in the caller's goroutine, sorted by length
// so that similar lengths share a batch.
func (w *Worker) newRequest(ctx context.Context, texts []string, out [][]float32, p Priority) *request {
	items := make([]item, len(texts))
	for i, t := range texts {
		items[i] = item{i: i, ids: w.m.encode(t, p == Query)}
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(len(a.ids), len(b.ids)) })
	return &request{ctx: ctx, prio: p, items: items, out: out, left: len(items), done: make(chan struct{})}
}

// submit queues r and wakes the worker.
func (w *Worker) submit(r *request) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	r.submitted = w.now()
	w.queues[r.prio] = append(w.queues[r.prio], r)
	w.pending.Add(int64(len(r.items)))
	if r.prio == Query {
		w.lastQuery = r.submitted
		if w.bulkRun && !w.stopping {
			// ORT checks the flag between kernels: the run ends within
			// about a millisecond.
			w.stopping = true
			w.m.terminate()
		}
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

// wait returns r's outcome, or ctx's error if ctx ends first.
func wait(ctx context.Context, r *request) error {
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the goroutine after the batch it is running, fails requests
// still queued with ErrClosed, and closes the model. Close is idempotent.
func (w *Worker) Close() error {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(w.quit)
		<-w.exited
		w.closeErr = w.m.Close()
	})
	return w.closeErr
}

// loop is the worker goroutine.
func (w *Worker) loop() {
	defer close(w.exited)
	for {
		select {
		case <-w.quit:
			w.stop()
			return
		default:
		}
		if batch := w.next(); len(batch) > 0 {
			w.run(batch)
			continue
		}
		select {
		case <-w.wake:
		case <-w.quit:
			w.stop()
			return
		}
	}
}

// stop fails every queued request with ErrClosed.
func (w *Worker) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p := range w.queues {
		for _, r := range w.queues[p] {
			w.finish(r, ErrClosed)
		}
		w.queues[p] = nil
	}
	for _, s := range w.retry {
		w.finish(s.r, ErrClosed)
	}
	w.retry = nil
}

// next drops the requests whose callers have gone, then takes the next
// batch from the highest priority with texts waiting (below Query when
// documents are owed a fair run): consecutive texts of its queue (for
// Background, a stopped bulk run's first), bounded by MaxBatch and the
// token budget.
func (w *Worker) next() []slot {
	w.mu.Lock()
	defer w.mu.Unlock()
	gone := func(r *request) bool {
		if err := r.ctx.Err(); err != nil {
			w.finish(r, err)
		}
		return r.finished
	}
	for p := range w.queues {
		w.queues[p] = slices.DeleteFunc(w.queues[p], gone)
	}
	w.retry = slices.DeleteFunc(w.retry, func(s slot) bool { return gone(s.r) })
	queries := len(w.queues[Query]) > 0
	docs := len(w.queues[Prompt]) > 0 || len(w.queues[Background]) > 0 || len(w.retry) > 0
	if !docs {
		w.credit = 0
	}
	// One document run at most between query runs, so a query waits
	// behind at most one.
	fair := queries && docs && w.credit > 0 && !w.fair
	w.fair = fair
	top := numPriorities - 1
	if fair {
		top = Prompt
	}
	for p := top; p >= 0; p-- {
		q := w.queues[p]
		var retry []slot
		if p == Background {
			retry = w.retry
		}
		if len(q) == 0 && len(retry) == 0 {
			continue
		}
		maxBatch := w.m.opts.MaxBatch
		batch := slices.Clone(retry[:min(len(retry), maxBatch)])
		for _, r := range q {
			for k := r.next; k < len(r.items) && len(batch) < maxBatch; k++ {
				batch = append(batch, slot{r, k})
			}
		}
		lens := make([]int, len(batch))
		for j, s := range batch {
			lens[j] = len(s.r.items[s.k].ids)
		}
		budget := w.m.opts.MaxBatchTokens
		bulk := p == Background && !fair && w.now().Sub(w.lastQuery) >= bulkQuiet && w.m.opts.BulkBatchTokens > budget
		if bulk {
			budget = w.m.opts.BulkBatchTokens
		}
		batch = batch[:batchSize(lens, maxBatch, budget)]
		// Only a run larger than a query may wait behind is worth stopping.
		w.bulkRun = bulk && len(batch)*slices.Max(lens[:len(batch)]) > w.m.opts.MaxBatchTokens
		fromRetry := min(len(batch), len(retry))
		w.retry = w.retry[fromRetry:]
		for _, s := range batch[fromRetry:] {
			s.r.next++
		}
		taken := 0
		for taken < len(q) && q[taken].next == len(q[taken].items) {
			taken++
		}
		w.queues[p] = slices.Delete(q, 0, taken)
		w.accrues = p == Query && docs
		return batch
	}
	return nil
}

// run embeds one batch, completes the requests it finishes and charges its
// time to the documents' credit. A bulk run stopped for a query puts its
// texts back, to run again.
func (w *Worker) run(batch []slot) {
	seqs := make([][]int64, len(batch))
	outs := make([][]float32, len(batch))
	for j, s := range batch {
		it := &s.r.items[s.k]
		seqs[j], outs[j] = it.ids, s.r.out[it.i]
	}
	start := w.now()
	err := w.m.run(seqs, outs)
	took := w.now().Sub(start)
	w.mu.Lock()
	switch {
	case w.fair:
		w.credit -= took
	case w.accrues:
		w.credit += time.Duration(float64(took) * documentShare / (1 - documentShare))
	}
	stopped := w.stopping
	if stopped {
		if rerr := w.m.resume(); rerr != nil {
			err, stopped = rerr, false // every later run would stop: fail loudly
		}
	}
	w.bulkRun, w.stopping = false, false
	if stopped && err != nil {
		w.retry = append(batch, w.retry...)
		w.preempted++
		w.mu.Unlock()
		return
	}
	if err == nil {
		w.stats.Texts[batch[0].r.prio] += int64(len(batch))
	}
	defer w.mu.Unlock()
	for _, s := range batch {
		s.r.items[s.k].ids = nil // run: the window's memory shrinks as it goes
		switch {
		case s.r.finished:
		case err != nil:
			w.finish(s.r, err)
		default:
			s.r.left--
			w.pending.Add(-1)
			if s.r.left == 0 {
				if s.r.prio == Query {
					w.countQuery(s.r)
				}
				w.finish(s.r, nil)
			}
		}
	}
}

// finish completes r once, with err (nil on success).
func (w *Worker) finish(r *request, err error) {
	if r.finished {
		return
	}
	r.finished, r.err = true, err
	w.pending.Add(-int64(r.left))
	r.left = 0
	close(r.done)
}
