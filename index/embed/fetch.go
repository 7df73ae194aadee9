package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ctxd/ctxd/index/tokenize"
	"github.com/ctxd/ctxd/internal/fsync"
)

// validModelID keeps a downloaded model's id usable as a directory name.
var validModelID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// errNotPublished marks a file the server does not have (HTTP 404).
var errNotPublished = errors.New("not published")

// FetchOptions bounds and checks a download.
type FetchOptions struct {
	// MaxBytes bounds each file; 0 means 2 GiB.
	MaxBytes int64
	// ModelSHA256, when set, is the expected lowercase hex SHA-256 of model.onnx.
	ModelSHA256 string
	// DataSHA256, when set, is the expected SHA-256 of model.onnx.data, the
	// weights of a graph that keeps them beside it, which must then be
	// published.
	DataSHA256 string
}

// Fetch downloads the model directory published at baseURL — ctxd-model.json,
// model.onnx, model.onnx.data when published (the weights of a graph that
// keeps them beside it), and tokenizer.json (or vocab.txt when there is
// none) — into modelsDir/<id> and returns that directory. The files are
// written to a temporary directory that is renamed into place only when every
// file is complete and the spec and tokenizer load, so a failed or
// interrupted download leaves nothing behind. An existing model directory is
// not replaced.
func Fetch(ctx context.Context, client *http.Client, baseURL, modelsDir string, opts FetchOptions) (string, error) {
	if opts.MaxBytes == 0 {
		opts.MaxBytes = 2 << 30
	}
	base, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/")
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") {
		return "", fmt.Errorf("fetch model: %q is not an http(s) URL", baseURL)
	}
	if err := os.MkdirAll(modelsDir, 0o755); err != nil {
		return "", fmt.Errorf("fetch model: %w", err)
	}
	tmp, err := os.MkdirTemp(modelsDir, ".fetch-")
	if err != nil {
		return "", fmt.Errorf("fetch model: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	get := func(name string) (string, error) {
		return download(ctx, client, base.JoinPath(name).String(), filepath.Join(tmp, name), opts.MaxBytes)
	}
	if _, err := get(SpecFile); err != nil {
		return "", err
	}
	spec, err := LoadSpec(tmp)
	if err != nil {
		return "", fmt.Errorf("fetch model: %w", err)
	}
	if !validModelID.MatchString(spec.ID) {
		return "", fmt.Errorf("fetch model: id %q cannot name a directory", spec.ID)
	}
	sum, err := get(ModelFile)
	if err != nil {
		return "", err
	}
	if opts.ModelSHA256 != "" && sum != opts.ModelSHA256 {
		return "", fmt.Errorf("fetch model: %s has sha256 %s, want %s", ModelFile, sum, opts.ModelSHA256)
	}
	switch sum, err := get(ModelDataFile); {
	case errors.Is(err, errNotPublished) && opts.DataSHA256 == "":
		// The weights are inside model.onnx.
	case err != nil:
		return "", err
	case opts.DataSHA256 != "" && sum != opts.DataSHA256:
		return "", fmt.Errorf("fetch model: %s has sha256 %s, want %s", ModelDataFile, sum, opts.DataSHA256)
	}
	if _, err := get(tokenize.TokenizerFile); errors.Is(err, errNotPublished) {
		_, err = get(tokenize.VocabFile)
		if err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	if _, err := tokenize.Load(tmp); err != nil {
		return "", fmt.Errorf("fetch model: %w", err)
	}
	dst := filepath.Join(modelsDir, spec.ID)
	if _, err := os.Stat(dst); err == nil {
		return "", fmt.Errorf("fetch model: %s already exists; remove it to download again", dst)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", fmt.Errorf("fetch model: %w", err)
	}
	return dst, fsync.Dir(modelsDir)
}

// download writes url to path, at most maxBytes, and returns its SHA-256.
func download(ctx context.Context, client *http.Client, url, path string, maxBytes int64) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetch model: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return "", fmt.Errorf("fetch model: %s: %w", url, errNotPublished)
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("fetch model: %s: %s", url, resp.Status)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return "", fmt.Errorf("fetch model: %s: %w", url, err)
	}
	if n > maxBytes {
		return "", fmt.Errorf("fetch model: %s is larger than %d bytes", url, maxBytes)
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), f.Close()
}
