package vfs

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/ctxd/ctxd/vfs/backend"
)

// Access is the part of the store a caller may see and change: whole drives
// and path subtrees. The zero value allows everything.
//
// Store methods read it from their context (WithAccess) and show the store
// as if nothing outside existed: a ref outside is not found (its not-found
// hints name only visible items and drives), an id of an item outside is
// unknown, and listings, trees, sizes, drive counts and history leave out
// what lies outside. A directory above an allowed subtree (agent:/ for
// agent:/project-x) shows only the way down to it. Changes must name refs
// inside: a write, a copy or move destination, or a delete of a directory
// above an allowed subtree is ErrDenied, whether or not anything exists
// there. Store-wide figures (Stats' file size, EmbedStats) and the indexes
// are not filtered: callers holding a limited Access must not be given them.
type Access struct {
	drives []string // whole drives, sorted
	roots  []Ref    // subtrees outside those drives, in key order, none below another
}

// NewAccess returns the Access of whole drives (names) and path subtrees
// ("drive:/path" refs; "agent:/project-x/" and "agent:/project-x" are the same
// subtree, which holds the directory itself and everything below it;
// "drive:/" is the whole drive). Neither drives nor paths: unlimited.
func NewAccess(drives, paths []string) (Access, error) {
	var a Access
	for _, d := range drives {
		if err := ValidateDrive(d); err != nil {
			return Access{}, err
		}
		a.drives = append(a.drives, d)
	}
	for _, p := range paths {
		r, err := ParseRef(p)
		if err != nil {
			return Access{}, err
		}
		if r.ID != "" || p[0] == '/' {
			return Access{}, newError(ErrInvalid, p, `name the subtree as "drive:/path", e.g. "agent:/project-x/"`,
				"The access path %s is not a drive:/path ref.", quote(p))
		}
		if r.Path == "/" {
			a.drives = append(a.drives, r.Drive)
			continue
		}
		a.roots = append(a.roots, r)
	}
	slices.Sort(a.drives)
	a.drives = slices.Compact(a.drives)
	slices.SortFunc(a.roots, func(x, y Ref) int {
		if c := strings.Compare(x.Drive, y.Drive); c != 0 {
			return c
		}
		return bytes.Compare(pathKey(x.Path), pathKey(y.Path))
	})
	// Drop subtrees a whole drive or another subtree already holds.
	roots := a.roots[:0]
	for _, r := range a.roots {
		covered := slices.Contains(a.drives, r.Drive) || slices.ContainsFunc(roots, func(o Ref) bool {
			return o.Drive == r.Drive && (o.Path == r.Path || isUnder(r.Path, o.Path))
		})
		if !covered {
			roots = append(roots, r)
		}
	}
	a.roots = slices.Clip(roots)
	return a, nil
}

// Limited reports whether a allows less than everything.
func (a Access) Limited() bool { return len(a.drives) > 0 || len(a.roots) > 0 }

// Allows reports whether the item or directory at drive and the clean path
// p lies inside a, so that it and everything below it are visible.
func (a Access) Allows(drive, p string) bool {
	if !a.Limited() || slices.Contains(a.drives, drive) {
		return true
	}
	return slices.ContainsFunc(a.roots, func(r Ref) bool {
		return r.Drive == drive && (r.Path == p || isUnder(p, r.Path))
	})
}

// Prefixes returns a as path prefixes ("agent:/" for a whole drive,
// "agent:/project-x" for a subtree), as search filters spell them; nil
// when a is unlimited.
func (a Access) Prefixes() []string {
	var out []string
	for _, d := range a.drives {
		out = append(out, FormatRef(d, "/"))
	}
	for _, r := range a.roots {
		out = append(out, r.String())
	}
	return out
}

// Drives returns the whole drives a is limited to, sorted.
func (a Access) Drives() []string { return slices.Clone(a.drives) }

// Paths returns the subtrees ("drive:/path") a is limited to besides its
// drives, in key order.
func (a Access) Paths() []string {
	out := make([]string, len(a.roots))
	for i, r := range a.roots {
		out[i] = r.String()
	}
	return out
}

// String describes a for messages: "drives agent, self and paths
// agent:/project-x/".
func (a Access) String() string {
	if !a.Limited() {
		return "everything"
	}
	var parts []string
	if len(a.drives) > 0 {
		parts = append(parts, "drives "+strings.Join(a.drives, ", "))
	}
	if len(a.roots) > 0 {
		paths := make([]string, len(a.roots))
		for i, r := range a.roots {
			paths[i] = r.String() + "/"
		}
		parts = append(parts, "paths "+strings.Join(paths, ", "))
	}
	return strings.Join(parts, " and ")
}

// rootsBelow returns the subtrees of a in drive strictly below dir, in key order.
func (a Access) rootsBelow(drive, dir string) []Ref {
	var out []Ref
	for _, r := range a.roots {
		if r.Drive == drive && isUnder(r.Path, dir) {
			out = append(out, r)
		}
	}
	return out
}

type accessKey struct{}

