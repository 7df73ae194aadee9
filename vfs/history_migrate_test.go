package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/boltstore"
)

// The fixture testdata/history-v1.db is a bbolt store of schema version 1,
// written by the ctxd before history's revision records named their archive
// entries: one-line edits (trim deltas), rewrites (whole, some repacked as
// zstd deltas, some still queued), content that came back (A, B, A), tag
// changes (stored metadata snapshots), a move (a pending revision), large
// content shared by a copy, a deleted item, and one deleted and restored,
// after a PruneHistory with Keep 6. testdata/history-v1.golden is what
// historyListing printed of it with that ctxd. testdata/history-v3.db is
// the same store as the ctxd of schema version 3 (history kept by item)
// left it after opening it.

// openFixture copies the fixture name to a temp dir and returns its path.
func openFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ctxd.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// historyListing prints every revision Log returns, newest first, with the
// SHA-256 of the content ReadRevision returns for it.
func historyListing(s *Store) (string, error) {
	revs, _, err := s.Log(ctx, LogQuery{Limit: MaxHistoryLimit})
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for _, r := range revs {
		_, c, err := s.ReadRevision(ctx, Ref{ID: r.ItemID}, r.Rev)
		if err != nil {
			return "", fmt.Errorf("read revision %d of %s: %w", r.Rev, r.Ref, err)
		}
		fmt.Fprintf(&out, "%s %d %s %s %x %v %s\n", r.Ref, r.Rev, r.Op, r.Hash[:12], sha256.Sum256(c), r.Item.Tags, r.Item.Title)
	}
	return out.String(), nil
}

// checkMigrated opens the store at path, which must convert its history,
// and checks it verifies, lists what the earlier ctxd listed, and keeps
// recording and pruning.
func checkMigrated(t *testing.T, path string) {
	t.Helper()
	s, err := Open(path, Options{History: Retention{Keep: 6}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Verify(ctx); err != nil {
		t.Fatalf("Verify after conversion: %v", err)
	}
	got, err := historyListing(s)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "history-v1.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("history after conversion:\n%s\nwant (the earlier ctxd's):\n%s", got, want)
	}
	err = s.db.View(ctx, func(tx backend.Tx) error {
		meta := tx.Bucket([]byte(bucketMeta))
		if v := meta.Get([]byte(keySchema)); string(v) != strconv.Itoa(schemaVersion) || meta.Get([]byte(keyHistoryMigrate)) != nil {
			return fmt.Errorf("schema %q, migration mark %x after open", v, meta.Get([]byte(keyHistoryMigrate)))
		}
		for _, name := range []string{bucketRevLog, bucketRevsByItem} {
			if tx.Bucket([]byte(name)) != nil {
				return fmt.Errorf("the bucket %s is still there after open", name)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	// The converted history takes new revisions, reverts and prunes.
	for i := range 3 {
		if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "agent:/notes.md"), Content: []byte(fmt.Sprintf("after conversion %d\n", i)), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Revert(ctx, mustRef(t, "agent:/flip.md"), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Revert(ctx, mustRef(t, "agent:/gone.md"), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PruneHistory(ctx); err != nil {
		t.Fatal(err)
	}
	if _, c, err := s.ReadRevision(ctx, mustRef(t, "agent:/flip.md"), 1); err != nil || string(c) != "version A\n" {
		t.Errorf("flip.md revision 1 = %q, %v", c, err)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify after writing the converted store: %v", err)
	}
}

// TestStore_OpenConvertsHistory: stores earlier ctxds wrote open with
// their history converted and unchanged to its users.
func TestStore_OpenConvertsHistory(t *testing.T) {
	for _, name := range []string{"history-v1.db", "history-v3.db"} {
		t.Run(name, func(t *testing.T) { checkMigrated(t, openFixture(t, name)) })
	}
}

// TestStore_OpenResumesHistoryConversion: a conversion that stopped after
// an item (the process died) finishes on the next open.
func TestStore_OpenResumesHistoryConversion(t *testing.T) {
	for _, name := range []string{"history-v1.db", "history-v3.db"} {
		t.Run(name, func(t *testing.T) {
			path := openFixture(t, name)
			db, err := boltstore.Open(path, boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(context.Background(), func(tx backend.Tx) error {
				meta := tx.Bucket([]byte(bucketMeta))
				v1 := string(meta.Get([]byte(keySchema))) == "1"
				if v1 {
					if err := startHistoryMigration(meta); err != nil {
						return err
					}
				}
				// As Open does, then the conversion of the first item.
				if err := dropTimeIndex(tx); err != nil {
					return err
				}
				if err := meta.Put([]byte(keySchema), []byte(strconv.Itoa(schemaVersion))); err != nil {
					return err
				}
				for _, name := range []string{bucketRevs, bucketRevHeads} {
					if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
						return err
					}
				}
				tn := (&Store{db: db, now: time.Now}).newTxn(tx)
				legacy := tx.Bucket(nameRevsByItem)
				if err := tn.migrateHistoryRefs(legacy); err != nil {
					return err
				}
				k, _ := legacy.Cursor().First()
				_, err := tn.migrateItemHistory(legacy, bytes.Clone(k[:16]), v1)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			checkMigrated(t, path)
		})
	}
}

// TestStore_OpenDropsTimeIndex: a store of schema version 2 kept a time
// index of revisions beside the actor index; open drops it, and Log,
// merging the actors' parts of the log, lists what it listed.
func TestStore_OpenDropsTimeIndex(t *testing.T) {
	loc := newLocation(t)
	s, err := Open(loc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	for i := range 5 {
		c := ctx
		if i%2 == 1 {
			c = WithActor(ctx, Actor{Name: "agent-1", Agent: true})
		}
		if _, err := s.Write(c, WriteParams{Ref: Ref{Drive: "notes", Path: fmt.Sprintf("/n%d.md", i)}, Content: []byte("x"), IsText: true}); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Minute)
	}
	want, err := historyListing(s)
	if err != nil {
		t.Fatal(err)
	}
	// What ctxd wrote at schema version 2: the time index of every revision.
	err = s.db.Update(ctx, func(tx backend.Tx) error {
		tn := s.newTxn(tx)
		log, err := tx.CreateBucketIfNotExists([]byte(bucketRevLog))
		if err != nil {
			return err
		}
		c := tn.revActor.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if err := log.Put(bytes.Clone(k[len(k)-32:]), nil); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte(bucketMeta)).Put([]byte(keySchema), []byte("2"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(loc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Verify(ctx); err != nil {
		t.Fatalf("Verify after open: %v", err)
	}
	err = s.db.View(ctx, func(tx backend.Tx) error {
		if v := tx.Bucket([]byte(bucketMeta)).Get([]byte(keySchema)); string(v) != strconv.Itoa(schemaVersion) {
			return fmt.Errorf("schema %q after open", v)
		}
		for _, name := range []string{bucketRevLog, bucketRevsByItem} {
			if tx.Bucket([]byte(name)) != nil {
				return fmt.Errorf("the bucket %s is still there after open", name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := historyListing(s)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || strings.Count(got, "\n") != 5 {
		t.Errorf("Log after open:\n%s\nwant:\n%s", got, want)
	}
	refs := slices.Collect(func(yield func(string) bool) {
		for l := range strings.Lines(got) {
			if !yield(strings.Fields(l)[0]) {
				return
			}
		}
	})
	if !slices.Equal(refs, []string{"notes:/n4.md", "notes:/n3.md", "notes:/n2.md", "notes:/n1.md", "notes:/n0.md"}) {
		t.Errorf("Log order = %q, want newest first across both actors", refs)
	}
}
