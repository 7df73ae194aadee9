package daemon

import (
	"context"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/chunk"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/embed/openai/openaitest"
	"github.com/ctxd/ctxd/index/tokenize"
	"github.com/ctxd/ctxd/vfs"
)

// remoteModel is the name the helper server serves the local model as.
const remoteModel = "all-minilm"

// startEmbedServer starts an OpenAI-compatible embeddings server on
// loopback that computes vectors with the local ONNX model, and returns it
// with that model's worker (to compare with).
func startEmbedServer(t *testing.T) (*openaitest.Server, *embed.Worker) {
	t.Helper()
	m, err := embed.Open(modelDir(t), embed.Options{LibraryPath: ortLib(t)})
	if err != nil {
		t.Fatal(err)
	}
	w := embed.NewWorker(m)
	s, err := openaitest.New(remoteModel, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		w.Close()
	})
	return s, w
}

// withRemote configures cfg to embed through s, chunking with the local
// model's tokenizer, with a breaker quick to probe again.
func withRemote(t *testing.T, cfg Config, s *openaitest.Server) Config {
	cfg.ModelDir = modelDir(t)
	cfg.Embedder.Kind, cfg.Embedder.URL, cfg.Embedder.Model = EmbedderOpenAI, s.URL(), remoteModel
	cfg.Embedder.BreakerFailures, cfg.Embedder.BreakerCooldown = 2, Duration{100 * time.Millisecond}
	return cfg
}

// checkVectorsMatchLocal fails unless every chunk in the store has a vector
// with cosine >= 0.999 to the local model's for the same text; it returns
// how many chunks it compared.
func checkVectorsMatchLocal(t *testing.T, d *testDaemon, w *embed.Worker) int {
	t.Helper()
	tok, err := tokenize.Load(modelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	var got [][]float32
	if _, err := d.b.store.ScanIndexDocs(context.Background(), true, func(doc vfs.IndexDoc) error {
		title := doc.Title // as the store gives it to the chunker: a title that is the file name is none
		if title == path.Base(doc.Path) {
			title = ""
		}
		prefix := chunk.Prefix(title, doc.Description, tok, d.cfg.Embedder.MaxTokens)
		for _, c := range doc.Chunks {
			texts = append(texts, string(chunk.AppendEmbedText(nil, prefix, c.Heading, []byte(c.Text))))
			got = append(got, c.Vector)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want, err := w.EmbedAt(context.Background(), texts, embed.Background)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if got[i] == nil {
			t.Fatalf("chunk %q has no vector", texts[i])
		}
		if cos := embed.Cosine(got[i], want[i]); cos < 0.999 {
			t.Errorf("chunk %q: cosine with the local vector %.5f, want >= 0.999", texts[i], cos)
		}
	}
	return len(texts)
}

// startRemote starts the helper server and a daemon embedding through
// it, holding sampleMarkdown.
func startRemote(t *testing.T) (*openaitest.Server, *embed.Worker, *testDaemon, *grpc.ClientConn, ctxdv1.VfsServiceClient) {
	t.Helper()
	s, w := startEmbedServer(t)
	d := mustStart(t, withRemote(t, testConfig(t), s))
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	writeText(t, c, "/docs/install.md", sampleMarkdown)
	return s, w, d, conn, c
}

func TestDaemon_RemoteEmbedderMatchesLocalModel(t *testing.T) {
	s, w, d, conn, c := startRemote(t)
	writeText(t, c, "/docs/notes.txt", "first paragraph about ovens\n\nsecond paragraph about bread\n")
	st := waitEmbedded(t, conn, time.Minute)
	e := st.Embedding
	if e.ModelId != "openai:all-minilm@384" || e.Dimensions != 384 || e.Provider != "openai" || e.Endpoint != s.URL() || e.TextSentTo != "" || e.ProviderError != "" {
		t.Fatalf("status: %v", e)
	}
	if n := checkVectorsMatchLocal(t, d, w); n != int(st.Index.ChunkCount) || n < 2 {
		t.Fatalf("compared %d chunks of %d", n, st.Index.ChunkCount)
	}
	r := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_VECTOR, Queries: []*ctxdv1.SearchQuery{{Text: "how do I install it on linux"}}, Limit: 3})
	if r.ModeUsed != ctxdv1.SearchMode_SEARCH_MODE_VECTOR || len(r.Results) == 0 || r.Results[0].Ref != "agent:/docs/install.md" {
		t.Fatalf("vector search through the provider: mode %v (%s), results %v", r.ModeUsed, r.ModeReason, resultRefs(r))
	}
}

func TestDaemon_RemoteEmbedderDownFallsBackToBM25(t *testing.T) {
	s, _, _, conn, c := startRemote(t)
	waitEmbedded(t, conn, time.Minute)

	s.Stop()
	search := func(text string) *ctxdv1.SearchResponse {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := ctxdv1.NewSearchServiceClient(conn).Search(ctx, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: text}}})
		if err != nil {
			t.Fatalf("search with the endpoint down: %v (it must answer in BM25 mode within its deadline)", err)
		}
		return r
	}
	// Each failed query counts; two open the breaker, after which status
	// says what failed.
	for range 2 {
		r := search("systemd user unit")
		if r.ModeUsed != ctxdv1.SearchMode_SEARCH_MODE_BM25 || !strings.Contains(r.ModeReason, s.URL()) || len(r.Results) == 0 {
			t.Fatalf("endpoint down: mode %v, reason %q, %d results; want BM25 results naming the endpoint", r.ModeUsed, r.ModeReason, len(r.Results))
		}
	}
	admin := ctxdv1.NewAdminServiceClient(conn)
	st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// The breaker may already allow its probe again (100 ms cooldown); if
	// the status still reports it, it names the endpoint.
	if pe := st.Embedding.ProviderError; pe != "" && !strings.Contains(pe, s.URL()) {
		t.Fatalf("provider_error %q does not name the endpoint", pe)
	}
	// What is written meanwhile is found by its words and waits for its vector.
	writeText(t, c, "/docs/walrus.md", "The walrus sleeps on the ice floe.")
	if r := search("walrus"); len(r.Results) == 0 || r.Results[0].Ref != "agent:/docs/walrus.md" {
		t.Fatalf("new item while the endpoint is down: %v", resultRefs(r))
	}
	if st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{}); err != nil || st.Embedding.PendingChunks == 0 {
		t.Fatalf("pending chunks %d (%v): the new chunk must wait for the endpoint", st.GetEmbedding().GetPendingChunks(), err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	st = waitEmbedded(t, conn, time.Minute)
	if st.Embedding.ProviderError != "" {
		t.Fatalf("provider_error %q once the endpoint is back", st.Embedding.ProviderError)
	}
	if r := search("where does the walrus sleep"); r.ModeUsed != ctxdv1.SearchMode_SEARCH_MODE_HYBRID {
		t.Fatalf("once back: mode %v (%s), want hybrid", r.ModeUsed, r.ModeReason)
	}
}

func TestDaemon_RemoteEmbedderRestartMidBacklog(t *testing.T) {
	s, w := startEmbedServer(t)
	cfg := withRemote(t, testConfig(t), s)
	cfg.Embedder.BatchSize, cfg.Embedder.MaxInFlight = 2, 1
	cfg.Embedder.BreakerCooldown = Duration{time.Second} // long enough for Status to be seen saying so
	// The probe and three batches go through; the fourth batch hangs until
	// the server stops.
	s.Inject(openaitest.Fault{}, openaitest.Fault{}, openaitest.Fault{}, openaitest.Fault{}, openaitest.Fault{Delay: time.Hour})
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	for i := range 30 {
		writeText(t, c, fmt.Sprintf("/notes/n%02d.txt", i), fmt.Sprintf("note %d: the meeting about topic %d moved to room %d", i, i*7, 100+i))
	}
	deadline := time.Now().Add(time.Minute)
	for s.Received() < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("the hanging batch never came: %d requests", s.Received())
		}
		time.Sleep(10 * time.Millisecond)
	}
	admin := ctxdv1.NewAdminServiceClient(conn)
	st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil || st.Embedding.PendingChunks == 0 || st.Embedding.EmbeddedChunks == 0 {
		t.Fatalf("before the restart: %v (%v), want chunks both embedded and pending", st.GetEmbedding(), err)
	}
	s.Stop() // cuts the hanging request off; the endpoint is dead
	waitStatus(t, admin, time.Minute, "the breaker to open", func(st *ctxdv1.StatusResponse) bool {
		return strings.Contains(st.Embedding.ProviderError, s.URL())
	})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	st = waitEmbedded(t, conn, time.Minute)
	if st.Embedding.EmbeddedChunks != st.Index.ChunkCount || st.Index.ChunkCount < 30 {
		t.Fatalf("after the restart: %d of %d chunks embedded", st.Embedding.EmbeddedChunks, st.Index.ChunkCount)
	}
	if n := checkVectorsMatchLocal(t, d, w); n != int(st.Index.ChunkCount) {
		t.Fatalf("compared %d chunks of %d", n, st.Index.ChunkCount)
	}
}

