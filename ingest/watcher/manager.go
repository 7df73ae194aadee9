package watcher

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/vfs"
)

// Defaults of Config.
const (
	DefaultMaxWatches   = 64
	DefaultMaxDirs      = 16384
	DefaultScanInterval = time.Minute
	// MaxDebounce bounds Watch.Debounce.
	MaxDebounce = time.Minute
)

// EditorTempFiles are patterns every watch excludes besides its own:
// the files editors write while saving (vim's 4913 probe, swap and backup
// files, emacs' autosaves, JetBrains' safe-write copies). Most live for
// less than the debounce; these may outlive it and must not become items.
// Hidden ones (.name.swp, .#name) are out anyway unless IncludeHidden.
var EditorTempFiles = []string{"4913", "*~", "*.swp", "*.swx", `\#*#`, "*___jb_tmp___", "*___jb_old___"}

// Config configures a Manager.
type Config struct {
	// ReplicaID is this daemon's id among the replicas of a shared store:
	// watches it adds carry it, and it runs only those.
	ReplicaID string
	// LocalID is the replica id a daemon has on a store of its own (the
	// daemon's "local"). A store copied by `ctxd migrate` keeps its watch
	// records, so a watch may carry an id no daemon of its new store has:
	// on a store of its own the daemon adopts every watch, and on a shared
	// store the first replica to read a watch carrying LocalID adopts it.
	LocalID string
	// MaxWatches bounds the watches of the store; 0: DefaultMaxWatches.
	MaxWatches int
	// MaxDirs bounds the directories one watch follows with kernel events;
	// a larger tree is scanned instead. 0: DefaultMaxDirs.
	MaxDirs int
	// ScanInterval is how often a scanning watch reconciles, a failed one
	// retries, and the manager rereads the records (to stop a watch another
	// replica removed). 0: DefaultScanInterval.
	ScanInterval time.Duration
	// Policy is what may be read: a watch's root must pass it.
	Policy ingest.Policy
	// Searchable, if set, waits until what was written so far is
	// searchable; Add calls it after the first reconcile.
	Searchable func(context.Context) error
	Log        *slog.Logger
}

// Manager runs the watches of one replica. Its methods are safe for
// concurrent use.
type Manager struct {
	store *vfs.Store
	in    *ingest.Ingester
	cfg   Config

	ctx    context.Context // ends at Close; runs derive from it
	cancel context.CancelFunc
	wg     sync.WaitGroup // the runs and the record loop

	mu   sync.Mutex      // guards runs and serializes Add and Remove
	runs map[string]*run // by watch id
}

// New returns a Manager of the watches stored in store; Start starts them.
func New(store *vfs.Store, in *ingest.Ingester, cfg Config) *Manager {
	if cfg.MaxWatches <= 0 {
		cfg.MaxWatches = DefaultMaxWatches
	}
	if cfg.MaxDirs <= 0 {
		cfg.MaxDirs = DefaultMaxDirs
	}
	if cfg.ScanInterval <= 0 {
		cfg.ScanInterval = DefaultScanInterval
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{store: store, in: in, cfg: cfg, ctx: ctx, cancel: cancel, runs: map[string]*run{}}
}

// Start starts this replica's stored watches, each reconciling its tree in
// the background first (ModeStarting until done), and returns without
// waiting for them.
func (m *Manager) Start(ctx context.Context) error {
	if err := m.syncRuns(ctx); err != nil {
		return err
	}
	m.wg.Go(m.recordLoop)
	return nil
}

// Close stops every watch and waits for them.
func (m *Manager) Close() {
	m.cancel()
	m.wg.Wait()
}

// recordLoop rereads the records every scan interval: a watch another
// replica removed stops here too.
func (m *Manager) recordLoop() {
	tick := time.NewTicker(m.cfg.ScanInterval)
	defer tick.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-tick.C:
		}
		if err := m.syncRuns(m.ctx); err != nil && m.ctx.Err() == nil {
			m.cfg.Log.Warn("watches: cannot read the watch records", "err", err)
		}
	}
}

