package backendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ctxd/ctxd/vfs/backend"
)

// Run runs every case of the suite as a subtest, each on a store open
// returns: fresh and empty, closed by open's own cleanup.
func Run(t *testing.T, open func(t *testing.T) backend.DB) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, open(t))
		})
	}
}

// cases is the suite, in the order Run runs it.
var cases = []struct {
	name string
	run  func(t *testing.T, db backend.DB)
}{
	{"GetPutDelete", testGetPutDelete},
	{"Prefetch", testPrefetch},
	{"ReadYourWrites", testReadYourWrites},
	{"ValuesStayValid", testValuesStayValid},
	{"KeyLimits", testKeyLimits},
	{"LongKeysOrder", testLongKeysOrder},
	{"NestedBuckets", testNestedBuckets},
	{"BucketErrors", testBucketErrors},
	{"DeleteBucketSubtree", testDeleteBucketSubtree},
	{"ForEachBucketOrder", testForEachBucketOrder},
	{"ForEachStops", testForEachStops},
	{"Sequences", testSequences},
	{"Stats", testStats},
	{"Size", testSize},
	{"CursorWalk", testCursorWalk},
	{"CursorSeek", testCursorSeek},
	{"CursorBackAndForth", testCursorBackAndForth},
	{"CursorDelete", testCursorDelete},
	{"CursorSeesOwnWrites", testCursorSeesOwnWrites},
	{"CursorLargeValues", testCursorLargeValues},
	{"CursorEmptyBucket", testCursorEmptyBucket},
	{"CursorDeleteAfterWrites", testCursorDeleteAfterWrites},
	{"CursorPrevAfterDeletes", testCursorPrevAfterDeletes},
	{"AppendAtEnd", testAppendAtEnd},
	{"CursorEndsOfSizes", testCursorEndsOfSizes},
	{"RandomAgainstModel", testRandomAgainstModel},
	{"Rollback", testRollback},
	{"ClosedTx", testClosedTx},
	{"ReadOnlyTx", testReadOnlyTx},
	{"UpdateErrorRollsBack", testUpdateErrorRollsBack},
	{"UpdatePanicRollsBack", testUpdatePanicRollsBack},
	{"UpdatesSerialized", testUpdatesSerialized},
	{"BatchFailingMember", testBatchFailingMember},
	{"BatchConcurrent", testBatchConcurrent},
	{"SnapshotIsolation", testSnapshotIsolation},
	{"PinnedReadTxGoroutines", testPinnedReadTxGoroutines},
	{"ContextCancelled", testContextCancelled},
	{"ContextCancelledInFn", testContextCancelledInFn},
	{"Check", testCheck},
}

var errTest = errors.New("backendtest: the function failed on purpose")

func update(t *testing.T, db backend.DB, fn func(tx backend.Tx) error) {
	t.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t *testing.T, db backend.DB, fn func(tx backend.Tx) error) {
	t.Helper()
	if err := db.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// bucket returns the top-level bucket name, creating it in a write
// transaction.
func bucket(t *testing.T, tx backend.Tx, name string) backend.Bucket {
	t.Helper()
	if tx.Writable() {
		b, err := tx.CreateBucketIfNotExists([]byte(name))
		if err != nil {
			t.Fatalf("CreateBucketIfNotExists(%q): %v", name, err)
		}
		return b
	}
	b := tx.Bucket([]byte(name))
	if b == nil {
		t.Fatalf("bucket %q missing", name)
	}
	return b
}

func put(t *testing.T, b backend.Bucket, key, value string) {
	t.Helper()
	if err := b.Put([]byte(key), []byte(value)); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Errorf("%s: got error %v, want %v", what, got, want)
	}
}

func wantValue(t *testing.T, b backend.Bucket, key string, want []byte) {
	t.Helper()
	got := b.Get([]byte(key))
	if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
		t.Errorf("Get(%q) = %s, want %s", key, show(got), show(want))
	}
}

func show(v []byte) string {
	if v == nil {
		return "nil"
	}
	if len(v) > 40 {
		return fmt.Sprintf("%q... (%d bytes)", v[:40], len(v))
	}
	return fmt.Sprintf("%q", v)
}

// numKey is the i-th key of an ordered series.
func numKey(i int) []byte { return fmt.Appendf(nil, "k%06d", i) }

// fill puts n keys numKey(0..n-1) in bucket name, each with value
// numValue(i), in one transaction.
func fill(t *testing.T, db backend.DB, name string, n int) {
	t.Helper()
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, name)
		for i := range n {
			if err := b.Put(numKey(i), numValue(i)); err != nil {
				return err
			}
		}
		return nil
	})
}

// numValue varies in length so pages hold values of different sizes.
func numValue(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, i%97) }

// walk collects a cursor's keys from First to the end.
func walk(c backend.Cursor) [][]byte {
	var keys [][]byte
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		keys = append(keys, k)
	}
	return keys
}

func equalKeys(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
