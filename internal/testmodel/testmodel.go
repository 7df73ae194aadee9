// Package testmodel locates the embedding model and ONNX Runtime that
// `make setup` installs under .cache, for tests in any package: tests run
// with the real model, and fail with what to do when it is missing.
package testmodel

import (
	"os"
	"path/filepath"
	"runtime"
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
