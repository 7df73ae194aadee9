package ingest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// newTestServer serves h on loopback until the test ends.
func newTestServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// newLoopbackFetcher returns a Fetcher allowed to reach the loopback test servers.
func newLoopbackFetcher(o FetchOptions) *Fetcher {
	o.AllowPrivate = true
	return NewFetcher(o)
}

// mustFetch fetches rawURL and fails the test on error.
func mustFetch(t *testing.T, f *Fetcher, rawURL string, v Validators) *Page {
	t.Helper()
	page, err := f.Fetch(context.Background(), rawURL, v)
	if err != nil {
		t.Fatalf("Fetch(%s): %v", rawURL, err)
	}
	return page
}

// wantFetchError checks that err is an *Error of the given kind whose message
// contains every fragment, and returns it.
func wantFetchError(t *testing.T, err error, kind error, fragments ...string) *Error {
	t.Helper()
	var ingestErr *Error
	if !errors.Is(err, kind) || !errors.As(err, &ingestErr) {
		t.Fatalf("error = %v (%T), want an *Error of kind %v", err, err, kind)
	}
	for _, fragment := range fragments {
		if !strings.Contains(ingestErr.Message, fragment) {
			t.Errorf("message %q lacks %q", ingestErr.Message, fragment)
		}
	}
	return ingestErr
}

func TestFetcher_FetchConditional(t *testing.T) {
	const etag = `"v1"`
	lastModified := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).Format(http.TimeFormat)
	var userAgent atomic.Value
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		userAgent.Store(r.UserAgent())
		switch r.URL.Path {
		case "/etag":
			w.Header().Set("ETag", etag)
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		case "/last-modified":
			w.Header().Set("Last-Modified", lastModified)
			if r.Header.Get("If-Modified-Since") == lastModified {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("hello"))
	})
	f := newLoopbackFetcher(FetchOptions{})

	tests := []struct {
		path       string
		validators func(first *Page) Validators
	}{
		{"/etag", func(first *Page) Validators { return Validators{ETag: first.ETag} }},
		{"/last-modified", func(first *Page) Validators { return Validators{LastModified: first.LastModified} }},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			first := mustFetch(t, f, srv.URL+tt.path, Validators{})
			if first.NotModified || string(first.Content) != "hello" || !first.IsText {
				t.Fatalf("first fetch = %+v, want the content", first)
			}
			if first.ETag+first.LastModified == "" {
				t.Fatalf("first fetch has no validators: %+v", first)
			}

			v := tt.validators(first)
			second := mustFetch(t, f, srv.URL+tt.path, v)
			if !second.NotModified || second.Content != nil {
				t.Errorf("second fetch = %+v, want NotModified without content", second)
			}
			if second.ETag != first.ETag || second.LastModified != first.LastModified {
				t.Errorf("second fetch validators = %q, %q; want %q, %q",
					second.ETag, second.LastModified, first.ETag, first.LastModified)
			}
			if second.URL != srv.URL+tt.path {
				t.Errorf("second fetch URL = %q, want %q", second.URL, srv.URL+tt.path)
			}

			stale := mustFetch(t, f, srv.URL+tt.path, Validators{ETag: `"old"`, LastModified: "Mon, 01 Jan 2001 00:00:00 GMT"})
			if stale.NotModified || string(stale.Content) != "hello" {
				t.Errorf("fetch with stale validators = %+v, want the content", stale)
			}
		})
	}
	if got := userAgent.Load(); got != "ctxd/1 (+local memory daemon)" {
		t.Errorf("User-Agent = %q, want the default", got)
	}
}

func TestFetcher_FetchRedirects(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusFound)
		case "/b":
			http.Redirect(w, r, "/final", http.StatusMovedPermanently)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/final":
			w.Write([]byte("arrived"))
		}
	})

	t.Run("followed", func(t *testing.T) {
		page := mustFetch(t, newLoopbackFetcher(FetchOptions{MaxRedirects: 2}), srv.URL+"/a", Validators{})
		if page.URL != srv.URL+"/final" || string(page.Content) != "arrived" {
			t.Errorf("page = %q from %s, want %q from %s", page.Content, page.URL, "arrived", srv.URL+"/final")
		}
	})
	t.Run("over the limit", func(t *testing.T) {
		_, err := newLoopbackFetcher(FetchOptions{MaxRedirects: 1}).Fetch(context.Background(), srv.URL+"/a", Validators{})
		wantFetchError(t, err, ErrUnreadable, "too many redirects")
	})
	t.Run("loop", func(t *testing.T) {
		_, err := newLoopbackFetcher(FetchOptions{}).Fetch(context.Background(), srv.URL+"/loop", Validators{})
		wantFetchError(t, err, ErrUnreadable, "too many redirects")
	})
}

