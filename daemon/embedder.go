package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ctxd/ctxd/index/embed/openai"
	"github.com/ctxd/ctxd/index/indexer"
)

// Embedder kinds.
const (
	// EmbedderONNX is the local model in model_dir, run by ONNX Runtime.
	EmbedderONNX = "onnx"
	// EmbedderOpenAI is an OpenAI-compatible /embeddings endpoint.
	EmbedderOpenAI = "openai"
)

// maxAPIKeyFileBytes bounds the api_key_file read.
const maxAPIKeyFileBytes = 4 << 10

// startProbeTimeout bounds the dimension probe at start; an endpoint that
// does not answer within it is probed again in the background.
const startProbeTimeout = 10 * time.Second

// EmbedderConfig is the [embedder] table: what computes the vectors. Each
// key has a CTXD_EMBEDDER_* variable; kind, url and model have flags too.
// The API key never comes from a flag or the config file itself.
type EmbedderConfig struct {
	// Kind is "onnx" (the local model in model_dir, the default) or
	// "openai" (an OpenAI-compatible endpoint: Ollama, vLLM,
	// text-embeddings-inference, LM Studio, OpenAI) (--embedder,
	// CTXD_EMBEDDER_KIND).
	Kind string `toml:"kind"`
	// URL is the endpoint's base URL, the part before /embeddings; the
	// default is Ollama's on loopback. Item text is sent to it: any other
	// host is used only when named here (--embedder-url, CTXD_EMBEDDER_URL).
	URL string `toml:"url"`
	// Model is the model asked for; required with kind "openai"
	// (--embedder-model, CTXD_EMBEDDER_MODEL).
	Model string `toml:"model"`
	// Dimensions, when set, is sent with every request and checked at start
	// against what the endpoint returns; 0 takes the model's own
	// (CTXD_EMBEDDER_DIMENSIONS).
	Dimensions int `toml:"dimensions"`
	// APIKeyEnv names the environment variable holding the API key, sent as
	// a bearer token (CTXD_EMBEDDER_API_KEY_ENV).
	APIKeyEnv string `toml:"api_key_env"`
	// APIKeyFile is a file holding the API key instead
	// (CTXD_EMBEDDER_API_KEY_FILE).
	APIKeyFile string `toml:"api_key_file"`
	// MaxTokens is the remote model's window, which chunks are bounded by
	// (CTXD_EMBEDDER_MAX_TOKENS).
	MaxTokens int `toml:"max_tokens"`
	// BatchSize is the most texts per request (CTXD_EMBEDDER_BATCH_SIZE).
	BatchSize int `toml:"batch_size"`
	// MaxInFlight is the most document requests in flight; queries may
	// have one more (CTXD_EMBEDDER_MAX_IN_FLIGHT).
	MaxInFlight int `toml:"max_in_flight"`
	// Timeout bounds one request (CTXD_EMBEDDER_TIMEOUT).
	Timeout Duration `toml:"timeout"`
	// QueryTimeout bounds a query's embedding, after which the search runs
	// in BM25 mode (CTXD_EMBEDDER_QUERY_TIMEOUT).
	QueryTimeout Duration `toml:"query_timeout"`
	// MaxRetries is how often a request failing with 429, 5xx, a timeout
	// or a transport error is retried (CTXD_EMBEDDER_MAX_RETRIES).
	MaxRetries int `toml:"max_retries"`
	// BreakerFailures failed requests in a row stop calls for
	// BreakerCooldown (CTXD_EMBEDDER_BREAKER_FAILURES,
	// CTXD_EMBEDDER_BREAKER_COOLDOWN).
	BreakerFailures int      `toml:"breaker_failures"`
	BreakerCooldown Duration `toml:"breaker_cooldown"`
}

