package vfs

import (
	"testing"
)

// TestStore_History_MetadataKeptWithoutDecodingRecord: a write learns from
// the item's latest revision whether the metadata of the record it replaces
// must be kept (metaSettled), also after the record changed without a
// revision (SetSource); every revision keeps its own metadata either way.
// A metaSettled that always settled fails here: revisions 1 and 2 would
// read the record's metadata.
func TestStore_History_MetadataKeptWithoutDecodingRecord(t *testing.T) {
	s := mustOpenStore(t)
	ref := mustRef(t, "notes:/m.md")
	write := func(content, title string) Item {
		t.Helper()
		res, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(content), IsText: true, Title: title, OnConflict: ConflictOverwrite})
		if err != nil {
			t.Fatal(err)
		}
		return res.Item
	}
	write("one\n", "first")         // rev 1: its snapshot is the record's
	write("two\n", "first")         // rev 2: the same snapshot, nothing to keep
	cur := write("two\n", "second") // rev 3: revs 1 and 2's snapshot is kept now
	it, err := s.SetSource(ctx, ref, "https://example.com/m", Origin{ETag: "x"}, cur.ContentHash)
	if err != nil {
		t.Fatal(err)
	}
	if it.SourceURL != "https://example.com/m" {
		t.Fatalf("SetSource = %+v", it)
	}
	write("three\n", "third") // rev 4: the record SetSource wrote belongs to no revision
	write("three\n", "third") // rev 5: the same snapshot as rev 4
	write("four\n", "fourth") // rev 6: revs 4 and 5's snapshot is kept now
	revs, err := s.History(ctx, ref, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A write replaces the source SetSource set (the write names none).
	want := []struct{ title, source string }{
		{"fourth", ""}, {"third", ""}, {"third", ""}, {"second", ""}, {"first", ""}, {"first", ""},
	}
	if len(revs) != len(want) {
		t.Fatalf("History = %q, want %d revisions", summaries(revs), len(want))
	}
	for i, w := range want {
		if got := revs[i].Item; got.Title != w.title || got.SourceURL != w.source {
			t.Errorf("revision %d: title %q source %q, want %q %q", revs[i].Rev, got.Title, got.SourceURL, w.title, w.source)
		}
	}
	if err := s.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}
