package ingest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/chunk"
	"github.com/ctxd/ctxd/vfs"
)

// byteChunker is the daemon's model-less chunking: structure-aware splits
// bounded by an estimated token count.
type byteChunker struct{}

func (byteChunker) ID() string { return "test/bytes/64" }

func (byteChunker) Chunk(content []byte, doc vfs.ChunkDoc) []vfs.ChunkSpan {
	var out []vfs.ChunkSpan
	for _, c := range chunk.Split(content, doc.MimeType, doc.Path, chunk.ByteCounter{}, 64) {
		out = append(out, vfs.ChunkSpan{Start: c.Start, End: c.End, Heading: c.Heading, Tokens: c.Tokens,
			Hash: sha256.Sum256([]byte(chunk.EmbedText(c.Heading, content[c.Start:c.End])))})
	}
	return out
}

// newTestIngester opens a store under a temp dir with chunking on and model
// "m", and an Ingester allowed to read root and fetch from loopback.
func newTestIngester(t *testing.T, root string) (*Ingester, *vfs.Store) {
	t.Helper()
	s, err := vfs.Open(filepath.Join(t.TempDir(), "ctxd.db"), vfs.Options{MaxContentBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.SetIndexing(context.Background(), byteChunker{}, "m"); err != nil {
		t.Fatal(err)
	}
	return New(s, Config{Policy: Policy{AllowedRoots: []string{root}}, Fetch: FetchOptions{AllowPrivate: true, Timeout: 5 * time.Second}}), s
}

// embedPending stands in for the embedding worker: it stores a vector for
// every queued chunk, so that later writes can reuse them.
func embedPending(t *testing.T, s *vfs.Store) {
	t.Helper()
	ctx := context.Background()
	for {
		pending, err := s.PendingEmbeddings(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) == 0 {
			return
		}
		vecs := make([][]float32, len(pending))
		for i, p := range pending {
			if !p.Have {
				vecs[i] = []float32{float32(p.Hash[0]) + 1, float32(len(p.Text))}
			}
		}
		if err := s.SaveEmbeddings(ctx, "m", pending, vecs); err != nil {
			t.Fatal(err)
		}
	}
}

// recorder collects an operation's item events.
type recorder struct {
	mu    sync.Mutex
	items map[string]ItemResult // by ref, or by source when there is no ref
}

func (r *recorder) sink() Sink {
	r.items = map[string]ItemResult{}
	return Sink{Item: func(res ItemResult) {
		r.mu.Lock()
		defer r.mu.Unlock()
		key := res.Ref
		if key == "" {
			key = res.Source
		}
		r.items[key] = res
	}}
}

func (r *recorder) get(key string) ItemResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.items[key]
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func diskRef(p string) vfs.Ref { return vfs.Ref{Drive: DriveDisk, Path: filepath.ToSlash(p)} }

func outboxSeq(t *testing.T, s *vfs.Store) uint64 {
	t.Helper()
	seq, err := s.OutboxSeq(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

const guide = "# Guide\n\n## Install\n\nRun the installer and follow the prompts on screen.\n\n## Configure\n\nEdit the settings file to choose a data directory.\n\n## Use\n\nStart the daemon and search your notes.\n"

func TestAdd_TreeSkipOverwriteAndRefresh(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	in, s := newTestIngester(t, root)
	writeFiles(t, root, map[string]string{
		"guide.md":          guide,
		"notes/todo.txt":    "buy milk\n",
		"debug.log":         "ignored by .gitignore\n",
		".gitignore":        "*.log\n",
		"server.pem":        "-----BEGIN PRIVATE KEY-----\n",
		"img.png":           "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		".hidden/note.md":   "hidden\n",
		"node_modules/x.js": "module\n",
	})
	var rec recorder
	sum, err := in.Add(ctx, AddOptions{Sources: []string{root}, OnConflict: vfs.ConflictSkip}, rec.sink())
	if err != nil {
		t.Fatal(err)
	}
	// guide.md, notes/todo.txt and img.png are added; server.pem is refused;
	// .gitignore is hidden.
	if sum.Added != 3 || sum.Skipped != 1 || sum.Failed != 0 || sum.Bytes != int64(len(guide)+len("buy milk\n")+16) {
		t.Fatalf("summary = %+v, items %v", sum, rec.items)
	}
	if r := rec.get(diskRef(filepath.Join(root, "server.pem")).String()); r.Action != Skipped || !errors.Is(r.Err, ErrRefused) {
		t.Errorf("server.pem: %+v, want skipped as a refused secret", r)
	}
	for _, name := range []string{"debug.log", ".hidden/note.md", "node_modules/x.js", "server.pem"} {
		if ok, _, _ := s.Exists(ctx, diskRef(filepath.Join(root, name))); ok {
			t.Errorf("%s was stored", name)
		}
	}
	img, err := s.Info(ctx, diskRef(filepath.Join(root, "img.png")))
	if err != nil || img.Item.IsText || img.Item.MimeType != "image/png" || img.Item.SourceURL != filepath.Join(root, "img.png") {
		t.Errorf("img.png = %+v, %v; want a binary image/png item with its source", img.Item, err)
	}
	g, err := s.Info(ctx, diskRef(filepath.Join(root, "guide.md")))
	if err != nil || g.Item.Origin.Size != int64(len(guide)) || g.Item.Origin.ModTime.IsZero() {
		t.Fatalf("guide.md origin = %+v, %v", g.Item.Origin, err)
	}
	embedPending(t, s)

	// Adding the same tree again with skip writes nothing.
	seq := outboxSeq(t, s)
	sum, err = in.Add(ctx, AddOptions{Sources: []string{root}, OnConflict: vfs.ConflictSkip}, Sink{})
	if err != nil || sum.Skipped != 4 || sum.Added+sum.Updated != 0 || sum.Bytes != 0 {
		t.Fatalf("second add = %+v, %v; want everything skipped", sum, err)
	}
	// Overwrite with nothing changed rewrites nothing either.
	sum, err = in.Add(ctx, AddOptions{Sources: []string{root}, OnConflict: vfs.ConflictOverwrite}, Sink{})
	if err != nil || sum.Unchanged != 3 || sum.Updated != 0 {
		t.Fatalf("overwrite of an unchanged tree = %+v, %v", sum, err)
	}
	if after := outboxSeq(t, s); after != seq {
		t.Errorf("outbox moved from %d to %d: an unchanged tree was written", seq, after)
	}

	// Editing one section re-embeds only that section's chunk; a deleted
	// file is reported missing and kept; a touched but identical file is unchanged.
	edited := strings.Replace(guide, "choose a data directory", "choose a data directory and a log level", 1)
	writeFiles(t, root, map[string]string{"guide.md": edited})
	if err := os.Remove(filepath.Join(root, "notes/todo.txt")); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "img.png"), later, later); err != nil {
		t.Fatal(err)
	}
	sum, err = in.Refresh(ctx, RefreshOptions{All: true}, rec.sink())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Updated != 1 || sum.Missing != 1 || sum.Unchanged != 1 || sum.Failed != 0 {
		t.Fatalf("refresh = %+v, items %v", sum, rec.items)
	}
	chunks, err := s.Chunks(ctx, diskRef(filepath.Join(root, "guide.md")))
	if err != nil {
		t.Fatal(err)
	}
	if r := rec.get(diskRef(filepath.Join(root, "guide.md")).String()); r.ChunksQueued != 1 || r.ChunksReused != len(chunks)-1 || len(chunks) < 2 {
		t.Errorf("guide.md: %d embedded, %d reused of %d chunks; want only the edited section embedded", r.ChunksQueued, r.ChunksReused, len(chunks))
	}
	if r := rec.get(diskRef(filepath.Join(root, "notes/todo.txt")).String()); r.Action != Missing || !errors.Is(r.Err, ErrMissing) {
		t.Errorf("deleted file: %+v, want missing", r)
	}
	if ok, _, _ := s.Exists(ctx, diskRef(filepath.Join(root, "notes/todo.txt"))); !ok {
		t.Error("the item of a deleted file was dropped")
	}
	img2, _ := s.Info(ctx, diskRef(filepath.Join(root, "img.png")))
	if !img2.Item.Origin.ModTime.Equal(later) {
		t.Errorf("touched file: origin mtime stayed %v; want the new mtime recorded", img2.Item.Origin.ModTime)
	}
	if !img2.Item.UpdatedAt.Equal(img.Item.UpdatedAt) {
		t.Error("a touched but identical file was rewritten")
	}
	embedPending(t, s)
	// A second refresh finds everything as stored without reading files.
	sum, err = in.Refresh(ctx, RefreshOptions{Refs: []vfs.Ref{diskRef(root)}}, Sink{})
	if err != nil || sum.Unchanged != 2 || sum.Missing != 1 || sum.Updated != 0 {
		t.Errorf("second refresh = %+v, %v", sum, err)
	}
}

func TestAdd_ConflictErrorFailsBeforeWriting(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	in, s := newTestIngester(t, root)
	writeFiles(t, root, map[string]string{"a.md": "a\n"})
	if _, err := in.Add(ctx, AddOptions{Sources: []string{root}, OnConflict: vfs.ConflictSkip}, Sink{}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"b.md": "b\n"})
	_, err := in.Add(ctx, AddOptions{Sources: []string{root}, OnConflict: vfs.ConflictError}, Sink{})
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "a.md") {
		t.Fatalf("err = %v, want ErrExists naming a.md", err)
	}
	if ok, _, _ := s.Exists(ctx, diskRef(filepath.Join(root, "b.md"))); ok {
		t.Error("b.md was written although the add failed")
	}
}

