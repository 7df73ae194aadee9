package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	sddaemon "github.com/coreos/go-systemd/v22/daemon"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ctxd/ctxd/daemon/inspector"
	"github.com/ctxd/ctxd/daemon/metrics"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/assemble"
	"github.com/ctxd/ctxd/index/enrich"
	"github.com/ctxd/ctxd/index/indexer"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/index/session"
	"github.com/ctxd/ctxd/index/standing"
	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/ingest/watcher"
	"github.com/ctxd/ctxd/vfs"
)

// Version is the daemon's version, overridable at build time with
// -ldflags "-X github.com/ctxd/ctxd/daemon.Version=...".
var Version = "0.1.0-dev"

// backend is what the services share. store is set before ready flips to
// true, and the readiness interceptor keeps calls out until then.
type backend struct {
	store     *vfs.Store
	snapshots snapshots // Write's directory snapshots, shared by concurrent writes
	ix        *indexer.Indexer
	engine    *search.Engine
	usage     *vfs.UsageRecorder
	ingest    *ingest.Ingester
	fresh     *ingest.Revalidator
	builder   *assemble.Builder
	dataDir   string
	started   time.Time
	limits    Limits
	// embedder says what computes the vectors, for Status.
	embedder embedderInfo
	// contextRoots are the config's context_roots; Init uses the first
	// when a request names no root.
	contextRoots []string
	// enricher asks a chat endpoint for chunks' questions; nil when off.
	enricher *enrich.Enricher
	// sessions keeps what agents did (SessionService).
	sessions *session.Sessions
	// storeInfo names the store; storeHealth tracks whether it answers.
	storeInfo   *storeInfo
	storeHealth *storeHealth
	// replicaID is this daemon's id among the replicas sharing the store
	// (localReplica on a store of its own).
	replicaID string
	// watches runs the persistent watches (WatchService).
	watches *watcher.Manager
	// subs holds the standing queries (SubscriptionService).
	subs *standing.Hub
	// backupRunning is set while a Backup streams (backup_service.go).
	backupRunning atomic.Bool
	// metrics is the daemon's Prometheus registry and instruments;
	// lastDoctor the last Doctor run that finished (Status).
	metrics    *metrics.Metrics
	lastDoctor atomic.Pointer[ctxdv1.DoctorRun]
	// signIns makes the web inspector's sign-in codes (CreateSignInLink).
	signIns *signIns
	// uiURL is the web inspector's address ("http://127.0.0.1:7077/ui/"),
	// set once the HTTP listener is up; nil without one.
	uiURL atomic.Pointer[string]
}

// Daemon is a running ctxd: listeners, the gRPC server, the gateway and the store.
type Daemon struct {
	cfg     Config
	log     *slog.Logger
	lock    *os.File
	b       backend
	ready   atomic.Bool
	health  *health.Server
	grpc    *grpc.Server
	http    *http.Server
	auth    *authenticator
	tcpAddr net.Addr
	webAddr net.Addr
	served  chan error
	stopIx  context.CancelFunc
	// internal is the daemon's own connection to its gRPC server, over an
	// in-memory listener where tokens are checked (startInternal): the
	// gateway and in-daemon tool calls (toolBackend) reach the services
	// through it.
	internal *grpc.ClientConn
	// stopPrune stops the history pruning loop; pruned closes when it has.
	stopPrune context.CancelFunc
	pruned    chan struct{}
	// stopEnrich stops the question enricher; enrichDone closes when it has.
	stopEnrich context.CancelFunc
	enrichDone chan struct{}
	// stopSessions stops the sessions' background work (expiry, the
	// enricher's digests); sessionsDone closes when it has.
	stopSessions context.CancelFunc
	sessionsDone chan struct{}
	// stopProbe stops the store probe of a shared store; probed closes
	// when it has.
	stopProbe context.CancelFunc
	probed    chan struct{}
	// metricsHTTP serves the tokenless metrics listener (nil when off).
	metricsHTTP *http.Server
	metricsAddr net.Addr
	// sizes is the last measurement of the store's size by part;
	// stopMeasure stops measuring, measured closes when it has.
	sizes       storeSizes
	stopMeasure context.CancelFunc
	measured    chan struct{}
}

