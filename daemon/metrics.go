package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/ctxd/ctxd/daemon/metrics"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/ingest/watcher"
)

// storeSizeEvery is how often the daemon measures the store's size by part
// (ctxd_store_bytes): the measurement reads every page of the store, about
// the cost of reading the whole file, so scrapes never wait for it. It also
// measures once at start.
const storeSizeEvery = 10 * time.Minute

// legNames are the search legs as the leg label spells them.
var legNames = map[search.Leg]string{search.LegBM25: "bm25", search.LegSubstring: "substring", search.LegVector: "vector"}

// searchObserver feeds the engine's timings to the metrics.
type searchObserver struct{ m *metrics.Metrics }

func (o searchObserver) ObserveLeg(leg search.Leg, took time.Duration) {
	o.m.ObserveLeg(legNames[leg], took)
}

func (o searchObserver) ObserveSearch(mode search.Mode, took time.Duration, failed bool) {
	o.m.ObserveSearch(mode.String(), took, failed)
}

// storePart is the ctxd_store_bytes part of each store bucket; a bucket
// not listed counts as "other".
var storePart = map[string]string{
	"content": "content", "text": "content",
	"history": "history", "revision_heads": "history", "revision_actors": "history", "deleted": "history", "blobs": "history", "blob_repack": "history",
	"vectors": "vectors", "qvectors": "vectors",
	"items": "items", "paths": "items", "meta": "items", "records": "items",
	"chunks": "chunks", "chunkhash": "chunks", "questions": "chunks",
	"outbox": "queues", "embedq": "queues", "chunkq": "queues", "qembedq": "queues", "embedwait": "queues",
	"replicas": "replicas", "claims": "replicas",
}

// storeParts are the parts ctxd_store_bytes reports, each present once measured.
var storeParts = []string{"content", "history", "vectors", "items", "chunks", "queues", "replicas", "other", "free", "indexes"}

// storeSizes holds the last measurement of the store's size by part.
type storeSizes struct {
	mu       sync.Mutex
	parts    map[string]int64
	measured time.Time
}

func (s *storeSizes) get() (map[string]int64, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.parts, s.measured
}

