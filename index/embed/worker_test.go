package embed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// mustNewWorker starts a worker on a fresh fp32 model, closed at cleanup.
func mustNewWorker(t *testing.T, opts Options) (*Worker, *Model) {
	t.Helper()
	m := mustOpenModel(t, testModelDir(), opts)
	w := NewWorker(m)
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Worker.Close: %v", err)
		}
		if n := w.Pending(); n != 0 {
			t.Errorf("Pending after Close = %d, want 0", n)
		}
	})
	return w, m
}

func TestWorker_ConcurrentMatchesSequential(t *testing.T) {
	m := mustOpenModel(t, testModelDir(), Options{MaxBatch: 8})
	const callers, perCaller = 8, 12
	texts := make([][]string, callers)
	want := make([][][]float32, callers)
	isQuery := func(c int) bool { return c%3 == 0 }
	for c := range texts {
		for i := range perCaller {
			// Varied lengths so the worker regroups texts across callers.
			s := fmt.Sprintf("caller %d text %d", c, i)
			for range (c*perCaller + i) % 5 {
				s += " with some more words about memory layers"
			}
			texts[c] = append(texts[c], s)
		}
		want[c] = mustEmbed(t, m, texts[c], isQuery(c)) // sequential, before the worker owns m
	}
	w := NewWorker(m)
	defer w.Close()

	got := make([][][]float32, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			got[c], errs[c] = w.Embed(context.Background(), texts[c], isQuery(c))
		})
	}
	wg.Wait()
	for c := range callers {
		if errs[c] != nil {
			t.Fatalf("caller %d: %v", c, errs[c])
		}
		for i := range texts[c] {
			if cos := Cosine(got[c][i], want[c][i]); cos <= 0.9999 {
				t.Errorf("caller %d text %d: cosine with sequential = %.6f", c, i, cos)
			}
		}
	}
	if m.stats.maxBatch > 8 {
		t.Errorf("model ran a batch of %d, MaxBatch 8", m.stats.maxBatch)
	}
}

func TestWorker_LargeRequestBoundedBatches(t *testing.T) {
	const maxBatch, n = 16, 5000
	w, m := mustNewWorker(t, Options{MaxBatch: maxBatch})
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("note %d: item %d", i, i*7919%n)
	}
	start := time.Now()
	vs, err := w.Embed(context.Background(), texts, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != n {
		t.Fatalf("%d vectors for %d texts", len(vs), n)
	}
	for _, i := range []int{0, 1, n / 2, n - 1} {
		checkUnit(t, texts[i], vs[i])
		alone := mustEmbedVia(t, w, texts[i])
		if c := Cosine(alone, vs[i]); c < 0.9999 {
			t.Errorf("text %d: cosine(alone, in large request) = %.6f", i, c)
		}
	}
	s := m.stats
	t.Logf("%d texts in %v: %d runs, max batch %d, max seq %d, %.1f tokens/text", n, time.Since(start).Round(time.Millisecond),
		s.runs, s.maxBatch, s.maxSeqLen, float64(s.tokens)/float64(s.texts))
	if s.maxBatch > maxBatch {
		t.Errorf("model saw a batch of %d, MaxBatch %d", s.maxBatch, maxBatch)
	}
	if s.texts < n {
		t.Errorf("model embedded %d texts, want >= %d", s.texts, n)
	}
}

func TestWorker_TokenBudgetGroupsLengths(t *testing.T) {
	const budget = 512
	w, m := mustNewWorker(t, Options{MaxBatch: 32, MaxBatchTokens: budget, BulkBatchTokens: budget})
	var shapes [][2]int
	m.beforeRun = func(batch, seqLen int) { shapes = append(shapes, [2]int{batch, seqLen}) }
	// Alternate long and short texts: sorted by length within the window,
	// the shorts share full batches and the longs run 4 at a time.
	var texts []string
	for i := range 32 {
		texts = append(texts, textOfTokens(t, m, 128, i), textOfTokens(t, m, 8, i))
	}
	vs, err := w.Embed(context.Background(), texts, false)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]int{{32, 8}, {4, 128}, {4, 128}, {4, 128}, {4, 128}, {4, 128}, {4, 128}, {4, 128}, {4, 128}}
	if !slices.Equal(shapes, want) {
		t.Errorf("runs [batch, seq] = %v, want %v", shapes, want)
	}
	if m.stats.maxCells > budget {
		t.Errorf("a run had %d padded tokens, budget %d", m.stats.maxCells, budget)
	}
	for i, v := range vs {
		checkUnit(t, fmt.Sprintf("text %d", i), v)
	}
}

