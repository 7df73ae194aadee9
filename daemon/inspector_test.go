package daemon

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/daemon/inspector"
)

// uiRequest sends a request to the inspector on the daemon's HTTP listener
// with token as bearer ("" for none) and body (JSON when it starts with
// "{", else a form), and returns the response and its body.
func uiRequest(t *testing.T, d *testDaemon, method, path, token, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+d.HTTPAddr().String()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasPrefix(body, "{"):
		req.Header.Set("Content-Type", "application/json")
	case body != "":
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// uiGet fetches a fragment with token and fails unless it answers want.
func uiGet(t *testing.T, d *testDaemon, token string, want int, path string, params ...string) string {
	t.Helper()
	q := url.Values{}
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	resp, body := uiRequest(t, d, "GET", path, token, "")
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %s", path, resp.StatusCode, want, body)
	}
	return body
}

func inspectorDaemon(t *testing.T, cfg Config) *testDaemon {
	cfg.HTTP = "127.0.0.1:0"
	cfg.Tokens = append(cfg.Tokens,
		TokenConfig{Name: "bot", SHA256: sha256Hex("bot-token"), Scopes: []string{"read", "write"}, Drives: []string{"agent"}, Agent: true},
		TokenConfig{Name: "writer", SHA256: sha256Hex("writer-token"), Scopes: []string{"read", "write"}})
	return mustStart(t, cfg)
}

// TestInspector_Headers: every /ui/ response carries the CSP and the other
// security headers; the shell and the static files need no token, every
// fragment does (401 with a sign-in prompt); the Host/Origin guard applies.
func TestInspector_Headers(t *testing.T) {
	d := inspectorDaemon(t, testConfig(t))
	check := func(t *testing.T, resp *http.Response, path string, fragment bool) {
		t.Helper()
		h := resp.Header
		if h.Get("Content-Security-Policy") != inspector.CSP || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", path, h)
		}
		if fragment && h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", path, h.Get("Cache-Control"))
		}
	}
	for path, ctype := range map[string]string{
		"/ui/": "text/html", "/ui/static/app.js": "text/javascript", "/ui/static/htmx.min.js": "text/javascript", "/ui/static/app.css": "text/css",
	} {
		resp, body := uiRequest(t, d, "GET", path, "", "")
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) || body == "" {
			t.Errorf("GET %s without a token: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		check(t, resp, path, path == "/ui/")
	}
	uiGet(t, d, "", http.StatusNotFound, "/ui/static/") // no directory listing
	_, shell := uiRequest(t, d, "GET", "/ui/", "", "")
	for _, bad := range []string{"<script>", " style=", " onclick=", " onload=", "javascript:"} {
		if strings.Contains(shell, bad) {
			t.Errorf("the shell holds %q, which the CSP refuses", bad)
		}
	}
	for _, path := range []string{"/ui/f/drives", "/ui/f/status", "/ui/f/search?q=x", "/ui/f/log", "/ui/f/item?ref=notes:/a.md", "/ui/f/whoami"} {
		for _, token := range []string{"", "not-a-token"} {
			resp, body := uiRequest(t, d, "GET", path, token, "")
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "signin-needed") {
				t.Errorf("GET %s with token %q: %d %s", path, token, resp.StatusCode, body)
			}
			check(t, resp, path, true)
		}
	}
	if resp, _ := uiRequest(t, d, "POST", "/ui/f/revert", "", "ref=notes:/a.md&rev=1&confirm=yes"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("revert without a token: %d", resp.StatusCode)
	}
	// The guard answers before the inspector, as for the API.
	if resp, _ := uiRequest(t, d, "GET", "/ui/", "", "", "Host", "evil.example"); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}
	if resp, _ := uiRequest(t, d, "POST", "/ui/f/revert", d.token, "ref=notes:/a.md&rev=1&confirm=yes", "Origin", "https://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: %d", resp.StatusCode)
	}
	if resp, _ := uiRequest(t, d, "POST", "/ui/signin", "", `{"code":"0123"}`, "Origin", "http://localhost:1"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a loopback origin with a wrong code: %d", resp.StatusCode)
	}
}

