package vector

import (
	"sync/atomic"
	"unsafe"
)

// offHeap holds the int8 matrix outside the Go heap. The collector lets the
// heap grow to (1+GOGC/100) times what is live before it collects, so data
// kept in the heap costs up to twice its size in resident memory; the int8
// rows were a third of the daemon's live heap at 100k chunks (37 of 101 MB)
// and, at 1M, 380 MB that the default GOGC let grow to 760. They hold no
// pointers, so the collector has no reason to own them: on Unix they live in
// an anonymous memory map that the Index unmaps when it grows the map or is
// collected itself. Elsewhere they stay in the heap.
type offHeap struct {
	mem  []byte       // the map (or heap slice) backing the rows; its length is the capacity
	size atomic.Int64 // len(mem), for tests to read while a cleanup may release it
}

// offHeapBytes is how many bytes all offHeap maps hold, for tests.
var offHeapBytes atomic.Int64

// grow returns rows extended by n values, moved to a larger map (twice the
// size, or what n needs) when this one is full. The new values are whatever
// the map held there (zero, or rows deleted since): the caller writes them.
// The caller holds the Index's write lock: nothing reads rows while they
// move.
func (o *offHeap) grow(rows []int8, n int) []int8 {
	need := len(rows) + n
	if need <= len(o.mem) {
		return rows[:need]
	}
	mem := allocRows(max(need, 2*len(o.mem)))
	copy(mem, Int8Bytes(rows))
	o.adopt(mem)
	return bytesInt8(mem)[:need]
}

// adopt makes mem (from allocRows) the backing of the rows, releasing the
// old one. The caller holds the Index's write lock.
func (o *offHeap) adopt(mem []byte) {
	o.release()
	o.mem = mem
	o.size.Store(int64(len(mem)))
}

// release unmaps the backing; rows taken from it must no longer be used.
func (o *offHeap) release() {
	if o.mem != nil {
		freeRows(o.mem)
		o.mem = nil
		o.size.Store(0)
	}
}

// Int8Bytes views v's memory as bytes, to write or read int8 rows whole.
func Int8Bytes(v []int8) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v))
}

// bytesInt8 views b's memory as int8 values.
func bytesInt8(b []byte) []int8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b))
}
