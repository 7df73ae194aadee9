package backendtest

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/vfs/backend"
)

func testGetPutDelete(t *testing.T, db backend.DB) {
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		put(t, b, "one", "1")
		put(t, b, "two", "2")
		put(t, b, "empty", "")
		put(t, b, "gone", "x")
		return b.Delete([]byte("gone"))
	})
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		if err := b.Delete([]byte("two")); err != nil {
			return err
		}
		return b.Delete([]byte("never there")) // deleting a missing key is no error
	})
	view(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		wantValue(t, b, "one", []byte("1"))
		wantValue(t, b, "two", nil)
		wantValue(t, b, "gone", nil)
		wantValue(t, b, "missing", nil)
		wantValue(t, b, "empty", []byte{}) // present and empty: not nil
		if v := b.Get(nil); v != nil {
			t.Errorf("Get(nil) = %q, want nil", v)
		}
		if got := walk(b.Cursor()); !equalKeys(got, [][]byte{[]byte("empty"), []byte("one")}) {
			t.Errorf("keys %q, want [empty one]", got)
		}
		return nil
	})
}

func testReadYourWrites(t *testing.T, db backend.DB) {
	fill(t, db, "b", 3)
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		put(t, b, "k", "v1")
		wantValue(t, b, "k", []byte("v1"))
		put(t, b, "k", "v2")
		wantValue(t, b, "k", []byte("v2"))
		if err := b.Delete([]byte("k")); err != nil {
			return err
		}
		wantValue(t, b, "k", nil)
		put(t, b, "k", "v3")
		wantValue(t, b, "k", []byte("v3"))

		// Committed keys: read, overwritten, deleted.
		wantValue(t, b, string(numKey(1)), numValue(1))
		put(t, b, string(numKey(1)), "new")
		wantValue(t, b, string(numKey(1)), []byte("new"))
		if err := b.Delete(numKey(2)); err != nil {
			return err
		}
		wantValue(t, b, string(numKey(2)), nil)

		// A bucket created in this transaction is there at once.
		nb := bucket(t, tx, "fresh")
		put(t, nb, "a", "b")
		if tx.Bucket([]byte("fresh")) == nil {
			t.Error("bucket created in this transaction not found")
		}
		wantValue(t, tx.Bucket([]byte("fresh")), "a", []byte("b"))
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		wantValue(t, b, "k", []byte("v3"))
		wantValue(t, b, string(numKey(0)), numValue(0))
		wantValue(t, b, string(numKey(1)), []byte("new"))
		wantValue(t, b, string(numKey(2)), nil)
		wantValue(t, bucket(t, tx, "fresh"), "a", []byte("b"))
		return nil
	})
}

// testValuesStayValid checks that bytes a transaction returned keep their
// content until it ends, whatever it writes meanwhile.
func testValuesStayValid(t *testing.T, db backend.DB) {
	fill(t, db, "b", 10)
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		got := b.Get(numKey(5))
		k, v := b.Cursor().Seek(numKey(6))
		put(t, b, string(numKey(5)), "overwritten")
		put(t, b, string(numKey(6)), "overwritten")
		for i := range 200 {
			put(t, b, string(numKey(1000+i)), "more")
		}
		walk(b.Cursor())
		if !bytes.Equal(got, numValue(5)) {
			t.Errorf("value read before a write changed to %q", got)
		}
		if !bytes.Equal(k, numKey(6)) || !bytes.Equal(v, numValue(6)) {
			t.Errorf("cursor's key and value changed to %q=%q", k, v)
		}
		return nil
	})
}

func testKeyLimits(t *testing.T, db backend.DB) {
	longest := bytes.Repeat([]byte{0xff}, backend.MaxKeySize)
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		wantErr(t, "Put(empty key)", b.Put(nil, []byte("v")), backend.ErrKeyRequired)
		wantErr(t, "Put(empty key)", b.Put([]byte{}, []byte("v")), backend.ErrKeyRequired)
		wantErr(t, "Put(too long key)", b.Put(append(longest, 0), []byte("v")), backend.ErrKeyTooLarge)
		if err := b.Put(longest, []byte("longest")); err != nil {
			t.Errorf("Put(key of MaxKeySize): %v", err)
		}
		put(t, b, "a", "short")
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		if v := b.Get(longest); string(v) != "longest" {
			t.Errorf("Get(key of MaxKeySize) = %q", v)
		}
		k, v := b.Cursor().Last()
		if !bytes.Equal(k, longest) || string(v) != "longest" {
			t.Errorf("Last() = %d-byte key %q, want the longest key", len(k), v)
		}
		return nil
	})
}