// syncRuns starts a run for each record of this replica without one and
// stops the runs whose record is gone.
func (m *Manager) syncRuns(ctx context.Context) error {
	// Under m.mu: a watch Add stores meanwhile is in the records read.
	m.mu.Lock()
	defer m.mu.Unlock()
	watches, err := m.load(ctx)
	if err != nil {
		return err
	}
	stored := map[string]bool{}
	for _, w := range watches {
		stored[w.ID] = true
		if w.ReplicaID != m.cfg.ReplicaID && (!m.store.Shared() || w.ReplicaID == m.cfg.LocalID) {
			if w, err = m.adopt(ctx, w); err != nil {
				return err
			}
		}
		if w.ReplicaID == m.cfg.ReplicaID && m.runs[w.ID] == nil && m.ctx.Err() == nil {
			m.start(w)
		}
	}
	for id, r := range m.runs {
		if !stored[id] {
			r.stop()
			delete(m.runs, id)
		}
	}
	return nil
}

// adopt makes w this replica's, unless another replica adopted it first;
// it returns the watch as stored.
func (m *Manager) adopt(ctx context.Context, w Watch) (Watch, error) {
	from := w.ReplicaID
	err := m.store.UpdateRecord(ctx, recordKind, w.ID, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, nil // removed meanwhile
		}
		cur, err := decode(old)
		if err != nil {
			return nil, err
		}
		w = cur
		if cur.ReplicaID != from {
			return old, nil // adopted by another replica meanwhile
		}
		w.ReplicaID = m.cfg.ReplicaID
		return w.encode()
	})
	if err == nil && w.ReplicaID == m.cfg.ReplicaID {
		m.cfg.Log.Info("watch adopted by this replica", "watch", w.ID, "path", w.Path, "from", from)
	}
	return w, err
}

