package ingest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// DefaultExcludes are directory names never descended into: version control
// metadata, dependencies, caches and build output. vendor is absent on
// purpose: in Go it is source.
var DefaultExcludes = []string{
	".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
	".pytest_cache", ".gradle", ".idea", "target", "dist", "build", "out", ".next", ".nuxt", ".cache",
	"coverage", ".terraform",
}

// WalkOptions say which files of a tree Walk reports.
type WalkOptions struct {
	Exclude       []string // extra gitignore-syntax patterns, relative to the walk root
	IncludeHidden bool     // descend into dot-directories and read dotfiles (secrets are still refused)
	MaxFileBytes  int64    // files larger than this are reported with ErrTooLarge; 0 = no limit
	Policy        Policy
}

// Entry is one file found by Walk.
type Entry struct {
	Path    string // absolute path as reached under the root (symlinks not resolved)
	Size    int64
	ModTime time.Time
	Inode   uint64 // the file's inode (its target's, for a symlink); 0 where the platform has none
	Err     error  // non-nil: reported but not to be read (refused secret, symlink escaping the root, unreadable dir/file, too large)
}

// Walk calls fn for each file under root in lexical order, the way git sees
// the tree. root may be a file: fn is called once, and only the Policy and
// the size cap apply to it. The root must pass o.Policy.Check, else Walk
// returns that error.
//
// Not reported at all: files matched by a .gitignore (every one from root
// down, nested ones taking precedence, negations included) or by o.Exclude
// (a root .gitignore's lines appended last), directories in
// DefaultExcludes, dotfiles and dot-directories unless o.IncludeHidden, and
// non-regular files.
//
// Reported with Entry.Err: secrets (SecretReason) unless allowed, symlinks
// that resolve outside root and symlinks to directories (ErrRefused; neither
// is followed), unreadable directories and files (ErrUnreadable; the walk
// goes on) and files over o.MaxFileBytes (ErrTooLarge). Symlinks to files
// inside root are followed: the Entry has the target's size and time.
//
// fn returning an error stops the walk and Walk returns it; cancelling ctx
// stops it with ctx.Err().
func Walk(ctx context.Context, root string, o WalkOptions, fn func(Entry) error) error {
	w, info, err := newWalker(ctx, root, o, fn)
	if err != nil {
		return err
	}
	if info.IsDir() {
		return w.walkDir(w.root, nil)
	}
	if !info.Mode().IsRegular() {
		return newError(ErrUnreadable, w.root, "pass a regular file or a directory", "%s is not a regular file or a directory", w.root)
	}
	return w.file(w.root, w.realRoot, info)
}

// walker holds the state of one walk: the gitignore patterns in force are a
// stack, each directory pushing the patterns of its .gitignore on entry and
// popping them on exit, so each .gitignore is read once.
type walker struct {
	ctx      context.Context
	root     string // absolute, symlinks not resolved: entry paths start with it
	realRoot string // symlinks resolved: where symlink targets must stay
	o        WalkOptions
	excludes []gitignore.Pattern // o.Exclude
	stack    []gitignore.Pattern
	fn       func(Entry) error
	// enterDir, if set, is called for each directory listed, with the
	// patterns of its own .gitignore; Watch uses it to add watches.
	enterDir func(dir string, own []gitignore.Pattern) error
}

// newWalker checks the exclude patterns, checks the root against the
// policy and stats it.
func newWalker(ctx context.Context, root string, o WalkOptions, fn func(Entry) error) (*walker, fs.FileInfo, error) {
	if err := CheckPatterns(o.Exclude); err != nil {
		return nil, nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, newError(ErrInvalid, root, "pass an absolute path", "cannot make %s absolute: %v", root, err)
	}
	if err := o.Policy.Check(abs); err != nil {
		return nil, nil, err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, nil, newError(ErrUnreadable, abs, "check that the path exists and is readable", "cannot read %s: %v", abs, err)
	}
	w := &walker{
		ctx:      ctx,
		root:     abs,
		realRoot: resolveExisting(abs),
		o:        o,
		excludes: parsePatterns(o.Exclude, nil),
		fn:       fn,
	}
	return w, info, nil
}

