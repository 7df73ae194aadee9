// Package testmodel locates the embedding model and ONNX Runtime that
// `make setup` installs under .cache, for tests in any package: tests run
// with the real model, and fail with what to do when it is missing.
package testmodel

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// root is the module root: two levels above this file.
var root = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// Dir returns the model directory: $CTXD_MODEL_DIR, or the fp32 model
// make setup installs.
func Dir(t testing.TB) string {
	return require(t, "CTXD_MODEL_DIR", filepath.Join(root, ".cache", "models", "all-MiniLM-L6-v2"))
}

// ORTLib returns the ONNX Runtime shared library: $CTXD_ORT_LIB, or the one
// make setup installs.
func ORTLib(t testing.TB) string {
	return require(t, "CTXD_ORT_LIB", filepath.Join(root, ".cache", "onnxruntime", "libonnxruntime.so"))
}

func require(t testing.TB, env, def string) string {
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

// ORTEmbed is what scripts/bench/ort_embed.py reports on its last line.
type ORTEmbed struct {
	Version    string  `json:"onnxruntime"`
	ChunksPerS float64 `json:"chunks_per_s"`
	CPUSeconds float64 `json:"cpu_s"` // every thread's, over the timed batches
}

// RunORTEmbed runs scripts/bench/ort_embed.py, plain onnxruntime (the
// embedding benchmarks' baseline), with python and args, its stderr going
// to the test's, and returns its report.
func RunORTEmbed(t testing.TB, python string, args ...string) ORTEmbed {
	t.Helper()
	cmd := exec.Command(python, append([]string{filepath.Join(root, "scripts", "bench", "ort_embed.py")}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ort_embed.py: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var r ORTEmbed
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("ort_embed.py's last line %q: %v", lines[len(lines)-1], err)
	}
	return r
}
