package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/chunk"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/tokenize"
	"github.com/ctxd/ctxd/internal/beir"
	"github.com/ctxd/ctxd/internal/benchenv"
	"github.com/ctxd/ctxd/internal/testmodel"
	"github.com/ctxd/ctxd/vfs"
)

// BenchmarkEmbedPipeline measures the ingest pipeline against plain
// onnxruntime on the same chunk texts (issue 31, point 3: the pipeline=
// field of make bench-embed-compare), in CTXD_BENCH_PIPELINE_ROUNDS
// (default 3) interleaved rounds of:
//   - ctxd: a fresh daemon process with the model; 16 clients write the
//     first CTXD_BENCH_PIPELINE_DOCS documents of the docs corpus (default
//     1000); timed from the first write until every chunk is embedded, it
//     gives vectors (distinct chunk texts) per second;
//   - worker: the texts that daemon embedded, read back from its store once
//     it stopped, embedded in this process by an embed.Worker with the
//     daemon's options, as one Background call: the embedder alone;
//   - onnxruntime: the same texts, tokenized as the worker tokenizes them,
//     embedded by scripts/bench/ort_embed.py --ids (CTXD_BENCH_ORT_PYTHON)
//     on the same model.onnx with the same two intra-op threads, in batches
//     of 32 sorted by length.
//
// ctxd/worker is the pipeline's own cost (writes, chunking, queues, store
// writes, index application, gaps between passes), worker/onnxruntime the
// embedder's. Each is also given per CPU second of its process (every
// thread), which a shared machine disturbs less than wall time (plain
// onnxruntime's threads spin by default, so its CPU seconds include their
// spinning). It prints the medians and, last, the line
// "pipeline ctxd=<chunks/s> worker=<chunks/s> onnxruntime=<chunks/s> pipeline=<ctxd/onnxruntime>".
func BenchmarkEmbedPipeline(b *testing.B) {
	python := os.Getenv("CTXD_BENCH_ORT_PYTHON")
	if python == "" {
		b.Fatal("CTXD_BENCH_ORT_PYTHON names a python with onnxruntime (make bench-embed-compare sets it)")
	}
	n := benchenv.Int(b, "CTXD_BENCH_PIPELINE_DOCS", 1000)
	rounds := benchenv.Int(b, "CTXD_BENCH_PIPELINE_ROUNDS", 3)
	docs, err := beir.LoadCorpus(docsCorpus, n)
	if err != nil {
		b.Fatalf("%v (the shared data sits beside the repo)", err)
	}
	m, err := embed.Open(modelDir(b), embed.Options{LibraryPath: ortLib(b)})
	if err != nil {
		b.Fatal(err)
	}
	w := embed.NewWorker(m)
	defer w.Close()
	// Chunks per second and per CPU second (every thread of the process:
	// steadier than wall time on a shared machine).
	var ctxd, worker, ort, ctxdCPU, workerCPU, ortCPU []float64
	var texts []string
	for r := range rounds {
		fmt.Fprintf(os.Stderr, "%s round %d/%d\n", time.Now().Format("15:04:05"), r+1, rounds)
		rate, cpu, dataDir := pipelineRound(b, docs)
		texts = embeddedTexts(b, dataDir, m.Tokenizer(), m.Spec())
		n := float64(len(texts))
		start, cpu0 := time.Now(), selfCPU(b)
		if _, err := w.EmbedAt(context.Background(), texts, embed.Background); err != nil {
			b.Fatal(err)
		}
		wrate, wcpu := n/time.Since(start).Seconds(), selfCPU(b)-cpu0
		orate, ocpu := plainORT(b, python, m.Tokenizer(), m.Spec(), texts)
		ctxd, worker, ort = append(ctxd, rate), append(worker, wrate), append(ort, orate)
		ctxdCPU, workerCPU, ortCPU = append(ctxdCPU, n/cpu), append(workerCPU, n/wcpu), append(ortCPU, n/ocpu)
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	rng := func(v []float64) string { return fmt.Sprintf("%.1f [%.1f-%.1f]", med(v), slices.Min(v), slices.Max(v)) }
	c, k, o := med(ctxd), med(worker), med(ort)
	b.ReportMetric(med(ctxdCPU), "ctxd-chunks/cpu-s")
	b.ReportMetric(med(workerCPU), "worker-chunks/cpu-s")
	b.ReportMetric(med(ortCPU), "onnxruntime-chunks/cpu-s")
	b.ReportMetric(c, "ctxd-chunks/s")
	b.ReportMetric(k, "worker-chunks/s")
	b.ReportMetric(o, "onnxruntime-chunks/s")
	b.ReportMetric(c/o, "pipeline")
	fmt.Printf("--- embed pipeline: %d docs (%d distinct chunk texts) written until embedded, %d interleaved rounds; chunks/s, median [min-max]\n", len(docs), len(texts), rounds)
	fmt.Printf("  ctxd (daemon, first write to last vector)   %s, per CPU second %s\n", rng(ctxd), rng(ctxdCPU))
	fmt.Printf("  worker (the same texts, embedder alone)     %s, per CPU second %s\n", rng(worker), rng(workerCPU))
	fmt.Printf("  onnxruntime (the same texts, batch 32)      %s, per CPU second %s\n", rng(ort), rng(ortCPU))
	fmt.Printf("goal: ctxd >= 90%% of onnxruntime: %.0f%% (the pipeline's own cost, ctxd/worker: %.0f%%; the embedder, worker/onnxruntime: %.0f%%)\n",
		100*c/o, 100*c/k, 100*k/o)
	fmt.Printf("pipeline ctxd=%.1f worker=%.1f onnxruntime=%.1f pipeline=%.3f\n", c, k, o, c/o)
}

// pipelineRound writes docs into a fresh daemon process until every chunk
// is embedded, stops it, and returns the vectors per second, the CPU
// seconds the process spent meanwhile and its data directory.
func pipelineRound(b *testing.B, docs []beir.Doc) (float64, float64, string) {
	b.Helper()
	tmp := shortTempDir(b)
	dataDir, socket := filepath.Join(tmp, "data"), filepath.Join(tmp, "s.sock")
	p := startProcess(b, dataDir, socket, modelArgs(b, ortLib(b))...)
	conn := dial(b, "unix://"+socket)
	admin := ctxdv1.NewAdminServiceClient(conn)
	waitStatus(b, admin, time.Minute, "the model to load", func(st *ctxdv1.StatusResponse) bool { return st.Embedding.Available })
	start, cpu := time.Now(), procCPU(b, p.cmd.Process.Pid)
	writeDocs(b, ctxdv1.NewVfsServiceClient(conn), docs)
	st := waitEmbedded(b, conn, 2*time.Hour)
	took, cpu := time.Since(start), procCPU(b, p.cmd.Process.Pid)-cpu
	p.stop(b)
	return float64(st.Embedding.EmbeddedChunks) / took.Seconds(), cpu, dataDir
}

// procCPU returns the CPU seconds process pid has spent, every thread's
// user and system time (/proc/PID/stat, in clock ticks of 1/100 s).
func procCPU(b *testing.B, pid int) float64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses: state is
	// the 3rd field of the line, utime the 14th and stime the 15th.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	return (utime + stime) / 100
}

