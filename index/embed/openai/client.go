package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/internal/openaiapi"
)

// Defaults and bounds of Config.
const (
	DefaultURL         = "http://127.0.0.1:11434/v1" // Ollama
	DefaultMaxTokens   = 256
	DefaultBatchSize   = 32
	MaxBatchSize       = 2048 // OpenAI's limit on inputs per request
	DefaultMaxInFlight = 4
	MaxInFlightLimit   = 64
	DefaultTimeout     = 30 * time.Second
	// DefaultQueryTimeout bounds a query's embedding, retries included,
	// so that a search falls back to BM25 rather than waiting long.
	DefaultQueryTimeout    = 5 * time.Second
	DefaultMaxRetries      = 4
	MaxRetriesLimit        = 10
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
	// MaxDimensions bounds the vector length accepted.
	MaxDimensions = 16384
	// MaxTokensLimit bounds Config.MaxTokens.
	MaxTokensLimit = 8192
)

// Retry backoff when the endpoint sends no Retry-After: base doubled per
// attempt, jittered, at most maxBackoff, which also caps a Retry-After.
const (
	baseBackoff = 250 * time.Millisecond
	maxBackoff  = 30 * time.Second
)

// ErrDimensions is wrapped by the error of a probe whose vectors do not have
// the configured dimensions.
var ErrDimensions = errors.New("dimension mismatch")

// Config describes the endpoint and how the client uses it.
type Config struct {
	// URL is the API's base URL, the part before /embeddings.
	URL string
	// Model is the model asked for; required.
	Model string
	// Dimensions, when set, is sent with every request (models such as
	// text-embedding-3-* shorten their vectors to it) and checked against
	// the answers; 0 takes the model's own, learned by Probe.
	Dimensions int
	// APIKey, when set, is sent as a bearer token. It never appears in
	// errors or Health.
	APIKey string
	// MaxTokens is the model window chunks are bounded by (Spec.MaxTokens);
	// 0 means DefaultMaxTokens.
	MaxTokens int
	// BatchSize is the most texts one request carries; 0 means
	// DefaultBatchSize.
	BatchSize int
	// MaxInFlight is the most document requests in flight at once (queries
	// may have one more); 0 means DefaultMaxInFlight.
	MaxInFlight int
	// Timeout bounds one request; 0 means DefaultTimeout.
	Timeout time.Duration
	// QueryTimeout bounds a query's embedding, retries included, and at
	// most half of the time left before its context's deadline is used;
	// 0 means DefaultQueryTimeout.
	QueryTimeout time.Duration
	// MaxRetries is how often a document request (queries are not retried)
	// failing with 429, 408, 409, a 5xx, a timeout or a transport error is
	// retried; 0 means DefaultMaxRetries, negative none.
	MaxRetries int
	// BreakerFailures is how many failed requests in a row open the circuit
	// breaker; 0 means DefaultBreakerFailures.
	BreakerFailures int
	// BreakerCooldown is how long the breaker stays open before a probe;
	// 0 means DefaultBreakerCooldown.
	BreakerCooldown time.Duration
	// HTTPClient makes the requests; nil means a client of its own.
	HTTPClient *http.Client
}

