package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/embed/openai/openaitest"
)

// sampleTexts are texts of varied lengths, one longer than the window.
func sampleTexts() []string {
	texts := []string{
		"ctxd is a memory layer for AI agents.",
		"The daemon stores items in a virtual filesystem.",
		"Search combines BM25 with vectors from a local model.",
		"Ollama serves embeddings on port 11434.",
		"a",
		"Bread is baked in an oven at 220 degrees for forty minutes.",
		"Retry with exponential backoff when the server answers 429.",
		strings.Repeat("A very long paragraph about circuit breakers and rate limits. ", 80),
	}
	for i := range 20 {
		texts = append(texts, fmt.Sprintf("note %d: the meeting moved to room %d on floor %d", i, 100+i, i%5))
	}
	return texts
}

func TestClient_MatchesLocalModel(t *testing.T) {
	s := startServer(t)
	c, _ := newClient(t, s, Config{BatchSize: 3, MaxInFlight: 4})
	if sp := c.Spec(); sp.ID != "openai:all-minilm@384" || sp.Dimensions != 384 || sp.MaxTokens != DefaultMaxTokens {
		t.Fatalf("Spec after Probe = %+v", sp)
	}
	texts := sampleTexts()
	for _, p := range []embed.Priority{embed.Background, embed.Query} {
		got, err := c.EmbedAt(context.Background(), texts, p)
		if err != nil {
			t.Fatalf("EmbedAt(%d): %v", p, err)
		}
		want, err := localWorker(t).EmbedAt(context.Background(), texts, embed.Background)
		if err != nil {
			t.Fatal(err)
		}
		for i := range texts {
			if cos := embed.Cosine(got[i], want[i]); cos < 0.999 {
				t.Errorf("priority %d, text %d: cosine with the local vector %.5f, want >= 0.999", p, i, cos)
			}
		}
	}
	// 28 texts in batches of 3, twice, plus the probe.
	if n := len(s.Requests()); n != 1+2*10 {
		t.Errorf("%d requests, want 21", n)
	}
	// The probe is not counted; one query call is one query embedding.
	st := c.Stats()
	if st.Texts[embed.Background] != 28 || st.Texts[embed.Query] != 28 || st.Texts[embed.Prompt] != 0 || st.QueryWaits != 1 || st.QueryWaitSum <= 0 {
		t.Errorf("Stats = %+v, want 28 background and 28 query texts in one query embedding", st)
	}
	if last := st.QueryWaitBuckets[len(st.QueryWaitBuckets)-1]; last > 1 {
		t.Errorf("QueryWaitBuckets = %v: more query embeddings than were made", st.QueryWaitBuckets)
	}
}

func TestClient_HonoursRetryAfter(t *testing.T) {
	s := startServer(t)
	c, rec := newClient(t, s, Config{})
	at := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	s.Inject(
		openaitest.Fault{Status: 429, RetryAfter: "3", Body: `{"error":{"message":"slow down"}}`},
		openaitest.Fault{Status: 429, RetryAfter: at},
	)
	before := len(s.Requests())
	vecs, err := c.EmbedAt(context.Background(), []string{"one", "two"}, embed.Background)
	if err != nil || len(vecs) != 2 {
		t.Fatalf("EmbedAt: %d vectors, %v", len(vecs), err)
	}
	var statuses []int
	for _, r := range s.Requests()[before:] {
		statuses = append(statuses, r.Status)
	}
	if fmt.Sprint(statuses) != "[429 429 200]" {
		t.Fatalf("statuses %v, want [429 429 200]", statuses)
	}
	waits := rec.all()
	if len(waits) != 2 || waits[0] != 3*time.Second || waits[1] < 18*time.Second || waits[1] > 20*time.Second {
		t.Fatalf("waits %v, want [3s ~20s]: Retry-After in seconds, then as an HTTP date", waits)
	}
}

func TestClient_Retries5xxWithBackoff(t *testing.T) {
	s := startServer(t)
	c, rec := newClient(t, s, Config{})
	s.Inject(openaitest.Fault{Status: 500}, openaitest.Fault{Status: 503}, openaitest.Fault{Status: 502})
	if _, err := c.EmbedAt(context.Background(), []string{"x"}, embed.Background); err != nil {
		t.Fatalf("EmbedAt after three 5xx: %v", err)
	}
	waits := rec.all()
	if len(waits) != 3 {
		t.Fatalf("waits %v, want 3", waits)
	}
	for i, w := range waits {
		if full := baseBackoff << i; w < full/2 || w > full {
			t.Errorf("wait %d = %v, want a jittered %v", i, w, full)
		}
	}
	// Past MaxRetries the error is returned.
	s.Inject(openaitest.Fault{Status: 500}, openaitest.Fault{Status: 500}, openaitest.Fault{Status: 500}, openaitest.Fault{Status: 500}, openaitest.Fault{Status: 500})
	_, err := c.EmbedAt(context.Background(), []string{"x"}, embed.Background)
	if err == nil || !strings.Contains(err.Error(), "500 Internal Server Error") {
		t.Fatalf("EmbedAt after 5 x 500 = %v, want the 500", err)
	}
}