func mustEmbedVia(t *testing.T, w *Worker, text string) []float32 {
	t.Helper()
	vs, err := w.Embed(context.Background(), []string{text}, false)
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

// runLog records the shape of every run through Model.beforeRun and can
// hold the worker inside one run (the batch in flight) until released. Its
// clock, given to a Worker, advances only inside runs, by a microsecond per
// padded token: the worker's time shares become exact.
type runLog struct {
	mu      sync.Mutex
	shapes  [][2]int  // [batch, seqLen] per run, in run order
	now     time.Time // the clock given to a Worker: padded tokens run, in µs
	holdAt  int       // 1-based run to hold the worker in; 0: none
	held    chan struct{}
	release func() // lets the held run go on; idempotent
}

func newRunLog(t *testing.T, m *Model, holdAt int) *runLog {
	resume := make(chan struct{})
	l := &runLog{holdAt: holdAt, held: make(chan struct{}), release: sync.OnceFunc(func() { close(resume) })}
	t.Cleanup(l.release) // before the worker's Close, which waits for the run
	m.beforeRun = func(batch, seqLen int) {
		l.mu.Lock()
		l.shapes = append(l.shapes, [2]int{batch, seqLen})
		l.now = l.now.Add(time.Duration(batch*seqLen) * time.Microsecond)
		n := len(l.shapes)
		l.mu.Unlock()
		if n == l.holdAt {
			close(l.held)
			<-resume
		}
	}
	return l
}

func (l *runLog) clock() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.now
}

func (l *runLog) runs() [][2]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.shapes)
}

