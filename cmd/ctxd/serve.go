package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ctxd/ctxd/daemon"
)

func (c *cli) serveCommand() *cobra.Command {
	var configFile string
	cfg := daemon.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon",
		Long: `Run the ctxd daemon in the foreground.

Configuration comes from, lowest precedence first: built-in defaults, the
config file (TOML; default ` + daemon.DefaultConfigFile() + `), CTXD_* environment
variables, then these flags. SIGINT or SIGTERM stops gracefully; a second
signal stops at once.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			final := daemon.DefaultConfig()
			name, required := configFile, true
			if name == "" {
				name, required = daemon.DefaultConfigFile(), false
			}
			if err := final.LoadConfigFile(name, required); err != nil {
				return err
			}
			if err := final.ApplyEnv(os.LookupEnv); err != nil {
				return err
			}
			overlayFlags(cmd, &final, &cfg)
			if err := final.Validate(); err != nil {
				return err
			}
			return serve(cmd.Context(), final, c)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configFile, "config", "", "config file (TOML)")
	f.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "data directory (env CTXD_DATA_DIR)")
	f.StringVar(&cfg.Store, "store", "", `where items are kept: "" for ctxd.db in the data directory, or a postgres:// URL of a database replicas share (env CTXD_STORE)`)
	f.StringVar(&cfg.GRPCTCP, "grpc-tcp", "", "also serve gRPC on this loopback host:port (env CTXD_GRPC_TCP)")
	f.StringVar(&cfg.HTTP, "http", cfg.HTTP, `JSON/HTTP gateway loopback host:port, "" to disable (env CTXD_HTTP)`)
	f.StringVar(&cfg.Metrics, "metrics", "", "also serve /metrics, without a token, on this loopback host:port (env CTXD_METRICS)")
	f.StringVar(&cfg.TokenFile, "token-file", cfg.TokenFile, "bearer token file for TCP, HTTP and, with --socket-auth, the socket (env CTXD_TOKEN_FILE)")
	f.BoolVar(&cfg.SocketAuth, "socket-auth", false, "require a bearer token on the unix socket too; clients pass --token / CTXD_TOKEN (env CTXD_SOCKET_AUTH)")
	f.StringArrayVar(&cfg.AllowedHosts, "allowed-host", nil, "Host header the HTTP listener answers besides loopback names, e.g. a reverse proxy's name; repeat for more (env CTXD_ALLOWED_HOSTS, ','-separated)")
	f.StringArrayVar(&cfg.AllowedOrigins, "allowed-origin", nil, "browser origin (scheme://host[:port]) the HTTP listener answers besides loopback ones; repeat for more (env CTXD_ALLOWED_ORIGINS, ','-separated)")
	f.StringVar(&cfg.ModelDir, "model-dir", cfg.ModelDir, `embedding model directory, "" to disable embeddings (env CTXD_MODEL_DIR)`)
	f.StringVar(&cfg.OnnxRuntimeLib, "onnxruntime-lib", cfg.OnnxRuntimeLib, "path of libonnxruntime.so (env CTXD_ONNXRUNTIME_LIB)")
	f.StringVar(&cfg.Embedder.Kind, "embedder", cfg.Embedder.Kind, `what embeds: "onnx" (the local model) or "openai" (an OpenAI-compatible endpoint; the API key comes from embedder.api_key_env or api_key_file, never a flag) (env CTXD_EMBEDDER_KIND)`)
	f.StringVar(&cfg.Embedder.URL, "embedder-url", cfg.Embedder.URL, "the endpoint's base URL, before /embeddings; item text is sent to it (env CTXD_EMBEDDER_URL)")
	f.StringVar(&cfg.Embedder.Model, "embedder-model", "", "the model the endpoint is asked for (env CTXD_EMBEDDER_MODEL)")
	f.Int64Var(&cfg.MaxContentBytes, "max-content-bytes", cfg.MaxContentBytes, "largest item content accepted (env CTXD_MAX_CONTENT_BYTES)")
	f.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info, warn or error (env CTXD_LOG_LEVEL)")
	f.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "text or json (env CTXD_LOG_FORMAT)")
	f.StringArrayVar(&cfg.AllowedRoots, "allowed-root", cfg.AllowedRoots, "directory that add may read files below; repeat for more (env CTXD_ALLOWED_ROOTS, ':'-separated)")
	f.BoolVar(&cfg.AllowPrivateNetwork, "allow-private-network", false, "let add fetch URLs on loopback, private and link-local addresses (env CTXD_ALLOW_PRIVATE_NETWORK)")
	f.StringArrayVar(&cfg.ContextRoots, "context-root", cfg.ContextRoots, "directory ref holding an agent's context files; repeat for more (env CTXD_CONTEXT_ROOTS, ','-separated)")
	f.BoolVar(&cfg.History, "history", cfg.History, "record a revision of every change to an item; --history=false stops it (env CTXD_HISTORY)")
	f.IntVar(&cfg.HistoryKeep, "history-keep", cfg.HistoryKeep, "revisions per item always kept (env CTXD_HISTORY_KEEP)")
	f.DurationVar(&cfg.HistoryMinAge.Duration, "history-min-age", cfg.HistoryMinAge.Duration, "revisions younger than this are always kept (env CTXD_HISTORY_MIN_AGE)")
	f.DurationVar(&cfg.IndexWait.Duration, "index-wait", cfg.IndexWait.Duration, "longest a search waits for the index to apply the writes acknowledged before it, then answers stale; 0 turns it off (env CTXD_INDEX_WAIT)")
	f.DurationVar(&cfg.Sessions.EventTTL.Duration, "session-event-ttl", cfg.Sessions.EventTTL.Duration, "how long session events are kept; digests stay (env CTXD_SESSION_EVENT_TTL)")
	return cmd
}

