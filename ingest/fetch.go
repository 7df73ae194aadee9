package ingest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"code.dny.dev/ssrf"
	"github.com/gabriel-vasile/mimetype"
	"golang.org/x/net/html/charset"
)

// FetchOptions configure a Fetcher.
type FetchOptions struct {
	// Timeout bounds the whole request, including reading the body; 0 means 30s.
	Timeout time.Duration
	// MaxBytes caps the body; 0 means 64 MiB. Larger bodies fail with
	// ErrTooLarge rather than being truncated.
	MaxBytes int64
	// MaxRedirects is how many redirects are followed; 0 means 10.
	MaxRedirects int
	// AllowPrivate allows targets that are not public internet addresses:
	// loopback, private, link-local, CGNAT and the other IANA special-purpose
	// ranges (see isPrivateAddr).
	AllowPrivate bool
	// UserAgent is sent with every request; "" means "ctxd/1 (+local memory daemon)".
	UserAgent string
}

// Fetcher fetches web pages for ingestion. It is safe for concurrent use.
type Fetcher struct {
	client       *http.Client
	timeout      time.Duration
	maxBytes     int64
	maxRedirects int
	allowPrivate bool
	userAgent    string
}

// NewFetcher returns a Fetcher with o's zero fields set to their defaults.
func NewFetcher(o FetchOptions) *Fetcher {
	f := &Fetcher{
		timeout:      cmp.Or(o.Timeout, 30*time.Second),
		maxBytes:     cmp.Or(o.MaxBytes, 64<<20),
		maxRedirects: cmp.Or(o.MaxRedirects, 10),
		allowPrivate: o.AllowPrivate,
		userAgent:    cmp.Or(o.UserAgent, "ctxd/1 (+local memory daemon)"),
	}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would make the dialer's address checks meaningless
		DialContext:           f.dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	f.client = &http.Client{Transport: transport, CheckRedirect: f.checkRedirect}
	return f
}

// Validators are the cache validators of a previous fetch, sent as
// If-None-Match and If-Modified-Since.
type Validators struct{ ETag, LastModified string }

// Page is the result of a fetch.
type Page struct {
	// URL is the final URL, after redirects.
	URL string
	// NotModified: the server answered 304 to the conditional GET; the
	// content fields are empty.
	NotModified bool
	// MimeType is the media type without parameters, except
	// "; charset=utf-8" on text: "text/markdown; charset=utf-8" for converted
	// HTML, "application/pdf" for a PDF.
	MimeType string
	// IsText: Content is valid UTF-8 text.
	IsText bool
	// Content is clean markdown for HTML, the body as UTF-8 for other text,
	// and the raw body for binary.
	Content []byte
	// Title is the HTML <title>, else og:title, else the first <h1>; "" if none.
	Title        string
	ETag         string
	LastModified string
}

const privateNetworkHint = "to fetch from local or private addresses, set allow_private_network = true in the daemon config or start it with --allow-private-network"

var (
	errFetchTimeout     = errors.New("fetch timed out")
	errTooManyRedirects = errors.New("too many redirects")
)

