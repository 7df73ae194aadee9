package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/mapped"
	"github.com/ctxd/ctxd/vfs/backend"
)

// TestDB_releasesMappedPages: the pages reads map leave the process's
// resident set once the store has been idle for ReleaseIdle, after a View
// and after a read transaction of Begin (which ends without another access
// to arm the release), and the data reads back unchanged.
func TestDB_releasesMappedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(path, Options{ReleaseIdle: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const values, size = 4096, 4096 // 16 MiB of values
	value := func(i int) []byte {
		return bytes.Repeat(binary.BigEndian.AppendUint32(nil, uint32(i)), size/4)
	}
	for first := 0; first < values; first += 512 {
		err := db.Update(context.Background(), func(tx backend.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("v"))
			if err != nil {
				return err
			}
			for i := first; i < first+512; i++ {
				if err := b.Put(binary.BigEndian.AppendUint32(nil, uint32(i)), value(i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	// readAll reads every value and returns the resident bytes of the map
	// right after, before a release could run.
	readAll := func(tx backend.Tx) int64 {
		t.Helper()
		b := tx.Bucket([]byte("v"))
		for i := range values {
			if got := b.Get(binary.BigEndian.AppendUint32(nil, uint32(i))); !bytes.Equal(got, value(i)) {
				t.Fatalf("value %d reads back %d bytes, not what was written", i, len(got))
			}
		}
		rss, err := mapped.RSS(resolved)
		if err != nil {
			t.Fatal(err)
		}
		return rss
	}
	waitReleased := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			rss, err := mapped.RSS(resolved)
			if err != nil {
				t.Fatal(err)
			}
			if rss <= values*size/8 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d KiB of the store still mapped 10s later, want at most %d KiB", what, rss>>10, values*size/8>>10)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	var mappedByRead int64
	if err := db.View(context.Background(), func(tx backend.Tx) error {
		mappedByRead = readAll(tx)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if mappedByRead < values*size/2 {
		t.Fatalf("reading every value mapped %d KiB, want at least half of the %d KiB it read for the test to mean something", mappedByRead>>10, values*size>>10)
	}
	waitReleased("after a read")

	tx, err := db.Begin(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	readAll(tx)
	readAll(tx) // the pages read back after the release
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	waitReleased("after a read transaction")
}

// TestDB_ReleasingWhile: a walk that holds a read transaction has the pages
// it mapped let go while it runs, not only when it ends, and reads the same
// data after a release.
func TestDB_ReleasingWhile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(path, Options{ReleaseIdle: -1}) // only the walk releases
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const values, size = 4096, 4096 // 16 MiB of values
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, size) }
	if err := db.Update(context.Background(), func(tx backend.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("v"))
		for i := 0; err == nil && i < values; i++ {
			err = b.Put(binary.BigEndian.AppendUint32(nil, uint32(i)), value(i))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	rss := func() int64 {
		n, err := mapped.RSS(resolved)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	readAll := func(b backend.Bucket) {
		for i := range values {
			if got := b.Get(binary.BigEndian.AppendUint32(nil, uint32(i))); !bytes.Equal(got, value(i)) {
				t.Fatalf("value %d reads back %d bytes, not what was written", i, len(got))
			}
		}
	}
	err = db.ReleasingWhile(func() error {
		return db.View(context.Background(), func(tx backend.Tx) error {
			// Reading every value maps most of them
			// (TestDB_releasesMappedPages), and only a release while
			// the transaction is open lets them go.
			readAll(tx.Bucket([]byte("v")))
			waitFor(t, "a release while the walk's transaction is open", func() bool { return rss() <= values*size/8 })
			readAll(tx.Bucket([]byte("v")))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := rss(); n > values*size/8 {
		t.Fatalf("%d KiB of the store still mapped after the walk, want at most %d KiB", n>>10, values*size/8>>10)
	}
}

// TestReleaser_waitsForOpenTransactions: a read transaction still open (a
// long scan) keeps the store busy, so the pages are released only once it
// has ended, and then once.
func TestReleaser_waitsForOpenTransactions(t *testing.T) {
	var open, checks, releases atomic.Int64
	open.Store(1)
	r := &releaser{
		idle:    time.Millisecond,
		release: func() error { releases.Add(1); return nil },
		open:    func() int { checks.Add(1); return int(open.Load()) },
	}
	defer r.stop()
	r.touched()
	waitFor(t, "the timer to find the transaction open 3 times", func() bool { return checks.Load() >= 3 })
	if n := releases.Load(); n != 0 {
		t.Fatalf("released %d times while a transaction was open", n)
	}
	open.Store(0)
	waitFor(t, "the release after the transaction ended", func() bool { return releases.Load() == 1 })
}

// waitFor polls cond until it holds, failing after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
