//go:build !linux

package boltstore

// releaseSupported: only Linux releases mapped pages (see releaser).
const releaseSupported = false

// ReleasePages does nothing outside Linux: the resident set it trims is
// measured and documented there.
func (d *DB) ReleasePages() error { return nil }
