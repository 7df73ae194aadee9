package backendtest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/ctxd/ctxd/vfs/backend"
)

// cursorKeys is how many keys the cursor cases walk: more than a backend
// would fetch at once, so walks cross page boundaries.
const cursorKeys = 2500

func testCursorWalk(t *testing.T, db backend.DB) {
	fill(t, db, "b", cursorKeys)
	view(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		c := b.Cursor()
		i := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !bytes.Equal(k, numKey(i)) || !bytes.Equal(v, numValue(i)) {
				t.Fatalf("Next #%d = %q=%q, want %q=%q", i, k, v, numKey(i), numValue(i))
			}
			i++
		}
		if i != cursorKeys {
			t.Errorf("First/Next saw %d keys, want %d", i, cursorKeys)
		}
		// Having walked off the end (and looked past it), the last keys
		// are still there.
		lastKey := numKey(cursorKeys - 1)
		wantValue(t, b, string(lastKey)+"x", nil)
		wantValue(t, b, string(lastKey), numValue(cursorKeys-1))
		if k, _ := b.Cursor().Seek(lastKey); !bytes.Equal(k, lastKey) {
			t.Errorf("Seek(last key) after the walk = %q", k)
		}
		i = cursorKeys - 1
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			if !bytes.Equal(k, numKey(i)) || !bytes.Equal(v, numValue(i)) {
				t.Fatalf("Prev #%d = %q=%q, want %q", i, k, v, numKey(i))
			}
			i--
		}
		if i != -1 {
			t.Errorf("Last/Prev stopped at %d, want -1", i)
		}
		n := 0
		if err := b.ForEach(func(k, v []byte) error {
			if !bytes.Equal(k, numKey(n)) {
				t.Fatalf("ForEach #%d = %q", n, k)
			}
			n++
			return nil
		}); err != nil {
			return err
		}
		if n != cursorKeys {
			t.Errorf("ForEach saw %d keys, want %d", n, cursorKeys)
		}
		return nil
	})
}

func testCursorSeek(t *testing.T, db backend.DB) {
	fill(t, db, "b", cursorKeys)
	view(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		for _, tc := range []struct {
			name string
			seek []byte
			want int // index of the key found; -1 for none
		}{
			{"exact", numKey(1234), 1234},
			{"first", numKey(0), 0},
			{"last", numKey(cursorKeys - 1), cursorKeys - 1},
			{"between keys", append(numKey(77), 'x'), 78},
			{"before the first", []byte("a"), 0},
			{"empty", []byte{}, 0},
			{"nil", nil, 0},
			{"past the end", []byte("z"), -1},
			{"just past the last", append(numKey(cursorKeys-1), 0), -1},
		} {
			k, v := b.Cursor().Seek(tc.seek)
			if tc.want < 0 {
				if k != nil || v != nil {
					t.Errorf("Seek %s = %q, want nil", tc.name, k)
				}
				continue
			}
			if !bytes.Equal(k, numKey(tc.want)) || !bytes.Equal(v, numValue(tc.want)) {
				t.Errorf("Seek %s = %q, want %q", tc.name, k, numKey(tc.want))
			}
		}
		// From a seek, walk on both ways across pages.
		c := b.Cursor()
		c.Seek(numKey(1500))
		for i := 1501; i < 2100; i++ {
			if k, _ := c.Next(); !bytes.Equal(k, numKey(i)) {
				t.Fatalf("Next after Seek = %q, want %q", k, numKey(i))
			}
		}
		c.Seek(numKey(1500))
		for i := 1499; i >= 900; i-- {
			if k, _ := c.Prev(); !bytes.Equal(k, numKey(i)) {
				t.Fatalf("Prev after Seek = %q, want %q", k, numKey(i))
			}
		}
		// Past the end, Prev comes back to the last key.
		c.Seek([]byte("z"))
		if k, _ := c.Prev(); !bytes.Equal(k, numKey(cursorKeys-1)) {
			t.Errorf("Prev after Seek past the end = %q, want the last key", k)
		}
		return nil
	})
}