func (c Config) withDefaults() (Config, error) {
	if err := openaiapi.CheckBaseURL("embedder url", c.URL); err != nil {
		return c, err
	}
	if c.Model == "" {
		return c, errors.New(`embedder model: empty; name the model the endpoint serves, e.g. "nomic-embed-text"`)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.MaxTokens, DefaultMaxTokens)
	def(&c.BatchSize, DefaultBatchSize)
	def(&c.MaxInFlight, DefaultMaxInFlight)
	def(&c.MaxRetries, DefaultMaxRetries)
	def(&c.BreakerFailures, DefaultBreakerFailures)
	defDur(&c.Timeout, DefaultTimeout)
	defDur(&c.QueryTimeout, DefaultQueryTimeout)
	defDur(&c.BreakerCooldown, DefaultBreakerCooldown)
	c.MaxRetries = max(c.MaxRetries, 0)
	switch {
	case c.Dimensions < 0 || c.Dimensions > MaxDimensions:
		return c, fmt.Errorf("embedder dimensions: %d, want 0 (the model's own) to %d", c.Dimensions, MaxDimensions)
	case c.MaxTokens < 3 || c.MaxTokens > MaxTokensLimit:
		return c, fmt.Errorf("embedder max_tokens: %d, want 3 to %d", c.MaxTokens, MaxTokensLimit)
	case c.BatchSize < 1 || c.BatchSize > MaxBatchSize:
		return c, fmt.Errorf("embedder batch_size: %d, want 1 to %d", c.BatchSize, MaxBatchSize)
	case c.MaxInFlight < 1 || c.MaxInFlight > MaxInFlightLimit:
		return c, fmt.Errorf("embedder max_in_flight: %d, want 1 to %d", c.MaxInFlight, MaxInFlightLimit)
	case c.MaxRetries > MaxRetriesLimit:
		return c, fmt.Errorf("embedder max_retries: %d, want 0 to %d", c.MaxRetries, MaxRetriesLimit)
	case c.BreakerFailures < 1:
		return c, fmt.Errorf("embedder breaker_failures: %d, want at least 1", c.BreakerFailures)
	case c.Timeout < 0 || c.QueryTimeout < 0 || c.BreakerCooldown < 0:
		return c, errors.New("embedder timeout, query_timeout and breaker_cooldown must not be negative")
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	return c, nil
}

// Client embeds texts with an OpenAI-compatible /embeddings endpoint. It
// satisfies embed.Embedder; all its methods are safe for concurrent use.
type Client struct {
	cfg      Config
	url      string // {URL}/embeddings
	endpoint string // URL without credentials, for messages
	slots    *slots
	br       *breaker
	// sleep waits d or until ctx ends; tests replace it to record waits.
	sleep func(ctx context.Context, d time.Duration) error

	dims     atomic.Int64 // 0 until configured or probed
	requests atomic.Int64 // requests sent, retries included

	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup
	stats  embed.Stats // under mu
}

// New returns a client for cfg; it makes no request (see Probe).
func New(cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg:      cfg,
		url:      strings.TrimSuffix(cfg.URL, "/") + "/embeddings",
		endpoint: redact(cfg.URL),
		slots:    newSlots(cfg.MaxInFlight),
		br:       newBreaker(cfg.BreakerFailures, cfg.BreakerCooldown),
		sleep:    sleepCtx,
	}
	c.dims.Store(int64(cfg.Dimensions))
	return c, nil
}

// ModelID is the Spec.ID of model's vectors of dims dimensions through an
// OpenAI-compatible endpoint: switching provider, model or dimensions
// changes it, so the store re-embeds.
func ModelID(model string, dims int) string {
	return "openai:" + model + "@" + strconv.Itoa(dims)
}

// Spec describes the vectors. Its ID and Dimensions are empty until the
// dimensions are known (configured, or learned by Probe). Pooling is empty:
// the endpoint pools.
func (c *Client) Spec() embed.Spec {
	s := embed.Spec{Normalize: true, MaxTokens: c.cfg.MaxTokens}
	if d := int(c.dims.Load()); d > 0 {
		s.ID, s.Dimensions = ModelID(c.cfg.Model, d), d
	}
	return s
}

// Endpoint returns the base URL without credentials.
func (c *Client) Endpoint() string { return c.endpoint }

// Remote returns the endpoint's host when it is not on this machine (item
// text is then sent to it), else "".
func (c *Client) Remote() string {
	u, err := url.Parse(c.cfg.URL)
	if err != nil || isLoopbackHost(u.Hostname()) {
		return ""
	}
	return u.Host
}

// isLoopbackHost reports whether host (no port) is localhost or a loopback IP.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redact returns raw without the password or user of its userinfo.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// Probe embeds one text to learn the model's dimensions, or to check the
// configured ones: a mismatch is an error wrapping ErrDimensions that says
// what to configure. It goes through retries and the breaker like any
// request.
func (c *Client) Probe(ctx context.Context) error {
	vecs, err := c.embed(ctx, []string{"ctxd dimension probe"}, embed.Prompt, true)
	if err != nil {
		return err
	}
	got := len(vecs[0])
	if want := c.cfg.Dimensions; want > 0 && got != want {
		return fmt.Errorf("%w: %s returns %d-dimensional vectors of %q, but dimensions = %d is configured; set embedder.dimensions to %d (or 0 to take the model's own), or check that the endpoint serves the model you meant",
			ErrDimensions, c.endpoint, got, c.cfg.Model, want, got)
	}
	c.dims.Store(int64(got))
	return nil
}

