package vfs

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// chunkTexts returns the texts of ref's chunks as the indexes see them.
func chunkTexts(t *testing.T, s *Store, ref string) []string {
	t.Helper()
	it, err := s.Info(context.Background(), mustRef(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := s.IndexDocs(context.Background(), []IndexRead{{ItemID: it.Item.ID}}, false, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range docs[0].Chunks {
		out = append(out, c.Text)
	}
	return out
}

func TestStore_BinarySearchableText(t *testing.T) {
	ctx := context.Background()
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	pdf := []byte("%PDF-1.4 \x00\x01 binary")
	_, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "disk:/docs/report.pdf"), Content: pdf, MimeType: "application/pdf",
		Text: []byte("Quarterly revenue grew.\n\nCosts fell.")})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(chunkTexts(t, s, "disk:/docs/report.pdf"), "|")
	if got != "report.pdf\napplication/pdf|Quarterly revenue grew.|Costs fell." {
		t.Errorf("chunks = %q, want the name and type, then the extracted paragraphs", got)
	}
	if _, raw, err := s.ReadRaw(ctx, mustRef(t, "disk:/docs/report.pdf")); err != nil || string(raw) != string(pdf) {
		t.Errorf("content = %q, %v; want the PDF bytes unchanged", raw, err)
	}

	// A move renames it and its searchable text; a copy keeps the extracted text.
	if _, err := s.Move(ctx, mustRef(t, "disk:/docs/report.pdf"), mustRef(t, "disk:/docs/q3.pdf"), ConflictError); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Copy(ctx, mustRef(t, "disk:/docs/q3.pdf"), mustRef(t, "disk:/docs/copy.pdf"), false, ConflictError); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"disk:/docs/q3.pdf":   "q3.pdf\napplication/pdf|Quarterly revenue grew.|Costs fell.",
		"disk:/docs/copy.pdf": "copy.pdf\napplication/pdf|Quarterly revenue grew.|Costs fell.",
	} {
		if got := strings.Join(chunkTexts(t, s, ref), "|"); got != want {
			t.Errorf("%s chunks = %q, want %q", ref, got, want)
		}
	}

	// Overwriting without text drops the old extracted text; overwriting with
	// text content drops the searchable text altogether.
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "disk:/docs/q3.pdf"), Content: pdf, MimeType: "application/pdf", OnConflict: ConflictOverwrite}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(chunkTexts(t, s, "disk:/docs/q3.pdf"), "|"); got != "q3.pdf\napplication/pdf" {
		t.Errorf("after overwrite without text: %q", got)
	}
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "disk:/docs/q3.pdf"), Content: []byte("now text"), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(chunkTexts(t, s, "disk:/docs/q3.pdf"), "|"); got != "now text" {
		t.Errorf("after overwrite with text: %q", got)
	}

	// Searchable text is only for binary content, and must be UTF-8.
	_, err = s.Write(ctx, WriteParams{Ref: mustRef(t, "/t.md"), Content: []byte("x"), IsText: true, Text: []byte("y")})
	wantErr(t, err, ErrInvalid)
	_, err = s.Write(ctx, WriteParams{Ref: mustRef(t, "/b.bin"), Content: []byte{0}, Text: []byte{0xff}})
	wantErr(t, err, ErrInvalid)
	if ok, _, _ := s.Exists(ctx, mustRef(t, "/b.bin")); ok {
		t.Error("a rejected write stored the item")
	}
}

func TestStore_WriteCountsReusedChunks(t *testing.T) {
	ctx := context.Background()
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	res, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/a.md"), Content: []byte(threeParas), IsText: true})
	if err != nil || res.ChunksToEmbed != 3 || res.ChunksReused != 0 {
		t.Fatalf("first write: %+v, %v", res, err)
	}
	embedAll(t, s, "m1")
	res, err = s.Write(ctx, WriteParams{Ref: mustRef(t, "/a.md"), Content: []byte("alpha one\n\nbeta 2\n\ngamma three\n"), IsText: true, OnConflict: ConflictOverwrite})
	if err != nil || res.ChunksToEmbed != 1 || res.ChunksReused != 2 {
		t.Fatalf("editing one paragraph: %+v, %v; want 1 to embed and 2 reused", res, err)
	}
}