// overlayFlags copies the flags the user actually set onto cfg. The socket is
// the root's persistent flag, shared with the client commands.
func overlayFlags(cmd *cobra.Command, cfg, flags *daemon.Config) {
	set := func(name string, apply func()) {
		if cmd.Flags().Changed(name) {
			apply()
		}
	}
	set("data-dir", func() { cfg.DataDir = flags.DataDir })
	set("store", func() { cfg.Store = flags.Store })
	set("grpc-tcp", func() { cfg.GRPCTCP = flags.GRPCTCP })
	set("http", func() { cfg.HTTP = flags.HTTP })
	set("metrics", func() { cfg.Metrics = flags.Metrics })
	set("token-file", func() { cfg.TokenFile = flags.TokenFile })
	set("socket-auth", func() { cfg.SocketAuth = flags.SocketAuth })
	set("allowed-host", func() { cfg.AllowedHosts = flags.AllowedHosts })
	set("allowed-origin", func() { cfg.AllowedOrigins = flags.AllowedOrigins })
	set("model-dir", func() { cfg.ModelDir = flags.ModelDir })
	set("onnxruntime-lib", func() { cfg.OnnxRuntimeLib = flags.OnnxRuntimeLib })
	set("embedder", func() { cfg.Embedder.Kind = flags.Embedder.Kind })
	set("embedder-url", func() { cfg.Embedder.URL = flags.Embedder.URL })
	set("embedder-model", func() { cfg.Embedder.Model = flags.Embedder.Model })
	set("max-content-bytes", func() { cfg.MaxContentBytes = flags.MaxContentBytes })
	set("log-level", func() { cfg.LogLevel = flags.LogLevel })
	set("log-format", func() { cfg.LogFormat = flags.LogFormat })
	set("allowed-root", func() { cfg.AllowedRoots = flags.AllowedRoots })
	set("allow-private-network", func() { cfg.AllowPrivateNetwork = flags.AllowPrivateNetwork })
	set("context-root", func() { cfg.ContextRoots = flags.ContextRoots })
	set("history", func() { cfg.History = flags.History })
	set("history-keep", func() { cfg.HistoryKeep = flags.HistoryKeep })
	set("history-min-age", func() { cfg.HistoryMinAge = flags.HistoryMinAge })
	set("index-wait", func() { cfg.IndexWait = flags.IndexWait })
	set("session-event-ttl", func() { cfg.Sessions.EventTTL = flags.Sessions.EventTTL })
	if s, err := cmd.Flags().GetString("socket"); err == nil && cmd.Flags().Changed("socket") {
		cfg.Socket = s
	}
}

func serve(ctx context.Context, cfg daemon.Config, c *cli) error {
	level := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[cfg.LogLevel]
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(c.stderr, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(c.stderr, opts)
	}
	log := slog.New(h)

	// The first signal cancels ctx for a graceful stop; a second one exits now.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		sig := <-sigs
		log.Info("signal received, stopping gracefully; send it again to stop at once", "signal", sig.String())
		cancel()
		<-sigs
		fmt.Fprintln(c.stderr, "ctxd: second signal, exiting now")
		os.Exit(exitError)
	}()
	return daemon.Run(ctx, cfg, log)
}