func TestAdd_RefusesWhatPolicyForbids(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	outside := t.TempDir()
	in, _ := newTestIngester(t, root)
	writeFiles(t, outside, map[string]string{"x.md": "x\n"})
	var rec recorder
	sum, err := in.Add(ctx, AddOptions{Sources: []string{filepath.Join(outside, "x.md"), "relative/path.md", "ftp://example.com/x", filepath.Join(root, "nope.md")}}, rec.sink())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 4 {
		t.Fatalf("summary = %+v, want 4 failed", sum)
	}
	for key, kind := range map[string]error{
		diskRef(filepath.Join(outside, "x.md")).String(): ErrRefused,
		"relative/path.md":                               ErrInvalid,
		"ftp://example.com/x":                            ErrInvalid,
		diskRef(filepath.Join(root, "nope.md")).String(): ErrUnreadable,
	} {
		if r := rec.get(key); r.Action != Failed || !errors.Is(r.Err, kind) {
			t.Errorf("%s: %+v, want failed with %v", key, r, kind)
		}
	}
	if _, err := in.Add(ctx, AddOptions{}, Sink{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Add without sources: %v", err)
	}
	if _, err := in.Add(ctx, AddOptions{Sources: []string{root}, Drive: "Bad Drive"}, Sink{}); !errors.Is(err, vfs.ErrInvalid) {
		t.Errorf("Add to a bad drive: %v", err)
	}
	if _, err := in.Refresh(ctx, RefreshOptions{}, Sink{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Refresh without refs: %v", err)
	}
}

// page is a loopback web page whose body and ETag the test changes.
type page struct {
	mu     sync.Mutex
	body   string
	etag   string
	status int
	hits   atomic.Int64 // GETs answered with a body
	checks atomic.Int64 // conditional GETs answered 304
}

func (p *page) set(body, etag string, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.body, p.etag, p.status = body, etag, status
}

func (p *page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status != 0 {
		w.WriteHeader(p.status)
		return
	}
	if r.Header.Get("If-None-Match") == p.etag {
		p.checks.Add(1)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	p.hits.Add(1)
	w.Header().Set("ETag", p.etag)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, p.body)
}

const article = `<html><head><title>Tide tables</title></head><body>
<nav>Home | About | Login</nav>
<article><h1>Tides</h1><p>High tide comes twice a day.</p></article>
<script>trackVisitor()</script></body></html>`

func TestAdd_URLConditionalGetTTLAndMissing(t *testing.T) {
	ctx := context.Background()
	p := &page{}
	p.set(article, `"v1"`, 0)
	srv := httptest.NewServer(p)
	defer srv.Close()
	in, s := newTestIngester(t, t.TempDir())
	u := srv.URL + "/tides#top"
	ref := vfs.Ref{Drive: DriveURL, Path: "/" + srv.URL + "/tides"}

	var rec recorder
	sum, err := in.Add(ctx, AddOptions{Sources: []string{u}, TTL: time.Hour}, rec.sink())
	if err != nil || sum.Added != 1 {
		t.Fatalf("add = %+v, %v, items %v", sum, err, rec.items)
	}
	info, err := s.Info(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if info.Item.Title != "Tide tables" || info.Item.Origin.ETag != `"v1"` || info.Item.Origin.TTL != time.Hour || info.Item.SourceURL != srv.URL+"/tides" {
		t.Errorf("item = %+v", info.Item)
	}
	res, err := s.Read(ctx, ref, 0, 0)
	if err != nil || !strings.Contains(string(res.Content), "High tide comes twice a day.") ||
		strings.Contains(string(res.Content), "Login") || strings.Contains(string(res.Content), "trackVisitor") {
		t.Errorf("stored page = %q, %v; want the article without navigation or scripts", res.Content, err)
	}

	// Within the TTL a stale-only refresh does not fetch; a refresh does,
	// conditionally, and a 304 changes nothing but the check time.
	if sum, err := in.Refresh(ctx, RefreshOptions{All: true, StaleOnly: true}, Sink{}); err != nil || sum.Unchanged != 1 || p.checks.Load() != 0 {
		t.Errorf("stale-only refresh = %+v, %v, %d conditional GETs; want none", sum, err, p.checks.Load())
	}
	if sum, err := in.Refresh(ctx, RefreshOptions{Refs: []vfs.Ref{ref}}, Sink{}); err != nil || sum.Unchanged != 1 || p.checks.Load() != 1 || p.hits.Load() != 1 {
		t.Errorf("refresh = %+v, %v; %d conditional, %d full GETs; want one 304", sum, err, p.checks.Load(), p.hits.Load())
	}
	after, _ := s.Info(ctx, ref)
	if !after.Item.Origin.CheckedAt.After(info.Item.Origin.CheckedAt) || !after.Item.UpdatedAt.Equal(info.Item.UpdatedAt) {
		t.Errorf("after a 304: checked %v (was %v), updated %v (was %v)", after.Item.Origin.CheckedAt, info.Item.Origin.CheckedAt, after.Item.UpdatedAt, info.Item.UpdatedAt)
	}

	// A changed page is rewritten once its TTL has passed and a search notices it.
	p.set(strings.NewReplacer("twice a day", "about every twelve hours", "<title>Tide tables", "<title>Tide times").Replace(article), `"v2"`, 0)
	if got := in.Revalidate(ctx, []string{info.Item.ID}); len(got) != 0 {
		t.Errorf("Revalidate within the TTL = %v, want nothing fetched", got)
	}
	stale := info.Item.Origin
	stale.CheckedAt = time.Now().Add(-2 * time.Hour)
	if _, err := s.SetOrigin(ctx, ref, stale, info.Item.ContentHash); err != nil {
		t.Fatal(err)
	}
	if got := in.Revalidate(ctx, []string{info.Item.ID}); got[info.Item.ID].Action != Updated {
		t.Fatalf("Revalidate of a stale page = %v, want updated", got)
	}
	res, _ = s.Read(ctx, ref, 0, 0)
	if !strings.Contains(string(res.Content), "about every twelve hours") || res.Item.Title != "Tide times" {
		t.Errorf("page after revalidation = %q titled %q; want the new text and title", res.Content, res.Item.Title)
	}

	// A page that is gone is reported missing and kept.
	p.set("", "", http.StatusNotFound)
	sum, err = in.Refresh(ctx, RefreshOptions{All: true}, rec.sink())
	if err != nil || sum.Missing != 1 {
		t.Fatalf("refresh of a 404 = %+v, %v", sum, err)
	}
	if ok, _, _ := s.Exists(ctx, ref); !ok {
		t.Error("a page that answered 404 was dropped")
	}
}

func TestAdd_RefusesPrivateAddressesByDefault(t *testing.T) {
	srv := httptest.NewServer(&page{body: article, etag: `"v1"`})
	defer srv.Close()
	_, s := newTestIngester(t, t.TempDir())
	in := New(s, Config{})
	var rec recorder
	sum, err := in.Add(context.Background(), AddOptions{Sources: []string{srv.URL + "/x"}}, rec.sink())
	if err != nil || sum.Failed != 1 {
		t.Fatalf("add = %+v, %v", sum, err)
	}
	if r := rec.get("url:/" + srv.URL + "/x"); !errors.Is(r.Err, ErrRefused) {
		t.Errorf("result = %+v, want refused", r)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		in, drive, path, fetch string
	}{
		{"https://github.com/o/r/blob/main/docs/a.md", DriveGitHub, "/o/r/docs/a.md", "https://raw.githubusercontent.com/o/r/main/docs/a.md"},
		{"https://raw.githubusercontent.com/o/r/v1.2/README.md", DriveGitHub, "/o/r/README.md", "https://raw.githubusercontent.com/o/r/v1.2/README.md"},
		{"https://github.com/o/r", DriveURL, "/https://github.com/o/r", "https://github.com/o/r"},
		{"https://example.com/a?b=1#frag", DriveURL, "/https://example.com/a?b=1", "https://example.com/a?b=1"},
		{"/home/u/notes.md", DriveDisk, "/home/u/notes.md", ""},
		{"HTTPS://Example.com/a", DriveURL, "/https://Example.com/a", "https://Example.com/a"},
	}
	for _, tt := range tests {
		s, err := classify(tt.in, "")
		if err != nil || s.drive != tt.drive || s.path != tt.path || s.fetchURL != tt.fetch {
			t.Errorf("classify(%q) = %+v, %v; want %s:%s fetching %q", tt.in, s, err, tt.drive, tt.path, tt.fetch)
		}
	}
	if s, err := classify("/home/u/a.md", "notes"); err != nil || s.drive != "notes" || s.path != "/home/u/a.md" {
		t.Errorf("drive override: %+v, %v", s, err)
	}
	// Only the url drive keeps a URL's "//"; other drives refuse empty segments.
	if s, err := classify("https://example.com/a//b", "notes"); err != nil || s.drive != "notes" || s.path != "/https:/example.com/a/b" || s.fetchURL != "https://example.com/a//b" {
		t.Errorf("URL under another drive: %+v, %v", s, err)
	} else if _, err := vfs.CleanPath(s.drive, s.path); err != nil {
		t.Errorf("URL under another drive: path %s refused: %v", s.path, err)
	}
}

func TestWatch_IngestsNewAndReportsRemoved(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := t.TempDir()
	in, s := newTestIngester(t, root)
	writeFiles(t, root, map[string]string{"a.md": "a\n", ".gitignore": "*.tmp\n"})
	o := AddOptions{Sources: []string{root}}
	if _, err := in.Add(ctx, o, Sink{}); err != nil {
		t.Fatal(err)
	}
	events := make(chan ItemResult, 16)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- in.Watch(ctx, o, Sink{Item: func(r ItemResult) { events <- r }}, ready) }()
	<-ready
	writeFiles(t, root, map[string]string{"new.md": "fresh note\n", "scratch.tmp": "ignored\n"})
	want := diskRef(filepath.Join(root, "new.md")).String()
	waitEvent(t, events, want, Added)
	if ok, _, _ := s.Exists(ctx, diskRef(filepath.Join(root, "new.md"))); !ok {
		t.Error("the new file was not stored")
	}
	if err := os.Remove(filepath.Join(root, "a.md")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, diskRef(filepath.Join(root, "a.md")).String(), Missing)
	if ok, _, _ := s.Exists(ctx, diskRef(filepath.Join(root, "scratch.tmp"))); ok {
		t.Error("an ignored file was ingested")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch = %v", err)
	}
}

// waitEvent waits up to 10 s for an event about ref with action want, failing on any other event about ref.
func waitEvent(t *testing.T, events <-chan ItemResult, ref string, want Action) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-events:
			if r.Ref != ref {
				continue
			}
			if r.Action != want {
				t.Fatalf("%s: %v (%v), want %v", ref, r.Action, r.Err, want)
			}
			return
		case <-deadline:
			t.Fatalf("no %v event for %s within 10s", want, ref)
		}
	}
}

