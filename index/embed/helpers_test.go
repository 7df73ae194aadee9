package embed

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The tests run the real ONNX Runtime and the real model; `make setup` puts
// both under .cache. These variables point elsewhere.
const (
	envModelDir = "CTXD_MODEL_DIR"
	envORTLib   = "CTXD_ORT_LIB"
	envGolden   = "CTXD_GOLDEN"

	defaultModelDir = "../../.cache/models/all-MiniLM-L6-v2"
	defaultORTLib   = "../../.cache/onnxruntime/libonnxruntime.so"
	defaultGolden   = "../../testdata/golden/embeddings-all-MiniLM-L6-v2.jsonl"
)

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func testModelDir() string { return envOr(envModelDir, defaultModelDir) }
func testORTLib() string   { return envOr(envORTLib, defaultORTLib) }

// modelDirs returns the directories of both variants `make setup` builds:
// fp32 and its int8 sibling. Tests open them with mustOpenModel, which fails
// naming make setup when one is missing.
func modelDirs() map[string]string {
	return map[string]string{"fp32": testModelDir(), "int8": strings.TrimSuffix(testModelDir(), "/") + "-int8"}
}

// requireFiles fails the test, not skips it, when the setup is missing.
func requireFiles(tb testing.TB, paths ...string) {
	tb.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("%v: run make setup (or set %s, %s, %s)", err, envModelDir, envORTLib, envGolden)
		}
	}
}

// mustOpenModel opens dir with opts (LibraryPath filled in) and closes it at
// cleanup.
func mustOpenModel(tb testing.TB, dir string, opts Options) *Model {
	tb.Helper()
	requireFiles(tb, testORTLib(), filepath.Join(dir, ModelFile), filepath.Join(dir, SpecFile))
	opts.LibraryPath = testORTLib()
	m, err := Open(dir, opts)
	if err != nil {
		tb.Fatalf("Open(%s): %v", dir, err)
	}
	tb.Cleanup(func() {
		if err := m.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return m
}

var shared struct {
	once sync.Once
	m    *Model
	err  error
}

// sharedModel is one fp32 Model for the tests that only call Embed (loading
// the graph costs about a second). Tests using it must not run in parallel.
func sharedModel(tb testing.TB) *Model {
	tb.Helper()
	dir := testModelDir()
	requireFiles(tb, testORTLib(), filepath.Join(dir, ModelFile), filepath.Join(dir, SpecFile))
	shared.once.Do(func() {
		shared.m, shared.err = Open(dir, Options{LibraryPath: testORTLib()})
	})
	if shared.err != nil {
		tb.Fatalf("Open(%s): %v", dir, shared.err)
	}
	return shared.m
}

func mustEmbed(tb testing.TB, m *Model, texts []string, query bool) [][]float32 {
	tb.Helper()
	vs, err := m.Embed(texts, query)
	if err != nil {
		tb.Fatalf("Embed(%d texts): %v", len(texts), err)
	}
	if len(vs) != len(texts) {
		tb.Fatalf("Embed: %d vectors for %d texts", len(vs), len(texts))
	}
	return vs
}

// checkUnit fails unless v is finite and has unit length.
func checkUnit(tb testing.TB, name string, v []float32) {
	tb.Helper()
	var ss float64
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			tb.Fatalf("%s: component %d is %v", name, i, x)
		}
		ss += float64(x) * float64(x)
	}
	if math.Abs(math.Sqrt(ss)-1) > 1e-4 {
		tb.Fatalf("%s: norm %v, want 1", name, math.Sqrt(ss))
	}
}

type goldenVector struct {
	Text      string    `json:"text"`
	Embedding []float32 `json:"embedding"`
}

// readGolden reads a JSONL file of golden vectors.
func readGolden(tb testing.TB, path string) []goldenVector {
	tb.Helper()
	requireFiles(tb, path)
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []goldenVector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var g goldenVector
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			tb.Fatalf("%s line %d: %v", path, len(out)+1, err)
		}
		out = append(out, g)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(out) == 0 {
		tb.Fatalf("%s: no golden vectors: run make setup", path)
	}
	return out
}

// textOfTokens returns a text that encodes to exactly n tokens with [CLS]
// and [SEP], built from single-token words so it can be cut anywhere.
func textOfTokens(tb testing.TB, m *Model, n int, seed int) string {
	tb.Helper()
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven red birds sing in old green trees near the river bank")
	var sb strings.Builder
	for i := range n - 2 {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(words[(i*7+seed)%len(words)])
	}
	text := sb.String()
	if got := len(m.Tokenizer().Encode(text, 1<<20)); got != n {
		tb.Fatalf("textOfTokens(%d): encodes to %d tokens", n, got)
	}
	return text
}