// WithAccess returns ctx carrying a: Store methods called with it see and
// change only what a allows.
func WithAccess(ctx context.Context, a Access) context.Context {
	return context.WithValue(ctx, accessKey{}, a)
}

// AccessFrom returns the Access ctx carries; unlimited when it carries none.
func AccessFrom(ctx context.Context) Access {
	a, _ := ctx.Value(accessKey{}).(Access)
	return a
}

// CheckChange returns ErrDenied for a change at drive and the clean path p
// outside a, the same whether or not anything exists there; nil inside.
func (a Access) CheckChange(drive, p string) error {
	if a.Allows(drive, p) {
		return nil
	}
	ref := FormatRef(drive, p)
	return newError(ErrDenied, ref,
		"work within "+a.String()+", or use a token whose drives or paths cover "+ref+" (tokens[].drives and tokens[].paths in the daemon config)",
		"This token may not change %s: it is limited to %s.", ref, a)
}

// visibleBelow reports whether anything visible lies below dir, a
// directory outside the caller's access.
func (t *txn) visibleBelow(b backend.Bucket, drive, dir string) bool {
	if b == nil {
		return false
	}
	for _, r := range t.access.rootsBelow(drive, dir) {
		if b.Get(pathKey(r.Path)) != nil || hasPrefix(b, dirPrefix(r.Path)) {
			return true
		}
	}
	return false
}

// keyRange is a run of a drive bucket's keys: self (if set) and the keys
// under prefix.
type keyRange struct{ self, prefix []byte }

// walkVisible calls fn for every visible entry below dir, in key order,
// starting after the key after (nil: from the start), until fn returns
// false. Without an access limit it is one prefix scan.
func (t *txn) walkVisible(b backend.Bucket, drive, dir string, after []byte, fn func(k, v []byte) bool) {
	if b == nil {
		return
	}
	ranges := []keyRange{{prefix: dirPrefix(dir)}}
	if !t.access.Allows(drive, dir) {
		ranges = ranges[:0]
		for _, r := range t.access.rootsBelow(drive, dir) {
			ranges = append(ranges, keyRange{self: pathKey(r.Path), prefix: dirPrefix(r.Path)})
		}
	}
	c := b.Cursor()
	for _, r := range ranges {
		start := r.prefix
		if r.self != nil {
			start = r.self
		}
		if after != nil && bytes.Compare(after, start) > 0 {
			start = after
		}
		for k, v := c.Seek(start); k != nil && (bytes.Equal(k, r.self) || bytes.HasPrefix(k, r.prefix)); k, v = c.Next() {
			if after != nil && bytes.Equal(k, after) {
				continue
			}
			if !fn(k, v) {
				return
			}
		}
	}
}

// visibleChildren is children restricted to the caller's access: below a
// directory outside it, only the directories leading to visible items, and
// the allowed subtrees themselves, are children (v nil for the former).
func (t *txn) visibleChildren(b backend.Bucket, drive, dir string, after []byte, fn func(k, v []byte) bool) {
	if b == nil {
		return
	}
	if t.access.Allows(drive, dir) {
		children(b, dir, after, fn)
		return
	}
	prefix := dirPrefix(dir)
	var last []byte
	for _, r := range t.access.rootsBelow(drive, dir) {
		rk := pathKey(r.Path)
		ck := rk[:segmentEnd(rk, len(prefix))]
		if bytes.Equal(ck, last) || after != nil && bytes.Compare(ck, after) <= 0 {
			continue
		}
		var v []byte
		if len(ck) == len(rk) { // the subtree's own directory or item
			if v = b.Get(ck); v == nil && !hasPrefix(b, dirPrefix(r.Path)) {
				continue
			}
		} else if !t.visibleBelow(b, drive, keyPath(ck)) {
			continue
		}
		last = ck
		if !fn(ck, v) {
			return
		}
	}
}

// visibleDrives returns the drives with visible items, by name, with the
// count and bytes of those items only.
func (t *txn) visibleDrives() []DriveInfo {
	var out []DriveInfo
	for _, name := range t.driveNames() {
		c, sz := t.counts(name)
		if !t.access.Allows(name, "/") {
			c, sz = 0, 0
			t.walkVisible(t.driveBucket(name), name, "/", nil, func(_, v []byte) bool {
				c, sz = c+1, sz+sizeOf(v)
				return true
			})
		}
		if c > 0 {
			out = append(out, DriveInfo{Name: name, ItemCount: c, Size: sz})
		}
	}
	return out
}

// visibleDriveNames returns the names of the drives with visible items.
func (t *txn) visibleDriveNames() []string {
	names := t.driveNames()
	if !t.access.Limited() {
		return names
	}
	return slices.DeleteFunc(names, func(d string) bool {
		return !t.access.Allows(d, "/") && !t.visibleBelow(t.driveBucket(d), d, "/")
	})
}

// visibleRev reports whether a revision recorded at drive:path is visible.
func (t *txn) visibleRev(rec revRec) bool { return t.access.Allows(rec.drive, rec.path) }