// testLongKeysOrder stores keys around and past the lengths a backend may
// index differently (long keys sharing long prefixes), and checks their
// order, lookups and deletes.
func testLongKeysOrder(t *testing.T, db backend.DB) {
	prefix := bytes.Repeat([]byte("p"), 3000)
	var keys [][]byte
	for _, n := range []int{1, 100, 1023, 1024, 1025, 2000, 2999, 3000, 3001, 5000, backend.MaxKeySize} {
		keys = append(keys, bytes.Repeat([]byte("p"), n))
	}
	for _, suffix := range []string{"", "\x00", "a", "b", "ba", "\xff", "\xff\xff"} {
		keys = append(keys, append(bytes.Clone(prefix), suffix...))
		keys = append(keys, append(bytes.Repeat([]byte("p"), 1024), suffix...))
		keys = append(keys, append(bytes.Repeat([]byte("p"), 1023), suffix...))
	}
	keys = append(keys, []byte("a"), []byte("q"), []byte("p%_*\\"))
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		for i, k := range keys {
			if err := b.Put(k, []byte{byte(i)}); err != nil {
				t.Fatalf("Put(%d-byte key): %v", len(k), err)
			}
		}
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		if got := walk(b.Cursor()); !equalKeys(got, keys) {
			t.Errorf("cursor order of long keys differs: got %d keys, want %d", len(got), len(keys))
		}
		for i, k := range keys {
			if v := b.Get(k); !bytes.Equal(v, []byte{byte(i)}) {
				t.Errorf("Get(%d-byte key) = %v, want [%d]", len(k), v, i)
			}
			// Seek just past k (k plus a zero byte) lands on the next key.
			got, _ := b.Cursor().Seek(append(bytes.Clone(k), 0))
			var want []byte
			if i+1 < len(keys) {
				want = keys[i+1]
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Seek past the %d-byte key #%d: got a %d-byte key, want %d bytes", len(k), i, len(got), len(want))
			}
		}
		return nil
	})
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		for i, k := range keys {
			if i%2 == 0 {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
		}
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		var want [][]byte
		for i, k := range keys {
			if i%2 == 1 {
				want = append(want, k)
			}
		}
		if got := walk(bucket(t, tx, "b").Cursor()); !equalKeys(got, want) {
			t.Errorf("after deleting every other long key: %d keys, want %d", len(got), len(want))
		}
		return nil
	})
}

