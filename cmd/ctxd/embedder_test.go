package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/daemon"
)

// TestServe_EmbedderFlags: --embedder, --embedder-url and --embedder-model
// reach the [embedder] table, over what the file and env set; no flag
// carries the API key.
func TestServe_EmbedderFlags(t *testing.T) {
	cmd := (&cli{}).serveCommand()
	if err := cmd.ParseFlags([]string{"--embedder", "openai", "--embedder-url", "http://127.0.0.1:8080/v1", "--embedder-model", "bge-small"}); err != nil {
		t.Fatal(err)
	}
	var flags daemon.Config
	flags.Embedder.Kind, _ = cmd.Flags().GetString("embedder")
	flags.Embedder.URL, _ = cmd.Flags().GetString("embedder-url")
	flags.Embedder.Model, _ = cmd.Flags().GetString("embedder-model")
	cfg := daemon.DefaultConfig()
	cfg.Embedder.Model = "from-the-file"
	overlayFlags(cmd, &cfg, &flags)
	if e := cfg.Embedder; e.Kind != "openai" || e.URL != "http://127.0.0.1:8080/v1" || e.Model != "bge-small" {
		t.Errorf("flags not applied: %+v", e)
	}
	for _, name := range []string{"embedder-api-key", "api-key"} {
		if cmd.Flags().Lookup(name) != nil {
			t.Errorf("--%s exists: the key must not be on the command line", name)
		}
	}
}

// TestStatus_RemoteEmbedder: `ctxd status` names the embedding endpoint
// and says that item text leaves the machine when it is not on loopback.
func TestStatus_RemoteEmbedder(t *testing.T) {
	cfg, _ := tempConfig(t)
	// TEST-NET-1 never answers: a short timeout without retries keeps the
	// start's probe brief.
	cfg.Embedder.Kind, cfg.Embedder.URL, cfg.Embedder.Model = daemon.EmbedderOpenAI, "http://192.0.2.1:9/v1", "m"
	cfg.Embedder.Timeout, cfg.Embedder.MaxRetries = daemon.Duration{Duration: 50 * time.Millisecond}, 0
	runDaemon(t, cfg)
	code, out, errOut := ctxd(t, cfg.Socket, "", "status")
	if code != 0 || !strings.Contains(out, "embedding endpoint:") || !strings.Contains(out, "http://192.0.2.1:9/v1") ||
		!strings.Contains(out, "item text is sent to 192.0.2.1:9 to be embedded") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
}