func TestFetcher_FetchTimeout(t *testing.T) {
	// Handlers wait for the client to give up, so the server closes promptly.
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			w.Write([]byte("partial "))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	f := newLoopbackFetcher(FetchOptions{Timeout: 200 * time.Millisecond})
	for _, path := range []string{"/slow-headers", "/slow-body"} {
		t.Run(path, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), srv.URL+path, Validators{})
			wantFetchError(t, err, ErrUnreadable, "timed out after 0.2 seconds")
		})
	}
}

func TestFetcher_FetchCancelled(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newLoopbackFetcher(FetchOptions{}).Fetch(ctx, srv.URL, Validators{})
	var ingestErr *Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &ingestErr) {
		t.Errorf("error = %v, want the context's cancellation rather than a source failure", err)
	}
}

func TestFetcher_FetchTooLarge(t *testing.T) {
	const limit = 1000
	body := strings.Repeat("x", limit+1)
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/at-limit":
			w.Write([]byte(body[:limit]))
		case "/content-length":
			w.Write([]byte(body)) // short enough for the server to set Content-Length
		case "/chunked":
			w.(http.Flusher).Flush() // headers go out before the length is known
			w.Write([]byte(body))
		}
	})
	f := newLoopbackFetcher(FetchOptions{MaxBytes: limit})

	if page := mustFetch(t, f, srv.URL+"/at-limit", Validators{}); len(page.Content) != limit {
		t.Errorf("body at the limit: got %d bytes, want %d", len(page.Content), limit)
	}
	tests := []struct{ path, message string }{
		{"/content-length", "body is 1001 bytes, over the 1000-byte limit"},
		{"/chunked", "body is over the 1000-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), srv.URL+tt.path, Validators{})
			wantFetchError(t, err, ErrTooLarge, tt.message)
		})
	}
}

func TestFetcher_FetchHTML(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(boilerplatePage))
	})
	page := mustFetch(t, newLoopbackFetcher(FetchOptions{}), srv.URL+"/docs/page.html", Validators{})

	if page.MimeType != "text/markdown; charset=utf-8" || !page.IsText {
		t.Errorf("MimeType = %q, IsText = %v; want converted markdown", page.MimeType, page.IsText)
	}
	if page.Title != "The Page Title" {
		t.Errorf("Title = %q, want %q", page.Title, "The Page Title")
	}
	md := string(page.Content)
	for _, want := range []string{"# Article Heading", "Article paragraph", "(" + srv.URL + "/docs/other.html)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"Home nav link", "trackingScript", "chrome", "Related sidebar", "Copyright footer"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("markdown contains %q:\n%s", unwanted, md)
		}
	}
}

func TestFetcher_FetchContentTypes(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")
	tests := []struct {
		name        string
		contentType string // "-" sends no Content-Type header
		body        []byte
		wantMime    string
		wantText    bool
		wantContent string // "" means the body unchanged
	}{
		{"latin-1 text", "text/plain; charset=iso-8859-1", []byte("caf\xe9 cr\xe8me"), "text/plain; charset=utf-8", true, "café crème"},
		{"utf-16 json", "application/json; charset=utf-16le", []byte("{\x00}\x00"), "application/json; charset=utf-8", true, "{}"},
		{"bad charset parameter", "text/csv; charset", []byte("a,b\n"), "text/csv; charset=utf-8", true, ""},
		{"markdown", "text/markdown", []byte("# Notes\n"), "text/markdown; charset=utf-8", true, ""},
		{"yaml", "application/yaml", []byte("a: 1\n"), "application/yaml; charset=utf-8", true, ""},
		{"latin-1 html by meta", "text/html", []byte(`<meta charset="iso-8859-1"><p>caf` + "\xe9"), "text/markdown; charset=utf-8", true, "café"},
		{"sniffed json", "application/octet-stream", []byte(`{"a": 1}`), "application/json; charset=utf-8", true, ""},
		{"sniffed html", "-", []byte("<!DOCTYPE html><title>T</title><p>Sniffed</p>"), "text/markdown; charset=utf-8", true, "Sniffed"},
		{"sniffed png", "-", png, "image/png", false, ""},
		{"declared pdf", "application/pdf", []byte("%PDF-1.7\n"), "application/pdf", false, ""},
		{"text with NUL bytes", "text/plain", []byte("a\x00b"), "text/plain", false, ""},
		{"undeclared latin-1 text", "text/plain", []byte("caf\xe9"), "text/plain; charset=utf-8", true, "café"},
		{"declared UTF-8 that is not", "text/plain; charset=utf-8", []byte("caf\xe9"), "text/plain", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.contentType == "-" {
					w.Header()["Content-Type"] = nil // stop net/http sniffing for us
				} else {
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.Write(tt.body)
			})
			page := mustFetch(t, newLoopbackFetcher(FetchOptions{}), srv.URL, Validators{})
			if page.MimeType != tt.wantMime || page.IsText != tt.wantText {
				t.Errorf("MimeType = %q, IsText = %v; want %q, %v", page.MimeType, page.IsText, tt.wantMime, tt.wantText)
			}
			want := tt.wantContent
			if want == "" {
				want = string(tt.body)
			}
			if string(page.Content) != want {
				t.Errorf("Content = %q, want %q", page.Content, want)
			}
		})
	}
}

