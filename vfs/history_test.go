package vfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ctxd/ctxd/vfs/backend"
)

// revSummary renders a revision as "rev op actor ref deleted?" for comparisons.
func revSummary(r Revision) string {
	s := fmt.Sprintf("%d %s %s %s", r.Rev, r.Op, r.Actor, r.Ref)
	if r.Deleted {
		s += " deleted"
	}
	return s
}

func mustHistory(t testing.TB, s *Store, ref Ref) []Revision {
	t.Helper()
	revs, err := s.History(ctx, ref, 0, 0)
	if err != nil {
		t.Fatalf("History(%s): %v", ref, err)
	}
	return revs
}

func summaries(revs []Revision) []string {
	out := make([]string, len(revs))
	for i, r := range revs {
		out[i] = revSummary(r)
	}
	return out
}

// mustRevContent reads revision rev of ref and checks its hash and size.
func mustRevContent(t testing.TB, s *Store, ref Ref, rev int64) (Revision, string) {
	t.Helper()
	r, content, err := s.ReadRevision(ctx, ref, rev)
	if err != nil {
		t.Fatalf("ReadRevision(%s, %d): %v", ref, rev, err)
	}
	if r.Rev != rev || HashContent(content) != r.Hash || int64(len(content)) != r.Size {
		t.Fatalf("ReadRevision(%s, %d) = rev %d hash %s size %d for %d bytes hashing %s", ref, rev, r.Rev, r.Hash, r.Size, len(content), HashContent(content))
	}
	return r, string(content)
}

// blobKinds counts the archived contents of each kind, an item's entry
// of a shared blob as blobZstd.
func blobKinds(t testing.TB, s *Store) map[byte]int {
	t.Helper()
	kinds := map[byte]int{}
	forEachEntry(t, s, func(e entry, _ []byte) {
		if e.kind == blobShared {
			e.kind = blobZstd
		}
		kinds[e.kind]++
	})
	return kinds
}