// Start validates cfg, takes the data-dir lock, starts listening (health
// NOT_SERVING), opens the store, then reports SERVING and notifies systemd.
func Start(ctx context.Context, cfg Config, log *slog.Logger) (_ *Daemon, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	si := newStoreInfo(cfg)
	log = scrubbingLogger(log, si)
	d := &Daemon{cfg: cfg, log: log, health: health.NewServer(), served: make(chan error, 5)} // one per listener: unix, tcp, loopback, http, metrics
	d.b.dataDir, d.b.started, d.b.limits, d.b.contextRoots = cfg.DataDir, time.Now(), cfg.Limits, cfg.ContextRoots
	d.b.storeInfo, d.b.storeHealth = si, newStoreHealth(d.health, si, log)
	d.b.metrics = metrics.New(d.metricsState, Version, time.Now)
	defer func() {
		if err != nil {
			d.shutdown(context.Background())
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	if d.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return nil, err
	}
	// Tokens guard every TCP listener, the in-memory one of the daemon's
	// own calls, and the socket with socket_auth. With neither an outside
	// TCP listener nor socket_auth only the daemon itself presents the owner
	// token, so it is kept in memory and no token file is written.
	tokenFile := cfg.TokenFile
	if cfg.GRPCTCP == "" && cfg.HTTP == "" && !cfg.SocketAuth {
		tokenFile = ""
	}
	auth, saveToken, err := newAuthenticator(tokenFile, cfg.Tokens) // saveToken writes a generated owner token once serving
	if err != nil {
		return nil, err
	}
	d.auth, d.b.signIns = auth, auth.sessions
	d.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	d.grpc = newGRPCServer(&interceptors{log: log, auth: auth, ready: &d.ready, maxContent: cfg.MaxContentBytes, socketAuth: cfg.SocketAuth,
		store: si, storeDown: d.b.storeHealth.failed, metrics: d.b.metrics}, d.health)
	ctxdv1.RegisterVfsServiceServer(d.grpc, &vfsService{b: &d.b})
	ctxdv1.RegisterAdminServiceServer(d.grpc, &adminService{b: &d.b})
	ctxdv1.RegisterSearchServiceServer(d.grpc, &searchService{b: &d.b})
	ctxdv1.RegisterIngestServiceServer(d.grpc, &ingestService{b: &d.b, log: log})
	ctxdv1.RegisterContextServiceServer(d.grpc, &contextService{b: &d.b})
	ctxdv1.RegisterSessionServiceServer(d.grpc, &sessionService{b: &d.b})
	ctxdv1.RegisterToolServiceServer(d.grpc, &toolService{d: d})
	ctxdv1.RegisterWatchServiceServer(d.grpc, &watchService{b: &d.b, log: log})
	ctxdv1.RegisterSubscriptionServiceServer(d.grpc, &subscriptionService{b: &d.b})

	unixLn, err := listenUnix(cfg.Socket)
	if err != nil {
		return nil, err
	}
	d.serve(unixLn)
	if cfg.GRPCTCP != "" {
		ln, err := net.Listen("tcp", cfg.GRPCTCP)
		if err != nil {
			return nil, fmt.Errorf("listen grpc_tcp: %w", err)
		}
		d.tcpAddr = ln.Addr()
		d.serve(ln)
	}
	if err := d.startInternal(); err != nil {
		return nil, err
	}
	if cfg.HTTP != "" {
		if err := d.startGateway(ctx, auth); err != nil {
			return nil, err
		}
	}
	if cfg.Metrics != "" {
		if err := d.startMetrics(); err != nil {
			return nil, err
		}
	}

	if d.b.store, d.b.replicaID, err = openStore(cfg, si, d.b.metrics.ObserveWrites); err != nil {
		return nil, err
	}
	d.b.subs = standing.New(d.b.store, standing.Options{Log: log, Embed: d.b.embedQuery, ReplicaID: d.b.replicaID, Retain: cfg.SubscriptionRetain,
		MaxInbox: cfg.Limits.MaxSubscriptionInbox})
	if d.b.engine, err = search.Open(d.b.store, search.Options{
		Dir: filepath.Join(cfg.DataDir, "index"), Log: log, Limits: cfg.Limits.search(), WriteWait: cfg.writeWait(),
		TimedDrives: []string{session.Drive}, // session searches filter events by time
		Hold:        d.b.subs.Hold,
		Observe:     searchObserver{d.b.metrics},
	}); err != nil {
		return nil, fmt.Errorf("open search indexes: %w", err)
	}
	if err := d.b.subs.Start(ctx, d.b.engine); err != nil {
		return nil, fmt.Errorf("start standing queries: %w", err)
	}
	d.b.usage = vfs.NewUsageRecorder(d.b.store, log)
	d.b.ingest = ingest.New(d.b.store, ingest.Config{
		Policy:     ingest.Policy{AllowedRoots: cfg.AllowedRoots, AllowSecrets: cfg.AllowSecrets},
		Fetch:      ingest.FetchOptions{Timeout: cfg.FetchTimeout.Duration, AllowPrivate: cfg.AllowPrivateNetwork},
		DefaultTTL: cfg.URLTTL.Duration,
	})
	d.b.fresh = ingest.NewRevalidator(d.b.ingest, log)
	if d.b.ix, err = d.newIndexer(ctx); err != nil {
		return nil, err
	}
	ixCtx, stopIx := context.WithCancel(context.Background())
	d.stopIx = stopIx
	// Before serving: a write is then chunked, and searchable, at once,
	// not only once the model has loaded.
	d.b.ix.Prepare(ixCtx)
	go d.b.ix.Run(ixCtx)
	d.b.builder = assemble.NewBuilder(d.b.store, d.b.engine, assemble.Options{
		Tokenizer: d.b.ix.Tokenizer, Limits: cfg.Limits.search(), Roots: cfg.ContextRoots,
	})
	pruneCtx, stopPrune := context.WithCancel(context.Background())
	d.stopPrune, d.pruned = stopPrune, make(chan struct{})
	go d.pruneHistory(pruneCtx)
	measureCtx, stopMeasure := context.WithCancel(context.Background())
	d.stopMeasure, d.measured = stopMeasure, make(chan struct{})
	go d.measureStore(measureCtx)
	if err := d.startEnricher(); err != nil {
		return nil, err
	}
	d.startSessions()
	if err := d.startWatches(); err != nil {
		return nil, err
	}
	if saveToken != nil {
		if err := saveToken(); err != nil {
			return nil, err
		}
	}
	d.ready.Store(true)
	var names []string
	for name := range d.grpc.GetServiceInfo() {
		d.health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
		names = append(names, name)
	}
	d.b.storeHealth.serving(names)
	if d.b.store.Shared() {
		probeCtx, stopProbe := context.WithCancel(context.Background())
		d.stopProbe, d.probed = stopProbe, make(chan struct{})
		go func() {
			defer close(d.probed)
			d.b.storeHealth.probe(probeCtx, d.b.store)
		}()
	}
	if _, err := sddaemon.SdNotify(false, sddaemon.SdNotifyReady); err != nil {
		log.Warn("systemd notify failed", "err", err)
	}
	log.Info("ctxd serving", "version", Version, "data_dir", cfg.DataDir, "store", si.location, "replica", d.b.replicaID,
		"socket", cfg.Socket, "grpc_tcp", addrString(d.tcpAddr), "http", addrString(d.webAddr), "metrics", addrString(d.metricsAddr))
	return d, nil
}

// startGateway serves the JSON/HTTP gateway, and MCP at /mcp. Both reach
// the gRPC server through the internal connection, where tokens are enforced.
func (d *Daemon) startGateway(ctx context.Context, auth *authenticator) error {
	gateway, err := newGateway(ctx, d.internal, auth, d.cfg.MaxContentBytes)
	if err != nil {
		return err
	}
	handler := http.NewServeMux()
	handler.Handle("/", gateway)
	handler.Handle("/mcp", d.mcpHandler())
	handler.Handle("/metrics", requireMetricsScope(auth, d.b.metrics.Handler()))
	handler.Handle("/ui/", inspector.New(d.internal, auth.sessions.exchange))
	ln, err := net.Listen("tcp", d.cfg.HTTP)
	if err != nil {
		return fmt.Errorf("listen http: %w", err)
	}
	d.webAddr = ln.Addr()
	ui := inspectorURL(d.webAddr)
	d.b.uiURL.Store(&ui)
	// The Host/Origin guard wraps everything the listener serves, ahead of
	// the token check: a rebinding page never reaches auth.
	guarded := newEdgePolicy(d.cfg.AllowedHosts, d.cfg.AllowedOrigins).guard(handler)
	d.http = &http.Server{Handler: guarded, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := d.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			d.served <- fmt.Errorf("http: %w", err)
		}
	}()
	return nil
}

