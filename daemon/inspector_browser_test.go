package daemon

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ctxd/ctxd/daemon/inspector"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// chromiumPath is Debian's Chromium, which `make setup` installs.
const chromiumPath = "/usr/bin/chromium"

// stepTimeout bounds one step of a browser test, so that a step that
// fails leaves time for the screenshot.
const stepTimeout = 30 * time.Second

// browser is a headless Chromium tab that records what the page reports:
// Content-Security-Policy violations and script exceptions, through the
// DevTools protocol (a script injected into the page to listen for
// securitypolicyviolation would be refused by the CSP itself).
type browser struct {
	ctx context.Context
	mu  sync.Mutex
	csp []string // violation reports
	js  []string // uncaught exceptions
}

// cspReport matches Chromium's console report of a CSP violation.
var cspReport = regexp.MustCompile(`(?i)content security policy|refused to (execute|load|apply|connect|frame)`)

// newBrowser starts Chromium for the test: bounded by timeout, stopped at
// cleanup, and with a full-page screenshot saved as a test artefact when
// the test failed.
func newBrowser(t *testing.T, timeout time.Duration) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the inspector's browser tests need Chromium at %s (`make setup` installs Debian's package): %v", chromiumPath, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("no-first-run", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancelTab(); cancelAlloc() })
	b := &browser{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *log.EventEntryAdded:
			if ev.Entry.Source == log.EntrySourceSecurity || ev.Entry.Source == log.EntrySourceViolation || cspReport.MatchString(ev.Entry.Text) {
				b.csp = append(b.csp, fmt.Sprintf("%s: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		case *runtime.EventExceptionThrown:
			b.js = append(b.js, fmt.Sprintf("%s %v", ev.ExceptionDetails.Text, ev.ExceptionDetails.Exception))
		case *runtime.EventConsoleAPICalled:
			for _, arg := range ev.Args {
				if cspReport.MatchString(string(arg.Value)) || cspReport.MatchString(arg.Description) {
					b.csp = append(b.csp, fmt.Sprintf("console: %s %s", arg.Value, arg.Description))
				}
			}
		}
	}); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		shot, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Logf("no screenshot: %v", err)
			return
		}
		dir := os.Getenv("CTXD_TEST_ARTIFACTS")
		if dir == "" {
			dir = filepath.Join("..", ".tmp", "test-artifacts")
		}
		dir = filepath.Join(dir, "inspector")
		name := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+".png")
		if err := os.MkdirAll(dir, 0o755); err == nil {
			err = os.WriteFile(name, shot, 0o644)
			if err == nil {
				abs, _ := filepath.Abs(name)
				t.Logf("screenshot of the failure: %s", abs)
				return
			}
		}
		t.Logf("could not save the screenshot in %s", dir)
	})
	return b
}

// run runs actions, failing the test with what step names.
func (b *browser) run(t *testing.T, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// text returns the visible text of the element css selects.
func (b *browser) text(t *testing.T, css string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("text of %s: %v", css, err)
	}
	return s
}

// reports returns the CSP violations and script exceptions seen so far.
func (b *browser) reports() (csp, js []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.csp...), append([]string(nil), b.js...)
}