func TestDaemon_RemoteEmbedderOtherDimensionsRefused(t *testing.T) {
	s, _ := startEmbedServer(t)
	cfg := withRemote(t, testConfig(t), s)
	cfg.Embedder.Dimensions = 256
	d, err := Start(context.Background(), cfg, slogDiscard())
	if err == nil {
		d.Stop(context.Background())
		t.Fatal("Start succeeded with dimensions = 256 against a 384-dimensional model")
	}
	if !strings.Contains(err.Error(), "returns 384-dimensional vectors") || !strings.Contains(err.Error(), "set embedder.dimensions to 384") {
		t.Fatalf("Start = %v, want the mismatch and what to set", err)
	}
}

func TestDaemon_RemoteEmbedderNotOnLoopback(t *testing.T) {
	cfg := testConfig(t)
	// TEST-NET-1: never answers; the short timeout and no retries keep
	// the start's probe brief.
	cfg.Embedder.Kind, cfg.Embedder.URL, cfg.Embedder.Model = EmbedderOpenAI, "http://user:secret@192.0.2.1:9/v1", "m"
	cfg.Embedder.Timeout, cfg.Embedder.MaxRetries = Duration{50 * time.Millisecond}, 0
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)
	st := waitStatus(t, ctxdv1.NewAdminServiceClient(conn), time.Minute, "the probe to fail", func(st *ctxdv1.StatusResponse) bool {
		return !st.Embedding.Loading
	})
	e := st.Embedding
	if e.TextSentTo != "192.0.2.1:9" || e.Available || !strings.Contains(e.UnavailableReason, "http://192.0.2.1:9/v1") {
		t.Fatalf("status %v: want text_sent_to and the endpoint in the reason", e)
	}
	if strings.Contains(e.String(), "secret") {
		t.Fatalf("status shows the URL's password: %v", e)
	}
	r := doSearch(t, conn, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "anything"}}})
	if r.ModeUsed != ctxdv1.SearchMode_SEARCH_MODE_BM25 {
		t.Fatalf("search mode %v, want BM25 while the endpoint never answered", r.ModeUsed)
	}
}
