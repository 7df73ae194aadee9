package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/internal/testmodel"
	"github.com/ctxd/ctxd/vfs"
)

func modelDir(t testing.TB) string { return testmodel.Dir(t) }

func ortLib(t testing.TB) string { return testmodel.ORTLib(t) }

func withModel(t testing.TB, cfg Config) Config {
	cfg.ModelDir, cfg.OnnxRuntimeLib = modelDir(t), ortLib(t)
	return cfg
}

// waitEmbedded polls Status until the model is available, nothing waits
// for a vector and the indexes applied every change (the vectors too, so
// that a vector search finds them), and returns it.
func waitEmbedded(t testing.TB, conn *grpc.ClientConn, timeout time.Duration) *ctxdv1.StatusResponse {
	t.Helper()
	return waitStatus(t, ctxdv1.NewAdminServiceClient(conn), timeout, "embedding to finish", func(st *ctxdv1.StatusResponse) bool {
		e, ix := st.Embedding, st.Index
		return e.Available && e.PendingChunks == 0 && e.PendingItems == 0 && ix.AppliedSequence >= ix.OutboxSequence
	})
}

const sampleMarkdown = `# Install

ctxd runs as a daemon.

## Linux

Use the systemd user unit: make install-service.

## macOS

Run it in a terminal with make run.

# Usage

` + "```sh\nctxd write agent:/notes/a.md < notes.md\n```\n"

func TestDaemon_EmbedsEveryWrite(t *testing.T) {
	d := mustStart(t, withModel(t, testConfig(t)))
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	writeText(t, c, "/docs/install.md", sampleMarkdown)
	writeText(t, c, "/docs/notes.txt", "first paragraph\n\nsecond paragraph\n")
	st := waitEmbedded(t, conn, time.Minute)
	e := st.Embedding
	if e.ModelId != "all-MiniLM-L6-v2" || e.Dimensions != 384 || e.EmbeddedChunks == 0 || st.Index.ChunkCount < e.EmbeddedChunks {
		t.Fatalf("status after embedding: %v / chunks %d", e, st.Index.ChunkCount)
	}
	// A copy and an identical rewrite reuse every vector.
	if _, err := c.Copy(context.Background(), &ctxdv1.CopyRequest{SourceRef: "/docs", DestinationRef: "copy:/docs", Recursive: true}); err != nil {
		t.Fatal(err)
	}
	writeText(t, c, "/docs/install.md", sampleMarkdown)
	again := waitEmbedded(t, conn, time.Minute)
	if again.Embedding.EmbeddedChunks != e.EmbeddedChunks || again.Index.ChunkCount != 2*st.Index.ChunkCount {
		t.Errorf("copy/rewrite: embedded %d -> %d, chunks %d -> %d", e.EmbeddedChunks, again.Embedding.EmbeddedChunks, st.Index.ChunkCount, again.Index.ChunkCount)
	}
	// Reembed recomputes and streams progress to a summary.
	stream, err := ctxdv1.NewIngestServiceClient(conn).Reembed(context.Background(), &ctxdv1.ReembedRequest{Refs: []string{"/docs"}})
	if err != nil {
		t.Fatal(err)
	}
	var summary *ctxdv1.IngestSummary
	for {
		ev, err := stream.Recv()
		if err != nil {
			break
		}
		if s := ev.GetSummary(); s != nil {
			summary = s
		}
	}
	if summary == nil || summary.ChunksQueued != st.Index.ChunkCount {
		t.Errorf("reembed summary = %v, want %d chunks", summary, st.Index.ChunkCount)
	}
}

