package vfs

import (
	"errors"
	"fmt"
)

// Sentinel errors classify every failure the store returns. Match them with
// errors.Is; use errors.As with *Error for the ref, hint and nearby refs.
var (
	// ErrNotFound: no item or directory at the ref.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the destination exists, or an item stands where a directory must be created.
	ErrConflict = errors.New("path conflict")
	// ErrNoText: the item is binary (or a directory placeholder) and has no text.
	ErrNoText = errors.New("no text content")
	// ErrInvalid: a malformed ref, drive, path, tag or field value.
	ErrInvalid = errors.New("invalid argument")
	// ErrInvalidPatch: an edit patch is malformed, out of range or overlapping.
	ErrInvalidPatch = errors.New("invalid patch")
	// ErrIsDir: the ref names a directory where an item is expected.
	ErrIsDir = errors.New("is a directory")
	// ErrNotDir: the ref (or one of its ancestors) is an item where a directory is expected.
	ErrNotDir = errors.New("not a directory")
	// ErrTooLarge: the content exceeds the configured limit.
	ErrTooLarge = errors.New("content too large")
	// ErrOutOfRange: a line offset lies past the end of the item.
	ErrOutOfRange = errors.New("out of range")
	// ErrChanged: the stored content hash differs from the expected one.
	ErrChanged = errors.New("content changed")
	// ErrDirNotEmpty: a directory has items below it and recursive was not set.
	ErrDirNotEmpty = errors.New("directory not empty")
	// ErrReadOnly: an agent tried to change an item that is read-only to
	// agents (frontmatter without agent-modification: true, or under a
	// context root; see Options.ContextRoots).
	ErrReadOnly = errors.New("read-only to agents")
	// ErrDenied: a change names a ref outside the caller's Access.
	ErrDenied = errors.New("outside the caller's access")
)

// Error is a classified store error with what an agent needs to recover.
type Error struct {
	Kind    error    // one of the sentinel errors above
	Ref     string   // the ref the error is about, drive:/path form when known
	Message string   // a complete sentence for people and models
	Hint    string   // next_action_hint: what to try next; may be empty
	Nearby  []string // for ErrNotFound: existing refs near the missing one
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel kind so errors.Is works.
func (e *Error) Unwrap() error { return e.Kind }

// newError builds an *Error of the given kind with a formatted message.
func newError(kind error, ref, hint string, format string, args ...any) *Error {
	return &Error{Kind: kind, Ref: ref, Hint: hint, Message: fmt.Sprintf(format, args...)}
}