func testCursorBackAndForth(t *testing.T, db backend.DB) {
	fill(t, db, "b", cursorKeys)
	view(t, db, func(tx backend.Tx) error {
		c := bucket(t, tx, "b").Cursor()
		pos := 0
		c.First()
		// Long runs each way cross the backend's pages in both directions.
		for _, step := range []int{1200, -700, 1500, -1900, 2000} {
			for range abs(step) {
				var k []byte
				if step > 0 {
					pos++
					k, _ = c.Next()
				} else {
					pos--
					k, _ = c.Prev()
				}
				if pos < 0 || pos >= cursorKeys {
					if k != nil {
						t.Fatalf("move past an end gave %q", k)
					}
					return nil
				}
				if !bytes.Equal(k, numKey(pos)) {
					t.Fatalf("at %d: got %q", pos, k)
				}
			}
		}
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		c := bucket(t, tx, "b").Cursor()
		if k, _ := c.First(); !bytes.Equal(k, numKey(0)) {
			t.Errorf("First = %q", k)
		}
		if k, _ := c.Prev(); k != nil {
			t.Errorf("Prev before the first key = %q, want nil", k)
		}
		if k, _ := c.Last(); !bytes.Equal(k, numKey(cursorKeys-1)) {
			t.Errorf("Last = %q", k)
		}
		if k, _ := c.Next(); k != nil {
			t.Errorf("Next past the last key = %q, want nil", k)
		}
		return nil
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// testCursorDelete deletes while walking: every key is seen once, in
// order, and exactly the deleted ones are gone.
func testCursorDelete(t *testing.T, db backend.DB) {
	fill(t, db, "b", cursorKeys)
	update(t, db, func(tx backend.Tx) error {
		c := bucket(t, tx, "b").Cursor()
		i := 0
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if !bytes.Equal(k, numKey(i)) {
				t.Fatalf("walk while deleting: #%d = %q", i, k)
			}
			if i%3 != 1 {
				if err := c.Delete(); err != nil {
					return err
				}
			}
			i++
		}
		if i != cursorKeys {
			t.Errorf("walk while deleting saw %d keys, want %d", i, cursorKeys)
		}
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		var want [][]byte
		for i := 1; i < cursorKeys; i += 3 {
			want = append(want, numKey(i))
		}
		b := bucket(t, tx, "b")
		if got := walk(b.Cursor()); !equalKeys(got, want) {
			t.Errorf("after Cursor.Delete: %d keys, want %d", len(got), len(want))
		}
		wantValue(t, b, string(numKey(0)), nil)
		wantValue(t, b, string(numKey(1)), numValue(1))
		return nil
	})
}

// testCursorSeesOwnWrites walks a bucket after writes of the same
// transaction, committed keys among them.
func testCursorSeesOwnWrites(t *testing.T, db backend.DB) {
	fill(t, db, "b", 100)
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		want := map[string]bool{}
		for i := range 100 {
			want[string(numKey(i))] = true
		}
		for i := 0; i < 100; i += 7 {
			if err := b.Delete(numKey(i)); err != nil {
				return err
			}
			delete(want, string(numKey(i)))
		}
		for i := 95; i < 1300; i++ {
			if err := b.Put(numKey(i), []byte("new")); err != nil {
				return err
			}
			want[string(numKey(i))] = true
		}
		wantKeys := make([][]byte, 0, len(want))
		for k := range want {
			wantKeys = append(wantKeys, []byte(k))
		}
		slices.SortFunc(wantKeys, bytes.Compare)
		if got := walk(b.Cursor()); !equalKeys(got, wantKeys) {
			t.Errorf("cursor in the writing transaction: %d keys, want %d", len(got), len(wantKeys))
		}
		if k, v := b.Cursor().Seek(numKey(96)); !bytes.Equal(k, numKey(96)) || string(v) != "new" {
			t.Errorf("Seek to an overwritten key = %q=%q", k, v)
		}
		// And the other way after more writes.
		if err := b.Delete(numKey(1299)); err != nil {
			return err
		}
		if k, _ := b.Cursor().Last(); !bytes.Equal(k, numKey(1298)) {
			t.Errorf("Last after deleting the last key = %q", k)
		}
		return nil
	})
}

// testCursorLargeValues walks values large enough that a backend reading
// by the page must cut pages by size, not count.
func testCursorLargeValues(t *testing.T, db backend.DB) {
	const n, size = 24, 1 << 20
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, size+i) }
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		for i := range n {
			if err := b.Put(numKey(i), value(i)); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		c := bucket(t, tx, "b").Cursor()
		i := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !bytes.Equal(k, numKey(i)) || !bytes.Equal(v, value(i)) {
				t.Fatalf("large value #%d: key %q, %d bytes", i, k, len(v))
			}
			i++
		}
		if i != n {
			t.Errorf("saw %d large values, want %d", i, n)
		}
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			i--
			if !bytes.Equal(v, value(i)) {
				t.Fatalf("large value #%d backwards: %d bytes", i, len(v))
			}
		}
		return nil
	})
}

