package vfs

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func textWrite(drive, path, content string) WriteParams {
	return WriteParams{Ref: Ref{Drive: drive, Path: path}, Content: []byte(content), IsText: true, OnConflict: ConflictOverwrite}
}

func TestStore_WriteBatch(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	batch := []WriteParams{
		textWrite("notes", "/a.md", "alpha one\n\nalpha two"),
		textWrite("notes", "/dir/b.md", "---\ntitle: Bee\n---\nbeta"),
		{Ref: Ref{Drive: "disk", Path: "/img"}, Content: []byte("\x89PNG\r\n\x1a\n\x00"), Text: []byte("a picture")},
		textWrite("notes", "/a.md", "alpha again"), // a later item overwrites an earlier one
	}
	res, err := s.WriteBatch(ctx, batch)
	if err != nil {
		t.Fatalf("WriteBatch: %v", err)
	}
	if len(res) != len(batch) {
		t.Fatalf("%d results for %d items", len(res), len(batch))
	}
	for i, want := range []bool{true, true, true, false} {
		if res[i].Created != want || res[i].Skipped {
			t.Errorf("result %d: created %v skipped %v; want created %v", i, res[i].Created, res[i].Skipped, want)
		}
	}
	if res[3].Item.ID != res[0].Item.ID {
		t.Errorf("the overwrite got id %s, the first write %s", res[3].Item.ID, res[0].Item.ID)
	}
	if res[1].Item.Title != "Bee" {
		t.Errorf("frontmatter title = %q", res[1].Item.Title)
	}
	for ref, want := range map[Ref]string{{Drive: "notes", Path: "/a.md"}: "alpha again", {Drive: "notes", Path: "/dir/b.md"}: "---\ntitle: Bee\n---\nbeta"} {
		_, raw, err := s.ReadRaw(ctx, ref)
		if err != nil || string(raw) != want {
			t.Errorf("%s = %q, %v; want %q", ref, raw, err, want)
		}
	}
	// Chunks are those a single Write makes: the frontmatter is not chunked.
	spans, err := s.Chunks(ctx, Ref{Drive: "notes", Path: "/dir/b.md"})
	if err != nil || len(spans) != 1 || spans[0].Hash != sha256.Sum256([]byte("beta")) {
		t.Fatalf("chunks of b.md = %+v, %v; want one chunk \"beta\"", spans, err)
	}
	revs, err := s.History(ctx, Ref{Drive: "notes", Path: "/a.md"}, 0, 0)
	if err != nil || len(revs) != 2 {
		t.Errorf("history of a.md: %d revisions, %v; want 2", len(revs), err)
	}
}

func TestStore_WriteBatch_allOrNothing(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	if _, err := s.Write(ctx, textWrite("notes", "/taken.md", "first")); err != nil {
		t.Fatal(err)
	}
	before, _, err := s.Log(ctx, LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	conflict := textWrite("notes", "/taken.md", "second")
	conflict.OnConflict = ConflictError
	tests := []struct {
		name    string
		bad     WriteParams
		kind    error
		message string
	}{
		{"conflict in the transaction", conflict, ErrConflict, "items[2] (notes:/taken.md): An item already exists"},
		{"below an item", textWrite("notes", "/taken.md/x", "x"), ErrNotDir, "items[2] (notes:/taken.md/x): Cannot write"},
		{"invalid before the transaction", WriteParams{Ref: Ref{Drive: "notes", Path: "/bad"}, Content: []byte("a\x00b"), IsText: true}, ErrInvalid, "items[2] (notes:/bad): "},
		{"embeddings that do not match the chunks", WriteParams{Ref: Ref{Drive: "notes", Path: "/e.md"}, Content: []byte("one\n\ntwo"), IsText: true,
			Embeddings: &Embeddings{Model: "m1", Vectors: [][]float32{{1, 0}}}}, ErrInvalid, "items[2] (notes:/e.md): The content makes 2 chunks but 1 embeddings were given."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			batch := []WriteParams{textWrite("notes", "/new1.md", "one"), textWrite("notes", "/new2.md", "two"), tt.bad, textWrite("notes", "/new3.md", "three")}
			_, err := s.WriteBatch(ctx, batch)
			var e *Error
			if !errors.Is(err, tt.kind) || !errors.As(err, &e) || !strings.HasPrefix(e.Message, tt.message) || e.Ref == "" {
				t.Fatalf("WriteBatch = %v (%#v); want %v starting %q with a ref", err, e, tt.kind, tt.message)
			}
			for _, p := range []string{"/new1.md", "/new2.md", "/new3.md", "/e.md"} {
				if ok, _, err := s.Exists(ctx, Ref{Drive: "notes", Path: p}); ok || err != nil {
					t.Errorf("notes:%s exists=%v (%v) after a failed batch", p, ok, err)
				}
			}
			after, _, err := s.Log(ctx, LogQuery{})
			if err != nil || len(after) != len(before) {
				t.Errorf("log has %d revisions (%v), %d before the failed batch", len(after), err, len(before))
			}
		})
	}
}

func TestStore_WriteBatch_limit(t *testing.T) {
	s := mustOpenStore(t)
	batch := make([]WriteParams, MaxBatchItems+1)
	for i := range batch {
		batch[i] = textWrite("notes", fmt.Sprintf("/%d", i), "x")
	}
	_, err := s.WriteBatch(ctx, batch)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), fmt.Sprint(MaxBatchItems)) {
		t.Fatalf("WriteBatch of %d items = %v; want ErrInvalid naming the limit", len(batch), err)
	}
	if ok, _, _ := s.Exists(ctx, Ref{Drive: "notes", Path: "/0"}); ok {
		t.Error("an item of the refused batch was written")
	}
}

// wholeChunker makes one chunk of the whole content.
type wholeChunker struct{}

func (wholeChunker) ID() string { return "whole" }

func (wholeChunker) Chunk(content []byte, _ ChunkDoc) []ChunkSpan {
	return []ChunkSpan{{End: len(content), Hash: sha256.Sum256(content)}}
}

// A write chunked ahead by one chunker and stored after another was
// installed is chunked again by the one installed.
func TestStore_Write_chunkerChangedAfterChunkingAhead(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	content := []byte("one\n\ntwo")
	w, err := s.prepareWrite(textWrite("notes", "/a.md", string(content)))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.chunked.spans) != 2 {
		t.Fatalf("chunked ahead into %d spans, want 2", len(w.chunked.spans))
	}
	mustSetIndexing(t, s, wholeChunker{}, "m1")
	if err := s.update(ctx, func(t *txn) error { _, err := t.write(&w); return err }); err != nil {
		t.Fatal(err)
	}
	spans, err := s.Chunks(ctx, Ref{Drive: "notes", Path: "/a.md"})
	if err != nil || len(spans) != 1 || !bytes.Equal(spans[0].Hash[:], wholeChunker{}.Chunk(content, ChunkDoc{})[0].Hash[:]) {
		t.Fatalf("chunks = %+v, %v; want the whole content as one chunk", spans, err)
	}
}