func TestClient_BadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault openaitest.Fault
		want  string
	}{
		{"short", openaitest.Fault{Body: `{"data":[{"index":0,"embedding":[1,2]}]}`}, "1 vectors for 2 texts"},
		{"not json", openaitest.Fault{Body: `<html>proxy</html>`}, "not an embeddings response"},
		{"wrong dimensions", openaitest.Fault{Body: `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2]}]}`}, "2 dimensions, want 384"},
		{"index out of range", openaitest.Fault{Body: `{"data":[{"index":5,"embedding":[1]},{"index":0,"embedding":[1]}]}`}, "out of range or repeated"},
		{"unauthorized", openaitest.Fault{Status: 401, Body: `{"error":{"message":"invalid api key"}}`}, "401 Unauthorized: invalid api key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t)
			c, rec := newClient(t, s, Config{})
			s.Inject(tc.fault)
			before := len(s.Requests())
			_, err := c.EmbedAt(context.Background(), []string{"one", "two"}, embed.Background)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("EmbedAt = %v, want an error saying %q", err, tc.want)
			}
			if n := len(s.Requests()) - before; n != 1 || len(rec.all()) != 0 {
				t.Errorf("%d requests and waits %v: an answer that a retry cannot cure was retried", n, rec.all())
			}
			if st := c.Stats(); st.Texts != [len(st.Texts)]int64{} {
				t.Errorf("Stats.Texts = %v after a failed call, want none counted", st.Texts)
			}
		})
	}
}

func TestClient_UnknownModel(t *testing.T) {
	s := startServer(t)
	c, err := New(Config{URL: s.URL(), Model: "no-such-model"})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), `404 Not Found: model "no-such-model" not found`) {
		t.Fatalf("Probe = %v", err)
	}
}

func TestClient_ProbeRefusesOtherDimensions(t *testing.T) {
	s := startServer(t)
	c, err := New(Config{URL: s.URL(), Model: testModelName, Dimensions: 256})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Probe(context.Background())
	if !errors.Is(err, ErrDimensions) || !strings.Contains(err.Error(), "set embedder.dimensions to 384") {
		t.Fatalf("Probe = %v, want ErrDimensions with a hint", err)
	}
}

func TestClient_SendsKeyButNeverShowsIt(t *testing.T) {
	s := startServer(t)
	const key = "sk-test-secret"
	c, _ := newClient(t, s, Config{APIKey: key})
	if got := s.Requests()[0].Authorization; got != "Bearer "+key {
		t.Fatalf("Authorization %q", got)
	}
	s.Inject(openaitest.Fault{Status: 403, Body: `{"error":"forbidden"}`})
	_, err := c.EmbedAt(context.Background(), []string{"x"}, embed.Background)
	if err == nil || strings.Contains(err.Error(), key) {
		t.Fatalf("error %v holds the key or is nil", err)
	}
}

func TestClient_BreakerOpensOnDeadEndpointAndCloses(t *testing.T) {
	s := startServer(t)
	c, rec := newClient(t, s, Config{BreakerFailures: 3, MaxRetries: 5, BreakerCooldown: time.Minute})
	var ahead atomic.Int64 // how far the breaker's clock is moved
	c.br.now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	s.Stop()
	sent := c.requests.Load()
	_, err := c.EmbedAt(context.Background(), []string{"x"}, embed.Background)
	if !errors.Is(err, embed.ErrUnavailable) {
		t.Fatalf("EmbedAt on a dead endpoint = %v, want ErrUnavailable once the breaker opened", err)
	}
	if n := c.requests.Load() - sent; n != 3 || len(rec.all()) != 3 {
		t.Fatalf("%d requests, waits %v: want 3 failures, then the open breaker stops the retries", n, rec.all())
	}
	h := c.Health()
	if !strings.Contains(h, s.URL()) || !strings.Contains(h, "connection refused") || !strings.Contains(h, "3 failed requests in a row") {
		t.Fatalf("Health = %q, want the endpoint and what failed", h)
	}
	// Open: a query fails at once, without a request.
	sent = c.requests.Load()
	if _, err := c.EmbedAt(context.Background(), []string{"q"}, embed.Query); !errors.Is(err, embed.ErrUnavailable) || c.requests.Load() != sent {
		t.Fatalf("query while open = %v after %d requests", err, c.requests.Load()-sent)
	}
	// After the cooldown one probe goes; the endpoint is back, so it closes.
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	ahead.Add(int64(time.Minute))
	if c.Health() != "" {
		t.Fatalf("Health after the cooldown = %q, want \"\" (a probe may go)", c.Health())
	}
	if _, err := c.EmbedAt(context.Background(), []string{"q"}, embed.Query); err != nil {
		t.Fatalf("query after the cooldown: %v", err)
	}
	if open, failures, _, _ := c.br.state(); open || failures != 0 {
		t.Fatalf("breaker open=%v failures=%d after a success", open, failures)
	}
}

