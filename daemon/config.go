package daemon

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/vfs"
)

// Config is the daemon's configuration. Precedence, lowest first: DefaultConfig,
// the config file (TOML), CTXD_* environment variables, command-line flags.
type Config struct {
	// DataDir holds the lock file, the search indexes and, unless Store
	// names a PostgreSQL database, the store (ctxd.db).
	DataDir string `toml:"data_dir"`
	// Store is where the items are kept: empty for the bbolt file ctxd.db in
	// DataDir, or a postgres:// (postgresql://) URL for a PostgreSQL database
	// that several daemons (replicas) share. Each replica still keeps its
	// search indexes, socket, token and replica-id in its own DataDir. The
	// URL's password never appears in logs, status or errors.
	Store string `toml:"store"`
	// Socket is the unix socket path for gRPC; it is created with mode 0600.
	Socket string `toml:"socket"`
	// GRPCTCP is an optional loopback host:port for gRPC over TCP; empty disables it.
	GRPCTCP string `toml:"grpc_tcp"`
	// HTTP is the loopback host:port of the JSON/HTTP gateway; empty disables it.
	HTTP string `toml:"http"`
	// Metrics is a loopback host:port serving only /metrics, without a
	// token, for a scraper; empty (the default) disables it. /metrics is
	// also on the HTTP listener, for tokens with the metrics scope.
	Metrics string `toml:"metrics"`
	// TokenFile holds the owner's bearer token, generated on first start (mode 0600).
	TokenFile string `toml:"token_file"`
	// Tokens are additional bearer tokens with limited scopes.
	Tokens []TokenConfig `toml:"tokens"`
	// SocketAuth makes unix-socket callers present a bearer token as TCP
	// callers do, with the same scopes, for hosts where not every process of
	// the user should act as the owner (agents running as the user). The
	// standard health service stays open to tokenless probes (the check
	// ctxd mcp makes at start). The CLI sends --token or CTXD_TOKEN.
	SocketAuth bool `toml:"socket_auth"`
	// AllowedHosts are Host header values the HTTP listener answers besides
	// loopback names (localhost, 127.0.0.0/8, [::1], any port), such as a
	// reverse proxy's public name: "name" matches any port, "name:port" that
	// port only. Other Hosts are refused with 421 (DNS rebinding).
	AllowedHosts []string `toml:"allowed_hosts"`
	// AllowedOrigins are browser origins (scheme://host[:port], exactly as
	// browsers send them) the HTTP listener answers besides loopback ones
	// (http or https with a loopback name, any port). A request with any other
	// Origin header is refused with 403. CORS headers are never sent.
	AllowedOrigins []string `toml:"allowed_origins"`
	// ModelDir holds the embedding model: model.onnx, tokenizer.json or
	// vocab.txt, and ctxd-model.json. Empty disables chunking and embedding;
	// a missing directory leaves the daemon serving without them until it appears.
	ModelDir string `toml:"model_dir"`
	// OnnxRuntimeLib is the path of libonnxruntime.so (ONNX Runtime >= 1.24).
	OnnxRuntimeLib string `toml:"onnxruntime_lib"`
	// MaxContentBytes limits one item's content. It also bounds requests: a
	// request may be this plus 1 MiB (CONTENT_TOO_LARGE beyond), and the HTTP
	// gateway reads a body of at most twice that (413 beyond).
	MaxContentBytes int64 `toml:"max_content_bytes"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `toml:"log_level"`
	// LogFormat is text or json.
	LogFormat string `toml:"log_format"`
	// ShutdownTimeout bounds the graceful stop; in-flight calls are then cut off.
	ShutdownTimeout Duration `toml:"shutdown_timeout"`
	// AllowedRoots are the directories Add and Refresh may read files below.
	// An agent harness may pass any path through, so the default is the home
	// directory only.
	AllowedRoots []string `toml:"allowed_roots"`
	// AllowSecrets lets ingestion read files that look like secrets (~/.ssh,
	// key files, .env files); they are refused by default.
	AllowSecrets bool `toml:"allow_secrets"`
	// AllowPrivateNetwork lets URL ingestion fetch from loopback, private and
	// link-local addresses; refused by default so a URL cannot probe the LAN.
	AllowPrivateNetwork bool `toml:"allow_private_network"`
	// FetchTimeout bounds one URL fetch, body included.
	FetchTimeout Duration `toml:"fetch_timeout"`
	// URLTTL is how long fetched content counts as fresh before search or
	// refresh re-validates it with a conditional GET, unless Add sets a TTL.
	URLTTL Duration `toml:"url_ttl"`
	// IndexWait bounds how long a search (Search, BuildContext's chunk
	// search, FindSimilar, the session search and recall) waits for the
	// search indexes to apply the writes acknowledged before it started;
	// past it the search answers from the indexes as they are and says so
	// (stale, stale_reason). 0 turns the wait and the report off.
	IndexWait Duration `toml:"index_wait"`
	// SubscriptionRetain is how many outbox entries past those the standing
	// queries matched the store keeps, so that a subscriber resuming with
	// an older token gets what it missed (some 40 bytes each); 0 means
	// 100,000, negative none.
	SubscriptionRetain int64 `toml:"subscription_retain"`
	// Limits bound every dimension of a request (the [limits] table).
	Limits Limits `toml:"limits"`
	// Embedder is the [embedder] table: the local model (the default) or
	// an OpenAI-compatible endpoint.
	Embedder EmbedderConfig `toml:"embedder"`
	// Enricher is the optional question enricher (the [enricher] table),
	// off unless enricher.endpoint is set. Session digests and compactions
	// use its endpoint too.
	Enricher EnricherConfig `toml:"enricher"`
	// Sessions is the [sessions] table: how long session events are kept.
	Sessions SessionsConfig `toml:"sessions"`
	// Watch is the [watch] table: how persistent watches follow their trees.
	Watch WatchConfig `toml:"watch"`
	// ContextRoots are the directory refs holding agents' persistent context
	// (one per agent when several share the daemon): BuildContext reads the
	// files with a `loading` frontmatter key below the roots a request names,
	// or below these; and an agent token may change an item below them only
	// when its frontmatter says agent-modification: true.
	ContextRoots []string `toml:"context_roots"`
	// History records a revision of every change to an item (actor,
	// operation, previous content); false stops recording new revisions.
	History bool `toml:"history"`
	// HistoryKeep is how many of an item's latest revisions pruning always
	// keeps; older ones go once they are also older than HistoryMinAge.
	HistoryKeep int `toml:"history_keep"`
	// HistoryMinAge is how long every revision is kept, however many newer
	// ones there are.
	HistoryMinAge Duration `toml:"history_min_age"`
}

// TokenConfig is a scoped bearer token. Only its SHA-256 is stored, so the
// config file does not hold the secret.
type TokenConfig struct {
	// Name identifies the token in logs.
	Name string `toml:"name"`
	// SHA256 is the lowercase hex SHA-256 of the token string.
	SHA256 string `toml:"sha256"`
	// Scopes granted: any of read, write, ingest, admin, metrics. Add and
	// Refresh, which read the daemon host's files and fetch URLs, need write
	// and ingest; /metrics on the HTTP listener needs metrics.
	Scopes []string `toml:"scopes"`
	// Agent marks a token handed to an agent: its changes to items whose
	// frontmatter (or a context root) protects them are refused with
	// READ_ONLY. History records the token's name as the actor.
	Agent bool `toml:"agent"`
	// Drives and Paths limit the token to whole drives ("agent") and path
	// subtrees ("agent:/project-x/", the directory and everything below
	// it); the token then sees and changes only their union: everything
	// else reads as absent (NOT_FOUND, left out of lists, trees, counts,
	// history, search and hints), and a change outside is PERMISSION_DENIED.
	// Both empty: the whole store. A limited token cannot hold admin, nor
	// call Status, whose figures cover the whole store.
	Drives []string `toml:"drives"`
	Paths  []string `toml:"paths"`
}

// Duration is a time.Duration written as a string ("10s") in TOML.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	d.Duration = v
	return err
}

// DefaultConfig returns the configuration used when nothing is set, following
// the XDG base directory conventions.
func DefaultConfig() Config {
	return Config{
		DataDir:         filepath.Join(dataHome(), "ctxd"),
		Socket:          DefaultSocket(),
		HTTP:            "127.0.0.1:7077",
		TokenFile:       filepath.Join(ConfigDir(), "token"),
		ModelDir:        filepath.Join(dataHome(), "ctxd", "models", "all-MiniLM-L6-v2-int8"),
		OnnxRuntimeLib:  filepath.Join(dataHome(), "ctxd", "lib", "libonnxruntime.so"),
		MaxContentBytes: vfs.DefaultMaxContentBytes,
		LogLevel:        "info",
		LogFormat:       "text",
		ShutdownTimeout: Duration{10 * time.Second},
		AllowedRoots:    []string{homeDir()},
		FetchTimeout:    Duration{30 * time.Second},
		URLTTL:          Duration{ingest.DefaultTTL},
		IndexWait:       Duration{search.DefaultWriteWait},
		Limits:          DefaultLimits(),
		Embedder:        DefaultEmbedderConfig(),
		Enricher:        DefaultEnricherConfig(),
		Sessions:        DefaultSessionsConfig(),
		Watch:           DefaultWatchConfig(),
		ContextRoots:    slices.Clone(vfs.DefaultContextRoots),
		History:         true,
		HistoryKeep:     vfs.DefaultHistoryKeep,
		HistoryMinAge:   Duration{vfs.DefaultHistoryMinAge},
	}
}

// ConfigDir is $XDG_CONFIG_HOME/ctxd (default ~/.config/ctxd).
func ConfigDir() string { return filepath.Join(xdgDir("XDG_CONFIG_HOME", ".config"), "ctxd") }

// DefaultConfigFile is the config file read when none is named.
func DefaultConfigFile() string { return filepath.Join(ConfigDir(), "config.toml") }

// DefaultSocket is $XDG_RUNTIME_DIR/ctxd/ctxd.sock, falling back to the
// system temp dir when XDG_RUNTIME_DIR is unset.
func DefaultSocket() string {
	dir := os.Getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("ctxd-%d", os.Getuid()))
	}
	return filepath.Join(dir, "ctxd", "ctxd.sock")
}

func dataHome() string { return xdgDir("XDG_DATA_HOME", ".local/share") }

func xdgDir(env, fallback string) string {
	if d := os.Getenv(env); d != "" {
		return d
	}
	return filepath.Join(homeDir(), fallback)
}

func homeDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return os.TempDir()
	}
	return home
}

// LoadConfig overlays TOML from r onto c. Unknown keys are errors, so a typo
// does not silently fall back to a default.
func (c *Config) LoadConfig(r io.Reader) error {
	md, err := toml.NewDecoder(r).Decode(c)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return fmt.Errorf("config: unknown key %q", undecoded[0].String())
	}
	return nil
}

// LoadConfigFile overlays the named file; a missing file is an error only
// when required.
func (c *Config) LoadConfigFile(name string, required bool) error {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) && !required {
		return nil
	}
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	if err := c.LoadConfig(f); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// ApplyEnv overlays CTXD_* variables; lookupEnv is os.LookupEnv in production.
// A set-but-empty variable counts, so CTXD_HTTP= disables the gateway.
func (c *Config) ApplyEnv(lookupEnv func(string) (string, bool)) error {
	strs := map[string]*string{
		"CTXD_DATA_DIR":        &c.DataDir,
		"CTXD_STORE":           &c.Store,
		"CTXD_SOCKET":          &c.Socket,
		"CTXD_GRPC_TCP":        &c.GRPCTCP,
		"CTXD_HTTP":            &c.HTTP,
		"CTXD_METRICS":         &c.Metrics,
		"CTXD_TOKEN_FILE":      &c.TokenFile,
		"CTXD_MODEL_DIR":       &c.ModelDir,
		"CTXD_ONNXRUNTIME_LIB": &c.OnnxRuntimeLib,
		"CTXD_LOG_LEVEL":       &c.LogLevel,
		"CTXD_LOG_FORMAT":      &c.LogFormat,
	}
	for k, p := range strs {
		if v, ok := lookupEnv(k); ok {
			*p = v
		}
	}
	if v, ok := lookupEnv("CTXD_MAX_CONTENT_BYTES"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("CTXD_MAX_CONTENT_BYTES: %q is not a whole number of bytes", v)
		}
		c.MaxContentBytes = n
	}
	if v, ok := lookupEnv("CTXD_HISTORY_KEEP"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("CTXD_HISTORY_KEEP: %q is not a whole number", v)
		}
		c.HistoryKeep = n
	}
	for k, d := range map[string]*Duration{"CTXD_SHUTDOWN_TIMEOUT": &c.ShutdownTimeout, "CTXD_FETCH_TIMEOUT": &c.FetchTimeout, "CTXD_URL_TTL": &c.URLTTL,
		"CTXD_HISTORY_MIN_AGE": &c.HistoryMinAge, "CTXD_INDEX_WAIT": &c.IndexWait} {
		if v, ok := lookupEnv(k); ok {
			if err := d.UnmarshalText([]byte(v)); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	for k, b := range map[string]*bool{"CTXD_ALLOW_SECRETS": &c.AllowSecrets, "CTXD_ALLOW_PRIVATE_NETWORK": &c.AllowPrivateNetwork, "CTXD_HISTORY": &c.History,
		"CTXD_SOCKET_AUTH": &c.SocketAuth} {
		if v, ok := lookupEnv(k); ok {
			x, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%s: %q is not true or false", k, v)
			}
			*b = x
		}
	}
	if v, ok := lookupEnv("CTXD_ALLOWED_ROOTS"); ok {
		c.AllowedRoots = filepath.SplitList(v)
	}
	if v, ok := lookupEnv("CTXD_CONTEXT_ROOTS"); ok { // refs hold ':', so ','-separated
		c.ContextRoots = strings.Split(v, ",")
	}
	for k, p := range map[string]*[]string{"CTXD_ALLOWED_HOSTS": &c.AllowedHosts, "CTXD_ALLOWED_ORIGINS": &c.AllowedOrigins} {
		if v, ok := lookupEnv(k); ok { // entries hold ':', so ','-separated; empty clears
			*p = strings.FieldsFunc(v, func(r rune) bool { return r == ',' })
		}
	}
	if err := c.Embedder.applyEnv(lookupEnv); err != nil {
		return err
	}
	if err := c.Enricher.applyEnv(lookupEnv); err != nil {
		return err
	}
	if err := c.Sessions.applyEnv(lookupEnv); err != nil {
		return err
	}
	if err := c.Watch.applyEnv(lookupEnv); err != nil {
		return err
	}
	return c.Limits.applyEnv(lookupEnv)
}

// Validate checks every field and names the first bad one.
func (c *Config) Validate() error {
	if c.DataDir == "" {
		return errors.New("config: data_dir must be set")
	}
	if c.Socket == "" {
		return errors.New("config: socket must be set")
	}
	if err := validateStore(c.Store); err != nil {
		return err
	}
	// sun_path is 108 bytes on Linux, including the terminating NUL.
	if len(c.Socket) > 107 {
		return fmt.Errorf("config: socket path %q is %d bytes; unix sockets allow at most 107", c.Socket, len(c.Socket))
	}
	for _, f := range []struct{ name, addr string }{{"grpc_tcp", c.GRPCTCP}, {"http", c.HTTP}, {"metrics", c.Metrics}} {
		if f.addr == "" {
			continue
		}
		if err := checkLoopback(f.addr); err != nil {
			return fmt.Errorf("config: %s: %w", f.name, err)
		}
	}
	if (c.GRPCTCP != "" || c.HTTP != "" || c.SocketAuth) && c.TokenFile == "" {
		return errors.New("config: token_file must be set when grpc_tcp, http or socket_auth is enabled")
	}
	if err := validateEdge(c.AllowedHosts, c.AllowedOrigins); err != nil {
		return err
	}
	if c.MaxContentBytes <= 0 {
		return fmt.Errorf("config: max_content_bytes must be positive, got %d", c.MaxContentBytes)
	}
	if err := c.Limits.validate(); err != nil {
		return err
	}
	if err := c.Embedder.validate(); err != nil {
		return err
	}
	if err := c.Enricher.validate(); err != nil {
		return err
	}
	if err := c.Sessions.validate(); err != nil {
		return err
	}
	if err := c.Watch.validate(); err != nil {
		return err
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("config: log_level must be debug, info, warn or error, got %q", c.LogLevel)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("config: log_format must be text or json, got %q", c.LogFormat)
	}
	for _, d := range []struct {
		name string
		d    Duration
	}{{"shutdown_timeout", c.ShutdownTimeout}, {"fetch_timeout", c.FetchTimeout}, {"url_ttl", c.URLTTL}} {
		if d.d.Duration <= 0 {
			return fmt.Errorf("config: %s must be positive, got %s", d.name, d.d)
		}
	}
	for _, r := range c.AllowedRoots {
		if !filepath.IsAbs(r) {
			return fmt.Errorf("config: allowed_roots: %q is not an absolute path", r)
		}
	}
	if len(c.ContextRoots) == 0 {
		return errors.New(`config: context_roots must list at least one directory ref, for example "self:/"`)
	}
	for _, r := range c.ContextRoots {
		if ref, err := vfs.ParseRef(r); err != nil || ref.ID != "" {
			return fmt.Errorf(`config: context_roots: %q is not a directory ref such as "self:/" or "self:/researcher/"`, r)
		}
	}
	if c.HistoryKeep < 1 {
		return fmt.Errorf("config: history_keep must be at least 1, got %d", c.HistoryKeep)
	}
	if c.HistoryMinAge.Duration < 0 {
		return fmt.Errorf("config: history_min_age must not be negative, got %s", c.HistoryMinAge)
	}
	if c.IndexWait.Duration < 0 {
		return fmt.Errorf(`config: index_wait must not be negative, got %s; "0s" turns the wait off`, c.IndexWait)
	}
	names := map[string]bool{vfs.OwnerActor: true}
	for i, t := range c.Tokens {
		// History names the token as the actor of its changes, so a name
		// must say which token it was.
		if t.Name == "" || names[t.Name] {
			return fmt.Errorf("config: tokens[%d]: name must be set, unique and not %q; history records it as the actor", i, vfs.OwnerActor)
		}
		names[t.Name] = true
		scopes, err := parseScopes(t.Scopes)
		if err != nil {
			return fmt.Errorf("config: tokens[%d] (%s): %w", i, t.Name, err)
		}
		if _, err := tokenAccess(t, scopes); err != nil {
			return fmt.Errorf("config: tokens[%d] (%s): %w", i, t.Name, err)
		}
		if len(t.SHA256) != 64 || strings.Trim(t.SHA256, "0123456789abcdef") != "" {
			return fmt.Errorf("config: tokens[%d] (%s): sha256 must be 64 lowercase hex digits", i, t.Name)
		}
	}
	return nil
}

// writeWait is IndexWait as the search engine takes it (negative: off).
func (c *Config) writeWait() time.Duration {
	if c.IndexWait.Duration == 0 {
		return -1
	}
	return c.IndexWait.Duration
}

// checkLoopback accepts host:port where host is localhost or a loopback IP:
// TCP endpoints never listen beyond this machine.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %w", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port must be a number from 0 to 65535", addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q is not a loopback address; use 127.0.0.1, [::1] or localhost", addr)
}
