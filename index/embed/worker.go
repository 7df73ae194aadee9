package embed

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// windowBatches is how many batches' worth of document texts the worker
// tokenizes and sorts by length at a time. Larger windows pad less; the
// window also bounds how long a document waits behind shorter ones.
const windowBatches = 8

// Worker is the one goroutine that owns a Model. Callers from many goroutines
// submit texts with Embed; the worker tokenizes them, groups texts of similar
// token length and runs batches bounded by Options.MaxBatch and
// Options.MaxBatchTokens, so a run's memory is bounded whatever the callers
// submit. Query requests go ahead of pending document batches (at batch
// boundaries) so search latency stays low during ingest.
type Worker struct {
	m    *Model
	spec Spec

	reqs   chan *request
	quit   chan struct{}
	exited chan struct{}

	closeOnce sync.Once
	closeErr  error
	pending   atomic.Int64
}

// request is one Embed call. The worker goroutine owns every field but done's
// closing protocol: err and out are read by the caller only after done closes.
type request struct {
	ctx   context.Context
	texts []string
	query bool
	out   [][]float32

	next     int  // next text to load into a batch or window
	left     int  // texts not yet embedded
	finished bool // done closed
	err      error
	done     chan struct{}
}

// item is one tokenized text of a request.
type item struct {
	req *request
	i   int
	ids []int64
}

// NewWorker starts the goroutine that owns m. Close stops it and closes m.
func NewWorker(m *Model) *Worker {
	w := &Worker{
		m:      m,
		spec:   m.Spec(),
		reqs:   make(chan *request),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	go w.loop()
	return w
}

// Spec returns the model's description.
func (w *Worker) Spec() Spec { return w.spec }

// Pending returns the number of texts submitted and not yet embedded.
func (w *Worker) Pending() int { return int(w.pending.Load()) }

// Embed returns one vector per text, in order (see Model.Embed), however many
// texts there are: the worker splits them into bounded batches, interleaved
// with other callers' texts. It returns ctx's error if ctx ends first (the
// texts not yet run are then skipped) and ErrClosed after Close.
func (w *Worker) Embed(ctx context.Context, texts []string, query bool) ([][]float32, error) {
	select {
	case <-w.quit:
		return nil, ErrClosed
	default:
	}
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	r := &request{
		ctx: ctx, texts: texts, query: query,
		out:  newVectors(len(texts), w.spec.Dimensions),
		left: len(texts),
		done: make(chan struct{}),
	}
	select {
	case w.reqs <- r:
	case <-w.quit:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-r.done:
		if r.err != nil {
			return nil, r.err
		}
		return r.out, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops the goroutine after the batch it is running, fails requests
// still queued with ErrClosed, and closes the model. Close is idempotent.
func (w *Worker) Close() error {
	w.closeOnce.Do(func() {
		close(w.quit)
		<-w.exited
		w.closeErr = w.m.Close()
	})
	return w.closeErr
}

// loop is the worker goroutine.
func (w *Worker) loop() {
	defer close(w.exited)
	var (
		queries, docs []*request // requests with texts not yet loaded, FIFO
		qwin, window  []item     // tokenized query / document texts to run
	)
	enqueue := func(r *request) {
		w.pending.Add(int64(len(r.texts)))
		if r.query {
			queries = append(queries, r)
		} else {
			docs = append(docs, r)
		}
	}
	stop := func() {
		for _, rs := range [][]*request{queries, docs} {
			for _, r := range rs {
				w.finish(r, ErrClosed)
			}
		}
		for _, it := range slices.Concat(qwin, window) {
			w.finish(it.req, ErrClosed)
		}
	}
	for {
		if len(queries) == 0 && len(docs) == 0 && len(qwin) == 0 && len(window) == 0 {
			select {
			case r := <-w.reqs:
				enqueue(r)
			case <-w.quit:
				return
			}
		}
	drain:
		for {
			select {
			case r := <-w.reqs:
				enqueue(r)
			case <-w.quit:
				stop()
				return
			default:
				break drain
			}
		}
		// Queries first, in arrival order; then documents a window at a time,
		// shortest first so that similar lengths share a batch.
		if len(qwin) == 0 && len(queries) > 0 {
			qwin, queries = w.load(queries, w.m.opts.MaxBatch)
		}
		var batch []item
		if len(qwin) > 0 {
			batch, qwin = w.take(qwin)
		} else {
			if len(window) == 0 {
				window, docs = w.load(docs, windowBatches*w.m.opts.MaxBatch)
				slices.SortStableFunc(window, func(a, b item) int { return cmp.Compare(len(a.ids), len(b.ids)) })
			}
			batch, window = w.take(window)
		}
		w.run(batch)
	}
}

// take splits the next batch off the front of win, bounded by MaxBatch and
// MaxBatchTokens.
func (w *Worker) take(win []item) (batch, rest []item) {
	lens := make([]int, min(len(win), w.m.opts.MaxBatch))
	for i := range lens {
		lens[i] = len(win[i].ids)
	}
	n := batchSize(lens, w.m.opts.MaxBatch, w.m.opts.MaxBatchTokens)
	return win[:n:n], win[n:]
}

// load tokenizes up to n texts from the front of queue, skipping requests
// already finished (cancelled or failed), and returns them with what is left
// of the queue.
func (w *Worker) load(queue []*request, n int) ([]item, []*request) {
	var items []item
	for len(queue) > 0 && len(items) < n {
		r := queue[0]
		if w.cancelled(r) {
			queue = queue[1:]
			continue
		}
		for r.next < len(r.texts) && len(items) < n {
			items = append(items, item{req: r, i: r.next, ids: w.m.encode(r.texts[r.next], r.query)})
			r.next++
		}
		if r.next == len(r.texts) {
			queue = queue[1:]
		}
	}
	return items, queue
}

// cancelled reports whether r needs no more work, finishing it if its context
// has ended.
func (w *Worker) cancelled(r *request) bool {
	if !r.finished {
		if err := r.ctx.Err(); err != nil {
			w.finish(r, err)
		}
	}
	return r.finished
}

// run embeds one batch and completes the requests it finishes.
func (w *Worker) run(batch []item) {
	live := batch[:0]
	for _, it := range batch {
		if !w.cancelled(it.req) {
			live = append(live, it)
		}
	}
	if len(live) == 0 {
		return
	}
	seqs := make([][]int64, len(live))
	outs := make([][]float32, len(live))
	for k, it := range live {
		seqs[k], outs[k] = it.ids, it.req.out[it.i]
	}
	if err := w.m.run(seqs, outs); err != nil {
		for _, it := range live {
			w.finish(it.req, err)
		}
		return
	}
	for _, it := range live {
		r := it.req
		r.left--
		w.pending.Add(-1)
		if r.left == 0 {
			w.finish(r, nil)
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