// TestDaemon_ReembedAheadOfBacklog re-embeds a small item while thousands of
// chunks wait for their first embedding: the re-embed is served ahead of
// them, and its progress moves only forward.
func TestDaemon_ReembedAheadOfBacklog(t *testing.T) {
	d := mustStart(t, withModel(t, testConfig(t)))
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	var sb strings.Builder
	for k := range 2 { // two sections of about 200 tokens: two chunks
		fmt.Fprintf(&sb, "# Section %d\n\n%s\n\n", k, strings.Repeat(fmt.Sprintf("otters and beavers %d build dams. ", k), 40))
	}
	writeText(t, c, "/small.md", sb.String())
	small := waitEmbedded(t, conn, time.Minute).Index.ChunkCount
	if small < 2 {
		t.Fatalf("/small.md has %d chunks, want several", small)
	}
	for i := range 400 {
		sb.Reset()
		for k := range 5 {
			fmt.Fprintf(&sb, "## Part %d of note %d\n\n", k, i)
			for w := range 40 {
				fmt.Fprintf(&sb, "word%d ", (i*131+k*17+w)%997)
			}
			sb.WriteString("\n\n")
		}
		writeText(t, c, fmt.Sprintf("/bulk/%03d.md", i), sb.String())
	}
	admin := ctxdv1.NewAdminServiceClient(conn)
	before, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}

	stream, err := ctxdv1.NewIngestServiceClient(conn).Reembed(context.Background(), &ctxdv1.ReembedRequest{Refs: []string{"/small.md"}})
	if err != nil {
		t.Fatal(err)
	}
	var summary *ctxdv1.IngestSummary
	done := []int64{}
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if p := ev.GetProgress(); p != nil {
			if p.ItemsTotal != small || len(done) > 0 && p.ChunksDone <= done[len(done)-1] {
				t.Errorf("progress %v after %v: want %d chunks in all, each event a step forward", p, done, small)
			}
			done = append(done, p.ChunksDone)
		}
		if s := ev.GetSummary(); s != nil {
			summary = s
		}
	}
	after, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("re-embedded %d chunks in %.2fs (progress %v); backlog %d chunks before, %d after",
		summary.GetChunksQueued(), summary.GetSeconds(), done, before.Embedding.PendingChunks, after.Embedding.PendingChunks)
	if summary == nil || summary.ChunksQueued != small || done[len(done)-1] != small {
		t.Fatalf("summary %v, progress %v: want %d chunks re-embedded", summary, done, small)
	}
	if after.Embedding.PendingChunks == 0 {
		t.Errorf("the re-embed of %d chunks finished only once the backlog of %d chunks had drained", small, before.Embedding.PendingChunks)
	}
}

// TestDaemon_VectorSearchNotesPendingChunks searches in vector mode while
// every chunk waits for an embedding (ONNX Runtime is missing, so none is
// computed): the empty answer says how many chunks the vector leg missed.
func TestDaemon_VectorSearchNotesPendingChunks(t *testing.T) {
	cfg := withModel(t, testConfig(t))
	cfg.OnnxRuntimeLib = filepath.Join(t.TempDir(), "missing", "libonnxruntime.so")
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	writeText(t, c, "/docs/install.md", sampleMarkdown)
	writeText(t, c, "/docs/notes.txt", "first paragraph about the daemon\n\nsecond paragraph\n")
	st := waitStatus(t, ctxdv1.NewAdminServiceClient(conn), time.Minute, "chunks indexed and queued for embedding", func(st *ctxdv1.StatusResponse) bool {
		return st.Index.AppliedSequence >= st.Index.OutboxSequence &&
			st.Embedding.PendingItems == 0 && st.Embedding.PendingChunks > 0 && st.Index.ChunkCount == st.Embedding.PendingChunks
	})
	req := &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_VECTOR, Queries: []*ctxdv1.SearchQuery{{Vector: randomVector(rand.New(rand.NewPCG(1, 2)), 384)}}}
	var resp *ctxdv1.SearchResponse
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		// The engine learns the model and loads its (empty) vector index in
		// the background: until it has, a query vector is refused.
		var err error
		resp, err = ctxdv1.NewSearchServiceClient(conn).Search(context.Background(), req)
		if err != nil && (!strings.Contains(err.Error(), "no embedding model is loaded") || time.Now().After(deadline)) {
			t.Fatalf("vector search: %v", err)
		}
		if err == nil && resp.ModeUsed == ctxdv1.SearchMode_SEARCH_MODE_VECTOR || time.Now().After(deadline) {
			break
		}
	}
	if resp.ModeUsed != ctxdv1.SearchMode_SEARCH_MODE_VECTOR || len(resp.Results) != 0 {
		t.Fatalf("vector search with nothing embedded: mode %v, %d results (%s)", resp.ModeUsed, len(resp.Results), resp.ModeReason)
	}
	if want := fmt.Sprintf("%d chunks are still waiting to be embedded", st.Embedding.PendingChunks); !strings.Contains(resp.ModeReason, want) {
		t.Errorf("mode_reason %q, want it to contain %q", resp.ModeReason, want)
	}
	bm25 := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Queries: []*ctxdv1.SearchQuery{{Text: "daemon"}}})
	if len(bm25.Results) == 0 || bm25.ModeReason != "" {
		t.Errorf("BM25 search: %d results, mode_reason %q; want results and no note", len(bm25.Results), bm25.ModeReason)
	}
}

