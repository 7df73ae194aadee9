package watcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ctxd/ctxd/ingest"
)

// recordKind is the vfs record kind watches are stored under, by id.
const recordKind = "watch"

// Watch is one watched tree, as stored.
type Watch struct {
	ID            string
	Path          string   // absolute, cleaned directory on the host of the replica that runs it
	Drive         string   // where its items go; "" is the disk drive
	Exclude       []string // gitignore-style patterns beside the tree's .gitignore files
	IncludeHidden bool
	Tags          []string      // added to every item the watch writes
	Debounce      time.Duration // 0: ingest.DefaultDebounce
	DeleteMissing bool          // delete the item of a vanished file instead of keeping it
	ReplicaID     string        // the replica that runs it
	CreatedAt     time.Time
}

// drive is the drive the watch's items go to.
func (w Watch) drive() string {
	if w.Drive == "" {
		return ingest.DriveDisk
	}
	return w.Drive
}

// record is a Watch as its vfs record holds it (JSON).
type record struct {
	ID            string    `json:"id"`
	Path          string    `json:"path"`
	Drive         string    `json:"drive,omitzero"`
	Exclude       []string  `json:"exclude,omitzero"`
	IncludeHidden bool      `json:"include_hidden,omitzero"`
	Tags          []string  `json:"tags,omitzero"`
	DebounceMS    int64     `json:"debounce_ms,omitzero"`
	DeleteMissing bool      `json:"delete_missing,omitzero"`
	ReplicaID     string    `json:"replica_id"`
	CreatedAt     time.Time `json:"created_at"`
}

func (w Watch) encode() ([]byte, error) {
	return json.Marshal(record{
		ID: w.ID, Path: w.Path, Drive: w.Drive, Exclude: w.Exclude, IncludeHidden: w.IncludeHidden, Tags: w.Tags,
		DebounceMS: w.Debounce.Milliseconds(), DeleteMissing: w.DeleteMissing, ReplicaID: w.ReplicaID, CreatedAt: w.CreatedAt,
	})
}

func decode(b []byte) (Watch, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return Watch{}, fmt.Errorf("decode watch record: %w", err)
	}
	return Watch{
		ID: r.ID, Path: r.Path, Drive: r.Drive, Exclude: r.Exclude, IncludeHidden: r.IncludeHidden, Tags: r.Tags,
		Debounce: time.Duration(r.DebounceMS) * time.Millisecond, DeleteMissing: r.DeleteMissing, ReplicaID: r.ReplicaID, CreatedAt: r.CreatedAt,
	}, nil
}

// Mode is how a watch notices changes.
type Mode int

// Modes, as Status reports them.
const (
	ModeStarting Mode = iota + 1 // the first reconcile has not finished
	ModeEvents                   // kernel file events, debounced
	ModeScanning                 // periodic reconciles: kernel events are not available for the tree (Status.Reason)
	ModeRemote                   // another replica runs it
	ModeFailed                   // the tree cannot be walked (Status.Reason); retried every scan interval
)

// String names a mode as `ctxd watch list` shows it.
func (m Mode) String() string {
	switch m {
	case ModeStarting:
		return "starting"
	case ModeEvents:
		return "events"
	case ModeScanning:
		return "scanning"
	case ModeRemote:
		return "remote"
	case ModeFailed:
		return "failed"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// Reconcile counts what a reconcile, or a batch of events, did.
type Reconcile struct {
	Added, Updated, Moved, Missing, Unchanged, Failed int64
	// BytesRead is what was read of the tree's files: only changed, new
	// and possibly moved files are read.
	BytesRead int64
}

func (r *Reconcile) add(o Reconcile) {
	r.Added += o.Added
	r.Updated += o.Updated
	r.Moved += o.Moved
	r.Missing += o.Missing
	r.Unchanged += o.Unchanged
	r.Failed += o.Failed
	r.BytesRead += o.BytesRead
}

// Status is where a watch stands.
type Status struct {
	Mode   Mode
	Reason string // why it scans or failed
	Files  int64  // files of the tree it follows
	// LastEventAt is when it last applied a change from an event or a scan.
	LastEventAt time.Time
	// LastReconcileAt is when the last reconcile (at start, or a scan)
	// finished, LastReconcileTook how long it took, LastReconcile what it did.
	LastReconcileAt   time.Time
	LastReconcileTook time.Duration
	LastReconcile     Reconcile
	// Lag is the time from the first event of the last applied batch to its
	// items being written (the debounce included).
	Lag         time.Duration
	Pending     int64 // changes noticed and not applied yet
	Errors      int64 // errors since the watch started
	LastError   string
	LastErrorAt time.Time
	WatchedDirs int64 // directories watched with kernel events (0 while scanning)
	// Applied counts what the batches of events applied since the watch
	// started (reconciles count in LastReconcile).
	Applied Reconcile
}

// State is a watch and where it stands.
type State struct {
	Watch  Watch
	Status Status
}

// Kinds of Manager failure; match them with errors.Is.
var (
	// ErrInvalid: the request is malformed (a relative path, a file, an
	// overlapping tree, bad tags).
	ErrInvalid = errors.New("invalid watch")
	// ErrNotFound: no watch has that id or path.
	ErrNotFound = errors.New("no such watch")
	// ErrLimit: there are Config.MaxWatches watches already.
	ErrLimit = errors.New("too many watches")
)

// Error is a Manager failure with a hint a caller can act on.
type Error struct {
	Kind    error
	Message string
	Hint    string
}

func (e *Error) Error() string { return e.Message }

// Unwrap lets errors.Is match the kind.
func (e *Error) Unwrap() error { return e.Kind }

func newError(kind error, hint, format string, args ...any) *Error {
	return &Error{Kind: kind, Hint: hint, Message: fmt.Sprintf(format, args...)}
}
