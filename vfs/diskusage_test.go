package vfs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/internal/mapped"
)

// TestStore_DiskUsage: the buckets, free and meta pages add up to the
// file's used size; content and chunks show in their buckets.
func TestStore_DiskUsage(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	for i := range 50 {
		mustWrite(t, s, fmt.Sprintf("notes:/n%02d.md", i), strings.Repeat(fmt.Sprintf("paragraph %d of plain words\n\n", i), 40))
	}
	if _, err := s.Delete(context.Background(), mustRef(t, "notes:/n00.md"), false); err != nil {
		t.Fatal(err) // frees pages
	}
	u, err := s.DiskUsage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum := u.Free + u.Meta
	byName := map[string]BucketUsage{}
	for _, b := range u.Buckets {
		sum += b.Bytes
		byName[b.Name] = b
		if b.Used > b.Bytes || b.Bytes < 0 {
			t.Errorf("bucket %s: %d used of %d", b.Name, b.Used, b.Bytes)
		}
	}
	if sum != u.FileSize || u.Meta < 2*4096 {
		t.Errorf("buckets + free %d + meta %d = %d, file %d", u.Free, u.Meta, sum, u.FileSize)
	}
	if c := byName[bucketChunks]; c.Keys < 49*40 || c.Used == 0 {
		t.Errorf("chunks bucket %+v, want a key per chunk (at least %d)", c, 49*40)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.DiskUsage(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestStore_IDOrderedBucketsPackedFull: buckets keyed by time-ordered item
// id or outbox sequence fill their pages, where bbolt's default split
// would leave them half empty.
func TestStore_IDOrderedBucketsPackedFull(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	for i := range 2000 {
		mustWrite(t, s, fmt.Sprintf("notes:/n%04d.md", i), fmt.Sprintf("Note %d: %s\n", i, strings.Repeat("plain words of a short note ", 10)))
	}
	u, err := s.DiskUsage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range u.Buckets {
		switch b.Name {
		case bucketItems, bucketContent, bucketChunks, bucketOutbox:
			// bbolt's default leaves them 41-51% full here; items, whose
			// values are large (a few to a page), reach 68%, the others
			// about 80%.
			if full := float64(b.Used) / float64(b.Bytes); full < 0.65 {
				t.Errorf("bucket %s: pages %.0f%% full (%d of %d bytes), want at least 65%%", b.Name, 100*full, b.Used, b.Bytes)
			}
		}
	}
}

// TestStore_DiskUsageReleasesPages: measuring a bbolt store reads every
// page through the file's memory map; afterwards the pages are no longer
// in the process's resident set (they were all of it before
// ReleasePages).
func TestStore_DiskUsageReleasesPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	for i := range 200 {
		mustWrite(t, s, fmt.Sprintf("notes:/n%03d.md", i), strings.Repeat(fmt.Sprintf("paragraph %d of plain words, long enough to fill pages\n\n", i), 300))
	}
	u, err := s.DiskUsage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if u.FileSize < 8<<20 {
		t.Fatalf("store file %d bytes, want at least 8 MiB for the measure to mean something", u.FileSize)
	}
	rss, err := mapped.RSS(path)
	if err != nil {
		t.Fatal(err)
	}
	if rss > u.FileSize/8 {
		t.Errorf("after DiskUsage %d KiB of the %d KiB store file are resident, want at most an eighth", rss>>10, u.FileSize>>10)
	}
	// The store reads on as before: the pages come back from the page cache.
	if got := mustRead(t, s, "notes:/n199.md"); !strings.HasPrefix(got, "paragraph 199 ") {
		t.Errorf("read after releasing pages: %.40q", got)
	}
}
