package daemon

import (
	"strings"
	"testing"
	"time"
)

func TestConfig_LoadConfig(t *testing.T) {
	cfg := DefaultConfig()
	err := cfg.LoadConfig(strings.NewReader(`
data_dir = "/tmp/x"
http = ""
max_content_bytes = 1024
shutdown_timeout = "3s"
context_roots = ["self:/", "self:/researcher/"]
history = false
history_keep = 5
history_min_age = "48h"
index_wait = "250ms"
store = "postgres://ctxd@db.example/mem"
[[tokens]]
name = "ci"
sha256 = "` + sha256Hex("t") + `"
scopes = ["read"]
agent = true
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != "/tmp/x" || cfg.HTTP != "" || cfg.MaxContentBytes != 1024 || cfg.ShutdownTimeout.Duration != 3*time.Second || len(cfg.Tokens) != 1 {
		t.Errorf("loaded %+v", cfg)
	}
	if strings.Join(cfg.ContextRoots, ",") != "self:/,self:/researcher/" || cfg.History || cfg.HistoryKeep != 5 ||
		cfg.HistoryMinAge.Duration != 48*time.Hour || !cfg.Tokens[0].Agent || cfg.IndexWait.Duration != 250*time.Millisecond ||
		cfg.Store != "postgres://ctxd@db.example/mem" {
		t.Errorf("context and history settings not loaded: %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestConfig_LoadConfigRejectsUnknownKey(t *testing.T) {
	cfg := DefaultConfig()
	err := cfg.LoadConfig(strings.NewReader(`data_dirr = "/tmp/x"`))
	if err == nil || !strings.Contains(err.Error(), "data_dirr") {
		t.Fatalf("err = %v, want it to name the unknown key", err)
	}
}

func TestConfig_ApplyEnv(t *testing.T) {
	env := map[string]string{"CTXD_DATA_DIR": "/d", "CTXD_HTTP": "", "CTXD_MAX_CONTENT_BYTES": "77",
		"CTXD_ALLOWED_ROOTS": "/srv/docs:/home/me", "CTXD_ALLOW_PRIVATE_NETWORK": "true", "CTXD_URL_TTL": "2h",
		"CTXD_CONTEXT_ROOTS": "self:/a/,team:/", "CTXD_HISTORY": "false", "CTXD_HISTORY_KEEP": "3", "CTXD_HISTORY_MIN_AGE": "1h",
		"CTXD_INDEX_WAIT": "0s", "CTXD_STORE": "postgresql:///mem?host=/run/postgresql", "CTXD_METRICS": "127.0.0.1:9464"}
	cfg := DefaultConfig()
	if !cfg.History || cfg.HistoryKeep != 20 || cfg.HistoryMinAge.Duration != 30*24*time.Hour || strings.Join(cfg.ContextRoots, ",") != "self:/" {
		t.Errorf("defaults: history %v keep %d min age %s roots %v", cfg.History, cfg.HistoryKeep, cfg.HistoryMinAge, cfg.ContextRoots)
	}
	if cfg.IndexWait.Duration != time.Second || cfg.writeWait() != time.Second {
		t.Errorf("default index_wait %s (engine's %s), want 1s", cfg.IndexWait, cfg.writeWait())
	}
	if err := cfg.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.ContextRoots, ",") != "self:/a/,team:/" || cfg.History || cfg.HistoryKeep != 3 || cfg.HistoryMinAge.Duration != time.Hour {
		t.Errorf("context and history env not applied: %+v", cfg)
	}
	if cfg.IndexWait.Duration != 0 || cfg.writeWait() >= 0 {
		t.Errorf("CTXD_INDEX_WAIT=0s: index_wait %s, engine's wait %s; want it off (negative)", cfg.IndexWait, cfg.writeWait())
	}
	if cfg.DataDir != "/d" || cfg.Store != "postgresql:///mem?host=/run/postgresql" || cfg.HTTP != "" || cfg.Metrics != "127.0.0.1:9464" || cfg.MaxContentBytes != 77 || strings.Join(cfg.AllowedRoots, ",") != "/srv/docs,/home/me" ||
		!cfg.AllowPrivateNetwork || cfg.AllowSecrets || cfg.URLTTL.Duration != 2*time.Hour {
		t.Errorf("env not applied: %+v", cfg)
	}
	env["CTXD_ALLOW_SECRETS"] = "maybe"
	if err := cfg.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err == nil || !strings.Contains(err.Error(), "CTXD_ALLOW_SECRETS") {
		t.Errorf("bad bool: %v", err)
	}
	delete(env, "CTXD_ALLOW_SECRETS")
	env["CTXD_HISTORY_KEEP"] = "all"
	if err := cfg.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err == nil || !strings.Contains(err.Error(), "CTXD_HISTORY_KEEP") {
		t.Errorf("bad history keep: %v", err)
	}
	delete(env, "CTXD_HISTORY_KEEP")
	env["CTXD_MAX_CONTENT_BYTES"] = "lots"
	if err := cfg.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err == nil || !strings.Contains(err.Error(), "CTXD_MAX_CONTENT_BYTES") {
		t.Errorf("bad number: %v", err)
	}
}

func TestConfig_Validate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string // substring of the error naming the field
	}{
		{"non-loopback http", func(c *Config) { c.HTTP = "0.0.0.0:7077" }, "http"},
		{"public grpc", func(c *Config) { c.GRPCTCP = "8.8.8.8:1" }, "grpc_tcp"},
		{"non-loopback metrics", func(c *Config) { c.Metrics = "0.0.0.0:9464" }, "metrics"},
		{"no port", func(c *Config) { c.HTTP = "127.0.0.1" }, "http"},
		{"zero limit", func(c *Config) { c.MaxContentBytes = 0 }, "max_content_bytes"},
		{"log level", func(c *Config) { c.LogLevel = "loud" }, "log_level"},
		{"long socket", func(c *Config) { c.Socket = "/" + strings.Repeat("s", 120) }, "socket"},
		{"bad scope", func(c *Config) {
			c.Tokens = []TokenConfig{{Name: "x", SHA256: sha256Hex("x"), Scopes: []string{"root"}}}
		}, "tokens[0]"},
		{"relative root", func(c *Config) { c.AllowedRoots = []string{"docs"} }, "allowed_roots"},
		{"zero ttl", func(c *Config) { c.URLTTL.Duration = 0 }, "url_ttl"},
		{"bad digest", func(c *Config) { c.Tokens = []TokenConfig{{Name: "x", SHA256: "abc", Scopes: []string{"read"}}} }, "sha256"},
		{"no context roots", func(c *Config) { c.ContextRoots = nil }, "context_roots"},
		{"bad context root", func(c *Config) { c.ContextRoots = []string{"self"} }, "context_roots"},
		{"id as context root", func(c *Config) { c.ContextRoots = []string{"0b7d3f4e-8c1a-4b2e-9f3d-2a6c5e8b1d40"} }, "context_roots"},
		{"keep nothing", func(c *Config) { c.HistoryKeep = 0 }, "history_keep"},
		{"negative min age", func(c *Config) { c.HistoryMinAge.Duration = -time.Hour }, "history_min_age"},
		{"negative index wait", func(c *Config) { c.IndexWait.Duration = -time.Second }, "index_wait"},
		{"store not postgres", func(c *Config) { c.Store = "/var/lib/ctxd.db" }, "config: store must be empty"},
		{"unnamed token", func(c *Config) { c.Tokens = []TokenConfig{{SHA256: sha256Hex("x"), Scopes: []string{"read"}}} }, "tokens[0]: name"},
		{"token named owner", func(c *Config) {
			c.Tokens = []TokenConfig{{Name: "owner", SHA256: sha256Hex("x"), Scopes: []string{"read"}}}
		}, "tokens[0]: name"},
		{"limited admin token", func(c *Config) {
			c.Tokens = []TokenConfig{{Name: "a", SHA256: sha256Hex("x"), Scopes: []string{"read", "admin"}, Drives: []string{"agent"}}}
		}, "tokens[0] (a): a token limited by drives or paths cannot hold the admin scope"},
		{"bad token path", func(c *Config) {
			c.Tokens = []TokenConfig{{Name: "a", SHA256: sha256Hex("x"), Scopes: []string{"read"}, Paths: []string{"project-x"}}}
		}, "tokens[0] (a): drives and paths"},
		{"bad token drive", func(c *Config) {
			c.Tokens = []TokenConfig{{Name: "a", SHA256: sha256Hex("x"), Scopes: []string{"read"}, Drives: []string{"Agent"}}}
		}, "tokens[0] (a): drives and paths"},
		{"duplicate token name", func(c *Config) {
			c.Tokens = []TokenConfig{{Name: "a", SHA256: sha256Hex("x"), Scopes: []string{"read"}}, {Name: "a", SHA256: sha256Hex("y"), Scopes: []string{"read"}}}
		}, "tokens[1]: name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.mutate(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want an error naming %q", err, tt.want)
			}
		})
	}
	for _, ok := range []string{"127.0.0.1:0", "[::1]:7077", "localhost:9"} {
		cfg := DefaultConfig()
		cfg.HTTP = ok
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s rejected: %v", ok, err)
		}
	}
}
