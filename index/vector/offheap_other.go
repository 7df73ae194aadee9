//go:build !unix

package vector

func allocRows(n int) []byte {
	offHeapBytes.Add(int64(n))
	return make([]byte, n)
}

func freeRows(mem []byte) { offHeapBytes.Add(-int64(len(mem))) }