// Fetch GETs rawURL, conditionally when v holds validators, and turns the
// body into item content. Failures are *Error, except that a cancelled ctx
// returns its error, wrapped.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string, v Validators) (*Page, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, newError(ErrInvalid, rawURL, "give an http:// or https:// URL with a host; add local files by path",
			"%q is not an http(s) URL", rawURL)
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && !f.allowPrivate && isPrivateAddr(ip) {
		return nil, refusedAddr(rawURL, u.Hostname(), ip)
	}

	ctx, cancel := context.WithTimeoutCause(ctx, f.timeout, errFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, newError(ErrInvalid, rawURL, "", "GET %s: %v", rawURL, err)
	}
	req.Header.Set("User-Agent", f.userAgent)
	if v.ETag != "" {
		req.Header.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		req.Header.Set("If-Modified-Since", v.LastModified)
	}

	resp, err := f.client.Do(req)
	if err != nil {
		return nil, f.requestError(ctx, rawURL, err)
	}
	defer resp.Body.Close()
	finalURL := resp.Request.URL.String()
	etag, lastModified := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")

	switch {
	case resp.StatusCode == http.StatusNotModified && v != (Validators{}):
		return &Page{
			URL:          finalURL,
			NotModified:  true,
			ETag:         cmp.Or(etag, v.ETag),
			LastModified: cmp.Or(lastModified, v.LastModified),
		}, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		kind := ErrUnreadable
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
			kind = ErrMissing
		}
		return nil, newError(kind, rawURL, statusHint(resp.StatusCode),
			"GET %s: HTTP %d %s", finalURL, resp.StatusCode, http.StatusText(resp.StatusCode))
	case resp.ContentLength > f.maxBytes:
		return nil, tooLargeError(rawURL, "GET %s: body is %d bytes, over the %d-byte limit",
			finalURL, resp.ContentLength, f.maxBytes)
	}

	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return nil, f.requestError(ctx, rawURL, fmt.Errorf("read body of %s: %w", finalURL, err))
	}
	if int64(len(body)) > f.maxBytes {
		return nil, tooLargeError(rawURL, "GET %s: body is over the %d-byte limit", finalURL, f.maxBytes)
	}

	page, err := pageFromBody(body, resp.Header.Get("Content-Type"), finalURL)
	if err != nil {
		return nil, newError(ErrUnreadable, rawURL, "", "GET %s: %v", finalURL, err)
	}
	page.ETag, page.LastModified = etag, lastModified
	return page, nil
}

// pageFromBody turns a response body into item content according to its
// media type: markdown for HTML, UTF-8 for other text, raw bytes otherwise.
func pageFromBody(body []byte, contentType, pageURL string) (*Page, error) {
	// A bad parameter still yields the media type; only a missing or
	// unparsable type, or the generic binary one, is worth sniffing.
	mediaType, _, _ := mime.ParseMediaType(contentType)
	if mediaType == "" || mediaType == "application/octet-stream" {
		// Sniffing also yields a charset parameter for text.
		contentType = mimetype.Detect(body).String()
		mediaType, _, _ = mime.ParseMediaType(contentType)
	}

	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		md, title, err := HTMLToMarkdown(toUTF8(body, contentType), pageURL)
		if err != nil {
			return nil, err
		}
		return &Page{URL: pageURL, MimeType: "text/markdown; charset=utf-8", IsText: true, Content: md, Title: title}, nil
	case isTextMediaType(mediaType):
		text := toUTF8(body, contentType)
		if utf8.Valid(text) && bytes.IndexByte(text, 0) < 0 {
			return &Page{URL: pageURL, MimeType: mediaType + "; charset=utf-8", IsText: true, Content: text}, nil
		}
	}
	return &Page{URL: pageURL, MimeType: mediaType, Content: body}, nil
}

// isTextMediaType reports whether a media type names text: text/*, the
// +json/+xml/+yaml suffixes, and what mimetype knows as a kind of text/plain
// (JSON, XML, JavaScript and the like).
func isTextMediaType(mediaType string) bool {
	if strings.HasPrefix(mediaType, "text/") {
		return true
	}
	for _, suffix := range []string{"+json", "+xml", "+yaml"} {
		if strings.HasSuffix(mediaType, suffix) {
			return true
		}
	}
	switch mediaType {
	case "application/yaml", "application/x-yaml", "application/toml":
		return true
	}
	for m := mimetype.Lookup(mediaType); m != nil; m = m.Parent() {
		if m.Is("text/plain") {
			return true
		}
	}
	return false
}

var utf8BOM = []byte("\uFEFF")

