package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEmbedderConfig_FileEnvAndDefaults(t *testing.T) {
	cfg := DefaultConfig()
	if e := cfg.Embedder; e.Kind != EmbedderONNX || e.URL != "http://127.0.0.1:11434/v1" || e.MaxInFlight != 4 || e.MaxRetries != 4 {
		t.Fatalf("defaults %+v: want the local model, and Ollama on loopback for openai", e)
	}
	if err := cfg.LoadConfig(strings.NewReader(`
[embedder]
kind = "openai"
url = "http://127.0.0.1:8080/v1"
model = "bge-small-en"
dimensions = 384
api_key_env = "MY_KEY"
max_tokens = 512
batch_size = 16
max_in_flight = 8
timeout = "20s"
query_timeout = "2s"
max_retries = 2
breaker_failures = 3
breaker_cooldown = "10s"
`)); err != nil {
		t.Fatal(err)
	}
	e := cfg.Embedder
	if e.Kind != "openai" || e.Model != "bge-small-en" || e.Dimensions != 384 || e.APIKeyEnv != "MY_KEY" || e.MaxTokens != 512 || e.BatchSize != 16 ||
		e.MaxInFlight != 8 || e.Timeout.Duration != 20*time.Second || e.QueryTimeout.Duration != 2*time.Second || e.MaxRetries != 2 ||
		e.BreakerFailures != 3 || e.BreakerCooldown.Duration != 10*time.Second {
		t.Fatalf("loaded %+v", e)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	env := map[string]string{"CTXD_EMBEDDER_MODEL": "nomic-embed-text", "CTXD_EMBEDDER_URL": "https://api.example.com/v1",
		"CTXD_EMBEDDER_DIMENSIONS": "768", "CTXD_EMBEDDER_MAX_IN_FLIGHT": "2", "CTXD_EMBEDDER_BREAKER_COOLDOWN": "1m",
		"CTXD_EMBEDDER_API_KEY_ENV": "", "CTXD_EMBEDDER_API_KEY_FILE": "/run/secrets/key"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if err := cfg.ApplyEnv(lookup); err != nil {
		t.Fatal(err)
	}
	e = cfg.Embedder
	if e.Model != "nomic-embed-text" || e.URL != "https://api.example.com/v1" || e.Dimensions != 768 || e.MaxInFlight != 2 ||
		e.BreakerCooldown.Duration != time.Minute || e.APIKeyEnv != "" || e.APIKeyFile != "/run/secrets/key" {
		t.Fatalf("env not applied: %+v", e)
	}
	env["CTXD_EMBEDDER_BATCH_SIZE"] = "many"
	if err := cfg.ApplyEnv(lookup); err == nil || !strings.Contains(err.Error(), "CTXD_EMBEDDER_BATCH_SIZE") {
		t.Errorf("bad number: %v", err)
	}
}

func TestEmbedderConfig_Validate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*EmbedderConfig)
		want   string
	}{
		{"kind", func(e *EmbedderConfig) { e.Kind = "cohere" }, `embedder.kind must be "onnx"`},
		{"no model", func(e *EmbedderConfig) { e.Model = "" }, "embedder model: empty"},
		{"url", func(e *EmbedderConfig) { e.URL = "127.0.0.1:11434" }, "not a base URL"},
		{"both keys", func(e *EmbedderConfig) { e.APIKeyEnv, e.APIKeyFile = "K", "/k" }, "not both"},
		{"batch", func(e *EmbedderConfig) { e.BatchSize = 5000 }, "batch_size"},
		{"in flight", func(e *EmbedderConfig) { e.MaxInFlight = 0 }, "max_in_flight"},
		{"timeout", func(e *EmbedderConfig) { e.Timeout.Duration = 0 }, "embedder.timeout"},
		{"retries", func(e *EmbedderConfig) { e.MaxRetries = -1 }, "max_retries"},
		{"max tokens", func(e *EmbedderConfig) { e.MaxTokens = 100000 }, "max_tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Embedder.Kind, cfg.Embedder.Model = EmbedderOpenAI, "m"
			tc.mutate(&cfg.Embedder)
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestEmbedderConfig_APIKey(t *testing.T) {
	e := DefaultEmbedderConfig()
	if key, err := e.apiKey(); key != "" || err != nil {
		t.Fatalf("no key configured: %q, %v", key, err)
	}
	e.APIKeyEnv = "CTXD_TEST_EMBEDDER_KEY"
	t.Setenv("CTXD_TEST_EMBEDDER_KEY", "")
	if _, err := e.apiKey(); err == nil || !strings.Contains(err.Error(), "CTXD_TEST_EMBEDDER_KEY, which is not set") {
		t.Fatalf("unset variable: %v", err)
	}
	t.Setenv("CTXD_TEST_EMBEDDER_KEY", "sk-env")
	if key, err := e.apiKey(); key != "sk-env" || err != nil {
		t.Fatalf("from env: %q, %v", key, err)
	}
	e.APIKeyEnv, e.APIKeyFile = "", filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(e.APIKeyFile, []byte("sk-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if key, err := e.apiKey(); key != "sk-file" || err != nil {
		t.Fatalf("from file: %q, %v", key, err)
	}
	if err := os.WriteFile(e.APIKeyFile, []byte(strings.Repeat("k", maxAPIKeyFileBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.apiKey(); err == nil || !strings.Contains(err.Error(), "must hold the key alone") {
		t.Fatalf("oversized file: %v", err)
	}
}
