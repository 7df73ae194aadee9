package vector

import (
	"errors"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestIndex_int8RowsOutsideHeap: the int8 rows of an index with an exact
// source are mapped outside the Go heap, so the collector's headroom does
// not double them; the heap grows by the ids and the row map only.
func TestIndex_int8RowsOutsideHeap(t *testing.T) {
	const dims, n = 384, 20000
	heapBefore := liveHeap()
	x := NewWithOptions(dims, Options{Exact: mapSource{}})
	r := rng(5)
	v := make([]float32, dims)
	for id := range uint64(n) {
		r.fillRandom(v)
		if err := x.Upsert(id+1, v); err != nil {
			t.Fatal(err)
		}
	}
	rowBytes := int64(n * x.qstride)
	if mapped := x.qmem.size.Load(); mapped < rowBytes {
		t.Errorf("the index maps %d bytes for %d bytes of int8 rows", mapped, rowBytes)
	}
	if grew := liveHeap() - heapBefore; grew > rowBytes/2 {
		t.Errorf("live heap grew by %d bytes for %d vectors, want under half their %d bytes of int8 rows", grew, n, rowBytes)
	}
	runtime.KeepAlive(x)
}

// TestIndex_releasesRowMaps: a grown map, a Load over the contents and the
// collection of the index each give their map back.
func TestIndex_releasesRowMaps(t *testing.T) {
	const dims = 64
	// No collection while maps are counted: the cleanups of other tests'
	// indexes would unmap theirs meanwhile.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := offHeapBytes.Load()
	x := NewWithOptions(dims, Options{Exact: mapSource{}})
	r := rng(6)
	mustBuild(t, x, &r, 5000) // grows its map by doubling
	if got, current := offHeapBytes.Load()-before, x.qmem.size.Load(); got != current || current < int64(5000*x.qstride) {
		t.Errorf("%d bytes mapped, the index's map is %d bytes for %d bytes of rows: grown maps were not unmapped", got, current, 5000*x.qstride)
	}
	var m Matrices
	if err := x.Export(func(e Matrices) error {
		m = Matrices{IDs: append([]uint64(nil), e.IDs[:100]...), Q: append([]int8(nil), e.Q[:100*e.QStride]...), QScale: append([]float32(nil), e.QScale[:100]...), QStride: e.QStride}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := x.Load(m); err != nil {
		t.Fatal(err)
	}
	if got, want := offHeapBytes.Load()-before, int64(100*x.qstride); got != want {
		t.Errorf("after loading 100 rows %d bytes are mapped, want %d", got, want)
	}

	held := x.qmem
	x = nil
	debug.SetGCPercent(100)
	deadline := time.Now().Add(10 * time.Second)
	for held.size.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still mapped 10s after the index became garbage", held.size.Load())
		}
		runtime.GC() // the cleanup runs once a collection finds the index unreachable
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIndex_LoadQuantized: rows exported from one index and filled into
// another answer the same searches; a fill that fails leaves the index as
// it was and maps nothing.
func TestIndex_LoadQuantized(t *testing.T) {
	const dims = 48
	r := rng(7)
	src := mapSource{}
	from := NewWithOptions(dims, Options{Exact: src})
	for id, v := range mustBuild(t, from, &r, 600) {
		src[id] = v
	}
	to := NewWithOptions(dims, Options{Exact: src})
	if err := from.Export(func(m Matrices) error {
		return to.LoadQuantized(append([]uint64(nil), m.IDs...), m.QStride, func(q []int8, qscale []float32) error {
			copy(q, m.Q)
			copy(qscale, m.QScale)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		q := make([]float32, dims)
		r.fillRandom(q)
		want, err := from.Search(q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := to.Search(q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("hit %d = %+v, want %+v", i, got[i], want[i])
			}
		}
	}

	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // as in TestIndex_releasesRowMaps
	mapped := offHeapBytes.Load()
	failed := errors.New("short file")
	err := to.LoadQuantized([]uint64{1, 2}, to.qstride, func([]int8, []float32) error { return failed })
	if !errors.Is(err, failed) {
		t.Fatalf("LoadQuantized with a failing fill: %v", err)
	}
	if to.Len() != 600 || offHeapBytes.Load() != mapped {
		t.Errorf("after a failed load: %d rows (want 600), %d bytes more mapped (want 0)", to.Len(), offHeapBytes.Load()-mapped)
	}
	if err := to.LoadQuantized(nil, to.qstride+32, nil); !errors.Is(err, ErrDims) {
		t.Errorf("LoadQuantized with another stride: %v", err)
	}
	if err := NewQuantized(dims, 0).LoadQuantized(nil, to.qstride, nil); err == nil {
		t.Error("LoadQuantized accepted an index that keeps float32 rows")
	}
}

// liveHeap is the heap's live bytes after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