func TestFetcher_FetchHTTPError(t *testing.T) {
	srv := newTestServer(t, http.NotFound)
	_, err := newLoopbackFetcher(FetchOptions{}).Fetch(context.Background(), srv.URL+"/missing", Validators{})
	e := wantFetchError(t, err, ErrMissing, "GET "+srv.URL+"/missing: HTTP 404 Not Found")
	if e.Source != srv.URL+"/missing" || e.Hint == "" {
		t.Errorf("Source = %q, Hint = %q; want the URL and a hint", e.Source, e.Hint)
	}
}

func TestFetcher_FetchInvalidURL(t *testing.T) {
	f := newLoopbackFetcher(FetchOptions{})
	for _, rawURL := range []string{"file:///etc/passwd", "ftp://x", "http://", "example.com/page", "http://[::1"} {
		t.Run(rawURL, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), rawURL, Validators{})
			if e := wantFetchError(t, err, ErrInvalid); e.Hint == "" {
				t.Error("no hint")
			}
		})
	}
}

func TestFetcher_FetchRefusesPrivateAddresses(t *testing.T) {
	var hits atomic.Int32
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFetcher(FetchOptions{})

	tests := []struct{ name, url, host string }{
		{"literal IP", srv.URL, "127.0.0.1"},
		{"name resolving to loopback", "http://localhost:" + u.Port() + "/", "localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), tt.url, Validators{})
			e := wantFetchError(t, err, ErrRefused, tt.host, "private address")
			if e.Hint != privateNetworkHint || e.Source != tt.url {
				t.Errorf("Hint = %q, Source = %q; want the config hint and %q", e.Hint, e.Source, tt.url)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server was reached %d times", n)
	}
}

func TestFetcher_FetchPrivateAddressClasses(t *testing.T) {
	tests := []struct {
		ip      string
		private bool
	}{
		{"127.0.0.1", true},
		{"::1", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"192.168.1.1", true},
		{"fd00::1", true},
		{"169.254.169.254", true},
		{"fe80::1%eth0", true},
		{"100.64.0.1", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"::", true},
		{"224.0.0.1", true},
		{"ff02::1", true},
		{"::ffff:127.0.0.1", true},
		// Special-purpose ranges from the IANA registries beyond the private ones.
		{"64:ff9b::7f00:1", true}, // NAT64 (RFC 6052): 127.0.0.1 through a NAT64 gateway
		{"2002:7f00:1::1", true},  // 6to4 (RFC 3056): 127.0.0.1 through a relay
		{"198.18.0.1", true},      // benchmarking (RFC 2544)
		{"192.0.2.1", true},       // documentation (RFC 5737)
		{"2001:db8::1", true},     // documentation (RFC 3849)
		{"::ffff:198.18.0.1", true},
		{"::ffff:8.8.8.8", false},
		{"8.8.8.8", false},
		{"100.128.0.1", false},
		{"172.32.0.1", false},
		{"2606:4700::1111", false},
	}
	for _, tt := range tests {
		if got := isPrivateAddr(netip.MustParseAddr(tt.ip)); got != tt.private {
			t.Errorf("isPrivateAddr(%s) = %v, want %v", tt.ip, got, tt.private)
		}
	}
}