// selfCPU returns the CPU seconds this process has spent.
func selfCPU(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// embeddedTexts returns the distinct chunk texts of a stopped daemon's
// store, as its indexer gives them to the embedder of spec and tok.
func embeddedTexts(b *testing.B, dataDir string, tok *tokenize.Tokenizer, spec embed.Spec) []string {
	b.Helper()
	ctx := context.Background()
	s, err := vfs.Open(filepath.Join(dataDir, "ctxd.db"), vfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SetIndexing(ctx, nil, spec.ID); err != nil {
		b.Fatal(err)
	}
	st, err := s.EmbedStats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	// Queue every chunk again to read its parts as the indexer reads them.
	n, _, err := s.Reembed(ctx, nil, true)
	if err != nil {
		b.Fatal(err)
	}
	pending, err := s.PendingEmbeddings(ctx, int(n))
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	seen := map[[32]byte]bool{}
	for _, p := range pending {
		if !seen[p.Hash] {
			seen[p.Hash] = true
			// The indexer's chunker's embedText.
			texts = append(texts, string(chunk.AppendEmbedText(nil, chunk.Prefix(p.Title, p.Description, tok, spec.MaxTokens), p.Heading, p.Text)))
		}
	}
	if int64(len(texts)) != st.Vectors {
		b.Fatalf("the store holds %d vectors and %d distinct chunk texts", st.Vectors, len(texts))
	}
	return texts
}

// plainORT runs scripts/bench/ort_embed.py on texts, tokenized as the
// worker tokenizes them (the document prefix, truncation at the window),
// and returns its chunks/s and the CPU seconds it spent on them.
func plainORT(b *testing.B, python string, tok *tokenize.Tokenizer, spec embed.Spec, texts []string) (float64, float64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "ids.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, t := range texts {
		if err := enc.Encode(tok.Encode(spec.DocumentPrefix+t, spec.MaxTokens)); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	r := testmodel.RunORTEmbed(b, python, "--model", filepath.Join(modelDir(b), embed.ModelFile), "--threads", "2", "--batch", "32", "--ids", path)
	return r.ChunksPerS, r.CPUSeconds
}
