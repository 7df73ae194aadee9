package daemon

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/enrich"
)

// EnricherConfig is the [enricher] table: the optional background enricher
// that asks an OpenAI-compatible chat endpoint (a local llama.cpp or Ollama
// server, or a hosted API) for the questions each chunk answers, stored as
// question vectors (see package enrich). It is off unless endpoint is set.
// Each key has a CTXD_ENRICHER_* variable.
type EnricherConfig struct {
	// Endpoint is the API's base URL, the part before /chat/completions:
	// http://127.0.0.1:11434/v1 for Ollama, http://127.0.0.1:8080/v1 for
	// llama.cpp's server. Empty turns the enricher off
	// (CTXD_ENRICHER_ENDPOINT).
	Endpoint string `toml:"endpoint"`
	// Model is the chat model asked; required with endpoint
	// (CTXD_ENRICHER_MODEL).
	Model string `toml:"model"`
	// APIKeyEnv names the environment variable holding the API key, sent as
	// a bearer token; the key itself never goes in the config file. Empty:
	// no key (CTXD_ENRICHER_API_KEY_ENV).
	APIKeyEnv string `toml:"api_key_env"`
	// QuestionsPerChunk is how many questions to ask for per chunk, 1 to
	// 10 (CTXD_ENRICHER_QUESTIONS_PER_CHUNK).
	QuestionsPerChunk int `toml:"questions_per_chunk"`
	// RequestsPerMinute bounds the calls, retries included
	// (CTXD_ENRICHER_REQUESTS_PER_MINUTE).
	RequestsPerMinute int `toml:"requests_per_minute"`
	// MaxRetries is how often a call that failed with 429, a 5xx or a
	// transport error is retried, with backoff honouring Retry-After, 0 to
	// 10; a call that still fails ends the pass, retried at the next
	// (CTXD_ENRICHER_MAX_RETRIES).
	MaxRetries int `toml:"max_retries"`
	// Timeout bounds one call (CTXD_ENRICHER_TIMEOUT).
	Timeout Duration `toml:"timeout"`
	// RescanInterval is the pause between passes over the store, after
	// which chunks written meanwhile are asked about
	// (CTXD_ENRICHER_RESCAN_INTERVAL).
	RescanInterval Duration `toml:"rescan_interval"`
}

// DefaultEnricherConfig is the [enricher] table when the config sets none:
// off, with the defaults it runs with once an endpoint is set.
func DefaultEnricherConfig() EnricherConfig {
	return EnricherConfig{
		QuestionsPerChunk: enrich.DefaultQuestionsPerChunk,
		RequestsPerMinute: enrich.DefaultRequestsPerMinute,
		MaxRetries:        enrich.DefaultMaxRetries,
		Timeout:           Duration{enrich.DefaultTimeout},
		RescanInterval:    Duration{enrich.DefaultRescan},
	}
}