func TestStore_OriginAndSetOrigin(t *testing.T) {
	ctx := context.Background()
	s := mustOpenStore(t)
	mod := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	o := Origin{ModTime: mod, Size: 5, CheckedAt: mod, TTL: time.Hour, ETag: `"e1"`}
	res, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "disk:/n.md"), Content: []byte("hello"), IsText: true, Origin: o})
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, mustRef(t, "disk:/n.md"))
	if err != nil || info.Item.Origin != o {
		t.Fatalf("origin = %+v, %v; want %+v", info.Item.Origin, err, o)
	}
	o2 := o
	o2.CheckedAt = mod.Add(time.Minute)
	if _, err := s.SetOrigin(ctx, mustRef(t, "disk:/n.md"), o2, "not-the-hash"); !errors.Is(err, ErrChanged) {
		t.Errorf("SetOrigin with a stale hash: %v, want ErrChanged", err)
	}
	before, err := s.OutboxSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := s.SetOrigin(ctx, mustRef(t, "disk:/n.md"), o2, res.Item.ContentHash)
	if err != nil || it.Origin != o2 || !it.UpdatedAt.Equal(res.Item.UpdatedAt) {
		t.Fatalf("SetOrigin = %+v, %v; want origin %+v and updated time unchanged", it, err, o2)
	}
	if after, err := s.OutboxSeq(ctx); err != nil || after != before {
		t.Errorf("outbox went from %d to %d (%v): an origin stamp changes nothing indexed", before, after, err)
	}
}

func TestStore_URLPagesNest(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "url:/https://example.com/docs", "index page")
	mustWrite(t, s, "url:/https://example.com/docs/intro", "intro page")
	if _, err := s.Write(context.Background(), WriteParams{Ref: mustRef(t, "url:/https://example.com/docs"), Content: []byte("index page v2"), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, "url:/https://example.com/docs"); got != "index page v2" {
		t.Errorf("page = %q", got)
	}
	if got := mustRead(t, s, "url:/https://example.com/docs/intro"); got != "intro page" {
		t.Errorf("subpage = %q", got)
	}
	// Elsewhere an item still cannot have items below it.
	mustWrite(t, s, "/a", "x")
	_, err := s.Write(context.Background(), WriteParams{Ref: mustRef(t, "/a/b"), Content: []byte("y"), IsText: true})
	wantErr(t, err, ErrNotDir)
}

func TestStore_SetSource(t *testing.T) {
	ctx := context.Background()
	s := mustOpenStore(t)
	mod := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	o := Origin{ModTime: mod, Size: 5, CheckedAt: mod}
	res, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "disk:/a/n.md"), Content: []byte("hello"), IsText: true, SourceURL: "/a/n.md", Origin: o})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Move(ctx, mustRef(t, "disk:/a/n.md"), mustRef(t, "disk:/b/m.md"), ConflictError); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetSource(ctx, mustRef(t, "disk:/b/m.md"), "/b/m.md", o, "not-the-hash"); !errors.Is(err, ErrChanged) {
		t.Errorf("SetSource with a stale hash: %v, want ErrChanged", err)
	}
	if _, err := s.SetSource(ctx, mustRef(t, "disk:/b/m.md"), "/b/\xff", o, res.Item.ContentHash); !errors.Is(err, ErrInvalid) {
		t.Errorf("SetSource with a source that is not UTF-8: %v, want ErrInvalid", err)
	}
	before, err := s.OutboxSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o2 := o
	o2.CheckedAt = mod.Add(time.Minute)
	if _, err := s.SetSource(ctx, mustRef(t, "disk:/b/m.md"), "/b/m.md", o2, res.Item.ContentHash); err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, mustRef(t, "disk:/b/m.md"))
	if err != nil || info.Item.ID != res.Item.ID || info.Item.SourceURL != "/b/m.md" || info.Item.Origin != o2 {
		t.Fatalf("after SetSource: %+v, %v; want the moved item (id %s) with source /b/m.md and origin %+v", info.Item, err, res.Item.ID, o2)
	}
	if after, err := s.OutboxSeq(ctx); err != nil || after != before {
		t.Errorf("outbox went from %d to %d (%v): a source stamp changes nothing indexed", before, after, err)
	}
}
