package vfs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStore_PruneHistory_RepacksAsDeltas: content archived whole (edits at
// both ends leave no long common prefix or suffix) becomes zstd deltas
// against an older revision when PruneHistory runs, and reads back exactly.
func TestStore_PruneHistory_RepacksAsDeltas(t *testing.T) {
	s := mustOpenStore(t)
	ref := mustRef(t, "notes:/ends.md")
	lines := tenKBLines()
	var contents []string
	for i := range 12 {
		lines[0], lines[len(lines)-1] = fmt.Sprintf("first line, version %d\n", i), fmt.Sprintf("last line, version %d\n", i)
		body := strings.Join(lines, "")
		contents = append(contents, body)
		if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(body), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
	}
	if k := blobKinds(t, s); k[blobZstd] != len(contents)-1 {
		t.Fatalf("blobs before repacking = %v, want %d stored whole", k, len(contents)-1)
	}
	if n, err := s.PruneHistory(ctx); err != nil || n != 0 {
		t.Fatalf("PruneHistory = %d, %v", n, err)
	}
	if k := blobKinds(t, s); k[blobDelta] < len(contents)/2 {
		t.Errorf("blobs after repacking = %v, want most as deltas", k)
	}
	for i, want := range contents {
		if _, got := mustRevContent(t, s, ref, int64(i+1)); got != want {
			t.Fatalf("revision %d differs from what was written", i+1)
		}
	}
}

// TestStore_PruneHistory: pruning keeps each item's newest Keep revisions
// and every revision younger than MinAge, frees content only pruned
// revisions referenced, and works in bounded transactions.
func TestStore_PruneHistory(t *testing.T) {
	s := mustOpenStore(t, Options{History: Retention{Keep: 3, MinAge: time.Hour}})
	clock := time.Now()
	s.now = func() time.Time { return clock }
	ref := mustRef(t, "notes:/p.md")
	version := func(i int) string { return fmt.Sprintf("%d %s", i, strings.Repeat(string(rune('a'+i)), 20)) } // nothing in common
	for i := range 10 {
		if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(version(i)), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, s, "notes:/other.md", "one revision")
	if n, err := s.PruneHistory(ctx); err != nil || n != 0 {
		t.Fatalf("PruneHistory of young revisions = %d, %v; want 0", n, err)
	}
	before := blobKinds(t, s)[blobZstd] + blobKinds(t, s)[blobDelta]
	clock = clock.Add(2 * time.Hour)
	if n, err := s.PruneHistory(ctx); err != nil || n != 7 {
		t.Fatalf("PruneHistory = %d, %v; want 7", n, err)
	}
	revs := mustHistory(t, s, ref)
	if len(revs) != 3 || revs[2].Rev != 8 {
		t.Errorf("History after pruning = %q, want revisions 10, 9, 8", summaries(revs))
	}
	if _, got := mustRevContent(t, s, ref, 8); got != version(7) {
		t.Errorf("revision 8 = %q", got)
	}
	_, _, err := s.ReadRevision(ctx, ref, 2)
	if e := wantErr(t, err, ErrNotFound); !strings.Contains(e.Message, "pruned") || !strings.Contains(e.Hint, "history_keep") {
		t.Errorf("reading a pruned revision: %q / %q; want it to say pruned and name the setting", e.Message, e.Hint)
	}
	if after := blobKinds(t, s)[blobZstd] + blobKinds(t, s)[blobDelta]; after >= before {
		t.Errorf("stored contents %d before pruning, %d after; want fewer", before, after)
	}
	if len(mustHistory(t, s, mustRef(t, "notes:/other.md"))) != 1 {
		t.Error("pruning removed an item's only revision")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.PruneHistory(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("PruneHistory with a cancelled context: %v", err)
	}
}

// TestStore_PruneHistory_DeletedExpire: a deleted item stays restorable for
// MinAge after its delete, then its whole history goes; a restored one keeps it.
func TestStore_PruneHistory_DeletedExpire(t *testing.T) {
	s := mustOpenStore(t, Options{History: Retention{Keep: 3, MinAge: time.Hour}})
	clock := time.Now()
	s.now = func() time.Time { return clock }
	for _, ref := range []string{"notes:/gone.md", "notes:/back.md"} {
		mustWrite(t, s, ref, "first "+ref)
		if _, err := s.Delete(ctx, mustRef(t, ref), false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Revert(ctx, mustRef(t, "notes:/back.md"), 1); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(30 * time.Minute)
	if n, err := s.PruneHistory(ctx); err != nil || n != 0 {
		t.Fatalf("PruneHistory within MinAge of the delete = %d, %v; want 0", n, err)
	}
	if d, err := s.Deleted(ctx, Ref{}, 0); err != nil || len(d) != 1 {
		t.Fatalf("Deleted = %+v, %v; want notes:/gone.md", d, err)
	}
	clock = clock.Add(time.Hour)
	if n, err := s.PruneHistory(ctx); err != nil || n != 2 {
		t.Fatalf("PruneHistory after MinAge = %d, %v; want the deleted item's 2 revisions", n, err)
	}
	if d, err := s.Deleted(ctx, Ref{}, 0); err != nil || len(d) != 0 {
		t.Errorf("Deleted after expiry = %+v, %v; want none", d, err)
	}
	if revs := mustHistory(t, s, mustRef(t, "notes:/back.md")); len(revs) != 3 {
		t.Errorf("restored item's history = %q, want its 3 revisions kept", summaries(revs))
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify after expiry: %v", err)
	}
}

// TestStore_PruneHistory_ManyBatches: more prunable revisions than one
// transaction examines are all pruned.
func TestStore_PruneHistory_ManyBatches(t *testing.T) {
	s := mustOpenStore(t, Options{History: Retention{Keep: 1, MinAge: time.Minute}})
	clock := time.Now()
	s.now = func() time.Time { return clock }
	const writers, each = 16, pruneBatch/16 + 20
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				_, err := s.Write(ctx, WriteParams{Ref: Ref{Drive: "notes", Path: fmt.Sprintf("/w%d.md", w)}, Content: []byte(fmt.Sprint(i)), IsText: true, OnConflict: ConflictOverwrite})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	n, err := s.PruneHistory(ctx)
	if want := writers * (each - 1); err != nil || n != want {
		t.Fatalf("PruneHistory = %d, %v; want %d", n, err, want)
	}
	if logged, _, err := s.Log(ctx, LogQuery{Limit: MaxHistoryLimit}); err != nil || len(logged) != writers {
		t.Errorf("Log after pruning = %d revisions, %v; want %d", len(logged), err, writers)
	}
}

// TestStore_PruneHistory_TrimChains: one-line edits are archived as trim
// deltas, each against the content before, which their bases do not count;
// pruning keeps the bases the kept revisions need and frees the rest, and
// once the item's whole history expires nothing of it is left.
func TestStore_PruneHistory_TrimChains(t *testing.T) {
	s := mustOpenStore(t, Options{History: Retention{Keep: 3, MinAge: time.Hour}})
	clock := time.Now()
	s.now = func() time.Time { return clock }
	ref := mustRef(t, "notes:/edited.md")
	lines := tenKBLines()
	var contents []string
	for i := range 10 {
		lines[i*7] = fmt.Sprintf("line changed in version %d\n", i)
		contents = append(contents, strings.Join(lines, ""))
		if _, err := s.Write(ctx, WriteParams{Ref: ref, Content: []byte(contents[i]), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
	}
	if k := blobKinds(t, s); k[blobTrim] != 8 {
		t.Fatalf("archived = %v, want 8 trim deltas", k)
	}
	clock = clock.Add(2 * time.Hour)
	if n, err := s.PruneHistory(ctx); err != nil || n != 7 {
		t.Fatalf("PruneHistory = %d, %v; want 7", n, err)
	}
	for rev := int64(8); rev <= 10; rev++ {
		if _, got := mustRevContent(t, s, ref, rev); got != contents[rev-1] {
			t.Errorf("revision %d differs from what was written", rev)
		}
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify after pruning: %v", err)
	}
	if _, err := s.Delete(ctx, ref, false); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(2 * time.Hour)
	if n, err := s.PruneHistory(ctx); err != nil || n != 4 {
		t.Fatalf("PruneHistory after the delete expired = %d, %v; want 4", n, err)
	}
	if k := blobKinds(t, s); len(k) != 0 {
		t.Errorf("archived after the whole history expired = %v, want nothing", k)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify after expiry: %v", err)
	}
}
