package vfs

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

const (
	maxPathBytes    = 4096
	maxSegmentBytes = 255
	maxDriveBytes   = 64
	// urlDrive keeps its paths verbatim: "/" + an absolute URL whose "//" matters.
	urlDrive = "url"
)

// refFormsHint tells an agent which ref spellings ParseRef accepts.
const refFormsHint = `use "drive:/path" (e.g. "agent:/notes/todo.md"), "/path" for the agent drive, "drive:/" for a drive root, or an item id (UUID)`

// Ref addresses an item or directory: either ID is set, or Drive and Path are.
type Ref struct {
	Drive string
	Path  string // cleaned, starts with "/"; "/" is the drive root
	ID    string // canonical lowercase UUID
}

// ParseRef parses "drive:/path", "/path" (the agent drive), "drive:" or "drive:/"
// (a drive root) or an item id (UUID). The path is cleaned with CleanPath.
func ParseRef(s string) (Ref, error) {
	if s == "" {
		return Ref{}, newError(ErrInvalid, "", refFormsHint, "The ref is empty.")
	}
	if s[0] == '/' {
		p, err := CleanPath(DefaultDrive, s)
		if err != nil {
			return Ref{}, err
		}
		return Ref{Drive: DefaultDrive, Path: p}, nil
	}
	if isCanonicalUUID(s) {
		return Ref{ID: strings.ToLower(s)}, nil
	}
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return Ref{}, newError(ErrInvalid, "", refFormsHint,
			"The ref %s is neither drive:/path, /path nor an item id.", quote(s))
	}
	drive, rest := s[:i], s[i+1:]
	if err := ValidateDrive(drive); err != nil {
		return Ref{}, err
	}
	if rest == "" {
		rest = "/"
	}
	if rest[0] != '/' {
		return Ref{}, newError(ErrInvalid, "", refFormsHint,
			"The path in ref %s must start with \"/\".", quote(s))
	}
	p, err := CleanPath(drive, rest)
	if err != nil {
		return Ref{}, err
	}
	return Ref{Drive: drive, Path: p}, nil
}

// String returns the id, or "drive:/path".
func (r Ref) String() string {
	if r.ID != "" {
		return r.ID
	}
	return FormatRef(r.Drive, r.Path)
}

// FormatRef returns "drive:/path"; the drive root is "drive:/".
func FormatRef(drive, path string) string {
	if path == "" {
		path = "/"
	}
	return drive + ":" + path
}

// ValidateDrive checks a drive name: ^[a-z][a-z0-9_-]*$, at most 64 bytes.
func ValidateDrive(name string) error {
	const hint = "drive names are lowercase letters, digits, '_' and '-', starting with a letter, e.g. agent, disk, url, github"
	if name == "" {
		return newError(ErrInvalid, "", hint, "The drive name is empty.")
	}
	if len(name) > maxDriveBytes {
		return newError(ErrInvalid, "", hint, "The drive name %s is %d bytes long; the limit is %d.", quote(name), len(name), maxDriveBytes)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '-')
		if !ok {
			return newError(ErrInvalid, "", hint, "The drive name %s is invalid at byte %d.", quote(name), i)
		}
	}
	return nil
}

// CleanPath validates p and returns its clean form: p without a trailing "/".
// It rejects, never repairs, paths that do not start with "/", invalid UTF-8,
// control characters, empty segments ("//"), "." or ".." segments, paths over
// 4096 bytes and segments over 255 bytes. On the url drive the path is kept
// verbatim apart from trailing slashes: its "//" are part of the URL, and
// segments are not length-limited (URLs carry long query strings).
func CleanPath(drive, p string) (string, error) {
	const hint = `paths look like "/notes/todo.md": they start with "/" and contain no control characters or "." / ".." segments`
	if p == "" || p[0] != '/' {
		return "", newError(ErrInvalid, "", hint, "The path %s must start with \"/\".", quote(p))
	}
	if !utf8.ValidString(p) {
		return "", newError(ErrInvalid, "", hint, "The path %s is not valid UTF-8 (first bad byte at offset %d).", quote(p), invalidUTF8Offset([]byte(p)))
	}
	for i, r := range p {
		if isControl(r) {
			return "", newError(ErrInvalid, "", hint, "The path %s contains the control character %U at byte %d.", quote(p), r, i)
		}
	}
	var clean string
	if drive == urlDrive {
		clean = strings.TrimRight(p, "/")
		if clean == "" {
			clean = "/"
		}
	} else {
		clean = collapseSlashes(p)
	}
	if len(clean) > maxPathBytes {
		return "", newError(ErrInvalid, "", hint, "The path %s is %d bytes long; the limit is %d.", quote(p), len(clean), maxPathBytes)
	}
	for _, seg := range strings.Split(clean, "/")[1:] {
		if seg == "." || seg == ".." {
			return "", newError(ErrInvalid, "", hint, "The path %s contains a %q segment; paths are absolute and never relative.", quote(p), seg)
		}
		if drive != urlDrive && len(seg) > maxSegmentBytes {
			return "", newError(ErrInvalid, "", hint, "The path %s has a %d-byte segment; the limit is %d.", quote(p), len(seg), maxSegmentBytes)
		}
	}
	if drive != urlDrive && strings.Contains(p, "//") {
		// Collapsing would make two different refs name one item.
		return "", newError(ErrInvalid, "", "use "+quote(FormatRef(drive, clean))+" instead",
			"The path %s has an empty segment (\"//\"); paths are never rewritten.", quote(p))
	}
	return clean, nil
}

// collapseSlashes joins the non-empty segments of p with single slashes.
func collapseSlashes(p string) string {
	if !strings.Contains(p, "//") && (len(p) == 1 || p[len(p)-1] != '/') {
		return p
	}
	var b strings.Builder
	b.Grow(len(p))
	for _, seg := range strings.Split(p, "/") {
		if seg != "" {
			b.WriteByte('/')
			b.WriteString(seg)
		}
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// isControl reports C0 controls, DEL and C1 controls.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}

// isCanonicalUUID reports the 8-4-4-4-12 hex form, the only id spelling accepted,
// so that an id round-trips through String unchanged (after lowercasing).
func isCanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// parseID converts an id string to its 16-byte key.
func parseID(id string) ([]byte, error) {
	u, err := uuid.Parse(id)
	if err != nil || !isCanonicalUUID(id) {
		return nil, newError(ErrInvalid, id, refFormsHint, "The id %s is not a UUID.", quote(id))
	}
	return u[:], nil
}

// invalidUTF8Offset returns the offset of the first byte that is not valid UTF-8, or -1.
func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// quote renders user input for messages: %q-escaped so invalid bytes never
// leak raw, and shortened so a huge path cannot flood a message.
func quote(s string) string {
	const max = 120
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

// parentOf returns the directory containing p ("/" for top-level paths and the
// root). Trailing slashes are trimmed so url paths ("/https://host") have
// "/https:" as parent, matching how listings group them.
func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	parent := strings.TrimRight(p[:i], "/")
	if parent == "" {
		return "/"
	}
	return parent
}

// baseName returns the last segment of p ("" for the root).
func baseName(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// joinPath appends name to dir.
func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// isUnder reports whether p lies strictly below dir.
func isUnder(p, dir string) bool {
	if dir == "/" {
		return p != "/"
	}
	return len(p) > len(dir) && strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}
