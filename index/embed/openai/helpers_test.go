package openai

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/embed/openai/openaitest"
	"github.com/ctxd/ctxd/internal/testmodel"
)

// testModelName is what the helper server serves the local model as.
const testModelName = "all-minilm"

var local struct {
	once sync.Once
	w    *embed.Worker
	err  error
}

// localWorker is the real ONNX model, shared by the package's tests (the
// helper server embeds with it, and the tests compare with it).
func localWorker(t testing.TB) *embed.Worker {
	t.Helper()
	dir, lib := testmodel.Dir(t), testmodel.ORTLib(t)
	local.once.Do(func() {
		m, err := embed.Open(dir, embed.Options{LibraryPath: lib})
		if err != nil {
			local.err = err
			return
		}
		local.w = embed.NewWorker(m)
	})
	if local.err != nil {
		t.Fatalf("open the local model: %v", local.err)
	}
	return local.w
}

// startServer starts the helper server backed by the local model.
func startServer(t testing.TB) *openaitest.Server {
	t.Helper()
	s, err := openaitest.New(testModelName, localWorker(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// sleeps records the waits a client asked for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newClient returns a client of s with cfg's settings (URL and model
// filled in), probed, whose retry waits are recorded rather than waited.
func newClient(t testing.TB, s *openaitest.Server, cfg Config) (*Client, *sleeps) {
	t.Helper()
	cfg.URL, cfg.Model = s.URL(), testModelName
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &sleeps{}
	c.sleep = rec.sleep
	t.Cleanup(func() { c.Close() })
	if err := c.Probe(context.Background()); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	return c, rec
}