func (d *Daemon) serve(ln net.Listener) {
	go func() {
		if err := d.grpc.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			d.served <- fmt.Errorf("grpc on %s: %w", ln.Addr(), err)
		}
	}()
}

// listenUnix listens on a unix socket with mode 0600 inside a 0700 directory.
// A leftover socket file is removed only when nothing answers on it.
func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create socket dir: %w", err)
	}
	if err := secureDir(filepath.Dir(path), os.Getuid()); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("socket %s is in use by another process; stop it or pass --socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod socket: %w", err)
	}
	return ln, nil
}

// secureDir refuses a socket directory that a user other than uid (or
// root) could write to: they could replace the socket and receive the
// clients' calls. The directory must be owned by uid or root and writable by
// no one else; each ancestor must be owned by uid or root and, if others may
// write to it, sticky (like /tmp), so that nobody can rename what is below.
func secureDir(dir string, uid int) error {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return fmt.Errorf("socket dir %s: %w", dir, err)
	}
	for d, own := abs, true; ; d, own = filepath.Dir(d), false {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("socket dir %s: %w", d, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("socket dir %s: no owner information", d)
		}
		if owner := int(st.Uid); owner != uid && owner != 0 {
			return fmt.Errorf("socket dir %s is owned by uid %d, not by this user (uid %d) or root, who could replace the socket; "+
				"pass --socket (config key socket) a path in a directory you own", d, owner, uid)
		}
		mode := fi.Mode()
		if mode.Perm()&0o022 != 0 && (own || mode&os.ModeSticky == 0) {
			return fmt.Errorf("socket dir %s is writable by other users (mode %04o), who could replace the socket; "+
				"run `chmod go-w %s`, or pass --socket (config key socket) a path in a directory only you can write", d, mode.Perm(), d)
		}
		if parent := filepath.Dir(d); parent == d {
			return nil
		}
	}
}

