package daemon

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/ctxd/ctxd/daemon/metrics"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// families is one scrape, parsed.
type families map[string]*dto.MetricFamily

// scrapeMetrics GETs url with token (none when empty) and parses the body
// with the Prometheus text parser.
func scrapeMetrics(t testing.TB, url, token string) families {
	t.Helper()
	code, body := httpCall(t, "GET", url, "", token)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", url, code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse the scrape: %v\n%s", err, body)
	}
	return fams
}

// waitScrape scrapes url until done holds; it fails after a minute.
func waitScrape(t testing.TB, url, what string, done func(families) bool) families {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		f := scrapeMetrics(t, url, "")
		if done(f) {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// value sums the metrics of family name whose labels include want: a
// counter's or gauge's value, a histogram's count. -1 when none matches.
func (f families) value(name string, want ...string) float64 {
	fam, ok := f[name]
	if !ok {
		return -1
	}
	sum, found := 0.0, false
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i+1 < len(want); i += 2 {
			match = match && labels[want[i]] == want[i+1]
		}
		if !match {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	if !found {
		return -1
	}
	return sum
}

// documentedFamilies lists the families docs/metrics.md documents: the
// first cell of each table row that names a ctxd_ family.
func documentedFamilies(t testing.TB) []string {
	t.Helper()
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(ctxd_[a-z_]+)`").FindAllSubmatch(doc, -1) {
		names = append(names, string(m[1]))
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// A real daemon's /metrics parses, holds every documented family (and the
// Go runtime's and the process's), and its counters and histograms move as
// the daemon works, while its gauges agree with Status.
func TestMetrics_ScrapeMovesWithWork(t *testing.T) {
	root := watchTree(t, map[string]string{"w.md": "# W\n\nwombat burrows under the meadow\n"})
	cfg := withModel(t, testConfig(t))
	cfg.HTTP, cfg.Metrics = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AllowedRoots = []string{root}
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	ctx := context.Background()
	url := "http://" + d.MetricsAddr().String() + "/metrics"
	waitEmbedded(t, conn, 2*time.Minute)

	// The size is measured and history pruned once at start.
	before := waitScrape(t, url, "the first store measurement and prune pass", func(f families) bool {
		return f.value("ctxd_store_bytes_measured_timestamp_seconds") > 0 && f.value("ctxd_history_prune_runs_total", "result", "ok") >= 1
	})
	vc := ctxdv1.NewVfsServiceClient(conn)
	writes := []string{"/m/a.md", "/m/b.md", "/m/c.md"}
	for _, ref := range writes {
		writeText(t, vc, ref, "# Note\n\nthe aardvark digs at night in "+ref+"\n")
	}
	waitEmbedded(t, conn, 2*time.Minute)
	modes := map[string]ctxdv1.SearchMode{"bm25": ctxdv1.SearchMode_SEARCH_MODE_BM25, "vector": ctxdv1.SearchMode_SEARCH_MODE_VECTOR, "hybrid": ctxdv1.SearchMode_SEARCH_MODE_HYBRID}
	for _, mode := range modes {
		doSearch(t, conn, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "aardvark"}}, Mode: mode})
	}
	admin := ctxdv1.NewAdminServiceClient(conn)
	if _, err := admin.Doctor(ctx, &ctxdv1.DoctorRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ctxdv1.NewWatchServiceClient(conn).AddWatch(ctx, &ctxdv1.AddWatchRequest{Path: root}); err != nil {
		t.Fatal(err)
	}
	if _, err := ctxdv1.NewSubscriptionServiceClient(conn).CreateSubscription(ctx, &ctxdv1.CreateSubscriptionRequest{Name: "aardvarks", Query: bm25Query("aardvark")}); err != nil {
		t.Fatal(err)
	}
	st := waitEmbedded(t, conn, 2*time.Minute)
	// Every consumer catches up: the standing queries follow the indexes.
	after := waitScrape(t, url, "every consumer to apply the outbox", func(f families) bool {
		return f.value("ctxd_outbox_lag_entries") == 0 && f.value("ctxd_outbox_sequence") == float64(st.GetStore().GetOutboxSequence())
	})

	for _, name := range append(documentedFamilies(t), "go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes") {
		if _, ok := after[name]; !ok {
			t.Errorf("the scrape has no %s", name)
		}
	}
	moved := func(what string, atLeast float64, name string, labels ...string) {
		t.Helper()
		b, a := max(before.value(name, labels...), 0), after.value(name, labels...)
		if a-b < atLeast {
			t.Errorf("%s: %s%v went from %v to %v; want it up by at least %v", what, name, labels, b, a, atLeast)
		}
	}
	write := ctxdv1.VfsService_Write_FullMethodName
	moved("writes", 3, "ctxd_grpc_requests_total", "method", write, "code", "OK")
	moved("writes", 3, "ctxd_grpc_request_duration_seconds", "method", write, "code", "OK")
	moved("writes", 3, "ctxd_item_writes_total")
	for _, leg := range []string{"bm25", "substring", "vector"} {
		moved("searches", 1, "ctxd_search_leg_duration_seconds", "leg", leg)
	}
	for mode := range modes {
		moved("searches", 1, "ctxd_search_duration_seconds", "mode", mode, "result", "ok")
	}
	moved("searches", 3, "ctxd_grpc_requests_total", "method", ctxdv1.SearchService_Search_FullMethodName, "code", "OK")
	moved("doctor", 1, "ctxd_doctor_runs_total", "result", "ok")
	moved("embedding", 3, "ctxd_embedded_chunks_total")
	moved("embedding", 3, "ctxd_embedding_texts_total", "priority", "background")
	moved("searches", 2, "ctxd_embedding_texts_total", "priority", "query") // vector and hybrid
	moved("searches", 2, "ctxd_query_embedding_seconds")
	moved("watch", 1, "ctxd_watches", "state", "events")
	moved("subscription", 1, "ctxd_subscriptions_durable")
	moved("writes", 3, "ctxd_outbox_sequence")

	gauges := map[string]float64{
		"ctxd_store_up":               1,
		"ctxd_items":                  float64(st.GetItemCount()),
		"ctxd_chunks":                 float64(st.GetIndex().GetChunkCount()),
		"ctxd_embedding_queue_chunks": float64(st.GetEmbedding().GetPendingChunks()),
		"ctxd_chunking_queue_items":   float64(st.GetEmbedding().GetPendingItems()),
		"ctxd_store_file_bytes":       float64(st.GetStoreFileBytes()),
		"ctxd_watches":                float64(len(st.GetWatches())),
		"ctxd_subscriptions_durable":  float64(st.GetSubscriptions().GetDurable()),
		"ctxd_subscription_streams":   float64(st.GetSubscriptions().GetStreams()),
	}
	for name, want := range gauges {
		if got := after.value(name); got != want {
			t.Errorf("%s = %v; Status says %v", name, got, want)
		}
	}
	if n := len(after["ctxd_outbox_lag_entries"].GetMetric()); n != 3 {
		t.Errorf("ctxd_outbox_lag_entries has %d series; want lexical, vector and standing", n)
	}
	for _, part := range storeParts {
		if after.value("ctxd_store_bytes", "part", part) < 0 {
			t.Errorf("ctxd_store_bytes has no part %q", part)
		}
	}
	if after.value("ctxd_history_prune_last_run_timestamp_seconds") <= 0 {
		t.Error("ctxd_history_prune_last_run_timestamp_seconds is not set after the pass at start")
	}
	if after.value("ctxd_build_info", "version", Version) != 1 {
		t.Errorf("ctxd_build_info{version=%q} is not 1", Version)
	}
}

// docs/metrics.md documents exactly the ctxd_ families a daemon exposes.
func TestMetrics_DocumentedFamiliesMatch(t *testing.T) {
	cfg := testConfig(t)
	cfg.Metrics = "127.0.0.1:0"
	d := mustStart(t, cfg)
	vc := d.vfsClient(t)
	writeText(t, vc, "/d/a.md", "# A\n\nsome words\n") // the RPC families appear with their first call
	doSearch(t, dial(t, "unix://"+cfg.Socket), &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "words"}}, Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25})
	f := waitScrape(t, "http://"+d.MetricsAddr().String()+"/metrics", "the store measurement", func(f families) bool {
		return f.value("ctxd_store_bytes_measured_timestamp_seconds") > 0
	})
	var scraped []string
	for name := range f {
		if strings.HasPrefix(name, "ctxd_") {
			scraped = append(scraped, name)
		}
	}
	slices.Sort(scraped)
	if doc := documentedFamilies(t); !slices.Equal(doc, scraped) {
		t.Errorf("docs/metrics.md documents\n%v\nthe daemon exposes\n%v", doc, scraped)
	}
}

// /metrics on the HTTP listener needs a token with the metrics scope and
// sits behind the Host/Origin guard; the metrics listener serves it without
// a token, behind the guard too, and serves nothing else.
func TestMetrics_Scopes(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP, cfg.Metrics = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{
		{Name: "reader", SHA256: sha256Hex("reader-token"), Scopes: []string{"read"}},
		{Name: "scraper", SHA256: sha256Hex("scraper-token"), Scopes: []string{"metrics"}},
	}
	d := mustStart(t, cfg)
	api := "http://" + d.HTTPAddr().String()
	scrapeURL := "http://" + d.MetricsAddr().String()

	for _, tt := range []struct {
		name, token string
		code        int
		want        ctxdv1.ErrorType
	}{
		{"no token", "", http.StatusUnauthorized, ctxdv1.ErrorType_ERROR_TYPE_UNAUTHENTICATED},
		{"bad token", "nope", http.StatusUnauthorized, ctxdv1.ErrorType_ERROR_TYPE_UNAUTHENTICATED},
		{"read token", "reader-token", http.StatusForbidden, ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := httpCall(t, "GET", api+"/metrics", "", tt.token)
			if code != tt.code {
				t.Fatalf("GET /metrics = %d %s; want %d", code, body, tt.code)
			}
			e := decodeHTTPError(t, body, tt.want)
			if tt.code == http.StatusForbidden && !strings.Contains(e.Message, "metrics") {
				t.Errorf("403 message %q does not name the metrics scope", e.Message)
			}
		})
	}
	for _, tok := range []string{"scraper-token", d.token} {
		if f := scrapeMetrics(t, api+"/metrics", tok); f.value("ctxd_store_up") != 1 {
			t.Errorf("scrape with a metrics token: ctxd_store_up = %v", f.value("ctxd_store_up"))
		}
	}
	// The metrics scope grants nothing else.
	if code, body := httpCall(t, "GET", api+"/v1/status", "", "scraper-token"); code != http.StatusForbidden {
		t.Errorf("GET /v1/status with the metrics token = %d %s; want 403", code, body)
	}

	// The tokenless listener: /metrics only.
	if f := scrapeMetrics(t, scrapeURL+"/metrics", ""); f.value("ctxd_store_up") != 1 {
		t.Errorf("metrics listener: ctxd_store_up = %v", f.value("ctxd_store_up"))
	}
	for _, path := range []string{"/v1/status", "/mcp", "/openapi.json", "/", "/metrics/x"} {
		code, body := httpCall(t, "GET", scrapeURL+path, "", d.token)
		if code != http.StatusNotFound {
			t.Errorf("metrics listener GET %s = %d; want 404", path, code)
			continue
		}
		decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND)
	}

	// The Host/Origin guard runs before anything else on both listeners.
	for _, base := range []string{api, scrapeURL} {
		for _, tt := range []struct {
			header, value string
			code          int
		}{
			{"Host", "evil.example", http.StatusMisdirectedRequest},
			{"Origin", "https://evil.example", http.StatusForbidden},
		} {
			req, err := http.NewRequest("GET", base+"/metrics", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+d.token)
			if tt.header == "Host" {
				req.Host = tt.value
			} else {
				req.Header.Set(tt.header, tt.value)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.code {
				t.Errorf("%s/metrics with %s: %s = %d; want %d", base, tt.header, tt.value, resp.StatusCode, tt.code)
			}
		}
	}
}

// A token limited by drives or paths cannot hold the metrics scope: its
// figures cover the whole store.
func TestMetrics_LimitedTokenRefused(t *testing.T) {
	cfg := testConfig(t)
	cfg.Tokens = []TokenConfig{{Name: "narrow", SHA256: sha256Hex("narrow"), Scopes: []string{"read", "metrics"}, Drives: []string{"agent"}}}
	_, err := Start(context.Background(), cfg, slogDiscard())
	if err == nil || !strings.Contains(err.Error(), "metrics scope") {
		t.Fatalf("Start with a limited metrics token: %v; want it refused", err)
	}
}

// Status reports the last Doctor run since start (none before one) and
// the writes and searches of the last minute.
func TestStatus_LastDoctorAndRates(t *testing.T) {
	cfg := testConfig(t)
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	admin := ctxdv1.NewAdminServiceClient(conn)
	ctx := context.Background()
	st, err := admin.Status(ctx, &ctxdv1.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetLastDoctor() != nil || st.GetWritesPerSecond() != 0 || st.GetSearchesPerSecond() != 0 {
		t.Fatalf("a fresh daemon's status: last_doctor %v, %v writes/s, %v searches/s; want none", st.GetLastDoctor(), st.GetWritesPerSecond(), st.GetSearchesPerSecond())
	}
	vc := d.vfsClient(t)
	for _, ref := range []string{"/r/a.md", "/r/b.md"} {
		writeText(t, vc, ref, "# R\n\nrates\n")
	}
	doSearch(t, conn, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "rates"}}, Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25})
	doc, err := admin.Doctor(ctx, &ctxdv1.DoctorRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err = admin.Status(ctx, &ctxdv1.StatusRequest{}); err != nil {
		t.Fatal(err)
	}
	if st.GetWritesPerSecond() <= 0 || st.GetSearchesPerSecond() <= 0 {
		t.Errorf("after 2 writes and a search: %v writes/s, %v searches/s; want both above 0", st.GetWritesPerSecond(), st.GetSearchesPerSecond())
	}
	run := st.GetLastDoctor()
	if run == nil || run.GetFinishedAt() == nil || run.GetSeconds() <= 0 || run.GetResult().GetStoreChunks() != doc.GetStoreChunks() || run.GetResult().GetOk() != doc.GetOk() {
		t.Errorf("last_doctor = %v; want the run that answered %v", run, doc)
	}
}

// BenchmarkInterceptor_Metrics is the cost of counting a call: a cheap
// unary call through the interceptors with metrics off and on.
func BenchmarkInterceptor_Metrics(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "metrics=off"
		var ready atomic.Bool
		ready.Store(true)
		ic := &interceptors{log: slogDiscard(), auth: &authenticator{tokens: map[[32]byte]grant{}}, ready: &ready, maxContent: 1 << 20,
			storeDown: func(error) {}}
		if on {
			name, ic.metrics = "metrics=on", metrics.New(func(context.Context) metrics.State { return metrics.State{} }, Version, time.Now)
		}
		b.Run(name, func(b *testing.B) {
			ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.UnixAddr{Name: "/s", Net: "unix"}})
			info := &grpc.UnaryServerInfo{FullMethod: ctxdv1.VfsService_Exists_FullMethodName}
			req := &ctxdv1.ExistsRequest{Ref: "/a.md"}
			handler := func(context.Context, any) (any, error) { return &ctxdv1.ExistsResponse{}, nil }
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ic.unary(ctx, req, info, handler); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