// waitReport waits until a CSP violation has been reported, or ctx ends.
func (b *browser) waitReport(ctx context.Context) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if csp, _ := b.reports(); len(csp) > 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// TestInspectorBrowser_CSPDetected: the violation detection the browser
// suite relies on does see a violation: a test page served with the
// inspector's CSP runs an inline script, which Chromium refuses and
// reports.
func TestInspectorBrowser_CSPDetected(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Security-Policy", inspector.CSP)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><html><body><p id="p">inline</p><script>document.title = "ran"</script></body></html>`)
	}))
	defer srv.Close()
	b := newBrowser(t, time.Minute)
	b.run(t, "open the violating page", chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.ID("p")))
	if title, err := chromedp.Run(b.ctx, chromedp.Title()); err != nil || title == "ran" {
		t.Fatalf("the page's title is %q (%v): the inline script ran, the CSP was not applied", title, err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if !b.waitReport(ctx) {
		t.Fatal("Chromium refused the inline script but no violation was detected")
	}
}

// TestInspectorBrowser drives the inspector in headless Chromium against a
// real daemon: sign in with a pasted token, browse, open an item and its
// tabs, search and open a result's explanation, compare two revisions,
// revert with confirmation, preview a context, view the status, sign in
// with a one-time link (which works once); and no CSP violation or script
// error happens on the way.
func TestInspectorBrowser(t *testing.T) {
	d := inspectorDaemon(t, testConfig(t))
	conn := dial(t, "unix://"+d.cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(conn)
	writeText(t, vc, "notes:/plan.md", "---\ntags: [ops]\n---\n# Launch plan\n\nShip the **quokka** release.\n")
	writeText(t, vc, "notes:/plan.md", "---\ntags: [ops]\n---\n# Launch plan\n\nShip the **quokka** release on Monday.\n")
	writeText(t, vc, "notes:/team.md", "# Team\n\nThe quokka keepers meet on Fridays.\n")
	base := "http://" + d.HTTPAddr().String() + "/ui/"
	b := newBrowser(t, 3*time.Minute)

	b.run(t, "sign in with a pasted token",
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), d.token),
		chromedp.Click(chromedp.ID("signin-submit")),
		chromedp.WaitVisible(chromedp.ID("whoami")),
	)
	text := b.text(t, "#whoami")
	if !strings.Contains(text, "owner") {
		t.Errorf("signed in as %q", text)
	}

	b.run(t, "browse to an item",
		chromedp.WaitVisible(chromedp.CSS(`a.drive`)),
		chromedp.Click(chromedp.CSS(`a.drive`)),
		chromedp.WaitVisible(chromedp.CSS(`a.file`)),
		chromedp.Click(chromedp.CSS(`a.file[hx-get$="plan.md"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#rendered article.markdown h1`)),
	)
	text = b.text(t, "#rendered article.markdown")
	if !strings.Contains(text, "Launch plan") || !strings.Contains(text, "Monday") || strings.Contains(text, "tags:") {
		t.Errorf("rendered item: %q", text)
	}
	b.run(t, "a reload shows the same item",
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#rendered article.markdown h1`)),
	)
	if loc, err := chromedp.Run(b.ctx, chromedp.Location()); err != nil || !strings.Contains(loc, "#f/item?") {
		t.Errorf("the address of an open item: %s (%v)", loc, err)
	}
	b.run(t, "the item's tabs",
		chromedp.Click(chromedp.ID("tab-meta")),
		chromedp.WaitVisible(chromedp.CSS("pre.frontmatter")),
		chromedp.Click(chromedp.ID("tab-chunks")),
		chromedp.WaitVisible(chromedp.CSS("tr.chunk")),
		chromedp.Click(chromedp.ID("tab-raw")),
		chromedp.WaitVisible(chromedp.CSS("#raw pre")),
	)

	b.run(t, "diff two revisions",
		chromedp.Click(chromedp.ID("tab-history")),
		chromedp.WaitVisible(chromedp.ID("rev-2")),
		chromedp.SendKeys(chromedp.ID("diff-from"), "1"),
		chromedp.SendKeys(chromedp.ID("diff-to"), "2"),
		chromedp.Click(chromedp.ID("diff-submit")),
		chromedp.WaitVisible(chromedp.CSS("#diff-result .line.add")),
	)
	text = b.text(t, "#diff-result")
	if !strings.Contains(text, "+Ship the **quokka** release on Monday.") || !strings.Contains(text, "-Ship the **quokka** release.") {
		t.Errorf("diff: %q", text)
	}

	b.run(t, "revert with confirmation",
		chromedp.Click(chromedp.ID("revert-1")),
		chromedp.WaitVisible(chromedp.ID("revert-confirm")),
	)
	if got := readContent(t, context.Background(), vc, "notes:/plan.md"); !strings.Contains(got, "Monday") {
		t.Fatalf("reverted before the confirmation: %q", got)
	}
	b.run(t, "confirm the revert",
		chromedp.Click(chromedp.ID("revert-confirm")),
		chromedp.WaitVisible(chromedp.ID("revert-done")),
		chromedp.Click(chromedp.ID("reopen")),
		chromedp.WaitVisible(chromedp.CSS(`#rendered article.markdown h1`)),
	)
	text = b.text(t, "#rendered article.markdown")
	if strings.Contains(text, "Monday") || !strings.Contains(text, "release.") {
		t.Errorf("after the revert the item reads %q", text)
	}
	if got := readContent(t, context.Background(), vc, "notes:/plan.md"); strings.Contains(got, "Monday") {
		t.Errorf("after the revert the store holds %q", got)
	}

	b.run(t, "search and open an explanation",
		chromedp.Click(chromedp.ID("nav-search")),
		chromedp.WaitVisible(chromedp.ID("q")),
		chromedp.SendKeys(chromedp.ID("q"), "quokka"),
		chromedp.SetValue(chromedp.ID("mode"), "bm25"),
		chromedp.Click(chromedp.ID("search-submit")),
		chromedp.WaitVisible(chromedp.CSS("li.result summary")),
		chromedp.Click(chromedp.CSS("li.result summary")),
		chromedp.WaitVisible(chromedp.CSS("li.result .why table.legs")),
	)
	text = b.text(t, "li.result .why")
	if !strings.Contains(text, "bm25") || !strings.Contains(text, "Matched terms: quokka") || !strings.Contains(text, "Fused") {
		t.Errorf("explanation: %q", text)
	}
	b.run(t, "open a result, then back to the results",
		chromedp.Click(chromedp.CSS("li.result a.result-ref")),
		chromedp.WaitVisible(chromedp.CSS(`#rendered article.markdown h1`)),
		chromedp.NavigateBack(),
		chromedp.WaitVisible(chromedp.CSS("li.result summary")),
	)

	b.run(t, "preview a context",
		chromedp.Click(chromedp.ID("nav-context")),
		chromedp.WaitVisible(chromedp.ID("task")),
		chromedp.SendKeys(chromedp.ID("task"), "when do the quokka keepers meet"),
		chromedp.SendKeys(chromedp.ID("budget"), "1500"),
		chromedp.Click(chromedp.ID("context-submit")),
		chromedp.WaitVisible(chromedp.ID("context-total")),
	)
	text = b.text(t, "#main")
	if !strings.Contains(text, "of 1500 tokens used") || !strings.Contains(text, "notes:/team.md") {
		t.Errorf("context preview: %q", text)
	}

	b.run(t, "status and log",
		chromedp.Click(chromedp.ID("nav-status")),
		chromedp.WaitVisible(chromedp.ID("status-items")),
		chromedp.Click(chromedp.ID("nav-log")),
		chromedp.WaitVisible(chromedp.CSS("tr.change")),
	)

	link, err := ctxdv1.NewAdminServiceClient(conn).CreateSignInLink(context.Background(), &ctxdv1.CreateSignInLinkRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b.run(t, "sign out, then in with a one-time link",
		chromedp.Click(chromedp.ID("signout")),
		chromedp.WaitVisible(chromedp.ID("signin")),
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(link.Url),
		chromedp.WaitVisible(chromedp.ID("whoami")),
		chromedp.WaitVisible(chromedp.CSS("a.drive")),
	)
	if loc, err := chromedp.Run(b.ctx, chromedp.Location()); err != nil || strings.Contains(loc, link.Code) {
		t.Errorf("the code stays in the address bar: %s (%v)", loc, err)
	}
	b.run(t, "the link works once",
		chromedp.Click(chromedp.ID("signout")),
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(link.Url),
		chromedp.WaitVisible(chromedp.ID("signin-error")),
	)
	text = b.text(t, "#signin-error")
	if !strings.Contains(text, "not valid") {
		t.Errorf("a used link: %q", text)
	}

	csp, js := b.reports()
	if len(csp) > 0 || len(js) > 0 {
		t.Errorf("the browser reported CSP violations %q and script errors %q", csp, js)
	}
}