// testNestedBuckets checks that nested buckets read as keys with nil
// values, in key order, and that keys and bucket names never mix.
func testNestedBuckets(t *testing.T, db backend.DB) {
	update(t, db, func(tx backend.Tx) error {
		p := bucket(t, tx, "p")
		put(t, p, "a", "1")
		put(t, p, "m", "2")
		put(t, p, "z", "3")
		for _, name := range []string{"k", "n"} {
			nb, err := p.CreateBucket([]byte(name))
			if err != nil {
				return err
			}
			put(t, nb, "inner", name)
		}
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		p := bucket(t, tx, "p")
		type kv struct{ k, v string }
		var got []kv
		var nils []string
		err := p.ForEach(func(k, v []byte) error {
			got = append(got, kv{string(k), string(v)})
			if v == nil {
				nils = append(nils, string(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		want := []kv{{"a", "1"}, {"k", ""}, {"m", "2"}, {"n", ""}, {"z", "3"}}
		if !slices.Equal(got, want) || !slices.Equal(nils, []string{"k", "n"}) {
			t.Errorf("ForEach = %v with nil values at %v, want %v with nil at [k n]", got, nils, want)
		}
		wantValue(t, p, "k", nil)
		if nb := p.Bucket([]byte("k")); nb == nil {
			t.Error("nested bucket k missing")
		} else {
			wantValue(t, nb, "inner", []byte("k"))
		}
		if p.Bucket([]byte("a")) != nil {
			t.Error("key a opened as a bucket")
		}
		if tx.Bucket([]byte("k")) != nil {
			t.Error("nested bucket k found at the top level")
		}
		c := p.Cursor()
		if k, v := c.Seek([]byte("j")); string(k) != "k" || v != nil {
			t.Errorf("Seek(j) = %q, %v; want k, nil", k, v)
		}
		return nil
	})
}

func testBucketErrors(t *testing.T, db backend.DB) {
	update(t, db, func(tx backend.Tx) error {
		p := bucket(t, tx, "p")
		put(t, p, "key", "v")
		if _, err := p.CreateBucket([]byte("sub")); err != nil {
			return err
		}
		return nil
	})
	update(t, db, func(tx backend.Tx) error {
		p := bucket(t, tx, "p")
		wantErr(t, "Put over a nested bucket", p.Put([]byte("sub"), []byte("v")), backend.ErrIncompatible)
		wantErr(t, "Delete of a nested bucket's name", p.Delete([]byte("sub")), backend.ErrIncompatible)
		_, err := p.CreateBucket([]byte("key"))
		wantErr(t, "CreateBucket over a key", err, backend.ErrIncompatible)
		_, err = p.CreateBucketIfNotExists([]byte("key"))
		wantErr(t, "CreateBucketIfNotExists over a key", err, backend.ErrIncompatible)
		wantErr(t, "DeleteBucket of a key", p.DeleteBucket([]byte("key")), backend.ErrIncompatible)
		_, err = p.CreateBucket([]byte("sub"))
		wantErr(t, "CreateBucket of an existing bucket", err, backend.ErrBucketExists)
		_, err = tx.CreateBucketIfNotExists([]byte("p"))
		if err != nil {
			t.Errorf("CreateBucketIfNotExists of an existing bucket: %v", err)
		}
		if sub, err := p.CreateBucketIfNotExists([]byte("sub")); err != nil || sub == nil {
			t.Errorf("CreateBucketIfNotExists of an existing nested bucket: %v", err)
		}
		wantErr(t, "DeleteBucket of a missing bucket", p.DeleteBucket([]byte("missing")), backend.ErrBucketNotFound)
		wantErr(t, "Tx.DeleteBucket of a missing bucket", tx.DeleteBucket([]byte("missing")), backend.ErrBucketNotFound)
		if _, err := p.CreateBucket(nil); err == nil {
			t.Error("CreateBucket with an empty name succeeded")
		}
		k, _ := p.Cursor().Seek([]byte("sub"))
		c := p.Cursor()
		c.Seek([]byte("sub"))
		wantErr(t, "Cursor.Delete on a nested bucket", c.Delete(), backend.ErrIncompatible)
		if string(k) != "sub" {
			t.Errorf("Seek(sub) = %q", k)
		}
		// A key put, then deleted, frees its name for a bucket; a deleted
		// bucket frees its name for a key.
		put(t, p, "was-key", "v")
		if err := p.Delete([]byte("was-key")); err != nil {
			return err
		}
		if _, err := p.CreateBucket([]byte("was-key")); err != nil {
			t.Errorf("CreateBucket over a deleted key: %v", err)
		}
		if err := p.DeleteBucket([]byte("sub")); err != nil {
			return err
		}
		if err := p.Put([]byte("sub"), []byte("now a key")); err != nil {
			t.Errorf("Put over a deleted bucket: %v", err)
		}
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		p := bucket(t, tx, "p")
		wantValue(t, p, "sub", []byte("now a key"))
		wantValue(t, p, "was-key", nil)
		if p.Bucket([]byte("was-key")) == nil {
			t.Error("bucket was-key missing")
		}
		return nil
	})
}

func testDeleteBucketSubtree(t *testing.T, db backend.DB) {
	update(t, db, func(tx backend.Tx) error {
		top := bucket(t, tx, "top")
		put(t, top, "keep", "v")
		b := top
		for _, name := range []string{"a", "b", "c"} {
			nb, err := b.CreateBucket([]byte(name))
			if err != nil {
				return err
			}
			put(t, nb, "k", name)
			b = nb
		}
		return nil
	})
	update(t, db, func(tx backend.Tx) error {
		top := bucket(t, tx, "top")
		if err := top.DeleteBucket([]byte("a")); err != nil {
			return err
		}
		if top.Bucket([]byte("a")) != nil {
			t.Error("deleted bucket still there in its transaction")
		}
		// Recreated under the same name, it starts empty.
		a, err := top.CreateBucket([]byte("a"))
		if err != nil {
			return err
		}
		if a.Get([]byte("k")) != nil || a.Bucket([]byte("b")) != nil {
			t.Error("recreated bucket holds the deleted one's content")
		}
		return top.DeleteBucket([]byte("a"))
	})
	view(t, db, func(tx backend.Tx) error {
		top := bucket(t, tx, "top")
		if top.Bucket([]byte("a")) != nil {
			t.Error("deleted bucket came back")
		}
		if got := walk(top.Cursor()); !equalKeys(got, [][]byte{[]byte("keep")}) {
			t.Errorf("keys after DeleteBucket: %q", got)
		}
		if s := top.Stats(); s.Keys != 1 {
			t.Errorf("Stats().Keys = %d after deleting the subtree, want 1", s.Keys)
		}
		return nil
	})
	update(t, db, func(tx backend.Tx) error { return tx.DeleteBucket([]byte("top")) })
	view(t, db, func(tx backend.Tx) error {
		if tx.Bucket([]byte("top")) != nil {
			t.Error("deleted top-level bucket still there")
		}
		return nil
	})
}

func testForEachBucketOrder(t *testing.T, db backend.DB) {
	names := []string{"m", "\xff", "a", "\x00", "ab", "b", "A", "a\x00"}
	update(t, db, func(tx backend.Tx) error {
		p := bucket(t, tx, "p")
		put(t, p, "aa", "a key, not a bucket")
		for _, n := range names {
			if _, err := p.CreateBucket([]byte(n)); err != nil {
				return err
			}
			if _, err := tx.CreateBucketIfNotExists([]byte(n)); err != nil {
				return err
			}
		}
		return nil
	})
	want := slices.Clone(names)
	slices.Sort(want)
	view(t, db, func(tx backend.Tx) error {
		var got []string
		if err := bucket(t, tx, "p").ForEachBucket(func(name []byte) error {
			got = append(got, string(name))
			return nil
		}); err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			t.Errorf("ForEachBucket = %q, want %q", got, want)
		}
		var top []string
		if err := tx.ForEach(func(name []byte, b backend.Bucket) error {
			if b == nil {
				t.Errorf("ForEach gave bucket %q as nil", name)
			}
			top = append(top, string(name))
			return nil
		}); err != nil {
			return err
		}
		wantTop := append(slices.Clone(want), "p")
		slices.Sort(wantTop)
		if !slices.Equal(top, wantTop) {
			t.Errorf("Tx.ForEach = %q, want %q", top, wantTop)
		}
		return nil
	})
}

func testForEachStops(t *testing.T, db backend.DB) {
	fill(t, db, "b", 50)
	update(t, db, func(tx backend.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("c"))
		return err
	})
	view(t, db, func(tx backend.Tx) error {
		n := 0
		err := bucket(t, tx, "b").ForEach(func(k, v []byte) error {
			n++
			if n == 10 {
				return errTest
			}
			return nil
		})
		if !errors.Is(err, errTest) || n != 10 {
			t.Errorf("Bucket.ForEach went on after an error: %d calls, %v", n, err)
		}
		n = 0
		err = tx.ForEach(func([]byte, backend.Bucket) error { n++; return errTest })
		if !errors.Is(err, errTest) || n != 1 {
			t.Errorf("Tx.ForEach went on after an error: %d calls, %v", n, err)
		}
		return nil
	})
}

func testSequences(t *testing.T, db backend.DB) {
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		if s := b.Sequence(); s != 0 {
			t.Errorf("new bucket's Sequence() = %d", s)
		}
		for want := uint64(1); want <= 3; want++ {
			if got, err := b.NextSequence(); err != nil || got != want {
				t.Errorf("NextSequence() = %d, %v; want %d", got, err, want)
			}
		}
		nb, err := b.CreateBucket([]byte("nested"))
		if err != nil {
			return err
		}
		return nb.SetSequence(40)
	})
	// A rolled-back transaction's sequence changes are gone.
	err := db.Update(t.Context(), func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		if got, err := b.NextSequence(); err != nil || got != 4 {
			t.Errorf("NextSequence() = %d, %v; want 4", got, err)
		}
		return errTest
	})
	wantErr(t, "Update", err, errTest)
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		if got, err := b.NextSequence(); err != nil || got != 4 {
			t.Errorf("NextSequence() after a rollback = %d, %v; want 4", got, err)
		}
		return bucket(t, tx, "big").SetSequence(1<<63 + 5)
	})
	view(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		if s := b.Sequence(); s != 4 {
			t.Errorf("Sequence() = %d, want 4", s)
		}
		if s := b.Bucket([]byte("nested")).Sequence(); s != 40 {
			t.Errorf("nested Sequence() = %d, want 40", s)
		}
		if s := bucket(t, tx, "big").Sequence(); s != 1<<63+5 {
			t.Errorf("Sequence() = %d, want %d", s, uint64(1<<63+5))
		}
		_, err := b.NextSequence()
		wantErr(t, "NextSequence in a read transaction", err, backend.ErrTxNotWritable)
		wantErr(t, "SetSequence in a read transaction", b.SetSequence(9), backend.ErrTxNotWritable)
		return nil
	})
}