func TestAdd_HugeFile(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	in, s := newTestIngester(t, root) // content limit 1 MiB
	writeFiles(t, root, map[string]string{"small.md": "small\n", "big.bin": ""})
	if err := os.Truncate(filepath.Join(root, "big.bin"), 2<<20); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	sum, err := in.Add(ctx, AddOptions{Sources: []string{root}}, rec.sink())
	if err != nil || sum.Added != 1 || sum.Skipped != 1 || sum.Failed != 0 {
		t.Fatalf("tree with a huge file = %+v, %v", sum, err)
	}
	if r := rec.get(diskRef(filepath.Join(root, "big.bin")).String()); !errors.Is(r.Err, ErrTooLarge) {
		t.Errorf("big.bin: %+v, want skipped as too large", r)
	}
	// Named on its own, it is a failure.
	sum, err = in.Add(ctx, AddOptions{Sources: []string{filepath.Join(root, "big.bin")}}, rec.sink())
	if err != nil || sum.Failed != 1 {
		t.Errorf("huge file named alone = %+v, %v", sum, err)
	}
	if ok, _, _ := s.Exists(ctx, diskRef(filepath.Join(root, "big.bin"))); ok {
		t.Error("the huge file was stored")
	}
}

func TestRefresh_KeepsWhatPeopleSet(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	in, s := newTestIngester(t, root)
	writeFiles(t, root, map[string]string{"n.md": "first\n"})
	if _, err := in.Add(ctx, AddOptions{Sources: []string{root}, Tags: []string{"from-add"}}, Sink{}); err != nil {
		t.Fatal(err)
	}
	ref := diskRef(filepath.Join(root, "n.md"))
	info, _ := s.Info(ctx, ref)
	// Someone retitles, describes and tags the item.
	if _, err := s.Write(ctx, vfs.WriteParams{Ref: ref, Content: []byte("first\n"), IsText: true, Title: "My notes", Description: "d",
		Tags: []string{"mine"}, Importance: 0.7, SourceURL: info.Item.SourceURL, Origin: info.Item.Origin, OnConflict: vfs.ConflictOverwrite}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"n.md": "second, longer\n"})
	if sum, err := in.Refresh(ctx, RefreshOptions{Refs: []vfs.Ref{ref}}, Sink{}); err != nil || sum.Updated != 1 {
		t.Fatalf("refresh = %+v, %v", sum, err)
	}
	res, err := s.Read(ctx, ref, 0, 0)
	if err != nil || string(res.Content) != "second, longer\n" {
		t.Fatalf("content = %q, %v", res.Content, err)
	}
	if it := res.Item; it.Title != "My notes" || it.Description != "d" || it.Importance != 0.7 || strings.Join(it.Tags, ",") != "mine" {
		t.Errorf("after refresh: title %q, description %q, importance %v, tags %v; want what was set", it.Title, it.Description, it.Importance, it.Tags)
	}
}

