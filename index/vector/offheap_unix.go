//go:build unix

package vector

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// allocRows maps n zeroed bytes of anonymous memory. The kernel backs pages
// only once they are written, so capacity beyond the rows costs address
// space, not memory.
func allocRows(n int) []byte {
	if n == 0 {
		return nil
	}
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		// As make would on exhausted memory: the index cannot go on.
		panic(fmt.Sprintf("vector: map %d bytes for int8 rows: %v", n, err))
	}
	offHeapBytes.Add(int64(n))
	return mem
}

func freeRows(mem []byte) {
	if err := unix.Munmap(mem); err != nil {
		panic(fmt.Sprintf("vector: unmap int8 rows: %v", err))
	}
	offHeapBytes.Add(-int64(len(mem)))
}