func (w *walker) walkDir(dir string, rel []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return w.fn(Entry{Path: dir, Err: newError(ErrUnreadable, dir, "check the directory's permissions", "cannot list %s: %v", dir, err)})
	}
	own := w.ownPatterns(dir, rel)
	if w.enterDir != nil {
		if err := w.enterDir(dir, own); err != nil {
			return err
		}
	}
	depth := len(w.stack)
	w.stack = append(w.stack, own...)
	defer func() { w.stack = w.stack[:depth] }()
	ignored := gitignore.NewMatcher(w.stack)
	for _, d := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if err := w.entry(dir, rel, ignored, d); err != nil {
			return err
		}
	}
	return nil
}

// entry handles one directory entry of dir; rel is dir relative to the root.
func (w *walker) entry(dir string, rel []string, ignored gitignore.Matcher, d fs.DirEntry) error {
	name := d.Name()
	path := filepath.Join(dir, name)
	relPath := append(rel[:len(rel):len(rel)], name)
	switch {
	case d.IsDir():
		if w.skip(relPath, true, ignored) {
			return nil
		}
		return w.walkDir(path, relPath)
	case d.Type()&fs.ModeSymlink != 0:
		return w.symlink(path, relPath, ignored)
	case d.Type().IsRegular():
		if w.skip(relPath, false, ignored) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return w.unreadable(path, err)
		}
		return w.file(path, path, info)
	}
	return nil
}

// skip reports whether a path is filtered out silently.
func (w *walker) skip(relPath []string, isDir bool, ignored gitignore.Matcher) bool {
	name := relPath[len(relPath)-1]
	return !w.o.IncludeHidden && strings.HasPrefix(name, ".") ||
		isDir && slices.Contains(DefaultExcludes, name) ||
		ignored.Match(relPath, isDir)
}

// symlink handles a link under the root. Links to directories are not
// followed: they could loop, or bring a tree in twice.
func (w *walker) symlink(path string, relPath []string, ignored gitignore.Matcher) error {
	target, err := filepath.EvalSymlinks(path)
	var info fs.FileInfo
	if err == nil {
		info, err = os.Stat(target)
	}
	if err != nil {
		if w.skip(relPath, false, ignored) {
			return nil
		}
		return w.fn(Entry{Path: path, Err: newError(ErrUnreadable, path, "fix or remove the link", "broken symlink %s: %v", path, err)})
	}
	if w.skip(relPath, info.IsDir(), ignored) {
		return nil
	}
	switch {
	case !within(w.realRoot, target):
		return w.fn(Entry{Path: path, Err: newError(ErrRefused, path, "ingest the target itself, from an allowed root",
			"symlink escapes the tree: %s points to %s", path, target)})
	case info.IsDir():
		return w.fn(Entry{Path: path, Err: newError(ErrRefused, path, "ingest the target directory itself",
			"symlinked directory not followed: %s points to %s", path, target)})
	case !info.Mode().IsRegular():
		return nil
	}
	return w.file(path, target, info)
}

// file reports a regular file reached as path, whose content is at target.
func (w *walker) file(path, target string, info fs.FileInfo) error {
	return w.fn(Entry{Path: path, Size: info.Size(), ModTime: info.ModTime(), Inode: inode(info), Err: w.fileErr(path, target, info.Size())})
}

// fileErr says why a file must not be read, or returns nil.
func (w *walker) fileErr(path, target string, size int64) error {
	if !w.o.Policy.AllowSecrets {
		if err := secretError(path, target); err != nil {
			return err
		}
	}
	if w.o.MaxFileBytes > 0 && size > w.o.MaxFileBytes {
		return newError(ErrTooLarge, path, "raise the file size limit, or exclude the file",
			"%s is %d bytes, over the limit of %d", path, size, w.o.MaxFileBytes)
	}
	// Opening is the only reliable readability test (ACLs, root, network
	// file systems), and it spares the reader files it cannot read.
	f, err := os.Open(target)
	if err != nil {
		return fileUnreadable(path, err)
	}
	f.Close()
	return nil
}