// load reads every watch record, by path.
func (m *Manager) load(ctx context.Context) ([]Watch, error) {
	recs, err := m.store.ListRecords(ctx, recordKind)
	if err != nil {
		return nil, err
	}
	out := make([]Watch, 0, len(recs))
	for _, rec := range recs {
		w, err := decode(rec.Value)
		if err != nil {
			m.cfg.Log.Error("watches: skipping an unreadable watch record", "name", rec.Name, "err", err)
			continue
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Watch) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// start starts w's run; m.mu is held.
func (m *Manager) start(w Watch) *run {
	r := newRun(m, w)
	m.runs[w.ID] = r
	m.wg.Go(r.loop)
	return r
}

// Add stores a watch of w.Path (Path, Drive, Exclude, IncludeHidden, Tags,
// Debounce and DeleteMissing are read from w), runs its first reconcile and
// returns once that is done and searchable, or ctx ends (the watch stays,
// reconciling). A path watched already returns that watch and existed.
// A tree inside or around a watched one is refused: their items would be
// written by two watches, and a move between them would be a delete in one
// and an add in the other.
func (m *Manager) Add(ctx context.Context, w Watch) (State, bool, error) {
	if err := m.check(ctx, &w); err != nil {
		return State{}, false, err
	}
	m.mu.Lock()
	watches, err := m.load(ctx)
	if err != nil {
		m.mu.Unlock()
		return State{}, false, err
	}
	for _, o := range watches {
		switch {
		case o.Path == w.Path:
			m.mu.Unlock()
			return m.state(o), true, nil
		case within(o.Path, w.Path) || within(w.Path, o.Path):
			m.mu.Unlock()
			return State{}, false, newError(ErrInvalid, "watch one of them: remove the other (`ctxd watch rm "+o.ID+"`), or add an exclude for the inner tree",
				"%s overlaps the watched tree %s (watch %s).", w.Path, o.Path, o.ID)
		}
	}
	if m.ctx.Err() != nil {
		m.mu.Unlock()
		return State{}, false, errors.New("the watch manager is closed")
	}
	if len(watches) >= m.cfg.MaxWatches {
		m.mu.Unlock()
		return State{}, false, newError(ErrLimit, "watch a common parent directory, or remove watches you no longer need",
			"There are %d watches, the limit.", len(watches))
	}
	w.ID, w.ReplicaID, w.CreatedAt = newID(), m.cfg.ReplicaID, time.Now().UTC().Truncate(time.Millisecond)
	v, err := w.encode()
	if err == nil {
		err = m.store.PutRecord(ctx, recordKind, w.ID, v)
	}
	if err != nil {
		m.mu.Unlock()
		return State{}, false, err
	}
	r := m.start(w)
	m.mu.Unlock()

	select {
	case <-r.started:
	case <-ctx.Done():
		return State{}, false, ctx.Err()
	}
	if m.cfg.Searchable != nil {
		if err := m.cfg.Searchable(ctx); err != nil {
			return State{}, false, err
		}
	}
	return State{Watch: w, Status: r.status()}, false, nil
}

// check validates and normalizes what Add is given.
func (m *Manager) check(ctx context.Context, w *Watch) error {
	if !filepath.IsAbs(w.Path) {
		return newError(ErrInvalid, "pass an absolute path; `ctxd watch add` resolves a relative one against its working directory",
			"%q is not an absolute path.", w.Path)
	}
	w.Path = filepath.Clean(w.Path)
	if err := m.cfg.Policy.Check(w.Path); err != nil {
		return err
	}
	info, err := os.Stat(w.Path)
	switch {
	case err != nil:
		return newError(ErrInvalid, "check that the directory exists and is readable", "Cannot watch %s: %v.", w.Path, err)
	case !info.IsDir():
		return newError(ErrInvalid, "watch the directory that holds it", "%s is not a directory.", w.Path)
	}
	if w.Drive != "" {
		if err := vfs.ValidateDrive(w.Drive); err != nil {
			return err
		}
	}
	if err := ingest.CheckPatterns(w.Exclude); err != nil {
		return err
	}
	if err := vfs.CheckTags(w.Tags); err != nil {
		return err
	}
	if w.Debounce < 0 || w.Debounce > MaxDebounce {
		return newError(ErrInvalid, "pass a debounce from 0 (the default, 200 ms) to 60000 ms", "The debounce %s is out of range.", w.Debounce)
	}
	// A caller limited to some drives or paths may watch only a tree whose
	// items it could write.
	return vfs.AccessFrom(ctx).CheckChange(w.drive(), filepath.ToSlash(w.Path))
}

// List returns every watch the caller may see (whose tree's items it could
// read), by path: this replica's with their status, other replicas' as
// ModeRemote.
func (m *Manager) List(ctx context.Context) ([]State, error) {
	watches, err := m.load(ctx)
	if err != nil {
		return nil, err
	}
	access := vfs.AccessFrom(ctx)
	out := make([]State, 0, len(watches))
	for _, w := range watches {
		if access.Allows(w.drive(), filepath.ToSlash(w.Path)) {
			out = append(out, m.state(w))
		}
	}
	return out, nil
}

// Remove forgets the watch with id, or of the path idOrPath, and stops it;
// its items are kept. It returns the watch as it was.
func (m *Manager) Remove(ctx context.Context, idOrPath string) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	watches, err := m.load(ctx)
	if err != nil {
		return State{}, err
	}
	access := vfs.AccessFrom(ctx)
	i := slices.IndexFunc(watches, func(w Watch) bool {
		return (w.ID == idOrPath || filepath.IsAbs(idOrPath) && w.Path == filepath.Clean(idOrPath)) &&
			access.Allows(w.drive(), filepath.ToSlash(w.Path)) // one it may not see is not there
	})
	if i < 0 {
		return State{}, newError(ErrNotFound, "list the watches with `ctxd watch list` and pass an id or path from it", "No watch has the id or path %q.", idOrPath)
	}
	w := watches[i]
	if err := access.CheckChange(w.drive(), filepath.ToSlash(w.Path)); err != nil {
		return State{}, err
	}
	st := m.stateLocked(w)
	if _, err := m.store.DeleteRecord(ctx, recordKind, w.ID); err != nil {
		return State{}, err
	}
	if r := m.runs[w.ID]; r != nil {
		r.stop()
		delete(m.runs, w.ID)
	}
	return st, nil
}

func (m *Manager) state(w Watch) State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stateLocked(w)
}

func (m *Manager) stateLocked(w Watch) State {
	if r := m.runs[w.ID]; r != nil {
		return State{Watch: w, Status: r.status()}
	}
	if w.ReplicaID != m.cfg.ReplicaID {
		return State{Watch: w, Status: Status{Mode: ModeRemote}}
	}
	return State{Watch: w, Status: Status{Mode: ModeStarting}} // its run starts at the next record reading
}

// within reports whether path is dir or below it.
func within(dir, path string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// errCanceled reports whether err is the end of a context.
func errCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
