package indexer

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/index/chunk"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/tokenize"
	"github.com/ctxd/ctxd/internal/testmodel"
	"github.com/ctxd/ctxd/vfs"
)

// mustModelChunker installs the model's chunker in a new store.
func mustModelChunker(t *testing.T) (*vfs.Store, *modelChunker, embed.Spec) {
	t.Helper()
	dir := testmodel.Dir(t)
	spec, err := embed.LoadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenize.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	id, err := chunkerID(dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := vfs.Open(filepath.Join(t.TempDir(), "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := &modelChunker{id: id, tok: tok, maxTokens: spec.MaxTokens}
	if _, err := s.SetIndexing(context.Background(), c, spec.ID); err != nil {
		t.Fatal(err)
	}
	return s, c, spec
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// TestIndexer_EmbedsTitleAndDescription checks that every chunk embeds the
// item's title and description before its text, with the frontmatter left
// out: the chunk hash is of exactly that text, its token count includes it,
// and the vector the embed pass stores is the model's vector of it.
func TestIndexer_EmbedsTitleAndDescription(t *testing.T) {
	s, c, spec := mustModelChunker(t)
	ctx := context.Background()
	const desc = "How invoices are numbered, sent and chased"
	content := "---\nloading: contextual\ntitle: Invoicing\ndescription: " + desc + "\n---\n" +
		"# Numbers\n\nEvery invoice number is the year and a sequence.\n\n# Reminders\n\n" +
		strings.Repeat("A reminder goes out seven days after the due date, then weekly. ", 40) + "\n"
	res, err := s.Write(ctx, vfs.WriteParams{Ref: vfs.Ref{Drive: "self", Path: "/invoicing.md"}, Content: []byte(content), IsText: true})
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := s.Chunks(ctx, vfs.Ref{ID: res.Item.ID})
	if err != nil || len(chunks) < 2 {
		t.Fatalf("chunks = %d, %v; want the long section split", len(chunks), err)
	}
	prefix := chunk.Prefix("Invoicing", desc, c.tok, spec.MaxTokens)
	if prefix != "Invoicing\n"+desc {
		t.Fatalf("prefix = %q", prefix)
	}
	embedded := make([]string, len(chunks))
	for i, ch := range chunks {
		text := []byte(content[ch.Start:ch.End])
		if strings.Contains(string(text), "loading:") || ch.Start < int(res.Item.FrontmatterLen) {
			t.Errorf("chunk %d [%d,%d) holds frontmatter", i, ch.Start, ch.End)
		}
		embedded[i] = string(chunk.AppendEmbedText(nil, prefix, ch.Heading, text))
		if ch.Hash != sha256.Sum256([]byte(embedded[i])) {
			t.Errorf("chunk %d: hash is not of the prefixed text", i)
		}
		if want := c.tok.Count(embedded[i]) + 2; ch.Tokens != want || ch.Tokens > spec.MaxTokens {
			t.Errorf("chunk %d: %d tokens, want %d (prefix included) within %d", i, ch.Tokens, want, spec.MaxTokens)
		}
	}

	m, err := embed.Open(testmodel.Dir(t), embed.Options{LibraryPath: testmodel.ORTLib(t)})
	if err != nil {
		t.Fatal(err)
	}
	w := embed.NewWorker(m)
	t.Cleanup(func() { w.Close() })
	ix := &Indexer{store: s, log: slog.New(slog.DiscardHandler), chunker: c}
	pending, err := s.PendingEmbeddings(ctx, 100)
	if err != nil || len(pending) != len(chunks) {
		t.Fatalf("pending = %d, %v; want %d", len(pending), err, len(chunks))
	}
	if err := ix.embed(ctx, w, pending, embed.Background); err != nil {
		t.Fatal(err)
	}
	plain := make([]string, len(chunks))
	for i, ch := range chunks {
		plain[i] = chunk.EmbedText(ch.Heading, []byte(content[ch.Start:ch.End]))
	}
	want, err := w.Embed(ctx, append(embedded, plain...), false)
	if err != nil {
		t.Fatal(err)
	}
	for i, ch := range chunks {
		got, err := s.Vector(ctx, ch.Hash)
		if err != nil || got == nil {
			t.Fatalf("chunk %d: no vector stored (%v)", i, err)
		}
		if sim := cosine(got, want[i]); sim < 0.9999 {
			t.Errorf("chunk %d: stored vector vs the prefixed text's: cosine %.5f", i, sim)
		}
		if sim := cosine(got, want[len(chunks)+i]); sim > 0.999 {
			t.Errorf("chunk %d: stored vector is the unprefixed text's (cosine %.5f)", i, sim)
		}
	}
}

// TestModelChunker_LongDescription checks that a description longer than
// the window is cut, so every chunk still fits the model.
func TestModelChunker_LongDescription(t *testing.T) {
	_, c, spec := mustModelChunker(t)
	desc := strings.Repeat("An extremely verbose description of the item. ", 100)
	content := []byte(strings.Repeat("Body text that the chunk holds. ", 200))
	spans := c.Chunk(content, vfs.ChunkDoc{MimeType: "text/plain", Path: "/a.txt", Title: "A", Description: desc})
	if len(spans) == 0 {
		t.Fatal("no chunks")
	}
	prefix := chunk.Prefix("A", desc, c.tok, spec.MaxTokens)
	if n := c.tok.Count(prefix); n > (spec.MaxTokens-2)*chunk.HeadingPercent/100 || !strings.HasSuffix(prefix, "…") {
		t.Errorf("prefix has %d tokens (%q), want it cut to the heading budget", n, prefix)
	}
	for i, sp := range spans {
		if sp.Tokens > spec.MaxTokens {
			t.Errorf("chunk %d: %d tokens over the window %d", i, sp.Tokens, spec.MaxTokens)
		}
		if got := string(c.embedText(nil, "A", desc, sp.Heading, content[sp.Start:sp.End])); sp.Hash != sha256.Sum256([]byte(got)) {
			t.Errorf("chunk %d: the embed pass would embed other text than the chunk's hash names", i)
		}
	}
}