// TestInspector_Pages walks the owner's pages over HTTP: browse, an item's
// tabs, history, diff, revert with confirmation, search, log, context and
// status; and checks that markdown cannot inject HTML.
func TestInspector_Pages(t *testing.T) {
	d := inspectorDaemon(t, testConfig(t))
	vc := d.vfsClient(t)
	tok := d.token
	writeText(t, vc, "notes:/plan.md", "---\ntags: [ops]\n---\n# Launch plan\n\nShip the **quokka** release.\n")
	writeText(t, vc, "notes:/plan.md", "---\ntags: [ops]\n---\n# Launch plan\n\nShip the **quokka** release on Monday.\n<script>alert(1)</script>\n[x](javascript:alert(1))\n")

	if body := uiGet(t, d, tok, 200, "/ui/f/drives"); !strings.Contains(body, "notes") {
		t.Errorf("drives: %s", body)
	}
	if body := uiGet(t, d, tok, 200, "/ui/f/ls", "ref", "notes:/"); !strings.Contains(body, `ref=notes%3A%2Fplan.md" hx-target="#main">plan.md</a>`) {
		t.Errorf("ls: %s", body)
	}
	item := uiGet(t, d, tok, 200, "/ui/f/item", "ref", "notes:/plan.md")
	if !strings.Contains(item, "<h1>Launch plan</h1>") || !strings.Contains(item, "<strong>quokka</strong>") {
		t.Errorf("rendered markdown: %s", item)
	}
	if strings.Contains(item, "<script>") || strings.Contains(item, "javascript:") || strings.Contains(item, "tags: [ops]") {
		t.Errorf("the rendered item holds raw HTML, a javascript: link or its frontmatter: %s", item)
	}
	if raw := uiGet(t, d, tok, 200, "/ui/f/item/raw", "ref", "notes:/plan.md"); !strings.Contains(raw, "&lt;script&gt;") {
		t.Errorf("raw text is not escaped: %s", raw)
	}
	if meta := uiGet(t, d, tok, 200, "/ui/f/item/meta", "ref", "notes:/plan.md"); !strings.Contains(meta, "tags: [ops]") || !strings.Contains(meta, "text/markdown") {
		t.Errorf("metadata: %s", meta)
	}
	if chunks := uiGet(t, d, tok, 200, "/ui/f/item/chunks", "ref", "notes:/plan.md"); !strings.Contains(chunks, `class="chunk"`) || !strings.Contains(chunks, "embedded-no") {
		t.Errorf("chunks: %s", chunks)
	}
	hist := uiGet(t, d, tok, 200, "/ui/f/item/history", "ref", "notes:/plan.md")
	if !strings.Contains(hist, `id="rev-1"`) || !strings.Contains(hist, `id="revert-1"`) {
		t.Errorf("history (owner): %s", hist)
	}
	diff := uiGet(t, d, tok, 200, "/ui/f/diff", "ref", "notes:/plan.md", "from", "1", "to", "2")
	if !strings.Contains(diff, `<span class="line add">&#43;Ship the **quokka** release on Monday.</span>`) || !strings.Contains(diff, `class="line del"`) {
		t.Errorf("diff: %s", diff)
	}
	if bad := uiGet(t, d, tok, 400, "/ui/f/diff", "ref", "notes:/plan.md", "from", "x"); !strings.Contains(bad, "not a whole number") {
		t.Errorf("a bad revision: %s", bad)
	}

	resp, confirm := uiRequest(t, d, "POST", "/ui/f/revert", tok, "ref=notes:/plan.md&rev=1")
	if resp.StatusCode != 200 || !strings.Contains(confirm, `id="revert-confirm"`) {
		t.Fatalf("revert asks first: %d %s", resp.StatusCode, confirm)
	}
	if got := readContent(t, context.Background(), vc, "notes:/plan.md"); !strings.Contains(got, "Monday") {
		t.Fatalf("the first POST reverted already: %q", got)
	}
	resp, done := uiRequest(t, d, "POST", "/ui/f/revert", tok, "ref=notes:/plan.md&rev=1&confirm=yes")
	if resp.StatusCode != 200 || !strings.Contains(done, "Reverted notes:/plan.md to revision 1") {
		t.Fatalf("revert: %d %s", resp.StatusCode, done)
	}
	if got := readContent(t, context.Background(), vc, "notes:/plan.md"); strings.Contains(got, "Monday") {
		t.Errorf("after revert: %q", got)
	}

	search := uiGet(t, d, tok, 200, "/ui/f/search", "q", "quokka release", "mode", "bm25")
	if !strings.Contains(search, `class="result-ref"`) || !strings.Contains(search, "notes:/plan.md") || !strings.Contains(search, `class="legs"`) || !strings.Contains(search, "bm25") {
		t.Errorf("search: %s", search)
	}
	if form := uiGet(t, d, tok, 200, "/ui/f/search"); !strings.Contains(form, `id="search-form"`) || strings.Contains(form, `class="result"`) {
		t.Errorf("search form: %s", form)
	}
	if log := uiGet(t, d, tok, 200, "/ui/f/log", "actor", "owner", "since", "1h"); strings.Count(log, `class="change"`) != 3 {
		t.Errorf("log: %s", log)
	}
	if log := uiGet(t, d, tok, 200, "/ui/f/log", "actor", "nobody"); strings.Contains(log, `class="change"`) {
		t.Errorf("log of another actor: %s", log)
	}
	if ctx := uiGet(t, d, tok, 200, "/ui/f/context", "task", "ship the quokka release", "budget", "2000"); !strings.Contains(ctx, `id="context-total"`) || !strings.Contains(ctx, "notes:/plan.md") {
		t.Errorf("context: %s", ctx)
	}
	if st := uiGet(t, d, tok, 200, "/ui/f/status"); !strings.Contains(st, `id="status-items"`) || !strings.Contains(st, "<th>Doctor</th>") {
		t.Errorf("status: %s", st)
	}
	if who := uiGet(t, d, tok, 200, "/ui/f/whoami"); !strings.Contains(who, `data-owner="true"`) {
		t.Errorf("whoami: %s", who)
	}
	uiGet(t, d, tok, 404, "/ui/f/item", "ref", "notes:/nothing.md")
	uiGet(t, d, tok, 404, "/ui/nothing")
}

