// Package boltstore is the default backend of ctxd's item store: one bbolt
// file, for a daemon that owns its data alone. It implements the
// vfs/backend contract by converting bbolt's own types (a pointer
// conversion, nothing allocated), so the store above it runs as fast as it
// did when it called bbolt directly. Once the store has been idle a second
// it lets go of the file pages reads mapped (see releaser), so a daemon at
// rest does not count the page cache of its store as its own memory.
package boltstore
