package ingest

import (
	"errors"
	"fmt"
)

// Kinds of ingest failure; match them with errors.Is.
var (
	// ErrRefused: policy forbids reading the source (outside the allowed
	// roots, a secret, a symlink out of the tree, a private network address).
	ErrRefused = errors.New("source refused")
	// ErrUnreadable: the source could not be read or fetched (missing,
	// permission denied, HTTP error status, timeout).
	ErrUnreadable = errors.New("source unreadable")
	// ErrMissing: the source no longer exists (no such file; HTTP 404 or 410).
	ErrMissing = errors.New("source missing")
	// ErrTooLarge: the source exceeds the size limit.
	ErrTooLarge = errors.New("source too large")
	// ErrExists: Add with ON_CONFLICT_ERROR found destinations already stored.
	ErrExists = errors.New("already stored")
	// ErrInvalid: the source is not a path or an http(s) URL.
	ErrInvalid = errors.New("invalid source")
	// ErrWatchLimit: following a tree with kernel events needs more
	// directory watches (or inotify instances) than the caller's cap or the
	// kernel's limits allow.
	ErrWatchLimit = errors.New("watch limit reached")
)

// Error is an ingest failure about one source, with a hint an agent can act on.
type Error struct {
	Kind    error  // one of the Err* kinds above
	Source  string // the file path or URL
	Message string
	Hint    string
}

func (e *Error) Error() string { return e.Message }

// Unwrap lets errors.Is match the kind.
func (e *Error) Unwrap() error { return e.Kind }

func newError(kind error, source, hint, format string, args ...any) *Error {
	return &Error{Kind: kind, Source: source, Hint: hint, Message: fmt.Sprintf(format, args...)}
}