// TestInspector_LimitedToken: a token limited to one drive sees that drive
// only, in browse, items, search and the log, as through the API; and no
// token but the owner's may revert from the inspector.
func TestInspector_LimitedToken(t *testing.T) {
	d := inspectorDaemon(t, testConfig(t))
	vc := d.vfsClient(t)
	writeText(t, vc, "agent:/todo.md", "# Agent todo\n\nWater the quokka.\n")
	writeText(t, vc, "agent:/todo.md", "# Agent todo\n\nWater the quokka daily.\n")
	writeText(t, vc, "vault:/keys.md", "# Quokka passphrase\n\nhunter2 opens the vault.\n")

	const bot = "bot-token"
	if body := uiGet(t, d, bot, 200, "/ui/f/drives"); !strings.Contains(body, "agent") || strings.Contains(body, "vault") {
		t.Errorf("drives for bot: %s", body)
	}
	if body := uiGet(t, d, bot, 404, "/ui/f/ls", "ref", "vault:/"); strings.Contains(body, "keys") {
		t.Errorf("ls vault for bot: %s", body)
	}
	for _, tab := range []string{"/ui/f/item", "/ui/f/item/raw", "/ui/f/item/chunks", "/ui/f/item/history", "/ui/f/diff"} {
		if body := uiGet(t, d, bot, 404, tab, "ref", "vault:/keys.md"); strings.Contains(body, "hunter2") {
			t.Errorf("%s of vault:/keys.md for bot: %s", tab, body)
		}
	}
	search := uiGet(t, d, bot, 200, "/ui/f/search", "q", "quokka", "mode", "bm25")
	if !strings.Contains(search, "agent:/todo.md") || strings.Contains(search, "vault") || strings.Contains(search, "hunter2") {
		t.Errorf("search for bot: %s", search)
	}
	if log := uiGet(t, d, bot, 200, "/ui/f/log"); !strings.Contains(log, "agent:/todo.md") || strings.Contains(log, "vault") {
		t.Errorf("log for bot: %s", log)
	}
	if st := uiGet(t, d, bot, 403, "/ui/f/status"); !strings.Contains(st, "limited to") {
		t.Errorf("status for bot: %s", st)
	}
	if hist := uiGet(t, d, bot, 200, "/ui/f/item/history", "ref", "agent:/todo.md"); strings.Contains(hist, `class="revert"`) {
		t.Errorf("bot is offered revert: %s", hist)
	}
	for _, tok := range []string{bot, "writer-token"} {
		resp, body := uiRequest(t, d, "POST", "/ui/f/revert", tok, "ref=agent:/todo.md&rev=1&confirm=yes")
		if resp.StatusCode != 200 || !strings.Contains(body, "only the owner may revert") {
			t.Errorf("revert by %s: %d %s", tok, resp.StatusCode, body)
		}
	}
	if got := readContent(t, context.Background(), vc, "agent:/todo.md"); !strings.Contains(got, "daily") {
		t.Errorf("a non-owner reverted: %q", got)
	}
}