func TestRefresh_ChecksPolicyBeforeReading(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	in, s := newTestIngester(t, root)
	writeFiles(t, root, map[string]string{"n.md": "first\n"})
	if _, err := in.Add(ctx, AddOptions{Sources: []string{root}}, Sink{}); err != nil {
		t.Fatal(err)
	}
	// The root is no longer allowed: an unchanged file is not read, so there
	// is nothing to refuse; a changed one is refused, not read.
	narrowed := New(s, Config{Policy: Policy{AllowedRoots: []string{t.TempDir()}}})
	ref := diskRef(filepath.Join(root, "n.md"))
	if sum, err := narrowed.Refresh(ctx, RefreshOptions{Refs: []vfs.Ref{ref}}, Sink{}); err != nil || sum.Unchanged != 1 {
		t.Fatalf("unchanged file = %+v, %v", sum, err)
	}
	writeFiles(t, root, map[string]string{"n.md": "second, longer\n"})
	var rec recorder
	if sum, err := narrowed.Refresh(ctx, RefreshOptions{Refs: []vfs.Ref{ref}}, rec.sink()); err != nil || sum.Failed != 1 {
		t.Fatalf("changed file = %+v, %v", sum, err)
	}
	if r := rec.get(ref.String()); !errors.Is(r.Err, ErrRefused) {
		t.Errorf("changed file outside the roots: %+v, want refused", r)
	}
	if got := mustReadString(t, s, ref); got != "first\n" {
		t.Errorf("content = %q, want the old text kept", got)
	}
}

func mustReadString(t *testing.T, s *vfs.Store, ref vfs.Ref) string {
	t.Helper()
	res, err := s.Read(context.Background(), ref, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Content)
}