// storeFacts opens a stopped daemon's store and returns its embedding stats
// and the number of distinct chunk texts.
func storeFacts(t *testing.T, dataDir string) (vfs.EmbedStats, int) {
	t.Helper()
	s, err := vfs.Open(filepath.Join(dataDir, "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	spec, err := embed.LoadSpec(modelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetIndexing(ctx, nil, spec.ID); err != nil {
		t.Fatal(err)
	}
	st, err := s.EmbedStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[[32]byte]bool{}
	entries, _, err := s.List(ctx, vfs.Ref{Drive: "agent", Path: "/"}, true, 100000, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		chunks, err := s.Chunks(ctx, vfs.Ref{Drive: e.Drive, Path: e.Path})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			hashes[c.Hash] = true
			if v, err := s.Vector(ctx, c.Hash); err != nil || len(v) != 384 {
				t.Fatalf("%s: chunk without a vector (%v)", e.Ref(), err)
			}
		}
	}
	return st, len(hashes)
}

func modelArgs(t testing.TB, lib string) []string {
	return []string{"--model-dir", modelDir(t), "--onnxruntime-lib", lib}
}

func TestProcess_EmbeddingQueueSurvivesKill(t *testing.T) {
	dir := shortTempDir(t)
	dataDir, socket := filepath.Join(dir, "data"), filepath.Join(dir, "s.sock")
	p := startProcess(t, dataDir, socket, modelArgs(t, ortLib(t))...)
	conn := dial(t, "unix://"+socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	for i := range 60 {
		writeText(t, c, fmt.Sprintf("/doc%02d.md", i), fmt.Sprintf("# Doc %d\n\nparagraph %d about topic %d\n\nshared closing paragraph\n", i, i, i%7))
	}
	st, err := ctxdv1.NewAdminServiceClient(conn).Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedding.PendingChunks == 0 {
		t.Fatal("nothing pending before the kill; the test needs a backlog")
	}
	p.kill(t)

	p = startProcess(t, dataDir, socket, modelArgs(t, ortLib(t))...)
	done := waitEmbedded(t, dial(t, "unix://"+socket), 2*time.Minute)
	p.stop(t)
	stats, distinct := storeFacts(t, dataDir)
	if stats.PendingEmbed != 0 || stats.Vectors != int64(distinct) || done.Embedding.EmbeddedChunks != int64(distinct) {
		t.Errorf("after restart: %+v, %d distinct chunk texts (each must have exactly one vector)", stats, distinct)
	}
}

func TestProcess_DegradedWithoutRuntimeThenResumes(t *testing.T) {
	dir := shortTempDir(t)
	dataDir, socket := filepath.Join(dir, "data"), filepath.Join(dir, "s.sock")
	p := startProcess(t, dataDir, socket, modelArgs(t, filepath.Join(dir, "missing", "libonnxruntime.so"))...)
	conn := dial(t, "unix://"+socket)
	writeText(t, ctxdv1.NewVfsServiceClient(conn), "/a.md", sampleMarkdown)
	st, err := ctxdv1.NewAdminServiceClient(conn).Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	e := st.Embedding
	if e.Available || !strings.Contains(e.UnavailableReason, "cannot run") || e.PendingChunks == 0 || st.Index.ChunkCount == 0 {
		t.Fatalf("degraded status = %v, chunks %d", e, st.Index.ChunkCount)
	}
	p.stop(t)
	startProcess(t, dataDir, socket, modelArgs(t, ortLib(t))...)
	if done := waitEmbedded(t, dial(t, "unix://"+socket), time.Minute); done.Embedding.EmbeddedChunks != st.Index.ChunkCount {
		t.Errorf("after the runtime appeared: %v", done.Embedding)
	}
}

func TestProcess_ModelChangeReembeds(t *testing.T) {
	dir := shortTempDir(t)
	dataDir, socket := filepath.Join(dir, "data"), filepath.Join(dir, "s.sock")
	p := startProcess(t, dataDir, socket, modelArgs(t, ortLib(t))...)
	conn := dial(t, "unix://"+socket)
	writeText(t, ctxdv1.NewVfsServiceClient(conn), "/a.md", sampleMarkdown)
	first := waitEmbedded(t, conn, time.Minute)
	p.stop(t)

	// The same weights under another id stand in for a new model.
	other := filepath.Join(dir, "other-model")
	copyModel(t, modelDir(t), other, "all-MiniLM-L6-v2-renamed")
	startProcess(t, dataDir, socket, "--model-dir", other, "--onnxruntime-lib", ortLib(t))
	second := waitEmbedded(t, dial(t, "unix://"+socket), time.Minute)
	if second.Embedding.ModelId != "all-MiniLM-L6-v2-renamed" || second.Embedding.EmbeddedChunks != first.Embedding.EmbeddedChunks {
		t.Errorf("after model change: %v (before: %v)", second.Embedding, first.Embedding)
	}
}

// copyModel links a model's files into dst and rewrites its id.
func copyModel(t *testing.T, src, dst, id string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "ctxd-model.json" {
			continue
		}
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(src, "ctxd-model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	spec["id"] = id
	out, _ := json.Marshal(spec)
	if err := os.WriteFile(filepath.Join(dst, "ctxd-model.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProcess_LargeMarkdownBoundedMemory writes a 5 MB markdown file and
// checks the daemon's peak RSS while it chunks and embeds it. The sections
// repeat, so the test embeds few distinct texts but pushes thousands of
// chunks through the queue.
func TestProcess_LargeMarkdownBoundedMemory(t *testing.T) {
	dir := shortTempDir(t)
	dataDir, socket := filepath.Join(dir, "data"), filepath.Join(dir, "s.sock")
	p := startProcess(t, dataDir, socket, modelArgs(t, ortLib(t))...)
	conn := dial(t, "unix://"+socket)
	var sb strings.Builder
	for i := 0; sb.Len() < 5<<20; i++ {
		fmt.Fprintf(&sb, "## Section %d\n\n%s\n\n```go\nfunc f%d() int { return %d }\n```\n\n", i%40, strings.Repeat("Words about storage engines and embeddings. ", 20), i%40, i%40)
	}
	if _, err := ctxdv1.NewVfsServiceClient(conn).Write(context.Background(), &ctxdv1.WriteRequest{
		Ref: "/big.md", Body: &ctxdv1.WriteRequest_Content{Content: sb.String()},
	}); err != nil {
		t.Fatal(err)
	}
	st := waitEmbedded(t, conn, 3*time.Minute)
	peak := procStatusBytes(t, p.cmd.Process.Pid, "VmHWM")
	t.Logf("5 MB markdown: %d chunks, %d vectors, peak RSS %d MiB", st.Index.ChunkCount, st.Embedding.EmbeddedChunks, peak>>20)
	if st.Index.ChunkCount < 1000 {
		t.Errorf("only %d chunks for 5 MB", st.Index.ChunkCount)
	}
	if peak > 768<<20 {
		t.Errorf("peak RSS %d MiB exceeds 768 MiB", peak>>20)
	}
}

// TestDaemon_StatusWhileLoading polls Status from the moment the daemon
// serves until the model runs: embedding is loading (and says what) or
// available, and is never unavailable without a reason, which is what
// `ctxd status` printed right after start ("unavailable: ").
func TestDaemon_StatusWhileLoading(t *testing.T) {
	cfg := withModel(t, testConfig(t))
	d := mustStart(t, cfg)
	admin := ctxdv1.NewAdminServiceClient(dial(t, "unix://"+cfg.Socket))
	loading := 0
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		e := st.Embedding
		if e.Available {
			if e.Loading || e.UnavailableReason != "" {
				t.Fatalf("available, yet loading %v, reason %q", e.Loading, e.UnavailableReason)
			}
			break
		}
		if !e.Loading || !strings.HasPrefix(e.UnavailableReason, "loading the embedding model ") || !strings.Contains(e.UnavailableReason, d.cfg.ModelDir) {
			t.Fatalf("before the model runs: loading %v, reason %q; want loading and what", e.Loading, e.UnavailableReason)
		}
		loading++
		if time.Now().After(deadline) {
			t.Fatalf("model not available after a minute: %v", e)
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("%d status calls said loading before the model ran", loading)
}