// DefaultEmbedderConfig is the [embedder] table when the config sets none:
// the local model, and the defaults an endpoint runs with.
func DefaultEmbedderConfig() EmbedderConfig {
	return EmbedderConfig{
		Kind:            EmbedderONNX,
		URL:             openai.DefaultURL,
		MaxTokens:       openai.DefaultMaxTokens,
		BatchSize:       openai.DefaultBatchSize,
		MaxInFlight:     openai.DefaultMaxInFlight,
		Timeout:         Duration{openai.DefaultTimeout},
		QueryTimeout:    Duration{openai.DefaultQueryTimeout},
		MaxRetries:      openai.DefaultMaxRetries,
		BreakerFailures: openai.DefaultBreakerFailures,
		BreakerCooldown: Duration{openai.DefaultBreakerCooldown},
	}
}

// applyEnv overlays the CTXD_EMBEDDER_* variables.
func (c *EmbedderConfig) applyEnv(lookupEnv func(string) (string, bool)) error {
	for k, p := range map[string]*string{"CTXD_EMBEDDER_KIND": &c.Kind, "CTXD_EMBEDDER_URL": &c.URL, "CTXD_EMBEDDER_MODEL": &c.Model,
		"CTXD_EMBEDDER_API_KEY_ENV": &c.APIKeyEnv, "CTXD_EMBEDDER_API_KEY_FILE": &c.APIKeyFile} {
		if v, ok := lookupEnv(k); ok {
			*p = v
		}
	}
	for k, p := range map[string]*int{"CTXD_EMBEDDER_DIMENSIONS": &c.Dimensions, "CTXD_EMBEDDER_MAX_TOKENS": &c.MaxTokens,
		"CTXD_EMBEDDER_BATCH_SIZE": &c.BatchSize, "CTXD_EMBEDDER_MAX_IN_FLIGHT": &c.MaxInFlight, "CTXD_EMBEDDER_MAX_RETRIES": &c.MaxRetries,
		"CTXD_EMBEDDER_BREAKER_FAILURES": &c.BreakerFailures} {
		if v, ok := lookupEnv(k); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %q is not a whole number", k, v)
			}
			*p = n
		}
	}
	for k, d := range map[string]*Duration{"CTXD_EMBEDDER_TIMEOUT": &c.Timeout, "CTXD_EMBEDDER_QUERY_TIMEOUT": &c.QueryTimeout,
		"CTXD_EMBEDDER_BREAKER_COOLDOWN": &c.BreakerCooldown} {
		if v, ok := lookupEnv(k); ok {
			if err := d.UnmarshalText([]byte(v)); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	return nil
}

// validate names the first bad key of the table.
func (c *EmbedderConfig) validate() error {
	switch c.Kind {
	case EmbedderONNX:
		return nil
	case EmbedderOpenAI:
	default:
		return fmt.Errorf("config: embedder.kind must be %q (the local model) or %q (an OpenAI-compatible endpoint), got %q", EmbedderONNX, EmbedderOpenAI, c.Kind)
	}
	if c.APIKeyEnv != "" && c.APIKeyFile != "" {
		return errors.New("config: embedder: set api_key_env or api_key_file, not both")
	}
	for _, d := range []struct {
		name string
		d    Duration
	}{{"timeout", c.Timeout}, {"query_timeout", c.QueryTimeout}, {"breaker_cooldown", c.BreakerCooldown}} {
		if d.d.Duration <= 0 {
			return fmt.Errorf("config: embedder.%s must be positive, got %s", d.name, d.d)
		}
	}
	// The provider reads 0 as its default; here every default is written out.
	for _, n := range []struct {
		name string
		v    int
	}{{"max_tokens", c.MaxTokens}, {"batch_size", c.BatchSize}, {"max_in_flight", c.MaxInFlight}, {"breaker_failures", c.BreakerFailures}} {
		if n.v <= 0 {
			return fmt.Errorf("config: embedder.%s must be positive, got %d", n.name, n.v)
		}
	}
	if c.MaxRetries < 0 {
		return fmt.Errorf("config: embedder.max_retries must be 0 to %d, got %d", openai.MaxRetriesLimit, c.MaxRetries)
	}
	if _, err := openai.New(c.client("")); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// client is the table as the provider takes it, with key.
func (c *EmbedderConfig) client(key string) openai.Config {
	retries := c.MaxRetries
	if retries == 0 {
		retries = -1 // none: the provider's 0 means its default
	}
	return openai.Config{
		URL: c.URL, Model: c.Model, Dimensions: c.Dimensions, APIKey: key, MaxTokens: c.MaxTokens,
		BatchSize: c.BatchSize, MaxInFlight: c.MaxInFlight, Timeout: c.Timeout.Duration, QueryTimeout: c.QueryTimeout.Duration,
		MaxRetries: retries, BreakerFailures: c.BreakerFailures, BreakerCooldown: c.BreakerCooldown.Duration,
	}
}

// apiKey reads the key from the variable or file the table names; "" when
// it names neither.
func (c *EmbedderConfig) apiKey() (string, error) {
	switch {
	case c.APIKeyEnv != "":
		key := os.Getenv(c.APIKeyEnv)
		if key == "" {
			return "", fmt.Errorf("config: embedder.api_key_env names %s, which is not set or empty; export the key in it, or leave api_key_env empty for an endpoint without a key", c.APIKeyEnv)
		}
		return key, nil
	case c.APIKeyFile != "":
		f, err := os.Open(c.APIKeyFile)
		if err != nil {
			return "", fmt.Errorf("config: embedder.api_key_file: %w", err)
		}
		defer f.Close()
		b := make([]byte, maxAPIKeyFileBytes+1)
		n, _ := f.Read(b)
		key := strings.TrimSpace(string(b[:n]))
		if n > maxAPIKeyFileBytes || key == "" {
			return "", fmt.Errorf("config: embedder.api_key_file %s must hold the key alone (1 to %d bytes)", c.APIKeyFile, maxAPIKeyFileBytes)
		}
		return key, nil
	}
	return "", nil
}

// embedderInfo is what Status says of the embedder.
type embedderInfo struct {
	kind     string // EmbedderONNX or EmbedderOpenAI
	endpoint string // the endpoint's base URL without credentials
	remote   string // the endpoint's host when it is not on loopback
}

// newIndexer returns the indexer of the configured embedder. With a remote
// one it asks the endpoint for its dimensions first: dimensions other than
// the configured ones refuse the start, with what to configure; an endpoint
// that does not answer is asked again in the background.
func (d *Daemon) newIndexer(ctx context.Context) (*indexer.Indexer, error) {
	cfg := d.cfg
	if cfg.Embedder.Kind != EmbedderOpenAI {
		d.b.embedder = embedderInfo{kind: EmbedderONNX}
		return indexer.New(d.b.store, d.b.engine, d.log, cfg.ModelDir, cfg.OnnxRuntimeLib), nil
	}
	key, err := cfg.Embedder.apiKey()
	if err != nil {
		return nil, err
	}
	c, err := openai.New(cfg.Embedder.client(key))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	d.b.embedder = embedderInfo{kind: EmbedderOpenAI, endpoint: c.Endpoint(), remote: c.Remote()}
	if d.b.embedder.remote != "" {
		d.log.Warn("item text is sent to a remote embedding endpoint", "host", d.b.embedder.remote)
	}
	pctx, cancel := context.WithTimeout(ctx, startProbeTimeout)
	err = c.Probe(pctx)
	cancel()
	if errors.Is(err, openai.ErrDimensions) {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err != nil {
		d.log.Warn("embedding endpoint does not answer; searches run in BM25 mode until it does", "endpoint", c.Endpoint(), "err", err)
	}
	return indexer.NewRemote(d.b.store, d.b.engine, d.log, cfg.ModelDir, c), nil
}
