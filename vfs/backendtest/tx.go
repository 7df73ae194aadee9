package backendtest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ctxd/ctxd/vfs/backend"
)

func testRollback(t *testing.T, db backend.DB) {
	fill(t, db, "b", 5)
	tx, err := db.Begin(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	b := bucket(t, tx, "b")
	put(t, b, "new", "v")
	if err := b.Delete(numKey(0)); err != nil {
		t.Fatal(err)
	}
	bucket(t, tx, "created")
	if err := tx.DeleteBucket([]byte("b")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	view(t, db, func(tx backend.Tx) error {
		if tx.Bucket([]byte("created")) != nil {
			t.Error("bucket created in a rolled-back transaction exists")
		}
		b := bucket(t, tx, "b")
		wantValue(t, b, "new", nil)
		wantValue(t, b, string(numKey(0)), numValue(0))
		return nil
	})
}

// testClosedTx checks that an ended transaction refuses everything.
func testClosedTx(t *testing.T, db backend.DB) {
	fill(t, db, "b", 5)
	tx, err := db.Begin(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	b := bucket(t, tx, "b")
	put(t, b, "k", "v")
	if err := tx.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantErr(t, "Commit after Commit", tx.Commit(), backend.ErrTxClosed)
	wantErr(t, "Rollback after Commit", tx.Rollback(), backend.ErrTxClosed)
	wantErr(t, "Put after Commit", b.Put([]byte("k2"), []byte("v")), backend.ErrTxClosed)
	_, err = tx.CreateBucketIfNotExists([]byte("x"))
	wantErr(t, "CreateBucketIfNotExists after Commit", err, backend.ErrTxClosed)

	rtx, err := db.Begin(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, bucket(t, rtx, "b"), "k", []byte("v"))
	if err := rtx.Rollback(); err != nil {
		t.Fatalf("Rollback of a read transaction: %v", err)
	}
	wantErr(t, "Rollback after Rollback", rtx.Rollback(), backend.ErrTxClosed)
}

func testReadOnlyTx(t *testing.T, db backend.DB) {
	fill(t, db, "b", 5)
	view(t, db, func(tx backend.Tx) error {
		if tx.Writable() {
			t.Error("View's transaction is writable")
		}
		b := bucket(t, tx, "b")
		wantErr(t, "Put in View", b.Put([]byte("k"), []byte("v")), backend.ErrTxNotWritable)
		wantErr(t, "Delete in View", b.Delete(numKey(1)), backend.ErrTxNotWritable)
		_, err := tx.CreateBucketIfNotExists([]byte("x"))
		wantErr(t, "CreateBucketIfNotExists in View", err, backend.ErrTxNotWritable)
		_, err = b.CreateBucket([]byte("x"))
		wantErr(t, "CreateBucket in View", err, backend.ErrTxNotWritable)
		wantErr(t, "DeleteBucket in View", tx.DeleteBucket([]byte("b")), backend.ErrTxNotWritable)
		c := b.Cursor()
		c.First()
		wantErr(t, "Cursor.Delete in View", c.Delete(), backend.ErrTxNotWritable)
		return nil
	})
	update(t, db, func(tx backend.Tx) error {
		if !tx.Writable() {
			t.Error("Update's transaction is not writable")
		}
		return nil
	})
	tx, err := db.Begin(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Commit of a read transaction", tx.Commit(), backend.ErrTxNotWritable)
	if err := tx.Rollback(); err != nil {
		t.Errorf("Rollback after a refused Commit: %v", err)
	}
	view(t, db, func(tx backend.Tx) error {
		wantValue(t, bucket(t, tx, "b"), string(numKey(1)), numValue(1))
		return nil
	})
}

func testUpdateErrorRollsBack(t *testing.T, db backend.DB) {
	fill(t, db, "b", 5)
	err := db.Update(t.Context(), func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		put(t, b, "new", "v")
		bucket(t, tx, "created")
		return fmt.Errorf("wrapped: %w", errTest)
	})
	wantErr(t, "Update", err, errTest)
	view(t, db, func(tx backend.Tx) error {
		wantValue(t, bucket(t, tx, "b"), "new", nil)
		if tx.Bucket([]byte("created")) != nil {
			t.Error("bucket of a failed Update exists")
		}
		return nil
	})
}

func testUpdatePanicRollsBack(t *testing.T, db backend.DB) {
	fill(t, db, "b", 5)
	func() {
		defer func() {
			if p := recover(); p != "on purpose" {
				t.Errorf("recovered %v, want the fn's panic", p)
			}
		}()
		_ = db.Update(t.Context(), func(tx backend.Tx) error {
			put(t, bucket(t, tx, "b"), "new", "v")
			panic("on purpose")
		})
	}()
	// The store still works, and nothing of the panicking fn committed.
	update(t, db, func(tx backend.Tx) error {
		wantValue(t, bucket(t, tx, "b"), "new", nil)
		put(t, bucket(t, tx, "b"), "after", "v")
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		wantValue(t, bucket(t, tx, "b"), "after", []byte("v"))
		return nil
	})
}

// increment adds one to the counter under key, read in the transaction.
func increment(tx backend.Tx, key string) error {
	b, err := tx.CreateBucketIfNotExists([]byte("counters"))
	if err != nil {
		return err
	}
	var n uint64
	if v := b.Get([]byte(key)); v != nil {
		n = binary.BigEndian.Uint64(v)
	}
	return b.Put([]byte(key), binary.BigEndian.AppendUint64(nil, n+1))
}

func counter(t *testing.T, db backend.DB, key string) uint64 {
	t.Helper()
	var n uint64
	view(t, db, func(tx backend.Tx) error {
		if v := bucket(t, tx, "counters").Get([]byte(key)); v != nil {
			n = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	return n
}

// testUpdatesSerialized runs read-modify-write Updates from many
// goroutines while a transaction from Begin holds the write side: each
// sees every commit before it, so no increment is lost.
func testUpdatesSerialized(t *testing.T, db backend.DB) {
	const workers, each = 8, 20
	tx, err := db.Begin(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := increment(tx, "n"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				errs <- db.Update(context.Background(), func(tx backend.Tx) error { return increment(tx, "n") })
			}
		})
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
	if n := counter(t, db, "n"); n != workers*each+1 {
		t.Errorf("counter = %d, want %d: an update did not see another's commit", n, workers*each+1)
	}
}

// testBatchFailingMember checks that a failing Batch member gets its own
// error and leaves no write, and that the others commit.
func testBatchFailingMember(t *testing.T, db backend.DB) {
	const members = 12
	update(t, db, func(tx backend.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("b")); return err })
	start := make(chan struct{})
	errs := make([]error, members)
	var wg sync.WaitGroup
	for i := range members {
		wg.Go(func() {
			<-start
			errs[i] = db.Batch(context.Background(), func(tx backend.Tx) error {
				if err := tx.Bucket([]byte("b")).Put(numKey(i), []byte("v")); err != nil {
					return err
				}
				if i%5 == 2 {
					return fmt.Errorf("member %d: %w", i, errTest)
				}
				return nil
			})
		})
	}
	close(start)
	wg.Wait()
	view(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		for i, err := range errs {
			if i%5 == 2 {
				wantErr(t, fmt.Sprintf("failing member %d", i), err, errTest)
				wantValue(t, b, string(numKey(i)), nil)
				continue
			}
			if err != nil {
				t.Errorf("member %d: %v", i, err)
			}
			wantValue(t, b, string(numKey(i)), []byte("v"))
		}
		return nil
	})
}

// testBatchConcurrent counts: every Batch call that returned nil committed
// its effect exactly once, however the backend grouped and reran them.
func testBatchConcurrent(t *testing.T, db backend.DB) {
	const workers, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				errs <- db.Batch(context.Background(), func(tx backend.Tx) error {
					if err := increment(tx, "total"); err != nil {
						return err
					}
					return increment(tx, fmt.Sprintf("w%02d-%03d", w, i))
				})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Batch: %v", err)
		}
	}
	if n := counter(t, db, "total"); n != workers*each {
		t.Errorf("total = %d, want %d", n, workers*each)
	}
	view(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "counters")
		for w := range workers {
			for i := range each {
				key := fmt.Sprintf("w%02d-%03d", w, i)
				if v := b.Get([]byte(key)); v == nil || binary.BigEndian.Uint64(v) != 1 {
					t.Errorf("call %s applied %v times, want once", key, v)
				}
			}
		}
		return nil
	})
}

