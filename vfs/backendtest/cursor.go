package backendtest

import (
	"bytes"
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
