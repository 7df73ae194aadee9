//go:build linux

package boltstore

import (
	"golang.org/x/sys/unix"

	bolt "go.etcd.io/bbolt"
)

// releaseSupported: Linux can drop a shared file map's pages and keep them
// cached (MADV_DONTNEED, see ReleasePages).
const releaseSupported = true

// ReleasePages drops the file's pages from the process's memory map, so
// that a walk over the whole file (DiskUsage) or the reads of a busy spell
// (releaser) do not stay in the daemon's resident set: the pages stay in
// the kernel's page cache, and the next read of one maps it again without
// I/O. It runs inside a read
// transaction, which holds bbolt's map in place (a remap takes the write
// side of the same lock), and advises only the file's used size.
func (d *DB) ReleasePages() error {
	return d.db.View(func(t *bolt.Tx) error {
		// MADV_DONTNEED on a shared file mapping discards page table
		// entries, never data. The address comes from bbolt as a uintptr,
		// hence the raw syscall rather than unix.Madvise's []byte.
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, d.db.Info().Data, uintptr(t.Size()), unix.MADV_DONTNEED)
		if errno != 0 {
			return errno
		}
		return nil
	})
}
