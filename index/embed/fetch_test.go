package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/index/tokenize"
)

// serveModel serves the files of dir over a loopback HTTP server, leaving
// out the named ones (they answer 404).
func serveModel(t *testing.T, dir string, missing ...string) *httptest.Server {
	t.Helper()
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, m := range missing {
			if strings.HasSuffix(r.URL.Path, "/"+m) {
				http.NotFound(w, r)
				return
			}
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func fileSHA(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestFetch_RealModelOverLoopback(t *testing.T) {
	src := testModelDir()
	requireFiles(t, filepath.Join(src, ModelFile))
	srv := serveModel(t, src)
	models := t.TempDir()
	want, wantData := fileSHA(t, filepath.Join(src, ModelFile)), fileSHA(t, filepath.Join(src, ModelDataFile))
	dir, err := Fetch(context.Background(), srv.Client(), srv.URL+"/", models, FetchOptions{ModelSHA256: want, DataSHA256: wantData})
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(models, "all-MiniLM-L6-v2") || fileSHA(t, filepath.Join(dir, ModelFile)) != want {
		t.Fatalf("fetched into %s", dir)
	}
	if got := fileSHA(t, filepath.Join(dir, ModelDataFile)); got != wantData {
		t.Fatalf("the weights beside the graph: sha256 %s, want %s", got, wantData)
	}
	// The fetched directory is a working model.
	m := mustOpenModel(t, dir, Options{})
	if v, err := m.Embed([]string{"hello world"}, false); err != nil || len(v[0]) != 384 {
		t.Fatalf("embed with the fetched model: %v", err)
	}
	if _, err := Fetch(context.Background(), srv.Client(), srv.URL, models, FetchOptions{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second fetch: %v", err)
	}
}

func TestFetch_VocabFallbackAndFailures(t *testing.T) {
	src := testModelDir()
	requireFiles(t, filepath.Join(src, ModelFile))
	tests := []struct {
		name    string
		missing []string
		opts    FetchOptions
		wantErr string // "" for success
	}{
		{"vocab.txt when tokenizer.json is absent", []string{tokenize.TokenizerFile}, FetchOptions{}, ""},
		{"no tokenizer at all", []string{tokenize.TokenizerFile, tokenize.VocabFile}, FetchOptions{}, "not published"},
		{"no spec", []string{SpecFile}, FetchOptions{}, "not published"},
		{"wrong checksum", nil, FetchOptions{ModelSHA256: strings.Repeat("0", 64)}, "want 0000"},
		{"wrong weights checksum", nil, FetchOptions{DataSHA256: strings.Repeat("0", 64)}, "model.onnx.data has sha256"},
		{"weights pinned but not published", []string{ModelDataFile}, FetchOptions{DataSHA256: strings.Repeat("0", 64)}, "not published"},
		{"too large", nil, FetchOptions{MaxBytes: 1 << 20}, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveModel(t, src, tt.missing...)
			models := t.TempDir()
			dir, err := Fetch(context.Background(), srv.Client(), srv.URL, models, tt.opts)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(filepath.Join(dir, tokenize.VocabFile)); err != nil {
					t.Errorf("vocab.txt not fetched: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if left, _ := os.ReadDir(models); len(left) != 0 {
				t.Errorf("a failed fetch left %v behind", left)
			}
		})
	}
	if _, err := Fetch(context.Background(), http.DefaultClient, "ftp://example.com/m", t.TempDir(), FetchOptions{}); err == nil {
		t.Error("non-http URL accepted")
	}
}