func testStats(t *testing.T, db backend.DB) {
	var dataBytes int64
	update(t, db, func(tx backend.Tx) error {
		p := bucket(t, tx, "p")
		for _, kv := range [][2]string{{"a", "12345"}, {"b", ""}, {"c", "xyz"}} {
			put(t, p, kv[0], kv[1])
			dataBytes += int64(len(kv[0]) + len(kv[1]))
		}
		nb, err := p.CreateBucket([]byte("n"))
		if err != nil {
			return err
		}
		put(t, nb, "x", "1")
		put(t, nb, "y", "22")
		dataBytes += 2 + 3
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		s := bucket(t, tx, "p").Stats()
		// Three keys, the nested bucket's name, and its two keys.
		if s.Keys != 6 {
			t.Errorf("Stats().Keys = %d, want 6", s.Keys)
		}
		if s.Used < dataBytes || s.Bytes < s.Used {
			t.Errorf("Stats() = %+v: want Bytes >= Used >= %d (the keys' and values' bytes)", s, dataBytes)
		}
		if s := bucket(t, tx, "p").Bucket([]byte("n")).Stats(); s.Keys != 2 {
			t.Errorf("nested Stats().Keys = %d, want 2", s.Keys)
		}
		return nil
	})
}

func testSize(t *testing.T, db backend.DB) {
	fill(t, db, "b", 100)
	view(t, db, func(tx backend.Tx) error {
		if s := tx.Size(); s <= 0 {
			t.Errorf("Tx.Size() = %d", s)
		}
		return nil
	})
	u, err := db.Usage(t.Context())
	if err != nil || u.Size <= 0 || u.Free < 0 {
		t.Errorf("Usage() = %+v, %v", u, err)
	}
}

