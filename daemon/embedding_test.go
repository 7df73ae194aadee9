package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/vfs"
)

// The embedding tests use the real model and ONNX Runtime that `make setup`
// installs into .cache (override with CTXD_MODEL_DIR / CTXD_ORT_LIB).

func modelDir(t testing.TB) string {
	return requirePath(t, "CTXD_MODEL_DIR", "../.cache/models/all-MiniLM-L6-v2")
}

func ortLib(t testing.TB) string {
	return requirePath(t, "CTXD_ORT_LIB", "../.cache/onnxruntime/libonnxruntime.so")
}

func requirePath(t testing.TB, env, def string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = def
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("%s is missing (%v): run `make setup`, or set %s", abs, err, env)
	}
	return abs
}

func withModel(t testing.TB, cfg Config) Config {
	cfg.ModelDir, cfg.OnnxRuntimeLib = modelDir(t), ortLib(t)
	return cfg
}

// waitEmbedded polls Status until nothing is pending and returns it.
func waitEmbedded(t testing.TB, conn *grpc.ClientConn, timeout time.Duration) *ctxdv1.StatusResponse {
	t.Helper()
	return waitStatus(t, ctxdv1.NewAdminServiceClient(conn), timeout, "embedding to finish", func(st *ctxdv1.StatusResponse) bool {
		e := st.Embedding
		return e.Available && e.PendingChunks == 0 && e.PendingItems == 0
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
	if summary == nil || summary.ChunksEmbedded != st.Index.ChunkCount {
		t.Errorf("reembed summary = %v, want %d chunks", summary, st.Index.ChunkCount)
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