func TestClient_QueryGivesUpInTime(t *testing.T) {
	s := startServer(t)
	c, _ := newClient(t, s, Config{QueryTimeout: 50 * time.Millisecond})
	s.Inject(openaitest.Fault{Delay: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.EmbedAt(ctx, []string{"q"}, embed.Query)
	if !errors.Is(err, embed.ErrUnavailable) || ctx.Err() != nil {
		t.Fatalf("EmbedAt = %v (caller's ctx %v), want ErrUnavailable before the caller's deadline", err, ctx.Err())
	}
}

func TestClient_CallerCancels(t *testing.T) {
	s := startServer(t)
	c, _ := newClient(t, s, Config{})
	s.Inject(openaitest.Fault{Delay: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for s.Received() < 2 { // the probe and this request
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := c.EmbedAt(ctx, []string{"x"}, embed.Background); !errors.Is(err, context.Canceled) {
		t.Fatalf("EmbedAt = %v, want context.Canceled", err)
	}
	if open, failures, _, _ := c.br.state(); open || failures != 0 {
		t.Fatalf("a cancelled call counted as a failure: open=%v failures=%d", open, failures)
	}
}

func TestClient_Closed(t *testing.T) {
	s := startServer(t)
	c, _ := newClient(t, s, Config{})
	c.Close()
	if _, err := c.EmbedAt(context.Background(), []string{"x"}, embed.Background); !errors.Is(err, embed.ErrClosed) {
		t.Fatalf("EmbedAt after Close = %v", err)
	}
}

func TestNew_Validates(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no url":        {Model: "m"},
		"no scheme":     {URL: "127.0.0.1:11434/v1", Model: "m"},
		"no model":      {URL: DefaultURL},
		"batch":         {URL: DefaultURL, Model: "m", BatchSize: MaxBatchSize + 1},
		"in flight":     {URL: DefaultURL, Model: "m", MaxInFlight: MaxInFlightLimit + 1},
		"dimensions":    {URL: DefaultURL, Model: "m", Dimensions: -1},
		"max tokens":    {URL: DefaultURL, Model: "m", MaxTokens: 2},
		"retries":       {URL: DefaultURL, Model: "m", MaxRetries: MaxRetriesLimit + 1},
		"negative wait": {URL: DefaultURL, Model: "m", Timeout: -time.Second},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New(%+v) succeeded", name, cfg)
		}
	}
}

func TestClient_Remote(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:11434/v1":          "",
		"http://localhost:8080/v1":           "",
		"http://[::1]:8080/v1":               "",
		"https://api.openai.com/v1":          "api.openai.com",
		"http://user:pw@gpu-box.lan:8080/v1": "gpu-box.lan:8080",
	} {
		c, err := New(Config{URL: raw, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Remote(); got != want {
			t.Errorf("Remote(%s) = %q, want %q", raw, got, want)
		}
		if strings.Contains(c.Endpoint(), "pw") {
			t.Errorf("Endpoint %q shows the password", c.Endpoint())
		}
	}
}

func TestClient_QueryNotRetried(t *testing.T) {
	s := startServer(t)
	c, rec := newClient(t, s, Config{})
	s.Inject(openaitest.Fault{Status: 503, RetryAfter: "1"})
	before := len(s.Requests())
	_, err := c.EmbedAt(context.Background(), []string{"q"}, embed.Query)
	if !errors.Is(err, embed.ErrUnavailable) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("EmbedAt = %v, want ErrUnavailable naming the 503", err)
	}
	if n := len(s.Requests()) - before; n != 1 || len(rec.all()) != 0 {
		t.Fatalf("%d requests, waits %v: a query must fall back at once, not retry", n, rec.all())
	}
}