// GRPCAddr is the loopback TCP address of gRPC, or nil when disabled.
func (d *Daemon) GRPCAddr() net.Addr { return d.tcpAddr }

// HTTPAddr is the address of the JSON/HTTP gateway, or nil when disabled.
func (d *Daemon) HTTPAddr() net.Addr { return d.webAddr }

// Wait blocks until ctx ends or a listener fails.
func (d *Daemon) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-d.served:
		return err
	}
}

// Stop stops gracefully: health turns NOT_SERVING, in-flight calls finish
// until ctx ends, then remaining calls are cut off and the store is closed.
func (d *Daemon) Stop(ctx context.Context) error {
	sddaemon.SdNotify(false, sddaemon.SdNotifyStopping)
	d.log.Info("ctxd stopping")
	return d.shutdown(ctx)
}

func (d *Daemon) shutdown(ctx context.Context) error {
	d.ready.Store(false)
	d.health.Shutdown()
	if d.b.subs != nil { // its streams end, so that the servers stop gracefully
		d.b.subs.Close()
	}
	if d.http != nil {
		d.http.Shutdown(ctx)
	}
	if d.metricsHTTP != nil {
		d.metricsHTTP.Shutdown(ctx)
	}
	if d.grpc != nil {
		done := make(chan struct{})
		go func() { d.grpc.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			d.grpc.Stop()
			<-done
		}
	}
	if d.internal != nil { // after the calls that may use it have ended
		d.internal.Close()
	}
	if d.b.watches != nil { // before the indexer and the store they write to
		d.b.watches.Close()
	}
	if d.stopIx != nil {
		d.stopIx()
		d.b.ix.Wait()
	}
	if d.stopPrune != nil {
		d.stopPrune()
		<-d.pruned
	}
	if d.stopMeasure != nil {
		d.stopMeasure()
		<-d.measured
	}
	if d.stopSessions != nil {
		d.stopSessions()
		<-d.sessionsDone
	}
	if d.stopProbe != nil {
		d.stopProbe()
		<-d.probed
	}
	d.stopEnricher()
	var err error
	if d.b.usage != nil {
		d.b.usage.Close()
	}
	if d.b.fresh != nil {
		d.b.fresh.Close()
	}
	if d.b.engine != nil {
		err = d.b.engine.Close()
	}
	if d.b.store != nil {
		err = errors.Join(err, d.b.store.Close())
	}
	if d.lock != nil {
		d.lock.Close()
	}
	return err
}