// applyEnv overlays the CTXD_ENRICHER_* variables.
func (c *EnricherConfig) applyEnv(lookupEnv func(string) (string, bool)) error {
	for k, p := range map[string]*string{"CTXD_ENRICHER_ENDPOINT": &c.Endpoint, "CTXD_ENRICHER_MODEL": &c.Model, "CTXD_ENRICHER_API_KEY_ENV": &c.APIKeyEnv} {
		if v, ok := lookupEnv(k); ok {
			*p = v
		}
	}
	for k, p := range map[string]*int{"CTXD_ENRICHER_QUESTIONS_PER_CHUNK": &c.QuestionsPerChunk,
		"CTXD_ENRICHER_REQUESTS_PER_MINUTE": &c.RequestsPerMinute, "CTXD_ENRICHER_MAX_RETRIES": &c.MaxRetries} {
		if v, ok := lookupEnv(k); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %q is not a whole number", k, v)
			}
			*p = n
		}
	}
	for k, d := range map[string]*Duration{"CTXD_ENRICHER_TIMEOUT": &c.Timeout, "CTXD_ENRICHER_RESCAN_INTERVAL": &c.RescanInterval} {
		if v, ok := lookupEnv(k); ok {
			if err := d.UnmarshalText([]byte(v)); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	return nil
}

// validate names the first bad key of the table.
func (c *EnricherConfig) validate() error {
	if c.Endpoint != "" {
		if err := enrich.CheckEndpoint(c.Endpoint); err != nil {
			return fmt.Errorf("config: enricher.endpoint: %w", err)
		}
		if c.Model == "" {
			return fmt.Errorf("config: enricher.model must be set with enricher.endpoint (the chat model to ask, e.g. \"llama3.2\")")
		}
	}
	if c.QuestionsPerChunk < 1 || c.QuestionsPerChunk > enrich.MaxQuestionsPerChunk {
		return fmt.Errorf("config: enricher.questions_per_chunk must be 1 to %d, got %d", enrich.MaxQuestionsPerChunk, c.QuestionsPerChunk)
	}
	if c.RequestsPerMinute < 1 {
		return fmt.Errorf("config: enricher.requests_per_minute must be positive, got %d", c.RequestsPerMinute)
	}
	if c.MaxRetries < 0 || c.MaxRetries > enrich.MaxRetriesLimit {
		return fmt.Errorf("config: enricher.max_retries must be 0 to %d, got %d", enrich.MaxRetriesLimit, c.MaxRetries)
	}
	for _, d := range []struct {
		name string
		d    Duration
	}{{"timeout", c.Timeout}, {"rescan_interval", c.RescanInterval}} {
		if d.d.Duration <= 0 {
			return fmt.Errorf("config: enricher.%s must be positive, got %s", d.name, d.d)
		}
	}
	return nil
}

// startEnricher runs the enricher when an endpoint is configured; the
// API key is read from the environment variable api_key_env names.
func (d *Daemon) startEnricher() error {
	c := d.cfg.Enricher
	if c.Endpoint == "" {
		return nil
	}
	var key string
	if c.APIKeyEnv != "" {
		if key = os.Getenv(c.APIKeyEnv); key == "" {
			return fmt.Errorf("config: enricher.api_key_env names %s, which is not set or empty; export the key in it, or leave api_key_env empty for an endpoint without a key", c.APIKeyEnv)
		}
	}
	e, err := enrich.New(d.b.store, enrich.Config{
		Endpoint: c.Endpoint, Model: c.Model, APIKey: key,
		QuestionsPerChunk: c.QuestionsPerChunk, RequestsPerMinute: c.RequestsPerMinute, MaxRetries: c.MaxRetries,
		Timeout: c.Timeout.Duration, Rescan: c.RescanInterval.Duration,
	}, d.log.With("component", "enricher"))
	if err != nil {
		return fmt.Errorf("config: enricher: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	d.b.enricher, d.stopEnrich, d.enrichDone = e, stop, make(chan struct{})
	go func() {
		defer close(d.enrichDone)
		e.Run(ctx)
	}()
	d.log.Info("question enricher on", "endpoint", e.Status().Endpoint, "model", c.Model)
	return nil
}

// stopEnricher stops the enricher and waits for it, before the store closes.
func (d *Daemon) stopEnricher() {
	if d.stopEnrich != nil {
		d.stopEnrich()
		<-d.enrichDone
	}
}

// enricherStatus is EmbeddingStatus.enricher: nil when the enricher is off.
func enricherStatus(e *enrich.Enricher) *ctxdv1.EnricherStatus {
	if e == nil {
		return nil
	}
	st := e.Status()
	out := &ctxdv1.EnricherStatus{
		Endpoint: st.Endpoint, Model: st.Model, PendingChunks: st.Pending, EnrichedChunks: st.Enriched,
		FailedCalls: st.FailedCalls, LastError: st.LastError,
	}
	if !st.LastErrorAt.IsZero() {
		out.LastErrorAt = timestamppb.New(st.LastErrorAt)
	}
	return out
}