// archivedBytes is the bytes archived content takes: the entries' values
// and the shared blobs.
func archivedBytes(t testing.TB, s *Store) (n int) {
	t.Helper()
	forEachEntry(t, s, func(_ entry, v []byte) { n += len(v) })
	err := s.db.View(ctx, func(tx backend.Tx) error {
		return tx.Bucket([]byte(bucketBlobs)).ForEach(func(k, v []byte) error {
			if k[32] == 0 {
				n += len(v)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// forEachEntry calls fn with every archive entry and its value.
func forEachEntry(t testing.TB, s *Store, fn func(e entry, v []byte)) {
	t.Helper()
	err := s.db.View(ctx, func(tx backend.Tx) error {
		tn := s.newTxn(tx)
		return tn.revs.ForEach(func(k, v []byte) error {
			if !isEntryKey(k) {
				return nil
			}
			e, err := decodeEntry(k, v)
			if err != nil {
				return err
			}
			fn(e, v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStore_History_EveryMutation: each kind of change records one revision
// with its operation, actor, ref and content, in the change's transaction.
func TestStore_History_EveryMutation(t *testing.T) {
	s := mustOpenStore(t)
	alice := WithActor(ctx, Actor{Name: "alice"})
	a := mustRef(t, "notes:/a.md")
	write := func(c context.Context, ref, content string) {
		t.Helper()
		if _, err := s.Write(c, WriteParams{Ref: mustRef(t, ref), Content: []byte(content), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
	}
	write(ctx, "notes:/a.md", "one\n")
	write(alice, "notes:/a.md", "two\n")
	if _, err := s.Edit(alice, a, []Patch{{StartLine: 1, EndLine: 1, Content: "three"}}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Move(ctx, a, mustRef(t, "notes:/b.md"), ConflictError); err != nil {
		t.Fatal(err)
	}
	write(ctx, "notes:/c.md", "cee\n")
	if _, err := s.Copy(alice, mustRef(t, "notes:/b.md"), mustRef(t, "notes:/c.md"), false, ConflictOverwrite); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Copy(ctx, mustRef(t, "notes:/b.md"), mustRef(t, "notes:/d.md"), false, ConflictError); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, s, "notes:/dir")
	refresh := WithActor(ctx, Actor{Name: "bob", Op: OpRefresh})
	write(refresh, "notes:/b.md", "four\n")
	if _, err := s.Delete(alice, mustRef(t, "notes:/b.md"), false); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		ref      string
		want     []string
		contents []string // oldest first
	}{
		{"notes:/b.md", []string{
			"6 delete alice notes:/b.md deleted",
			"5 refresh bob notes:/b.md",
			"4 move owner notes:/b.md",
			"3 edit alice notes:/a.md",
			"2 write alice notes:/a.md",
			"1 write owner notes:/a.md",
		}, []string{"one\n", "two\n", "three\n", "three\n", "four\n", "four\n"}},
		{"notes:/c.md", []string{"2 copy alice notes:/c.md", "1 write owner notes:/c.md"}, []string{"cee\n", "three\n"}},
		{"notes:/d.md", []string{"1 copy owner notes:/d.md"}, []string{"three\n"}},
		{"notes:/dir", []string{"1 make_dir owner notes:/dir"}, []string{""}},
	} {
		ref := mustRef(t, c.ref)
		revs := mustHistory(t, s, ref)
		if got := summaries(revs); !slices.Equal(got, c.want) {
			t.Errorf("History(%s) =\n%s\nwant\n%s", c.ref, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			continue
		}
		for i, want := range c.contents {
			r, got := mustRevContent(t, s, ref, int64(i+1))
			if got != want {
				t.Errorf("%s revision %d = %q, want %q", c.ref, i+1, got, want)
			}
			if r.ItemID != revs[0].ItemID || r.Item.ID != r.ItemID || r.Item.Ref() != r.Ref {
				t.Errorf("%s revision %d: item %s at %s, want %s", c.ref, i+1, r.Item.ID, r.Item.Ref(), revs[0].ItemID)
			}
		}
	}
	// A failed change records nothing.
	if _, err := s.Edit(ctx, mustRef(t, "notes:/c.md"), []Patch{{StartLine: 9, EndLine: 9, Content: "x"}}, ""); err == nil {
		t.Fatal("edit of a missing line succeeded")
	}
	if n := len(mustHistory(t, s, mustRef(t, "notes:/c.md"))); n != 2 {
		t.Errorf("%d revisions of notes:/c.md after a failed edit, want 2", n)
	}
}

// TestStore_History_RecursiveDeleteAndMoveOverwrite: every item a recursive
// delete removes, and an item a move overwrites, is recorded as deleted.
func TestStore_History_RecursiveDeleteAndMoveOverwrite(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "notes:/d/x.md", "x")
	mustWrite(t, s, "notes:/d/y.md", "y")
	mustWrite(t, s, "notes:/z.md", "z")
	if _, err := s.Move(ctx, mustRef(t, "notes:/z.md"), mustRef(t, "notes:/d/y.md"), ConflictOverwrite); err != nil {
		t.Fatal(err)
	}
	del, err := s.Deleted(ctx, mustRef(t, "notes:/"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summaries(del), []string{"2 move owner notes:/d/y.md deleted"}; !slices.Equal(got, want) {
		t.Fatalf("Deleted after a move overwrite = %q, want %q", got, want)
	}
	if _, err := s.Delete(ctx, mustRef(t, "notes:/d"), true); err != nil {
		t.Fatal(err)
	}
	del, err = s.Deleted(ctx, mustRef(t, "notes:/d"), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2 delete owner notes:/d/x.md deleted", "2 move owner notes:/d/y.md deleted", "3 delete owner notes:/d/y.md deleted"}
	if got := summaries(del); !slices.Equal(got, want) {
		t.Fatalf("Deleted(notes:/d) = %q, want %q", got, want)
	}
	// The path names the item deleted there last: z.md, moved onto y.md.
	if revs := mustHistory(t, s, mustRef(t, "notes:/d/y.md")); revs[0].Rev != 3 || revs[len(revs)-1].Ref != "notes:/z.md" {
		t.Errorf("History(notes:/d/y.md) = %q, want z.md's", summaries(revs))
	}
	if del, err := s.Deleted(ctx, mustRef(t, "notes:/d/x.md"), 0); err != nil || len(del) != 1 {
		t.Errorf("Deleted(notes:/d/x.md) = %q, %v; want the item itself", summaries(del), err)
	}
	if del, err := s.Deleted(ctx, Ref{}, 1); err != nil || len(del) != 1 {
		t.Errorf("Deleted(everywhere, limit 1) = %d, %v; want 1", len(del), err)
	}
}

// TestStore_Revert: reverting makes a new revision with the old content and
// metadata; the history before it stays.
func TestStore_Revert(t *testing.T) {
	s := mustOpenStore(t)
	ref := mustRef(t, "notes:/r.md")
	if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte("first\n"), IsText: true, Tags: []string{"old"}, Importance: 0.3}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte("second\n"), IsText: true, Tags: []string{"new"}, OnConflict: ConflictOverwrite}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Move(ctx, ref, mustRef(t, "notes:/moved.md"), ConflictError); err != nil {
		t.Fatal(err)
	}
	moved := mustRef(t, "notes:/moved.md")
	res, err := s.Revert(WithActor(ctx, Actor{Name: "alice"}), moved, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || res.Item.Ref() != "notes:/moved.md" || !slices.Equal(res.Item.Tags, []string{"old"}) || res.Item.Importance != 0.3 || res.Item.Title != "moved.md" {
		t.Errorf("Revert result = %+v; want old tags and importance at the current path", res.Item)
	}
	if got := mustRead(t, s, "notes:/moved.md"); got != "first\n" {
		t.Errorf("content after revert = %q", got)
	}
	revs := mustHistory(t, s, moved)
	if got := revSummary(revs[0]); got != "4 revert alice notes:/moved.md" || len(revs) != 4 {
		t.Errorf("History after revert = %q", summaries(revs))
	}
	if _, got := mustRevContent(t, s, moved, 2); got != "second\n" {
		t.Errorf("revision 2 after revert = %q", got)
	}
}

// TestStore_Revert_RestoresDeleted: a deleted item stays listable, its
// history readable by path and id, and revert restores it where it was
// deleted, with its id and metadata, unless the path is taken.
func TestStore_Revert_RestoresDeleted(t *testing.T) {
	s := mustOpenStore(t)
	ref := mustRef(t, "notes:/gone.md")
	w, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte("keep me\n"), IsText: true, Tags: []string{"t1"}, Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, ref, false); err != nil {
		t.Fatal(err)
	}
	del, err := s.Deleted(ctx, mustRef(t, "notes:/"), 0)
	if err != nil || len(del) != 1 || del[0].ItemID != w.Item.ID || !del[0].Deleted || del[0].Item.Description != "d" {
		t.Fatalf("Deleted = %+v, %v; want the deleted item", del, err)
	}
	for _, r := range []Ref{ref, {ID: w.Item.ID}} {
		if _, got := mustRevContent(t, s, r, 2); got != "keep me\n" {
			t.Errorf("ReadRevision(%s, 2) = %q", r, got)
		}
	}

	// The path is taken: restoring would replace another item.
	mustWrite(t, s, "notes:/gone.md", "squatter")
	_, err = s.Revert(ctx, Ref{ID: w.Item.ID}, 1)
	wantErr(t, err, ErrConflict)
	if _, err := s.Delete(ctx, ref, false); err != nil {
		t.Fatal(err)
	}
	// Two items were deleted at the path; it names the one deleted last.
	if revs := mustHistory(t, s, ref); revs[0].ItemID == w.Item.ID {
		t.Errorf("History(%s) names the item deleted first", ref)
	}

	res, err := s.Revert(ctx, Ref{ID: w.Item.ID}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || res.Item.ID != w.Item.ID || !slices.Equal(res.Item.Tags, []string{"t1"}) || !res.Item.CreatedAt.Equal(w.Item.CreatedAt) {
		t.Errorf("restored = %+v, want id %s with its tags and creation time", res.Item, w.Item.ID)
	}
	if got := mustRead(t, s, "notes:/gone.md"); got != "keep me\n" {
		t.Errorf("restored content = %q", got)
	}
	del, err = s.Deleted(ctx, mustRef(t, "notes:/"), 0)
	if err != nil || len(del) != 1 || del[0].ItemID == w.Item.ID {
		t.Errorf("Deleted after restore = %q, %v; want only the squatter", summaries(del), err)
	}
	if got := summaries(mustHistory(t, s, ref)); got[0] != "3 revert owner notes:/gone.md" || len(got) != 3 {
		t.Errorf("History after restore = %q", got)
	}
}

// TestStore_History_ContentStoredOnce: content is stored once whatever the
// revisions and items that have it, and the current content is not copied
// into history until it is replaced.
func TestStore_History_ContentStoredOnce(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "notes:/a.md", "alpha\n")
	if k := blobKinds(t, s); len(k) != 0 {
		t.Fatalf("blobs after one write = %v, want none: the current content is not copied", k)
	}
	for i := range 6 { // alpha, beta, alpha, ...
		body := []string{"beta\n", "alpha\n"}[i%2]
		if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "notes:/a.md"), Content: []byte(body), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		if _, err := s.Copy(ctx, mustRef(t, "notes:/a.md"), mustRef(t, fmt.Sprintf("notes:/copy%d.md", i)), false, ConflictError); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Move(ctx, mustRef(t, fmt.Sprintf("notes:/copy%d.md", i)), mustRef(t, fmt.Sprintf("notes:/moved%d.md", i)), ConflictError); err != nil {
			t.Fatal(err)
		}
	}
	// alpha and beta, each stored once; alpha also as the current content.
	if k := blobKinds(t, s); k[blobZstd]+k[blobDelta] != 2 {
		t.Errorf("blobs = %v, want two stored contents", k)
	}
	if _, got := mustRevContent(t, s, mustRef(t, "notes:/a.md"), 2); got != "beta\n" {
		t.Errorf("revision 2 = %q", got)
	}
}

// TestStore_History_ArchiveLayout: archived content lives under its item's
// prefix, except large content stored whole, which is shared by every item
// that had it; pruning an item's history drops both.
func TestStore_History_ArchiveLayout(t *testing.T) {
	s := mustOpenStore(t, Options{History: Retention{Keep: 1}})
	big := strings.Join(tenKBLines(), "")
	for _, ref := range []string{"notes:/a.md", "notes:/b.md"} {
		mustWrite(t, s, ref, big)
		if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, ref), Content: []byte("small\n"), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, ref), Content: []byte("smaller\n"), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
	}
	shared, blobs := 0, 0
	forEachEntry(t, s, func(e entry, _ []byte) {
		if e.kind == blobShared {
			shared++
		}
	})
	err := s.db.View(ctx, func(tx backend.Tx) error {
		return tx.Bucket([]byte(bucketBlobs)).ForEach(func(k, _ []byte) error {
			if k[32] == 0 {
				blobs++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if k := blobKinds(t, s); shared != 2 || blobs != 1 || k[blobZstd] != 4 {
		t.Errorf("%d shared entries of %d blobs, kinds %v; want both items' 10 KB content as one shared blob, \"small\" per item", shared, blobs, k)
	}
	for _, ref := range []string{"notes:/a.md", "notes:/b.md"} {
		if _, got := mustRevContent(t, s, mustRef(t, ref), 1); got != big {
			t.Errorf("%s revision 1 differs from what was written", ref)
		}
	}
	if err := s.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneHistory(ctx); err != nil || n != 4 {
		t.Fatalf("PruneHistory = %d, %v; want 4", n, err)
	}
	if k := blobKinds(t, s); len(k) != 0 {
		t.Errorf("archived after pruning all but the current revisions = %v", k)
	}
	if err := s.db.View(ctx, func(tx backend.Tx) error {
		if k, _ := tx.Bucket([]byte(bucketBlobs)).Cursor().First(); k != nil {
			return fmt.Errorf("blob %x left after pruning", k)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	if err := s.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStore_History_OneLineEdits: revisions of many one-line edits of a
// 10 KB item are stored as small deltas as they are written, and each reads
// back exactly.
func TestStore_History_OneLineEdits(t *testing.T) {
	s := mustOpenStore(t)
	ref := mustRef(t, "notes:/big.md")
	lines := tenKBLines()
	var contents []string
	write := func() {
		body := strings.Join(lines, "")
		contents = append(contents, body)
		if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(body), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
	}
	write()
	for i := range 40 {
		lines[(i*37)%len(lines)] = fmt.Sprintf("edited line %d\n", i)
		write()
	}
	readAll := func() {
		t.Helper()
		for i, want := range contents {
			if _, got := mustRevContent(t, s, ref, int64(i+1)); got != want {
				t.Fatalf("revision %d differs from what was written", i+1)
			}
		}
	}
	readAll()
	stored, raw := archivedBytes(t, s), 0
	for _, c := range contents[:len(contents)-1] {
		raw += len(c)
	}
	if k := blobKinds(t, s); k[blobTrim] == 0 || stored*20 > raw {
		t.Errorf("%d bytes stored for %d bytes of superseded content (%v); want deltas, under 5%%", stored, raw, k)
	}
}

// tenKBLines returns about 10 KB of text lines of seeded random words,
// which compress about as well as prose.
func tenKBLines() []string {
	words := strings.Fields("the agent keeps what it learns about each task here so that later runs can use it " +
		"memory context store revision history item write edit delete move copy budget search index vector chunk")
	r := rand.New(rand.NewPCG(1, 2))
	var lines []string
	for n := 0; n < 10<<10; {
		var b strings.Builder
		for range 12 {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
		lines = append(lines, b.String())
		n += b.Len()
	}
	return lines
}

// TestStore_History_ItemFromBeforeHistory: an item written before the store
// kept history (here: while history was off) gets its state recorded as a
// baseline revision by its first change, which keeps its content.
func TestStore_History_ItemFromBeforeHistory(t *testing.T) {
	path := newLocation(t)
	s, err := Open(path, Options{HistoryOff: true})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, "notes:/old.md", "from before\n")
	if revs := mustHistory(t, s, mustRef(t, "notes:/old.md")); len(revs) != 1 || revs[0].Op != OpBaseline {
		t.Errorf("History of an unrecorded item = %q, want its baseline", summaries(revs))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Edit(ctx, mustRef(t, "notes:/old.md"), []Patch{{StartLine: 1, EndLine: 1, Content: "after"}}, ""); err != nil {
		t.Fatal(err)
	}
	if got := summaries(mustHistory(t, s, mustRef(t, "notes:/old.md"))); !slices.Equal(got, []string{"2 edit owner notes:/old.md", "1 baseline  notes:/old.md"}) {
		t.Errorf("History = %q", got)
	}
	if _, got := mustRevContent(t, s, mustRef(t, "notes:/old.md"), 1); got != "from before\n" {
		t.Errorf("baseline content = %q", got)
	}
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
}

// TestStore_History_OffThenOn: changes made while history is off are not
// recorded, content they replace stays readable, and the next open with
// history on records the current state so that Verify holds.
func TestStore_History_OffThenOn(t *testing.T) {
	path := newLocation(t)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, "notes:/a.md", "v1\n")
	s.Close()
	if s, err = Open(path, Options{HistoryOff: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "notes:/a.md"), Content: []byte("v2\n"), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
		t.Fatal(err)
	}
	if err := s.check(); err != nil {
		t.Fatalf("check with history off: %v", err)
	}
	s.Close()
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.check(); err != nil {
		t.Fatalf("check after history came back on: %v", err)
	}
	ref := mustRef(t, "notes:/a.md")
	if got := summaries(mustHistory(t, s, ref)); !slices.Equal(got, []string{"2 baseline  notes:/a.md", "1 write owner notes:/a.md"}) {
		t.Errorf("History = %q", got)
	}
	if _, got := mustRevContent(t, s, ref, 1); got != "v1\n" {
		t.Errorf("revision 1 = %q", got)
	}
}

// TestStore_Log: the audit log lists changes across the store newest first,
// filtered by actor and time, in pages.
func TestStore_Log(t *testing.T) {
	s := mustOpenStore(t)
	start := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	clock := start
	s.now = func() time.Time { return clock }
	agent := WithActor(ctx, Actor{Name: "agent-1", Agent: true})
	for i := range 6 {
		c := ctx
		if i%2 == 1 {
			c = agent
		}
		if _, err := s.Write(c, WriteParams{Ref: Ref{Drive: "notes", Path: fmt.Sprintf("/n%d.md", i)}, Content: []byte("x"), IsText: true}); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Hour)
	}
	all, next, err := s.Log(ctx, LogQuery{})
	if err != nil || next != "" || len(all) != 6 || all[0].Ref != "notes:/n5.md" || all[5].Ref != "notes:/n0.md" {
		t.Fatalf("Log = %q, %q, %v", summaries(all), next, err)
	}
	mine, _, err := s.Log(ctx, LogQuery{Actor: "agent-1", Since: start.Add(2 * time.Hour)})
	if got, want := summaries(mine), []string{"1 write agent-1 notes:/n5.md", "1 write agent-1 notes:/n3.md"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Log(agent-1, since 10:00) = %q, %v; want %q", got, err, want)
	}
	var paged []string
	token := ""
	for pages := 0; ; pages++ {
		page, next, err := s.Log(ctx, LogQuery{Limit: 2, PageToken: token})
		if err != nil || pages > 3 {
			t.Fatalf("page %d: %v", pages, err)
		}
		paged = append(paged, summaries(page)...)
		if token = next; token == "" {
			break
		}
	}
	if !slices.Equal(paged, summaries(all)) {
		t.Errorf("paged Log = %q, want %q", paged, summaries(all))
	}
	_, _, err = s.Log(ctx, LogQuery{PageToken: "not-a-token"})
	wantErr(t, err, ErrInvalid)
	_, _, err = s.Log(ctx, LogQuery{Limit: MaxHistoryLimit + 1})
	wantErr(t, err, ErrInvalid)
}

// TestStore_History_Errors: bad refs, revisions and limits fail precisely.
func TestStore_History_Errors(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "notes:/d/a.md", "a")
	ref := mustRef(t, "notes:/d/a.md")
	for name, c := range map[string]struct {
		err  error
		kind error
	}{
		"missing path": {func() error { _, err := s.History(ctx, mustRef(t, "notes:/nope.md"), 0, 0); return err }(), ErrNotFound},
		"directory":    {func() error { _, err := s.History(ctx, mustRef(t, "notes:/d"), 0, 0); return err }(), ErrIsDir},
		"limit":        {func() error { _, err := s.History(ctx, ref, MaxHistoryLimit+1, 0); return err }(), ErrInvalid},
		"negative":     {func() error { _, err := s.History(ctx, ref, -1, 0); return err }(), ErrInvalid},
		"rev 0":        {func() error { _, _, err := s.ReadRevision(ctx, ref, 0); return err }(), ErrInvalid},
		"future rev":   {func() error { _, _, err := s.ReadRevision(ctx, ref, 2); return err }(), ErrNotFound},
		"revert 5":     {func() error { _, err := s.Revert(ctx, ref, 5); return err }(), ErrNotFound},
		"deleted id":   {func() error { _, err := s.Deleted(ctx, Ref{ID: "0190a4c8-0000-7000-8000-000000000000"}, 0); return err }(), ErrInvalid},
		"unknown id": {func() error {
			_, err := s.History(ctx, Ref{ID: "0190a4c8-0000-7000-8000-000000000000"}, 0, 0)
			return err
		}(), ErrNotFound},
	} {
		t.Run(name, func(t *testing.T) { wantErr(t, c.err, c.kind) })
	}
}

// TestStore_History_AppendsInTimeOrder: recording a change appends to the
// end of the history and rewrites no revision record or archived content
// recorded earlier, whatever the change (a rewrite, an edit, a move, a
// delete, a revert), so a transaction's history lands beside the rest of
// its own.
func TestStore_History_AppendsInTimeOrder(t *testing.T) {
	s := mustOpenStore(t)
	clock := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	s.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	for i := range 3 {
		for v := range 2 {
			ref := mustRef(t, fmt.Sprintf("notes:/n%d.md", i))
			content := strings.Repeat(fmt.Sprintf("item %d version %d\n", i, v), 40)
			if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(content), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
				t.Fatal(err)
			}
		}
	}
	snapshot := func() map[string]string {
		out := map[string]string{}
		err := s.db.View(ctx, func(tx backend.Tx) error {
			return s.newTxn(tx).revs.ForEach(func(k, v []byte) error {
				out[string(k)] = string(v)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	changes := map[string]func() error{
		"rewrite": func() error {
			_, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "notes:/n0.md"), Content: []byte("rewritten\n"), IsText: true, OnConflict: ConflictOverwrite})
			return err
		},
		"edit": func() error {
			_, err := s.Edit(ctx, mustRef(t, "notes:/n1.md"), []Patch{{StartLine: 2, EndLine: 2, Content: "edited"}}, "")
			return err
		},
		"move": func() error {
			_, err := s.Move(ctx, mustRef(t, "notes:/n2.md"), mustRef(t, "notes:/m2.md"), ConflictError)
			return err
		},
		"delete": func() error { _, err := s.Delete(ctx, mustRef(t, "notes:/n1.md"), false); return err },
		"revert": func() error { _, err := s.Revert(ctx, mustRef(t, "notes:/n0.md"), 1); return err },
	}
	for _, name := range []string{"rewrite", "edit", "move", "delete", "revert"} {
		before := snapshot()
		last := ""
		for k := range before {
			if isRevKey([]byte(k)) {
				last = max(last, k)
			}
		}
		if err := changes[name](); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		added := 0
		for k, v := range snapshot() {
			old, had := before[k]
			switch {
			case !had && !isMetaKey([]byte(k)) && k <= last:
				t.Errorf("%s: added key %x before the end of the history", name, k)
			case !had:
				added++
			case !isMetaKey([]byte(k)) && old != v:
				t.Errorf("%s: rewrote %x, recorded earlier", name, k)
			}
		}
		if added == 0 {
			t.Errorf("%s: recorded nothing", name)
		}
	}
	if err := s.Verify(ctx); err != nil {
		t.Error(err)
	}
}

// TestStore_History_Paging: History pages back with beforeRev.
func TestStore_History_Paging(t *testing.T) {
	s := mustOpenStore(t)
	ref := mustRef(t, "notes:/p.md")
	for i := range 5 {
		if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(fmt.Sprint(i)), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.History(ctx, ref, 2, 0)
	if err != nil || len(page) != 2 || page[1].Rev != 4 {
		t.Fatalf("first page = %q, %v", summaries(page), err)
	}
	page, err = s.History(ctx, ref, 2, page[1].Rev)
	if err != nil || len(page) != 2 || page[0].Rev != 3 || page[1].Rev != 2 {
		t.Errorf("second page = %q, %v", summaries(page), err)
	}
}

// readAheadSpy is a revisions bucket that records what revsDown reads
// ahead (backend.Prefetcher) and which revision records it reads without.
type readAheadSpy struct {
	spiedBucket
	ahead  map[string]bool
	calls  int
	missed []int64 // revisions read that were not read ahead
}

func (b *readAheadSpy) Prefetch(keys [][]byte) {
	b.calls++
	for _, k := range keys {
		b.ahead[string(k)] = true
	}
}

func (b *readAheadSpy) Get(k []byte) []byte {
	if isRevKey(k) && !b.ahead[string(k)] {
		b.missed = append(b.missed, posOfKey(k).rev)
	}
	return b.spiedBucket.Get(k)
}

// spiedBucket names the embedded bucket: embedded as backend.Bucket, the
// field would hide the interface's Bucket method.
type spiedBucket = backend.Bucket

// TestStore_History_WalkReadsAhead: a walk down an item's chain reads the
// records ahead from the times each record names, so that a backend of
// round trips makes one per backLinks+1 revisions, not one per revision;
// and a record appended after a revert or a delete names the right times.
func TestStore_History_WalkReadsAhead(t *testing.T) {
	s := mustOpenStore(t)
	ref := mustRef(t, "notes:/walk.md")
	const revs = 30
	var id string
	for i := range revs - 2 {
		res, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(fmt.Sprint(i)), IsText: true, OnConflict: ConflictOverwrite})
		if err != nil {
			t.Fatal(err)
		}
		id = res.Item.ID
	}
	if _, err := s.Revert(ctx, ref, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, ref, false); err != nil {
		t.Fatal(err)
	}
	u := uuid.MustParse(id)
	err := s.view(ctx, func(t *txn) error {
		spy := &readAheadSpy{spiedBucket: t.revs, ahead: map[string]bool{}}
		t.revs = spy
		var seen []int64
		if err := t.revsDown(u[:], func(r revLink) bool { seen = append(seen, r.rev); return true }); err != nil {
			return err
		}
		want := (revs - 1 + backLinks) / (backLinks + 1)
		if len(seen) != revs || seen[0] != revs || seen[revs-1] != 1 || spy.calls != want || !slices.Equal(spy.missed, []int64{revs}) {
			return fmt.Errorf("walked %v with %d reads ahead (want %d), reading %v not read ahead (want only the head)", seen, spy.calls, want, spy.missed)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if err := s.Verify(ctx); err != nil {
		t.Error(err)
	}
}

// TestStore_Verify_CatchesCorruptHistory: Verify reports history that does
// not agree with the items.
func TestStore_Verify_CatchesCorruptHistory(t *testing.T) {
	for name, corrupt := range map[string]func(t *txn) error{
		"blob bytes": func(t *txn) error {
			k, v := t.blobs.Cursor().First()
			bad := append([]byte(nil), v...)
			bad[len(bad)-1] ^= 0xff
			return t.blobs.Put(bytes.Clone(k), bad)
		},
		"reference count": func(t *txn) error {
			k, _ := t.blobs.Cursor().First()
			return t.addBlobRefs(bytes.Clone(k[:32]), 1)
		},
		"missing blob": func(t *txn) error {
			k, _ := t.blobs.Cursor().First()
			return t.blobs.Delete(bytes.Clone(k))
		},
		"pending revision among archived ones": func(t *txn) error {
			k, _ := lastKey(t.revs, isEntryKey) // a.md's
			r, err := revisionOf(t, k[8:24], 2)
			if err != nil || r.archived.rev == 0 {
				return fmt.Errorf("revision 2 of %x: %v, archived %d", k[8:24], err, r.archived.rev)
			}
			r.archived, r.entry = revPos{}, revPos{} // its entry as stored: none, the next one's
			return t.revs.Put(r.key(), r.encode())
		},
		"chain broken": func(t *txn) error {
			k, _ := lastKey(t.revs, isEntryKey) // a.md's
			r, err := revisionOf(t, k[8:24], 3)
			if err != nil {
				return err
			}
			r.prev++
			return t.revs.Put(r.key(), r.encode())
		},
		"back times": func(t *txn) error {
			k, _ := lastKey(t.revs, isEntryKey) // a.md's
			r, err := revisionOf(t, k[8:24], 3)
			if err != nil || r.back.n == 0 {
				return fmt.Errorf("revision 3 of %x: %v, %d back times", k[8:24], err, r.back.n)
			}
			r.back.t[0]--
			return t.revs.Put(r.key(), r.encode())
		},
		"head names an older revision": func(t *txn) error {
			k, _ := lastKey(t.revs, isEntryKey) // a.md's
			r, err := revisionOf(t, k[8:24], 2)
			if err != nil {
				return err
			}
			return t.items.Put(bytes.Clone(k[8:24]), withHead(recordJSON(t.items.Get(k[8:24])), r.pos()))
		},
		"metadata": func(t *txn) error {
			k, v := lastKey(t.revs, isMetaKey)
			bad := append([]byte(nil), v...)
			bad[len(bad)-2] ^= 0xff
			return t.revs.Put(k, bad)
		},
		"record changed behind its history": func(t *txn) error {
			k, _ := t.items.Cursor().First() // a.md: its metadata is its record's
			it, err := t.item(k)
			if err != nil {
				return err
			}
			it.Title = "changed without detachMeta"
			rec, err := json.Marshal(&it)
			if err != nil {
				return err
			}
			head, _ := recordHead(t.items.Get(k))
			return t.items.Put(bytes.Clone(k), withHead(rec, head))
		},
		"missing log entry": func(t *txn) error {
			k, _ := t.revActor.Cursor().Last()
			return t.revActor.Delete(k)
		},
		"latest revision gone": func(t *txn) error {
			k, _ := lastKey(t.revs, isRevKey)
			return t.revs.Delete(k)
		},
		"archived delta bytes": func(t *txn) error {
			k, v := lastKey(t.revs, isEntryKey)
			bad := append([]byte(nil), v...)
			bad[len(bad)-1] ^= 0xff
			return t.revs.Put(k, bad)
		},
		"archived reference count": func(t *txn) error {
			k, _ := lastKey(t.revs, isEntryKey)
			return t.addRefs(k[8:24], posOfKey(k), 1, 0, nil)
		},
		"revision names another entry": func(t *txn) error {
			k, _ := lastKey(t.revs, isEntryKey)
			r, err := revisionOf(t, k[8:24], 1)
			if err != nil {
				return err
			}
			r.entry = posOfKey(k)
			return t.revs.Put(r.key(), r.encode())
		},
		"leftover key": func(t *txn) error {
			k, _ := lastKey(t.revs, isEntryKey)
			return t.revs.Put(append(bytes.Clone(k[8:24]), 0xff, 'p'), binary.BigEndian.AppendUint64(nil, 1))
		},
		"archived content held by nothing": func(t *txn) error {
			k, v := lastKey(t.revs, isEntryKey) // a.md's trim delta
			e, err := decodeEntry(k, v)
			if err != nil {
				return err
			}
			p := posOfKey(k)
			e.key, e.refs = revPos{p.time + 1, p.rev}.entryKey(k[8:24]), 0
			return t.revs.Put(e.key, e.encode())
		},
		"missing archived entry": func(t *txn) error {
			k, _ := lastKey(t.revs, isEntryKey)
			return t.revs.Delete(k)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Open(newLocation(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			mustWrite(t, s, "notes:/a.md", strings.Join(tenKBLines(), ""))
			// The first content is archived whole and shared (blobs), the
			// second as a trim delta.
			for _, line := range []int64{3, 5} {
				if _, err := s.Edit(ctx, mustRef(t, "notes:/a.md"), []Patch{{StartLine: line, EndLine: line, Content: "changed"}}, ""); err != nil {
					t.Fatal(err)
				}
			}
			if k := blobKinds(t, s); k[blobZstd] != 1 || k[blobTrim] != 1 {
				t.Fatalf("archived = %v, want one whole and one trim delta", k)
			}
			// b.md's first title is stored once its record changes.
			for _, title := range []string{"first", "second"} {
				if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "notes:/b.md"), Content: []byte("b"), IsText: true, Title: title, OnConflict: ConflictOverwrite}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Verify(ctx); err != nil {
				t.Fatalf("Verify before corrupting: %v", err)
			}
			if err := s.db.Update(ctx, func(tx backend.Tx) error { return corrupt(s.newTxn(tx)) }); err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(ctx); err == nil || !strings.Contains(err.Error(), "history") {
				t.Errorf("Verify after corrupting the %s = %v, want a history error", name, err)
			}
		})
	}
}

// revisionOf returns revision rev of item id, found down its chain.
func revisionOf(t *txn, id []byte, rev int64) (revRec, error) {
	r, err := t.revisionDown(id, rev)
	if err == nil && r == nil {
		err = fmt.Errorf("item %x has no revision %d", id, rev)
	}
	if err != nil {
		return revRec{}, err
	}
	return *r, nil
}

// lastKey returns (copies of) the last key of b that match reports true for, and its value.
func lastKey(b backend.Bucket, match func([]byte) bool) (k, v []byte) {
	c := b.Cursor()
	for k, v = c.Last(); k != nil && !match(k); k, v = c.Prev() {
	}
	return bytes.Clone(k), bytes.Clone(v)
}

// TestStore_HistoryOff: with history off nothing is recorded.
func TestStore_HistoryOff(t *testing.T) {
	s := mustOpenStore(t, Options{HistoryOff: true})
	mustWrite(t, s, "notes:/a.md", "a")
	if _, err := s.Delete(ctx, mustRef(t, "notes:/a.md"), false); err != nil {
		t.Fatal(err)
	}
	if logged, _, err := s.Log(ctx, LogQuery{}); err != nil || len(logged) != 0 {
		t.Errorf("Log with history off = %q, %v", summaries(logged), err)
	}
}

// TestCommonEnds checks the word-at-a-time prefix and suffix scan against a
// byte-at-a-time one on edits at every position.
func TestCommonEnds(t *testing.T) {
	naive := func(a, b []byte) (p, q int) {
		n := min(len(a), len(b))
		for p < n && a[p] == b[p] {
			p++
		}
		for q < n-p && a[len(a)-1-q] == b[len(b)-1-q] {
			q++
		}
		return p, q
	}
	base := []byte(strings.Repeat("abcdefghij", 5))
	for i := range len(base) + 1 {
		for _, b := range [][]byte{
			append(append(bytes.Clone(base[:i]), 'X'), base[i:]...),                       // insert
			append(bytes.Clone(base[:i]), base[min(i+3, len(base)):]...),                  // delete
			append(append(bytes.Clone(base[:i]), "YY"...), base[min(i+2, len(base)):]...), // replace
		} {
			gp, gq := commonEnds(base, b)
			wp, wq := naive(base, b)
			if gp != wp || gq != wq {
				t.Fatalf("commonEnds(base, %q) = %d, %d; want %d, %d", b, gp, gq, wp, wq)
			}
		}
	}
}

// TestStore_History_MetadataOfRecord: the snapshot of an item's current
// metadata is not copied into its history; every change of the record
// (a write, a write or delete with history off) stores the snapshot first,
// so older revisions keep the metadata they had.
func TestStore_History_MetadataOfRecord(t *testing.T) {
	for _, offThen := range []string{"write", "delete"} {
		t.Run(offThen, func(t *testing.T) {
			path := newLocation(t)
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ref, byID := mustRef(t, "notes:/a.md"), Ref{} // by id: found once deleted with history off
			write := func(title string) {
				t.Helper()
				res, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte("body\n"), IsText: true, Title: title, OnConflict: ConflictOverwrite})
				if err != nil {
					t.Fatal(err)
				}
				byID = Ref{ID: res.Item.ID}
			}
			copies := func() (n int) {
				t.Helper()
				err := s.db.View(ctx, func(tx backend.Tx) error {
					return s.newTxn(tx).revs.ForEach(func(k, v []byte) error {
						if len(k) == 26 && k[17] == 'm' {
							n++
						}
						return nil
					})
				})
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			titles := func(want ...string) {
				t.Helper()
				var got []string
				for _, r := range mustHistory(t, s, byID) {
					got = append(got, r.Item.Title)
				}
				if !slices.Equal(got, want) {
					t.Errorf("titles of the revisions, newest first = %q, want %q", got, want)
				}
			}
			write("A")
			if n := copies(); n != 0 {
				t.Errorf("a new item's history holds %d copies of its metadata, want 0", n)
			}
			write("B")
			titles("B", "A")
			if n := copies(); n != 1 {
				t.Errorf("after a change of title: %d copies of metadata, want 1 (A's)", n)
			}
			s.Close()

			if s, err = Open(path, Options{HistoryOff: true}); err != nil {
				t.Fatal(err)
			}
			if offThen == "write" {
				write("C")
			} else if _, err := s.Delete(ctx, ref, false); err != nil {
				t.Fatal(err)
			}
			titles("B", "A")
			if err := s.check(); err != nil {
				t.Fatalf("after a %s with history off: %v", offThen, err)
			}
			s.Close()

			if s, err = Open(path, Options{}); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Revert(ctx, byID, 1); err != nil {
				t.Fatal(err)
			}
			titles("A", "B", "A")
			if err := s.check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