// startSessions opens the sessions over the store and starts their
// background work; digests and compactions use the enricher when it is on.
func (d *Daemon) startSessions() {
	opts := session.Options{
		MaxEventBytes: d.cfg.Limits.MaxEventBytes,
		EventTTL:      d.cfg.Sessions.EventTTL.Duration,
		ProjectTTL:    d.cfg.Sessions.projectTTLs(),
		// Hooks redact what they record; the daemon redacts again what any
		// caller appends, with the same rules.
		Redact: ingest.Redact,
		Log:    d.log.With("component", "sessions"),
	}
	if d.b.enricher != nil {
		opts.Summarizer = d.b.enricher
	}
	d.b.sessions = session.New(d.b.store, d.b.engine, d.b.builder, opts)
	ctx, stop := context.WithCancel(context.Background())
	d.stopSessions, d.sessionsDone = stop, make(chan struct{})
	go func() {
		defer close(d.sessionsDone)
		d.b.sessions.Run(ctx)
	}()
}

// historyPruneEvery is how often the daemon prunes revisions past the
// retention (history_keep, history_min_age); it also prunes at start.
const historyPruneEvery = time.Hour

// pruneHistory prunes at start and then every historyPruneEvery until ctx
// ends. Each pass runs in bounded transactions, so writes go on meanwhile.
func (d *Daemon) pruneHistory(ctx context.Context) {
	defer close(d.pruned)
	tick := time.NewTicker(historyPruneEvery)
	defer tick.Stop()
	for {
		n, err := d.b.store.PruneHistory(ctx)
		if ctx.Err() == nil {
			d.b.metrics.ObservePrune(n, err, time.Now())
		}
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			d.log.Warn("history pruning failed; retrying at the next pass", "err", err)
		case n > 0:
			d.log.Info("history pruned", "revisions", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Run starts the daemon and serves until ctx is cancelled, then stops
// gracefully within the configured shutdown timeout.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	d, err := Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	werr := d.Wait(ctx)
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout.Duration)
	defer cancel()
	if err := d.Stop(stopCtx); err != nil {
		return err
	}
	return werr
}

func addrString(a net.Addr) string {
	if a == nil {
		return "off"
	}
	return a.String()
}