// waitPending waits until n texts are queued: submission does not wait for
// the worker, so texts queue while a batch is in flight.
func waitPending(t *testing.T, w *Worker, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.Pending() != n {
		if time.Now().After(deadline) {
			t.Fatalf("Pending = %d, want %d: texts were not queued while a batch was in flight", w.Pending(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// embedAsync runs EmbedAt in a goroutine; the channel yields its error.
func embedAsync(ctx context.Context, w *Worker, texts []string, p Priority) <-chan error {
	done := make(chan error, 1)
	go func() { _, err := w.EmbedAt(ctx, texts, p); done <- err }()
	return done
}

// backlog starts a Background request of n 64-token documents and returns
// once the worker is held inside run holdAt, with the texts still queued.
// The worker's clock is then the log's.
func backlog(t *testing.T, w *Worker, m *Model, n, holdAt int) (*runLog, <-chan error, int) {
	t.Helper()
	l := newRunLog(t, m, holdAt)
	w.now = l.clock // before any submission: the worker reads it after
	docs := make([]string, n)
	for i := range docs {
		docs[i] = textOfTokens(t, m, 64, i)
	}
	done := embedAsync(context.Background(), w, docs, Background)
	<-l.held
	return l, done, w.Pending()
}

// noBulk keeps a worker on its default 256-token runs (MiniLM's window)
// even without queries, for tests of the queues' order.
var noBulk = Options{BulkBatchTokens: 256}

func TestWorker_QueryWaitsForOneBatch(t *testing.T) {
	w, m := mustNewWorker(t, noBulk)
	// Default budget: 4 documents of 64 tokens per run, 50 runs queued.
	const holdAt = 3
	l, docsDone, queued := backlog(t, w, m, 200, holdAt)
	var queries []<-chan error
	for i := range 3 {
		queries = append(queries, embedAsync(context.Background(), w, []string{textOfTokens(t, m, 8, i)}, Query))
	}
	waitPending(t, w, queued+3)
	l.release()
	for _, q := range queries {
		if err := <-q; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-docsDone; err != nil {
		t.Fatal(err)
	}
	runs := l.runs()
	// The queries were queued while run holdAt was in flight: they ran
	// together in the very next run, before the other 47 document runs.
	at := slices.Index(runs, [2]int{3, 8})
	if at != holdAt {
		t.Fatalf("the three queries ran as run %d (0-based), want %d (right after the run in flight); runs %v", at, holdAt, runs)
	}
	docRuns := 0
	for i, r := range runs {
		if i != at {
			if r != [2]int{4, 64} {
				t.Errorf("run %d = %v, want [4 64] (documents only)", i, r)
			}
			docRuns++
		}
	}
	if docRuns != 50 {
		t.Errorf("%d document runs, want 50", docRuns)
	}
}

func TestWorker_CancelledQueryDropped(t *testing.T) {
	w, m := mustNewWorker(t, noBulk)
	const holdAt = 2
	l, docsDone, queued := backlog(t, w, m, 40, holdAt)
	ctx, cancel := context.WithCancel(context.Background())
	gone := embedAsync(ctx, w, []string{textOfTokens(t, m, 12, 0)}, Query)
	waitPending(t, w, queued+1)
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query: %v, want context.Canceled", err)
	}
	live := embedAsync(context.Background(), w, []string{textOfTokens(t, m, 8, 1)}, Query)
	waitPending(t, w, queued+2) // the cancelled query is still queued
	l.release()
	if err := <-live; err != nil {
		t.Fatal(err)
	}
	if err := <-docsDone; err != nil {
		t.Fatal(err)
	}
	runs := l.runs()
	if runs[holdAt] != [2]int{1, 8} {
		t.Errorf("run after the one in flight = %v, want [1 8] (the live query alone)", runs[holdAt])
	}
	for i, r := range runs {
		if r[1] == 12 {
			t.Errorf("run %d = %v: the cancelled query ran", i, r)
		}
	}
	if n := w.Pending(); n != 0 {
		t.Errorf("Pending = %d after every caller returned, want 0", n)
	}
}

func TestWorker_PromptAheadOfBackground(t *testing.T) {
	w, m := mustNewWorker(t, noBulk)
	const holdAt = 2
	l, docsDone, queued := backlog(t, w, m, 40, holdAt)
	prompt := make([]string, 6)
	for i := range prompt {
		prompt[i] = textOfTokens(t, m, 32, i)
	}
	reembed := embedAsync(context.Background(), w, prompt, Prompt)
	waitPending(t, w, queued+6)
	query := embedAsync(context.Background(), w, []string{textOfTokens(t, m, 8, 0)}, Query)
	waitPending(t, w, queued+7)
	l.release()
	for _, c := range []<-chan error{reembed, query, docsDone} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	// After the run in flight: the query (queued last), then the prompt
	// documents in one run, then the backlog.
	runs := l.runs()
	want := [][2]int{{4, 64}, {4, 64}, {1, 8}, {6, 32}, {4, 64}}
	if !slices.Equal(runs[:len(want)], want) {
		t.Errorf("runs %v, want them to start %v", runs, want)
	}
}

// longQueries submits n queries of 200 tokens, each alone in its request
// and, under the default budget, in its run; it returns their outcomes.
func longQueries(t *testing.T, w *Worker, m *Model, n int) []<-chan error {
	t.Helper()
	out := make([]<-chan error, n)
	for i := range out {
		out[i] = embedAsync(context.Background(), w, []string{textOfTokens(t, m, 200, i)}, Query)
	}
	return out
}

// mustSucceed waits for every outcome and fails at the first error.
func mustSucceed(t *testing.T, outcomes ...<-chan error) {
	t.Helper()
	for _, c := range outcomes {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
}

func TestWorker_DocumentsShareUnderQueries(t *testing.T) {
	w, m := mustNewWorker(t, noBulk)
	// 60 runs of 4 documents × 64 tokens; 60 queries of 200 tokens, one a
	// run: while they last, queries arrive back to back.
	l, docsDone, queued := backlog(t, w, m, 240, 1)
	queries := longQueries(t, w, m, 60)
	waitPending(t, w, queued+60)
	l.release()
	mustSucceed(t, append(queries, docsDone)...)
	runs := l.runs()
	last := 0
	for i, r := range runs {
		if r == [2]int{1, 200} {
			last = i
		}
	}
	// From the run after the held one to the last query, queries always
	// waited: documents get documentShare of the time, one run at a time.
	var docTime, all int
	for i := 1; i <= last; i++ {
		cost := runs[i][0] * runs[i][1]
		all += cost
		if runs[i] == [2]int{1, 200} {
			continue
		}
		docTime += cost
		if runs[i] != [2]int{4, 64} {
			t.Errorf("run %d = %v, want [4 64]: a small document run", i, runs[i])
		}
		if runs[i-1] != [2]int{1, 200} && i > 1 {
			t.Errorf("runs %d and %d are both documents while queries waited", i-1, i)
		}
	}
	st := w.Stats()
	if st.Texts != [numPriorities]int64{Background: 240, Query: 60} || st.QueryWaits != 60 {
		t.Errorf("Stats: texts %v, %d query waits; want [240 0 60] and 60", st.Texts, st.QueryWaits)
	}
	// Clock time is padded tokens in µs: every query waited at most the
	// runs while queries waited (all µs), the first one 200 µs.
	for i, b := range QueryWaitBounds() {
		n := st.QueryWaitBuckets[i]
		if i > 0 && n < st.QueryWaitBuckets[i-1] || b >= time.Duration(all)*time.Microsecond && n != 60 || i == 0 && (n == 0 || n == 60) {
			t.Errorf("%d query waits within %v; buckets %v for %v, runs took %d µs", n, b, st.QueryWaitBuckets, QueryWaitBounds(), all)
		}
	}
	share := float64(docTime) / float64(all)
	t.Logf("documents' share while queries waited: %.3f over %d runs", share, last)
	if share < documentShare-0.05 || share > documentShare+0.05 {
		t.Errorf("documents had %.3f of the worker's time while queries waited, want %.2f ± 0.05; runs %v", share, documentShare, runs)
	}
}

func TestWorker_FairRunsTakePromptFirst(t *testing.T) {
	w, m := mustNewWorker(t, noBulk)
	l, backlogDone, queued := backlog(t, w, m, 40, 1)
	prompt := make([]string, 8)
	for i := range prompt {
		prompt[i] = textOfTokens(t, m, 32, i)
	}
	reembed := embedAsync(context.Background(), w, prompt, Prompt)
	waitPending(t, w, queued+8)
	queries := longQueries(t, w, m, 10)
	waitPending(t, w, queued+18)
	l.release()
	mustSucceed(t, append(queries, reembed, backlogDone)...)
	// After the held run: the first query, then the documents' fair run,
	// which takes the Prompt documents (one run of 8 × 32 tokens) ahead of
	// the backlog, while queries still wait.
	runs := l.runs()
	want := [][2]int{{4, 64}, {1, 200}, {8, 32}, {1, 200}}
	if !slices.Equal(runs[:len(want)], want) {
		t.Errorf("runs %v, want them to start %v", runs, want)
	}
}

func TestWorker_BulkRunsUntilAQuery(t *testing.T) {
	w, m := mustNewWorker(t, Options{})
	l := newRunLog(t, m, 0)
	docs := make([]string, 16)
	for i := range docs {
		docs[i] = textOfTokens(t, m, 128, i)
	}
	embedDocs := func() [][]float32 {
		vs, err := w.Embed(context.Background(), docs, false)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	bulk := embedDocs()
	if _, err := w.Embed(context.Background(), []string{"a query"}, true); err != nil {
		t.Fatal(err)
	}
	small := embedDocs()
	// No query yet: 1024-token runs (4 windows), 8 texts of 128 tokens. After
	// the query: the 256-token runs a query waits behind.
	want := [][2]int{{8, 128}, {8, 128}, {1, 4}}
	for range 8 {
		want = append(want, [2]int{2, 128})
	}
	if runs := l.runs(); !slices.Equal(runs, want) {
		t.Errorf("runs [batch, seq] = %v, want %v", runs, want)
	}
	for i := range docs {
		if c := Cosine(bulk[i], small[i]); c < 0.9999 {
			t.Errorf("text %d: cosine(bulk run, small run) = %.6f", i, c)
		}
	}
}

func TestWorker_QueryStopsBulkRun(t *testing.T) {
	w, m := mustNewWorker(t, Options{})
	const holdAt = 2
	l := newRunLog(t, m, holdAt)
	docs := make([]string, 40)
	for i := range docs {
		docs[i] = textOfTokens(t, m, 64, i)
	}
	var vs [][]float32
	docsDone := make(chan error, 1)
	go func() {
		var err error
		vs, err = w.Embed(context.Background(), docs, false)
		docsDone <- err
	}()
	<-l.held
	queued := w.Pending()
	query := embedAsync(context.Background(), w, []string{textOfTokens(t, m, 8, 0)}, Query)
	waitPending(t, w, queued+1) // submitted: the held run's stop flag is set
	l.release()
	for _, c := range []<-chan error{query, docsDone} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	// Bulk runs of 16 × 64 tokens until the query: it stopped the run in
	// flight, ran next, and that run's 16 texts ran again in small runs
	// before the remaining 8.
	want := [][2]int{{16, 64}, {16, 64}, {1, 8}}
	for range 6 {
		want = append(want, [2]int{4, 64})
	}
	if runs := l.runs(); !slices.Equal(runs, want) {
		t.Errorf("runs [batch, seq] = %v, want %v", runs, want)
	}
	w.mu.Lock()
	stopped := w.preempted
	w.mu.Unlock()
	if stopped != 1 {
		t.Errorf("%d bulk runs stopped, want 1", stopped)
	}
	for i, d := range docs {
		checkUnit(t, fmt.Sprintf("text %d", i), vs[i])
		if c := Cosine(mustEmbedVia(t, w, d), vs[i]); c < 0.9999 {
			t.Errorf("text %d: cosine(alone, after the stopped run) = %.6f", i, c)
		}
	}
}

func TestWorker_Cancel(t *testing.T) {
	w, _ := mustNewWorker(t, Options{MaxBatch: 4})
	texts := make([]string, 400)
	for i := range texts {
		texts[i] = fmt.Sprintf("cancelled text %d", i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := w.Embed(ctx, texts, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("Embed with cancelled ctx: %v, want context.Canceled", err)
	}
	// The worker drops the rest and still serves others.
	if _, err := w.Embed(context.Background(), []string{"after cancel"}, true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for w.Pending() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := w.Pending(); n != 0 {
		t.Errorf("Pending = %d after the cancelled request, want 0", n)
	}
}

func TestWorker_Close(t *testing.T) {
	w, m := mustNewWorker(t, Options{})
	if got := w.Spec(); got != m.Spec() {
		t.Errorf("Worker.Spec = %+v, want %+v", got, m.Spec())
	}
	if _, err := w.Embed(context.Background(), []string{"before close"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.EmbedAt(context.Background(), []string{"x"}, numPriorities); err == nil || !strings.Contains(err.Error(), "unknown priority") {
		t.Fatalf("EmbedAt with priority %d: %v, want unknown priority", numPriorities, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := w.Embed(context.Background(), []string{"after close"}, false); !errors.Is(err, ErrClosed) {
		t.Fatalf("Embed after Close: %v, want ErrClosed", err)
	}
	if _, err := w.Embed(context.Background(), nil, false); !errors.Is(err, ErrClosed) {
		t.Fatalf("Embed(nil) after Close: %v, want ErrClosed", err)
	}
	if _, err := m.Embed([]string{"x"}, false); !errors.Is(err, ErrClosed) {
		t.Fatalf("Model.Embed after Worker.Close: %v, want ErrClosed", err)
	}
}

func TestWorker_CloseWhileBusy(t *testing.T) {
	w, _ := mustNewWorker(t, Options{MaxBatch: 4})
	texts := make([]string, 2000)
	for i := range texts {
		texts[i] = fmt.Sprintf("busy text %d", i)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for c := range errs {
		wg.Go(func() { _, errs[c] = w.Embed(context.Background(), texts, false) })
	}
	for w.Pending() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for c, err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("caller %d: %v, want ErrClosed", c, err)
		}
	}
}