func testCursorEmptyBucket(t *testing.T, db backend.DB) {
	update(t, db, func(tx backend.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("empty"))
		return err
	})
	view(t, db, func(tx backend.Tx) error {
		c := bucket(t, tx, "empty").Cursor()
		for name, move := range map[string]func() ([]byte, []byte){
			"First": c.First, "Last": c.Last, "Seek": func() ([]byte, []byte) { return c.Seek([]byte("a")) },
		} {
			if k, v := move(); k != nil || v != nil {
				t.Errorf("%s on an empty bucket = %q", name, k)
			}
			if k, _ := c.Next(); k != nil {
				t.Errorf("Next after %s on an empty bucket = %q", name, k)
			}
			if k, _ := c.Prev(); k != nil {
				t.Errorf("Prev after %s on an empty bucket = %q", name, k)
			}
		}
		return nil
	})
}

// testCursorDeleteAfterWrites deletes while walking in a transaction that
// wrote to the bucket first: Next after Delete still goes to the key after
// the deleted one. (bbolt's own cursor skips a key there once the page
// was changed in the transaction: etcd-io/bbolt#146.)
func testCursorDeleteAfterWrites(t *testing.T, db backend.DB) {
	fill(t, db, "b", 100)
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		put(t, b, string(numKey(0))+"x", "written first")
		var seen [][]byte
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			seen = append(seen, k)
			if err := c.Delete(); err != nil {
				return err
			}
		}
		if len(seen) != 101 {
			t.Errorf("walk deleting every key saw %d keys, want 101", len(seen))
		}
		if k, _ := b.Cursor().First(); k != nil {
			t.Errorf("key %q left after deleting every key", k)
		}
		return nil
	})
}

// testCursorPrevAfterDeletes walks back over a run of keys deleted in the
// same transaction, long enough to empty whole pages of a paged store.
// (bbolt's Prev stops there, returning nil, while Next goes on.)
func testCursorPrevAfterDeletes(t *testing.T, db backend.DB) {
	fill(t, db, "b", cursorKeys)
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		for i := 100; i < 700; i++ {
			if err := b.Delete(numKey(i)); err != nil {
				return err
			}
		}
		c := b.Cursor()
		n := 0
		for k, _ := c.Seek(numKey(800)); k != nil; k, _ = c.Prev() {
			n++
		}
		if n != 201 { // 800 itself, 799-700, 99-0
			t.Errorf("Prev from key 800 over deleted keys 100-699 saw %d keys, want 201", n)
		}
		if n := len(walk(b.Cursor())); n != cursorKeys-600 {
			t.Errorf("Next over the deleted keys saw %d keys, want %d", n, cursorKeys-600)
		}
		return nil
	})
}