// EmbedAt returns one unit vector per text, in order, at priority p (see
// embed.Embedder). Texts go in requests of at most BatchSize, MaxInFlight
// at a time; a query's embedding is not retried and gives up after
// QueryTimeout, or half the time ctx has left, whichever is shorter. While the breaker is open it
// fails at once with an error wrapping embed.ErrUnavailable.
func (c *Client) EmbedAt(ctx context.Context, texts []string, p embed.Priority) ([][]float32, error) {
	if p < embed.Background || p > embed.Query {
		return nil, fmt.Errorf("embed: unknown priority %d", p)
	}
	if c.dims.Load() == 0 {
		return nil, fmt.Errorf("%w: the dimensions of %s are not known yet (its probe has not answered)", embed.ErrUnavailable, c.endpoint)
	}
	start := time.Now()
	out, err := c.embed(ctx, texts, p, false)
	if err == nil {
		c.mu.Lock()
		c.stats.Texts[p] += int64(len(texts))
		if p == embed.Query {
			c.stats.CountQuery(time.Since(start))
		}
		c.mu.Unlock()
	}
	return out, err
}

// Stats counts the texts embedded at each priority and how long query
// embeddings took, from the call to the vectors, the wait for a request
// slot included.
func (c *Client) Stats() embed.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.QueryWaitBuckets = slices.Clone(s.QueryWaitBuckets)
	return s
}

func (c *Client) embed(ctx context.Context, texts []string, p embed.Priority, probe bool) ([][]float32, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, embed.ErrClosed
	}
	c.calls.Add(1)
	c.mu.Unlock()
	defer c.calls.Done()
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	parent := ctx
	if p == embed.Query {
		budget := c.cfg.QueryTimeout
		if dl, ok := ctx.Deadline(); ok {
			budget = min(budget, time.Until(dl)/2)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := make([][]float32, len(texts))
	n := (len(texts) + c.cfg.BatchSize - 1) / c.cfg.BatchSize
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, c.cfg.MaxInFlight) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1)) - 1
				if b >= n || ctx.Err() != nil {
					return
				}
				start := b * c.cfg.BatchSize
				end := min(start+c.cfg.BatchSize, len(texts))
				vecs, err := c.send(ctx, texts[start:end], p, probe)
				if err != nil {
					cancel(err)
					return
				}
				copy(out[start:end], vecs)
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		if p == embed.Query && errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
			return nil, fmt.Errorf("%w: %s did not embed the query in time", embed.ErrUnavailable, c.endpoint)
		}
		return nil, err
	}
	return out, nil
}

// send makes one batch's request, retried as openaiapi.RetryWait allows.
func (c *Client) send(ctx context.Context, texts []string, p embed.Priority, probe bool) ([][]float32, error) {
	for attempt := 0; ; attempt++ {
		if err := c.admit(ctx, p); err != nil {
			return nil, err
		}
		if err := c.slots.acquire(ctx, p); err != nil {
			c.br.abandon()
			return nil, err
		}
		vecs, err := c.call(ctx, texts, probe)
		c.slots.release()
		switch {
		case err == nil:
			c.br.record(nil)
			return vecs, nil
		case ctx.Err() != nil:
			c.br.abandon()
			return nil, context.Cause(ctx)
		}
		c.br.record(err)
		wait, retry := openaiapi.RetryWait(err, attempt, baseBackoff, maxBackoff, true)
		if p == embed.Query {
			// A BM25 answer now beats a hybrid one after backoffs.
			return nil, fmt.Errorf("%w: %v", embed.ErrUnavailable, err)
		}
		if !retry || attempt >= c.cfg.MaxRetries {
			return nil, err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, fmt.Errorf("%w: %v (no time left to retry)", embed.ErrUnavailable, err)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, context.Cause(ctx)
		}
	}
}