// measure reads the store's size by part, and the search indexes' files
// (part "indexes"), and keeps it.
func (s *storeSizes) measure(ctx context.Context, b *backend) error {
	u, err := b.store.DiskUsage(ctx)
	if err != nil {
		return err
	}
	parts := make(map[string]int64, len(storeParts))
	for _, p := range storeParts {
		parts[p] = 0
	}
	for _, bu := range u.Buckets {
		p, ok := storePart[bu.Name]
		if !ok {
			p = "other"
		}
		parts[p] += bu.Bytes
	}
	parts["free"], parts["other"] = u.Free, parts["other"]+u.Meta
	err = filepath.WalkDir(filepath.Join(b.dataDir, "index"), func(_ string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a segment merged away while walking
		}
		if err != nil || d.IsDir() {
			return err
		}
		if info, err := d.Info(); err == nil {
			parts["indexes"] += info.Size()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("size of the search indexes: %w", err)
	}
	s.mu.Lock()
	s.parts, s.measured = parts, time.Now()
	s.mu.Unlock()
	return nil
}

// measureStore measures the store's size at start and then every
// storeSizeEvery until ctx ends.
func (d *Daemon) measureStore(ctx context.Context) {
	defer close(d.measured)
	tick := time.NewTicker(storeSizeEvery)
	defer tick.Stop()
	for {
		if err := d.sizes.measure(ctx, &d.b); err != nil && ctx.Err() == nil {
			d.log.Warn("measuring the store's size failed; retrying at the next pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// metricsState is the metrics' Source: what a scrape reads of the daemon.
// It reads counters the store keeps (no scans) and the last size
// measurement; while the store does not answer it reports it down.
func (d *Daemon) metricsState(ctx context.Context) metrics.State {
	b := &d.b
	var st metrics.State
	if !d.ready.Load() || b.store == nil {
		return st
	}
	st.EmbeddedChunks = b.ix.Status().Embedded
	var ws embed.Stats // zeros while no embedder runs
	if e := b.ix.Available(); e != nil {
		ws = e.Stats()
	}
	st.EmbeddedTexts, st.QueryEmbedding = workerMetrics(ws)
	durable, streams, cut := b.subs.Counts()
	st.SubscriptionsDurable, st.SubscriptionStreams, st.SubscriptionCutOffs = durable, streams, cut
	st.StoreBytes, st.StoreMeasured = d.sizes.get()
	down, _, _ := b.storeHealth.state()
	if down {
		return st
	}
	err := func() error {
		s, err := b.store.Stats(ctx)
		if err != nil {
			return err
		}
		es, err := b.store.EmbedStats(ctx)
		if err != nil {
			return err
		}
		seq, err := b.store.OutboxSeq(ctx)
		if err != nil {
			return err
		}
		watches, err := b.watches.List(ctx)
		if err != nil {
			return err
		}
		st.Items, st.StoreFileBytes = s.ItemCount, s.FileSize
		st.Chunks, st.PendingEmbed, st.PendingChunking = es.Chunks, es.PendingEmbed, es.PendingChunking
		lex, vec := b.engine.Positions()
		standing, _ := b.subs.Hold()
		st.OutboxSeq, st.Applied = seq, map[string]uint64{"lexical": lex, "vector": vec, "standing": standing}
		st.Watches = map[string]int{}
		for _, m := range []watcher.Mode{watcher.ModeStarting, watcher.ModeEvents, watcher.ModeScanning, watcher.ModeRemote, watcher.ModeFailed} {
			st.Watches[m.String()] = 0
		}
		for _, w := range watches {
			st.Watches[w.Status.Mode.String()]++
		}
		return nil
	}()
	if _, unavailable := unreachable(err); unavailable {
		b.storeHealth.failed(err)
	}
	st.StoreUp = err == nil
	if err != nil {
		d.log.Warn("metrics: reading the daemon's state failed", "err", b.storeInfo.scrub(err.Error()))
	}
	return st
}

// workerMetrics converts the embedder's counts to the metrics'.
func workerMetrics(s embed.Stats) (map[string]int64, *metrics.Histogram) {
	texts := map[string]int64{"query": s.Texts[embed.Query], "prompt": s.Texts[embed.Prompt], "background": s.Texts[embed.Background]}
	h := &metrics.Histogram{Count: uint64(s.QueryWaits), Sum: s.QueryWaitSum.Seconds(), Buckets: map[float64]uint64{}}
	for i, b := range embed.QueryWaitBounds() {
		h.Buckets[b.Seconds()] = 0
		if i < len(s.QueryWaitBuckets) { // nil before a model runs
			h.Buckets[b.Seconds()] = uint64(s.QueryWaitBuckets[i])
		}
	}
	return texts, h
}

// requireMetricsScope lets through requests whose bearer token holds the
// metrics scope: 401 without a valid token, 403 with one that lacks it,
// each with the JSON error body of the gateway.
func requireMetricsScope(auth *authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g, err := auth.authenticate(r.Header.Get("Authorization"))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ctxd"`)
			writeStatus(w, http.StatusUnauthorized, err)
			return
		}
		if err := needScope(g, ScopeMetrics, "/metrics"); err != nil {
			writeStatus(w, http.StatusForbidden, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// metricsOnly serves handler at /metrics and a 404 with the gateway's JSON
// error body at any other path: the tokenless metrics listener.
func metricsOnly(handler http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", handler)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusNotFound, apiError(ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND,
			fmt.Sprintf("no endpoint %s %s on the metrics listener", r.Method, r.URL.Path),
			"The metrics listener serves only /metrics; the API is on the HTTP listener (http in the daemon config)."))
	})
	return mux
}

// startMetrics serves /metrics without a token on the metrics listener
// (cfg.Metrics), behind the same Host/Origin guard as the HTTP listener.
func (d *Daemon) startMetrics() error {
	ln, err := net.Listen("tcp", d.cfg.Metrics)
	if err != nil {
		return fmt.Errorf("listen metrics: %w", err)
	}
	d.metricsAddr = ln.Addr()
	guarded := newEdgePolicy(d.cfg.AllowedHosts, d.cfg.AllowedOrigins).guard(metricsOnly(d.b.metrics.Handler()))
	d.metricsHTTP = &http.Server{Handler: guarded, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := d.metricsHTTP.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			d.served <- fmt.Errorf("metrics: %w", err)
		}
	}()
	return nil
}

// MetricsAddr is the address of the tokenless metrics listener, or nil
// when disabled.
func (d *Daemon) MetricsAddr() net.Addr { return d.metricsAddr }

// recordDoctor keeps a Doctor run for Status (last_doctor) and counts it.
func (b *backend) recordDoctor(resp *ctxdv1.DoctorResponse, took time.Duration, err error) {
	b.metrics.ObserveDoctor(len(resp.GetProblems()), err)
	if err != nil {
		return
	}
	b.lastDoctor.Store(&ctxdv1.DoctorRun{FinishedAt: timeToProto(time.Now()), Seconds: took.Seconds(), Result: resp})
}