// testAppendAtEnd writes past the end of a bucket the way new items do
// (keys after every existing one), reading at the end before and after
// each write: a backend that remembers where a bucket ends must keep that
// right through puts, overwrites, deletes and nested buckets.
func testAppendAtEnd(t *testing.T, db backend.DB) {
	const n = 300
	fill(t, db, "b", n)
	have := map[int][]byte{} // what the bucket holds, by numKey index
	for i := range n {
		have[i] = numValue(i)
	}
	wantLast := func(b backend.Bucket) {
		t.Helper()
		top := -1
		for i := range have {
			top = max(top, i)
		}
		if k, v := b.Cursor().Last(); !bytes.Equal(k, numKey(top)) || !bytes.Equal(v, have[top]) {
			t.Errorf("Last = %q=%s, want %q=%s", k, show(v), numKey(top), show(have[top]))
		}
	}
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		wantLast(b)
		for i := n; i < n+40; i++ {
			k := numKey(i)
			if v := b.Get(k); v != nil {
				t.Errorf("Get(%q) past the end = %q", k, v)
			}
			if k2, _ := b.Cursor().Seek(k); k2 != nil {
				t.Errorf("Seek(%q) past the end = %q", k, k2)
			}
			put(t, b, string(k), "new")
			have[i] = []byte("new")
			wantValue(t, b, string(k), have[i])
			wantLast(b)
			if i%7 == 0 { // the last key overwritten, before and after it is sent
				put(t, b, string(k), "again")
				have[i] = []byte("again")
				wantLast(b)
				// Deletes in the bucket make a backend that buffers writes
				// send them before the cursor reads.
				for _, j := range []int{i - n, i - n + 1} {
					if err := b.Delete(numKey(j)); err != nil {
						return err
					}
					delete(have, j)
					b.Cursor().Seek(numKey(j)) // a read elsewhere in the bucket
					wantLast(b)
					put(t, b, string(k), fmt.Sprint("again", j))
					have[i] = fmt.Appendf(nil, "again%d", j)
				}
				b.Cursor().Seek(numKey(i - n + 2))
				wantLast(b)
			}
			if i%5 == 0 { // the last key deleted: the one before is last again
				if err := b.Delete(k); err != nil {
					return err
				}
				delete(have, i)
				wantLast(b)
				wantValue(t, b, string(k), nil)
			}
		}
		// A nested bucket as the last key, then gone.
		if _, err := b.CreateBucket(numKey(n + 100)); err != nil {
			return err
		}
		if k, v := b.Cursor().Last(); !bytes.Equal(k, numKey(n+100)) || v != nil {
			t.Errorf("Last = %q=%s, want the nested bucket %q", k, show(v), numKey(n+100))
		}
		if k, _ := b.Cursor().Seek(numKey(n + 99)); !bytes.Equal(k, numKey(n+100)) {
			t.Errorf("Seek before the nested bucket = %q", k)
		}
		if err := b.DeleteBucket(numKey(n + 100)); err != nil {
			return err
		}
		wantLast(b)
		// A new bucket is empty, and fills from its end.
		nb := bucket(t, tx, "fresh")
		if k, _ := nb.Cursor().Last(); k != nil {
			t.Errorf("Last of a new bucket = %q", k)
		}
		put(t, nb, "a", "1")
		if k, _ := nb.Cursor().Last(); string(k) != "a" {
			t.Errorf("Last of the new bucket = %q, want a", k)
		}
		wantValue(t, nb, "b", nil)
		return nil
	})
	check := func(tx backend.Tx) {
		b := bucket(t, tx, "b")
		wantLast(b)
		for i := range n + 42 {
			wantValue(t, b, string(numKey(i)), have[i])
		}
		if got := len(walk(b.Cursor())); got != len(have) {
			t.Errorf("%d keys after the appends, want %d", got, len(have))
		}
	}
	view(t, db, func(tx backend.Tx) error { check(tx); return nil })
	// A second transaction starts from what the first committed.
	update(t, db, func(tx backend.Tx) error {
		check(tx)
		put(t, bucket(t, tx, "b"), string(numKey(n+41)), "x")
		have[n+41] = []byte("x")
		wantLast(bucket(t, tx, "b"))
		return nil
	})
}

// testCursorEndsOfSizes walks buckets of every size up to past the first
// few pages of a paged backend, after looking up keys past their end, and
// reads their last keys back: what a backend learns of where a bucket ends
// (from an empty page or a missed lookup) must never hide a key.
func testCursorEndsOfSizes(t *testing.T, db backend.DB) {
	sizes := []int{}
	for n := range 90 {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 335, 336, 337, 1359, 1360, 1361)
	update(t, db, func(tx backend.Tx) error {
		for _, n := range sizes {
			b := bucket(t, tx, fmt.Sprint("s", n))
			for i := range n {
				if err := b.Put(numKey(i), numValue(i)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		for _, n := range sizes {
			b := bucket(t, tx, fmt.Sprint("s", n))
			if n == 0 {
				if k, _ := b.Cursor().Last(); k != nil {
					t.Errorf("Last of an empty bucket = %q", k)
				}
				continue
			}
			last := string(numKey(n - 1))
			wantValue(t, b, last+"x", nil) // past the end
			wantValue(t, b, last, numValue(n-1))
			if got := len(walk(b.Cursor())); got != n {
				t.Errorf("bucket of %d keys: walked %d", n, got)
			}
			wantValue(t, b, last, numValue(n-1))
			if k, _ := b.Cursor().Seek([]byte(last)); string(k) != last {
				t.Errorf("bucket of %d keys: Seek(last) after the walk = %q", n, k)
			}
			if k, _ := b.Cursor().Last(); string(k) != last {
				t.Errorf("bucket of %d keys: Last = %q", n, k)
			}
		}
		return nil
	})
}