// testSnapshotIsolation checks that a read transaction keeps the snapshot
// it began with while a writer commits.
func testSnapshotIsolation(t *testing.T, db backend.DB) {
	fill(t, db, "b", 20)
	rtx, err := db.Begin(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer rtx.Rollback()
	b := bucket(t, rtx, "b")
	wantValue(t, b, string(numKey(3)), numValue(3))
	update(t, db, func(tx backend.Tx) error {
		wb := bucket(t, tx, "b")
		put(t, wb, string(numKey(3)), "changed")
		put(t, wb, string(numKey(4)), "changed")
		put(t, wb, "zz-new", "v")
		if err := wb.Delete(numKey(5)); err != nil {
			return err
		}
		bucket(t, tx, "new-bucket")
		return wb.SetSequence(99)
	})
	wantValue(t, b, string(numKey(3)), numValue(3))
	wantValue(t, b, string(numKey(4)), numValue(4))
	wantValue(t, b, string(numKey(5)), numValue(5))
	wantValue(t, b, "zz-new", nil)
	if got := walk(b.Cursor()); len(got) != 20 {
		t.Errorf("the snapshot's cursor saw %d keys, want 20", len(got))
	}
	if rtx.Bucket([]byte("new-bucket")) != nil {
		t.Error("a bucket created after the snapshot is visible")
	}
	if s := b.Sequence(); s != 0 {
		t.Errorf("the snapshot's Sequence() = %d, want 0", s)
	}
	view(t, db, func(tx backend.Tx) error {
		wantValue(t, bucket(t, tx, "b"), string(numKey(3)), []byte("changed"))
		wantValue(t, bucket(t, tx, "b"), string(numKey(5)), nil)
		return nil
	})
}

// testPinnedReadTxGoroutines shares one read transaction between
// goroutines reading and walking at once while a writer commits.
func testPinnedReadTxGoroutines(t *testing.T, db backend.DB) {
	const n = 1500
	fill(t, db, "b", n)
	rtx, err := db.Begin(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	b := bucket(t, rtx, "b")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < n; i += 37 {
				if v := b.Get(numKey(i)); string(v) != string(numValue(i)) {
					errs <- fmt.Errorf("goroutine %d: Get(%q) = %q", g, numKey(i), v)
					return
				}
			}
			if keys := walk(b.Cursor()); len(keys) != n {
				errs <- fmt.Errorf("goroutine %d: walked %d keys, want %d", g, len(keys), n)
			}
		})
	}
	// The writer waits for no reader: a backend may not make it wait for
	// the pinned snapshot either (bbolt could, to grow its map).
	writer := make(chan error, 1)
	go func() {
		writer <- db.Update(context.Background(), func(tx backend.Tx) error {
			wb, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			for i := 0; i < n; i += 2 {
				if err := wb.Delete(numKey(i)); err != nil {
					return err
				}
			}
			return nil
		})
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := rtx.Rollback(); err != nil {
		t.Errorf("Rollback: %v", err)
	}
	if err := <-writer; err != nil {
		t.Errorf("Update beside the pinned snapshot: %v", err)
	}
}

