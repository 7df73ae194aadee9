package embed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/testmodel"
)

// Parameters of BenchmarkEmbedCompare: the 128-token texts, in
// batches of 32 for plain onnxruntime, on two intra-op threads.
const (
	compareTokens  = 128
	compareBatch   = 32
	compareTexts   = 256
	compareThreads = 2
	compareRounds  = 3
)

// BenchmarkEmbedCompare measures ctxd's embedding against plain
// onnxruntime on the same model file (make bench-embed-compare; issue 14),
// in compareRounds interleaved rounds of:
//   - ctxd: the fp32 model through a Worker with default options (what
//     ingest gets: length grouping and the token budget), compareTexts texts
//     of compareTokens tokens;
//   - onnxruntime: scripts/bench/ort_embed.py run by CTXD_BENCH_ORT_PYTHON
//     (onnxruntime pinned to the release of the library ctxd loads) on the
//     same model.onnx, the same threads, batches of compareBatch;
//   - int8: as ctxd, with the int8 model;
//   - contended: as ctxd, with one CPU hog per core running beside it
//     (busy shell loops, separate processes).
//
// It prints the medians with their ranges and, last, the line
// "embed ctxd=<fp32 chunks/s> onnxruntime=<chunks/s> int8=<chunks/s> contended=<chunks/s>".
func BenchmarkEmbedCompare(b *testing.B) {
	python := os.Getenv("CTXD_BENCH_ORT_PYTHON")
	if python == "" {
		b.Fatal("CTXD_BENCH_ORT_PYTHON names a python with onnxruntime (make bench-embed-compare sets it)")
	}
	dirs := modelDirs()
	opts := Options{Threads: compareThreads}
	fp32 := mustOpenModel(b, dirs["fp32"], opts)
	int8 := mustOpenModel(b, dirs["int8"], opts)
	texts := make([]string, compareTexts)
	for i := range texts {
		texts[i] = textOfTokens(b, fp32, compareTokens, i)
	}
	workers := map[*Model]*Worker{fp32: NewWorker(fp32), int8: NewWorker(int8)}
	b.Cleanup(func() {
		for _, w := range workers {
			w.Close()
		}
	})
	worker := func(m *Model) float64 {
		w := workers[m]
		if _, err := w.Embed(context.Background(), texts[:compareBatch], false); err != nil { // warm-up
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := w.Embed(context.Background(), texts, false); err != nil {
			b.Fatal(err)
		}
		return float64(len(texts)) / time.Since(start).Seconds()
	}
	plain := func() (float64, string) {
		r := testmodel.RunORTEmbed(b, python, "--model", filepath.Join(dirs["fp32"], ModelFile),
			"--threads", fmt.Sprint(compareThreads), "--batch", fmt.Sprint(compareBatch),
			"--tokens", fmt.Sprint(compareTokens), "--texts", fmt.Sprint(compareTexts))
		return r.ChunksPerS, r.Version
	}
	contended := func() float64 {
		var hogs []*exec.Cmd
		for range runtime.NumCPU() {
			h := exec.Command("sh", "-c", "while :; do :; done")
			h.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // even if the bench dies
			if err := h.Start(); err != nil {
				b.Fatal(err)
			}
			hogs = append(hogs, h)
		}
		defer func() {
			for _, h := range hogs {
				h.Process.Kill()
				h.Wait()
			}
		}()
		return worker(fp32)
	}

	var ctxd, ort, q8, busy []float64
	var version string
	for r := range compareRounds {
		fmt.Fprintf(os.Stderr, "%s round %d/%d\n", time.Now().Format("15:04:05"), r+1, compareRounds)
		ctxd = append(ctxd, worker(fp32))
		v, ver := plain()
		ort, version = append(ort, v), ver
		q8 = append(q8, worker(int8))
		busy = append(busy, contended())
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	rng := func(v []float64) string { return fmt.Sprintf("%.1f [%.1f-%.1f]", med(v), slices.Min(v), slices.Max(v)) }
	c, o, i, k := med(ctxd), med(ort), med(q8), med(busy)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- embed compare: %d texts of %d tokens, %d intra-op threads, %d interleaved rounds; chunks/s, median [min-max]\n",
		compareTexts, compareTokens, compareThreads, compareRounds)
	fmt.Fprintf(&sb, "  ctxd fp32 (Worker, default options)      %s\n", rng(ctxd))
	fmt.Fprintf(&sb, "  onnxruntime %s (same file, batch %d)   %s\n", version, compareBatch, rng(ort))
	fmt.Fprintf(&sb, "  ctxd int8 (Worker)                       %s\n", rng(q8))
	fmt.Fprintf(&sb, "  ctxd fp32 beside %d CPU hogs              %s\n", runtime.NumCPU(), rng(busy))
	fmt.Fprintf(&sb, "goals: fp32 >= 95%% of onnxruntime: %.0f%%; contended >= 40%% of quiet: %.0f%%; int8 >= 1.6x fp32: %.2fx\n",
		100*c/o, 100*k/c, i/c)
	fmt.Fprintf(&sb, "embed ctxd=%.1f onnxruntime=%.1f int8=%.1f contended=%.1f\n", c, o, i, k)
	fmt.Print(sb.String())
}