// inode returns a file's inode number, or 0 where the platform has none.
func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

func (w *walker) unreadable(path string, err error) error {
	return w.fn(Entry{Path: path, Err: fileUnreadable(path, err)})
}

func fileUnreadable(path string, err error) error {
	return newError(ErrUnreadable, path, "check that the file exists and its permissions", "cannot read %s: %v", path, err)
}

// ownPatterns parses dir's .gitignore (a missing or unreadable one has no
// patterns); the root's is followed by o.Exclude.
func (w *walker) ownPatterns(dir string, rel []string) []gitignore.Pattern {
	var own []gitignore.Pattern
	if data, err := os.ReadFile(filepath.Join(dir, ".gitignore")); err == nil {
		own = parsePatterns(strings.Split(string(data), "\n"), rel)
	}
	if len(rel) == 0 {
		own = append(own, w.excludes...)
	}
	return own
}

// CheckPatterns refuses exclude patterns that would silently match nothing:
// empty ones, comments, and globs go-git cannot match (it matches each
// segment with filepath.Match, which answers false for a malformed one).
func CheckPatterns(patterns []string) error {
	const hint = `fix or drop the pattern (exclude, --exclude): gitignore syntax such as "*.csv", "build/", "docs/**/draft-*"; escape a literal [ or a leading # with \`
	for _, p := range patterns {
		body := strings.TrimSuffix(strings.TrimRight(strings.TrimPrefix(p, "!"), " "), "/")
		switch {
		case strings.TrimSpace(p) == "":
			return newError(ErrInvalid, "", hint, "The exclude pattern %q is empty.", p)
		case strings.HasPrefix(p, "#"):
			return newError(ErrInvalid, "", hint, "The exclude pattern %q is a comment in gitignore syntax and matches nothing.", p)
		}
		for _, seg := range strings.Split(body, "/") {
			if _, err := filepath.Match(seg, ""); err != nil {
				return newError(ErrInvalid, "", hint, "The exclude pattern %q is not a valid glob: %v (in %q).", p, err, seg)
			}
		}
	}
	return nil
}

// parsePatterns parses gitignore lines for the directory domain (path
// segments from the walk root).
func parsePatterns(lines []string, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, newLeafPattern(line, domain))
	}
	return ps
}

// leafPattern makes a go-git pattern match a path only by the path itself,
// as git does. go-git's patterns also match every path below a directory
// they match, so "!*/" (re-include all directories) would re-include every
// file, and "logs/**" matches logs itself, hiding "!logs/keep/".
type leafPattern struct {
	gitignore.Pattern
	domain []string
	// nameOnly: the pattern has no slash and matches the last segment at any depth.
	nameOnly bool
	// matchesBelow: the pattern ends in "/**" and matches only what is below its prefix.
	matchesBelow bool
}

func newLeafPattern(line string, domain []string) gitignore.Pattern {
	body := strings.TrimSuffix(strings.TrimRight(strings.TrimPrefix(line, "!"), " "), "/")
	if !strings.Contains(body, "/") {
		return leafPattern{Pattern: gitignore.ParsePattern(line, nil), domain: slices.Clone(domain), nameOnly: true}
	}
	return leafPattern{Pattern: gitignore.ParsePattern(line, domain), domain: slices.Clone(domain), matchesBelow: strings.HasSuffix(body, "/**")}
}

func (p leafPattern) Match(path []string, isDir bool) gitignore.MatchResult {
	if p.nameOnly {
		if len(path) <= len(p.domain) || !slices.Equal(path[:len(p.domain)], p.domain) {
			return gitignore.NoMatch
		}
		return p.Pattern.Match(path[len(path)-1:], isDir)
	}
	r := p.Pattern.Match(path, isDir)
	if r == gitignore.NoMatch {
		return r
	}
	// go-git matches the same way on the parent when it matched through a
	// directory above path, which git counts only for "/**" patterns.
	parent := path[:len(path)-1]
	throughParent := len(parent) > len(p.domain) && p.Pattern.Match(parent, true) == r
	if throughParent != p.matchesBelow {
		return gitignore.NoMatch
	}
	return r
}