func testContextCancelled(t *testing.T, db backend.DB) {
	fill(t, db, "b", 5)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	wantErr(t, "View with a cancelled context", db.View(ctx, func(backend.Tx) error { return nil }), context.Canceled)
	wantErr(t, "Update with a cancelled context", db.Update(ctx, func(backend.Tx) error { return nil }), context.Canceled)
	wantErr(t, "Batch with a cancelled context", db.Batch(ctx, func(backend.Tx) error { return nil }), context.Canceled)
	_, err := db.Begin(ctx, false)
	wantErr(t, "Begin with a cancelled context", err, context.Canceled)
	view(t, db, func(tx backend.Tx) error {
		wantValue(t, bucket(t, tx, "b"), string(numKey(1)), numValue(1))
		return nil
	})
}

// testContextCancelledInFn cancels an Update's context while its fn runs:
// the transaction ends with ctx.Err() and commits nothing.
func testContextCancelledInFn(t *testing.T, db backend.DB) {
	fill(t, db, "b", 5)
	ctx, cancel := context.WithCancel(t.Context())
	err := db.Update(ctx, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		put(t, b, "during", "v")
		cancel()
		b.Get([]byte("something not read before"))
		return nil
	})
	wantErr(t, "Update cancelled during fn", err, context.Canceled)
	view(t, db, func(tx backend.Tx) error {
		wantValue(t, bucket(t, tx, "b"), "during", nil)
		return nil
	})
	if errors.Is(db.Update(t.Context(), func(backend.Tx) error { return nil }), context.Canceled) {
		t.Error("a later Update failed with the earlier cancellation")
	}
}

func testCheck(t *testing.T, db backend.DB) {
	fill(t, db, "b", 10)
	update(t, db, func(tx backend.Tx) error {
		nb, err := bucket(t, tx, "b").CreateBucket([]byte("nested"))
		if err != nil {
			return err
		}
		put(t, nb, "k", "v")
		return nil
	})
	if err := db.Check(t.Context()); err != nil {
		t.Errorf("Check of a sound store: %v", err)
	}
}
