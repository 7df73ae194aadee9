package pgstore

import "bytes"

// tail is what a transaction knows of where a bucket's keys end on the
// server (what is committed, plus what this transaction flushed): no key
// at or after end exists, and last, when known, is the last key. The
// store's ids are UUIDv7, so the keys of a new item sort after every
// existing one: once a transaction has seen a bucket's end, the lookups a
// new item makes there (is the id taken? its latest revision? its chunks?)
// are answered without a round trip, for every item of a Batch after the
// first. A read transaction's snapshot never changes; a write transaction
// is the only writer and updates its tails as it flushes.
type tail struct {
	end  []byte // nil: unknown; empty: the bucket has no key
	last *row   // nil: unknown
}

// successor is the first key after k.
func successor(k []byte) []byte { return append(bytes.Clone(k), 0) }

// absent reports whether the server holds no key at or after from in the
// bucket; with t.mu held.
func (t *tx) absent(bucket int64, from []byte) bool {
	tl := t.tails[bucket]
	return tl != nil && tl.end != nil && bytes.Compare(from, tl.end) >= 0
}

func (t *tx) tail(bucket int64) *tail {
	tl := t.tails[bucket]
	if tl == nil {
		tl = &tail{}
		t.tails[bucket] = tl
	}
	return tl
}

// learnEnd records that the server holds no key at or after end.
func (t *tx) learnEnd(bucket int64, end []byte) {
	tl := t.tail(bucket)
	if tl.end == nil || bytes.Compare(end, tl.end) < 0 {
		tl.end = bytes.Clone(end)
		if tl.last != nil && bytes.Compare(tl.last.key, end) >= 0 {
			tl.last = nil
		}
	}
}

// learnLast records the bucket's last key on the server.
func (t *tx) learnLast(bucket int64, r row) {
	tl := t.tail(bucket)
	tl.last, tl.end = &r, successor(r.key)
}

// learnEmpty records that the bucket has no key on the server.
func (t *tx) learnEmpty(bucket int64) {
	tl := t.tail(bucket)
	tl.last, tl.end = nil, []byte{}
}

// wrote updates what is known of the bucket's end after key was written
// on the server (value nil: deleted; bucketName: it now names a nested
// bucket).
func (t *tx) wrote(bucket int64, key, value []byte, bucketName bool) {
	tl := t.tails[bucket]
	switch {
	case tl == nil || tl.end == nil:
	case tl.last != nil && bytes.Equal(tl.last.key, key) && (value != nil || bucketName):
		tl.last = &row{key: tl.last.key, value: value, bucket: bucketName} // overwritten
	case value == nil && !bucketName:
		if tl.last != nil && bytes.Equal(tl.last.key, key) {
			tl.last = nil // the end stays a bound
		}
	case bytes.Compare(key, tl.end) >= 0:
		// Past the end: the new last key, known exactly if the previous
		// one was or the bucket was empty.
		exact := tl.last != nil || len(tl.end) == 0
		tl.end = successor(key)
		tl.last = nil
		if exact {
			tl.last = &row{key: bytes.Clone(key), value: value, bucket: bucketName}
		}
	}
}
