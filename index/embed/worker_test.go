package embed

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	w, m := mustNewWorker(t, Options{MaxBatch: 32, MaxBatchTokens: budget})
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

func TestWorker_QueriesGoFirst(t *testing.T) {
	w, m := mustNewWorker(t, Options{MaxBatch: 4})
	var order []bool // per run: did it hold the query?
	const query = "find the note about query priority"
	queryLen := len(m.encode(query, true))
	m.beforeRun = func(batch, seqLen int) { order = append(order, batch == 1 && seqLen == queryLen) }

	docs := make([]string, 200)
	for i := range docs {
		docs[i] = fmt.Sprintf("document %d with a few words in it, enough of them to differ", i)
	}
	done := make(chan error, 1)
	go func() { _, err := w.Embed(context.Background(), docs, false); done <- err }()
	for w.Pending() == 0 { // the documents are queued
		time.Sleep(time.Millisecond)
	}
	if _, err := w.Embed(context.Background(), []string{query}, true); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The query ran right after the batch in flight, not after the 50
	// document batches.
	for i, q := range order {
		if q {
			t.Logf("query ran as run %d of %d", i, len(order))
			if after := len(order) - 1 - i; after < 40 {
				t.Errorf("query ran as run %d of %d: only %d document batches after it", i, len(order), after)
			}
			return
		}
	}
	t.Fatalf("no run held only the query: %v", order)
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
