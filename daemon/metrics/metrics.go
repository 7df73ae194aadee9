package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc/codes"
)

// ScrapeTimeout bounds one scrape: reading the daemon's state and writing
// the response. A scrape past it answers 503.
const ScrapeTimeout = 10 * time.Second

// rpcBuckets are the RPC latency buckets, in seconds: local calls take well
// under a millisecond, searches and writes of large items up to seconds.
// A streaming RPC is observed when its stream ends, so long-lived streams
// (Subscribe, health Watch) fall in the last buckets.
var rpcBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// searchBuckets are the search and leg latency buckets, in seconds.
var searchBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics is one daemon's registry and the instruments the daemon reports
// events into. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	rpcs        *prometheus.CounterVec
	rpcDuration *prometheus.HistogramVec
	legs        *prometheus.HistogramVec
	searches    *prometheus.HistogramVec
	writes      prometheus.Counter
	pruneRuns   *prometheus.CounterVec
	pruned      prometheus.Counter
	pruneLast   prometheus.Gauge
	doctorRuns  *prometheus.CounterVec

	// Writes and Searches count item writes and searches over the last
	// minute, for the Status RPC.
	Writes, Searches *Rate
}

// New registers the daemon's families, the Go runtime's and the process's
// on a registry of their own. src is read at each scrape; version is the
// daemon's, exposed as ctxd_build_info. now is the clock of the rates
// (time.Now outside tests).
func New(src Source, version string, now func() time.Time) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		rpcs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ctxd_grpc_requests_total",
			Help: "gRPC calls the daemon served, by full method and status code; the HTTP gateway's and MCP's calls are among them.",
		}, []string{"method", "code"}),
		rpcDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ctxd_grpc_request_duration_seconds",
			Help:    "How long gRPC calls took, by full method and status code; a stream counts from its start to its end.",
			Buckets: rpcBuckets,
		}, []string{"method", "code"}),
		legs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ctxd_search_leg_duration_seconds",
			Help:    "How long one leg of one search query took: bm25, substring, or vector (its query embedding included).",
			Buckets: searchBuckets,
		}, []string{"leg"}),
		searches: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ctxd_search_duration_seconds",
			Help:    "How long searches took end to end, by the mode they ran in (hybrid, bm25, vector) and whether they failed.",
			Buckets: searchBuckets,
		}, []string{"mode", "result"}),
		writes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ctxd_item_writes_total",
			Help: "Items this daemon created, changed, moved or deleted (one per item a committed transaction changed).",
		}),
		pruneRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ctxd_history_prune_runs_total",
			Help: "Passes of the history pruning loop, by result (ok, error).",
		}, []string{"result"}),
		pruned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ctxd_history_pruned_revisions_total",
			Help: "Revisions the history pruning loop removed.",
		}),
		pruneLast: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ctxd_history_prune_last_run_timestamp_seconds",
			Help: "When the last history pruning pass ended (Unix time), whatever its result.",
		}),
		doctorRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ctxd_doctor_runs_total",
			Help: "Doctor runs, by result: ok (the indexes match the store), problems, error (the run failed).",
		}, []string{"result"}),
		Writes:   NewRate(now),
		Searches: NewRate(now),
	}
	for _, r := range []string{"ok", "error"} {
		m.pruneRuns.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "problems", "error"} {
		m.doctorRuns.WithLabelValues(r)
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ctxd_build_info", Help: "Always 1; the version label is the daemon's.", ConstLabels: prometheus.Labels{"version": version},
	})
	build.Set(1)
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		build, m.rpcs, m.rpcDuration, m.legs, m.searches, m.writes, m.pruneRuns, m.pruned, m.pruneLast, m.doctorRuns,
		newStateCollector(src),
	)
	return m
}

// Handler serves the registry in the Prometheus text format (or protobuf,
// when the scraper asks for it), within ScrapeTimeout.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Timeout: ScrapeTimeout, ErrorHandling: promhttp.ContinueOnError})
}

// ObserveRPC counts one gRPC call of method (its full name) that ended with
// code after took.
func (m *Metrics) ObserveRPC(method string, code codes.Code, took time.Duration) {
	c := code.String()
	m.rpcs.WithLabelValues(method, c).Inc()
	m.rpcDuration.WithLabelValues(method, c).Observe(took.Seconds())
}

// ObserveLeg records how long one leg of one query took; leg is bm25,
// substring or vector.
func (m *Metrics) ObserveLeg(leg string, took time.Duration) {
	m.legs.WithLabelValues(leg).Observe(took.Seconds())
}

// ObserveSearch records a search of mode (hybrid, bm25, vector) that took
// took and counts it in Searches.
func (m *Metrics) ObserveSearch(mode string, took time.Duration, failed bool) {
	result := "ok"
	if failed {
		result = "error"
	}
	m.searches.WithLabelValues(mode, result).Observe(took.Seconds())
	m.Searches.Add(1)
}

// ObserveWrites counts n item writes that just committed.
func (m *Metrics) ObserveWrites(n int) {
	m.writes.Add(float64(n))
	m.Writes.Add(int64(n))
}

// ObservePrune records a history pruning pass that removed n revisions and
// ended at end, with err when it failed.
func (m *Metrics) ObservePrune(n int, err error, end time.Time) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.pruneRuns.WithLabelValues(result).Inc()
	m.pruned.Add(float64(n))
	m.pruneLast.Set(float64(end.UnixNano()) / 1e9)
}

// ObserveDoctor records a Doctor run: problems found, or err when it failed.
func (m *Metrics) ObserveDoctor(problems int, err error) {
	result := "ok"
	switch {
	case err != nil:
		result = "error"
	case problems > 0:
		result = "problems"
	}
	m.doctorRuns.WithLabelValues(result).Inc()
}

// scrapeContext bounds a scrape's reads of the daemon's state.
func scrapeContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), ScrapeTimeout)
}