// toUTF8 decodes a text body to UTF-8 by the charset the response declares
// in its header, a byte order mark or an HTML <meta> tag. Undeclared text
// that is not valid UTF-8 is decoded as windows-1252, as browsers do.
func toUTF8(body []byte, contentType string) []byte {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if name != "utf-8" && (certain || !utf8.Valid(body)) {
		if decoded, err := enc.NewDecoder().Bytes(body); err == nil {
			body = decoded
		}
	}
	return bytes.TrimPrefix(body, utf8BOM)
}

// requestError classifies a failed request or body read.
func (f *Fetcher) requestError(ctx context.Context, rawURL string, err error) error {
	var ingestErr *Error
	switch {
	case errors.As(err, &ingestErr):
		// The dialer's refusal names the address dialed; report the URL asked for.
		refused := *ingestErr
		refused.Source = rawURL
		return &refused
	case errors.Is(context.Cause(ctx), errFetchTimeout):
		return newError(ErrUnreadable, rawURL, "the server may be slow or unreachable; retry later, or raise fetch_timeout in the daemon config",
			"GET %s: timed out after %g seconds", rawURL, f.timeout.Seconds())
	case ctx.Err() != nil:
		// The caller gave up; that says nothing about the source.
		return fmt.Errorf("GET %s: %w", rawURL, context.Cause(ctx))
	case errors.Is(err, errTooManyRedirects):
		return newError(ErrUnreadable, rawURL, "the server redirects in a loop; fetch the final URL directly",
			"GET %s: too many redirects (more than %d)", rawURL, f.maxRedirects)
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // its message repeats the method and URL
	}
	return newError(ErrUnreadable, rawURL, "check the host name and that the server is reachable",
		"GET %s: %v", rawURL, err)
}

func tooLargeError(rawURL, format string, args ...any) error {
	return newError(ErrTooLarge, rawURL, "the page is over the size limit; raise max_content_bytes in the daemon config to fetch it", format, args...)
}

func (f *Fetcher) checkRedirect(_ *http.Request, via []*http.Request) error {
	if len(via) > f.maxRedirects {
		return errTooManyRedirects
	}
	return nil
}

func statusHint(code int) string {
	switch {
	case code == http.StatusNotFound || code == http.StatusGone:
		return "check the URL; the page does not exist (any more)"
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return "the page needs a login, which ctxd does not send"
	case code == http.StatusTooManyRequests || code >= 500:
		return "the server is failing or busy; retry later"
	}
	return ""
}

// dial connects like net.Dialer, but unless private targets are allowed it
// refuses to connect to a private address. Checking the address actually
// connected to, for every connection, covers redirects and DNS rebinding.
func (f *Fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer // the request's context bounds the dial
	if !f.allowPrivate {
		host, _, _ := net.SplitHostPort(addr)
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dial %s: unexpected address %q", host, address)
			}
			if isPrivateAddr(ap.Addr()) {
				return refusedAddr(addr, host, ap.Addr())
			}
			return nil
		}
	}
	return d.DialContext(ctx, network, addr)
}

func refusedAddr(source, host string, ip netip.Addr) *Error {
	return newError(ErrRefused, source, privateNetworkHint,
		"refusing to fetch from %s: it resolves to %s, not a public internet address (a private address or an IANA special-purpose range)", host, ip.WithZone(""))
}

// publicOnly judges addresses by code.dny.dev/ssrf, whose deny lists are
// generated from the IANA IPv4 and IPv6 special-purpose address registries
// (loopback, private, link-local, CGNAT, benchmarking, documentation, 6to4,
// and for IPv6 everything outside 2000::/3, such as NAT64's 64:ff9b::/96).
// Ports and networks are not its concern here.
var publicOnly = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// isPrivateAddr reports whether ip is not a public internet address: one
// that reaches this machine, its networks, or a special-purpose range. An
// IPv4-mapped IPv6 address is judged as the IPv4 address it maps.
func isPrivateAddr(ip netip.Addr) bool {
	return publicOnly.SafeAddr(ip.Unmap()) != nil
}