// admit waits until the breaker lets a request go: queries never wait, and
// no request waits while the breaker is open (the caller falls back or
// tries later); documents wait for a probe in flight.
func (c *Client) admit(ctx context.Context, p embed.Priority) error {
	for {
		ok, open, changed := c.br.admit()
		if ok {
			return nil
		}
		if open || p == embed.Query {
			return c.unavailable()
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-changed:
		}
	}
}

// unavailable is the error of a call the open breaker refuses.
func (c *Client) unavailable() error {
	if h := c.Health(); h != "" {
		return fmt.Errorf("%w: %s", embed.ErrUnavailable, h)
	}
	return fmt.Errorf("%w: %s is being probed after failures", embed.ErrUnavailable, c.endpoint)
}

// Health is "" while the endpoint answers or the breaker lets a probe go,
// else what failed and when the next probe goes.
func (c *Client) Health() string {
	open, failures, last, retryAt := c.br.state()
	if !open {
		return ""
	}
	wait := retryAt.Sub(c.br.now())
	if wait <= 0 {
		return ""
	}
	return fmt.Sprintf("embedding endpoint %s is failing (%d failed requests in a row, the last: %v); trying again in %s",
		c.endpoint, failures, last, wait.Round(time.Second))
}

// Close makes later calls fail with embed.ErrClosed and waits for those in
// flight.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.calls.Wait()
	return nil
}

// request and response are the parts of the embeddings API's JSON used.
type request struct {
	Input      []string `json:"input"`
	Model      string   `json:"model"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// call makes one request, bounded by Timeout, and returns its vectors,
// checked and L2-normalised. A probe accepts any dimensions.
func (c *Client) call(ctx context.Context, texts []string, probe bool) ([][]float32, error) {
	body, err := json.Marshal(request{Input: texts, Model: c.cfg.Model, Dimensions: c.cfg.Dimensions})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	c.requests.Add(1)
	res, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL, credentials included
		}
		return nil, fmt.Errorf("embedding endpoint %s: %w", c.endpoint, err)
	}
	defer res.Body.Close()
	dims := int(c.dims.Load())
	limit := c.responseLimit(len(texts), dims)
	raw, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("embedding endpoint %s: read the answer: %w", c.endpoint, err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, openaiapi.NewStatusError("embedding endpoint "+c.endpoint, res, raw)
	}
	if int64(len(raw)) > limit {
		return nil, &openaiapi.ProtocolError{Msg: fmt.Sprintf("embedding endpoint %s: the answer is larger than %d bytes for %d texts", c.endpoint, limit, len(texts))}
	}
	if probe {
		dims = 0
	}
	return decode(raw, len(texts), dims, c.endpoint)
}

// responseLimit bounds the answer read for n texts: about 24 bytes of JSON
// per number, plus room for the envelope.
func (c *Client) responseLimit(n, dims int) int64 {
	if dims == 0 {
		dims = MaxDimensions
	}
	return int64(n)*int64(dims)*24 + 64<<10
}

// decode parses an answer for n texts, each vector of dims dimensions (any
// when 0, but all alike), in the order of its index fields, normalised.
func decode(raw []byte, n, dims int, endpoint string) ([][]float32, error) {
	bad := func(format string, args ...any) error {
		return &openaiapi.ProtocolError{Msg: fmt.Sprintf("embedding endpoint %s: ", endpoint) + fmt.Sprintf(format, args...) +
			"; check that the url ends before /embeddings and the endpoint speaks the OpenAI embeddings API"}
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, bad("the answer is not an embeddings response (%v)", err)
	}
	if len(r.Data) != n {
		return nil, bad("%d vectors for %d texts", len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, bad("vector index %d is out of range or repeated", d.Index)
		}
		if dims == 0 {
			dims = len(d.Embedding)
		}
		if len(d.Embedding) != dims || dims == 0 || dims > MaxDimensions {
			return nil, bad("a vector has %d dimensions, want %d", len(d.Embedding), dims)
		}
		if !normalize(d.Embedding) {
			return nil, bad("vector %d is zero or not finite", d.Index)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// normalize scales v to unit length and reports whether it could.
func normalize(v []float32) bool {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return false
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

var _ embed.Embedder = (*Client)(nil)