// testPrefetch: Prefetch (where a backend has it) changes no value Get
// returns: committed, written and deleted in the transaction, empty,
// missing, a nested bucket's name, long keys, and keys asked twice.
func testPrefetch(t *testing.T, db backend.DB) {
	long := strings.Repeat("L", 2000)
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		for _, k := range []string{"a", "b", "c", "d", long} {
			put(t, b, k, "v-"+k[:1])
		}
		put(t, b, "empty", "")
		_, err := b.CreateBucket([]byte("nested"))
		return err
	})
	keys := func(ks ...string) [][]byte {
		out := make([][]byte, len(ks))
		for i, k := range ks {
			out[i] = []byte(k)
		}
		return out
	}
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		wantValue(t, b, "a", []byte("v-a")) // read before: cached
		put(t, b, "b", "new")
		if err := b.Delete([]byte("c")); err != nil {
			return err
		}
		put(t, b, "fresh", "f")
		backend.Prefetch(b, keys("a", "b", "c", "d", "d", "empty", "missing", "nested", "fresh", long, ""))
		wantValue(t, b, "a", []byte("v-a"))
		wantValue(t, b, "b", []byte("new"))
		wantValue(t, b, "c", nil)
		wantValue(t, b, "d", []byte("v-d"))
		wantValue(t, b, "empty", []byte{})
		wantValue(t, b, "missing", nil)
		wantValue(t, b, "nested", nil)
		wantValue(t, b, "fresh", []byte("f"))
		wantValue(t, b, long, []byte("v-L"))
		return nil
	})
	view(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "b")
		backend.Prefetch(b, keys("a", "b", "c", "zzz"))
		wantValue(t, b, "a", []byte("v-a"))
		wantValue(t, b, "b", []byte("new"))
		wantValue(t, b, "c", nil)
		wantValue(t, b, "zzz", nil)
		return nil
	})
}
