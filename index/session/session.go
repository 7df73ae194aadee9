package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"

	"github.com/ctxd/ctxd/index/assemble"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// Session is one session of one agent on one project.
type Session struct {
	ID, Project string
	Actor, Cwd  string
	StartedAt   time.Time
	EndedAt     time.Time // zero while open
	EventCount  int64
	DigestRef   string // "" before the first digest
	Ref         string // the record's ref

	dir string // its directory's name
}

// Open reports whether the session has not ended.
func (s *Session) Open() bool { return s.EndedAt.IsZero() }

// record is a session record's frontmatter, the record's whole content: it
// has no body, so it makes no chunk and no search finds it.
type record struct {
	Title   string    `yaml:"title"`
	Session string    `yaml:"session"`
	Project string    `yaml:"project"`
	Actor   string    `yaml:"actor,omitempty"`
	Cwd     string    `yaml:"cwd,omitempty"`
	Started time.Time `yaml:"started"`
	Ended   time.Time `yaml:"ended,omitempty"`
}

// Options configure Sessions. Zero values take the defaults.
type Options struct {
	// MaxEventBytes bounds an event's text (DefaultMaxEventBytes); longer
	// text is cut with a marker.
	MaxEventBytes int
	// EventTTL is how long events are kept (DefaultEventTTL); ProjectTTL
	// overrides it per project. Digests and records stay.
	EventTTL   time.Duration
	ProjectTTL map[string]time.Duration
	// Summarizer, when set, writes digests with a model; the extractive
	// digest is its fallback.
	Summarizer assemble.Summarizer
	// Redact removes secrets from an event's text before it is stored;
	// nil stores the text as given.
	Redact func(string) string
	Log    *slog.Logger
}

// DefaultEventTTL is how long events are kept by default: 30 days.
const DefaultEventTTL = 30 * 24 * time.Hour

// Sessions keeps sessions in a store: see the package doc. It is safe for
// concurrent use.
type Sessions struct {
	store   *vfs.Store
	engine  *search.Engine
	builder *assemble.Builder
	opts    Options

	// startMu serialises the creation of sessions, so that one id gets one
	// directory in this process.
	startMu sync.Mutex
	// dirs caches the directory name of each session found, by project and
	// id; an entry is checked against the store before it is used.
	dirs sync.Map
	// enrich queues sessions whose enricher digest is to be written in the
	// background (Run).
	enrich chan sessionKey
}

// sessionKey names a session's directory: session:/project/dir.
type sessionKey struct{ project, dir string }

func (k sessionKey) ref() vfs.Ref { return dirRef(k.project, k.dir) }

// New returns the sessions of store, searched with engine and recalled
// with builder.
func New(store *vfs.Store, engine *search.Engine, builder *assemble.Builder, opts Options) *Sessions {
	if opts.MaxEventBytes <= 0 {
		opts.MaxEventBytes = DefaultMaxEventBytes
	}
	opts.MaxEventBytes = max(opts.MaxEventBytes, MinMaxEventBytes)
	if opts.EventTTL <= 0 {
		opts.EventTTL = DefaultEventTTL
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Sessions{store: store, engine: engine, builder: builder, opts: opts, enrich: make(chan sessionKey, 64)}
}

// StartParams name a session to start.
type StartParams struct {
	ID      string // "" generates one
	Project string // "" derives it from Cwd (ProjectFromDir)
	Actor   string // "" is the caller's actor name
	Cwd     string
}

// Start opens a session, or returns the one with that id in the project
// unchanged (created false): a host starts its session again when it
// resumes it.
func (s *Sessions) Start(ctx context.Context, p StartParams) (_ Session, created bool, _ error) {
	project, err := resolveProject(p.Project, p.Cwd)
	if err != nil {
		return Session{}, false, err
	}
	id := p.ID
	if id == "" {
		id = uuid.Must(uuid.NewV7()).String()
	}
	if err := checkID(id); err != nil {
		return Session{}, false, err
	}
	if len(p.Cwd) > maxCwdBytes || len(p.Actor) > maxActorBytes {
		return Session{}, false, invalid("the working directory or the actor is too long (at most %d and %d bytes)", maxCwdBytes, maxActorBytes)
	}
	s.startMu.Lock()
	defer s.startMu.Unlock()
	if k, ok, err := s.find(ctx, project, id); err != nil || ok {
		if err != nil {
			return Session{}, false, err
		}
		sess, err := s.read(ctx, k)
		return sess, false, err
	}
	actor := cmp.Or(p.Actor, vfs.ActorFrom(ctx).Name)
	now := time.Now().UTC()
	k := sessionKey{project, dirName(now, id)}
	rec := record{Title: fmt.Sprintf("Session %s (%s)", id, project), Session: id, Project: project, Actor: actor, Cwd: p.Cwd, Started: now.Truncate(time.Second)}
	content, err := encodeRecord(rec)
	if err != nil {
		return Session{}, false, err
	}
	if _, err := s.store.Write(ctx, vfs.WriteParams{Ref: child(k.ref(), recordName), Content: content, IsText: true, MimeType: "text/markdown", OnConflict: vfs.ConflictError}); err != nil {
		return Session{}, false, fmt.Errorf("start session %s: %w", id, err)
	}
	s.dirs.Store(project+"\x00"+id, k.dir)
	return sessionOf(k, rec, 0, ""), true, nil
}

// AppendParams add events to a session.
type AppendParams struct {
	// SessionID names the session; "" is the project's most recently
	// started open session, or a new one.
	SessionID string
	Project   string // "" derives it from Cwd
	Cwd       string
	Actor     string // used when the session is started
	Events    []Event
}

// Append stores events in a session, starting it when absent, in one
// transaction. It sets each event's Ref and Time, cuts text over the bound
// (Truncated) and redacts it; the events are returned as stored.
func (s *Sessions) Append(ctx context.Context, p AppendParams) (Session, []Event, error) {
	if len(p.Events) == 0 || len(p.Events) > MaxEventsPerAppend {
		return Session{}, nil, invalid("%d events; one call appends 1 to %d", len(p.Events), MaxEventsPerAppend)
	}
	events := slices.Clone(p.Events)
	for i := range events {
		e := &events[i]
		if err := e.check(i); err != nil {
			return Session{}, nil, err
		}
		text := e.Text
		if s.opts.Redact != nil {
			text = s.opts.Redact(text)
		}
		e.Tool, e.Refs = clean(e.Tool), slices.Clone(e.Refs)
		for j, r := range e.Refs {
			e.Refs[j] = clean(r)
		}
		var cut bool
		e.Text, cut = bound(text, s.opts.MaxEventBytes)
		e.Truncated = e.Truncated || cut
	}
	sess, err := s.sessionFor(ctx, p)
	if err != nil {
		return Session{}, nil, err
	}
	k := keyOf(sess)
	for attempt := 0; ; attempt++ {
		ps := make([]vfs.WriteParams, len(events))
		now := time.Now()
		for i := range events {
			e := &events[i]
			content, err := e.encode()
			if err != nil {
				return Session{}, nil, err
			}
			ps[i] = vfs.WriteParams{
				Ref:     child(child(k.ref(), eventsDir), eventName(now, i, e.Kind)),
				Content: content, IsText: true, MimeType: "text/markdown",
				Title: e.title(), Tags: e.tags(), OnConflict: vfs.ConflictError,
			}
		}
		res, err := s.store.WriteBatch(ctx, ps)
		if errors.Is(err, vfs.ErrConflict) && attempt == 0 {
			continue // two writers drew the same name: draw again
		}
		if err != nil {
			return Session{}, nil, fmt.Errorf("append to session %s: %w", sess.ID, err)
		}
		for i := range events {
			events[i].Ref, events[i].Time = res[i].Item.Ref(), res[i].Item.CreatedAt
		}
		break
	}
	if sess.EventCount, err = s.countEvents(ctx, k); err != nil {
		return Session{}, nil, err
	}
	return sess, events, nil
}

// sessionFor finds or starts the session events go to.
func (s *Sessions) sessionFor(ctx context.Context, p AppendParams) (Session, error) {
	start := StartParams{ID: p.SessionID, Project: p.Project, Actor: p.Actor, Cwd: p.Cwd}
	if p.SessionID == "" {
		project, err := resolveProject(p.Project, p.Cwd)
		if err != nil {
			return Session{}, err
		}
		recent, err := s.recent(ctx, project, time.Time{}, 1, func(sess Session) bool { return sess.Open() }, openScan)
		if err != nil {
			return Session{}, err
		}
		if len(recent) > 0 {
			return recent[0], nil
		}
		start.Project = project
	}
	sess, _, err := s.Start(ctx, start)
	return sess, err
}

// Get returns a session, a page of its events (oldest first; limit 0 means
// 100) with the token of the next page, and its digest's body ("" before
// one).
func (s *Sessions) Get(ctx context.Context, id, project string, limit int, pageToken string) (Session, []Event, string, string, error) {
	k, err := s.mustFind(ctx, project, id)
	if err != nil {
		return Session{}, nil, "", "", err
	}
	sess, err := s.read(ctx, k)
	if err != nil {
		return Session{}, nil, "", "", err
	}
	entries, next, err := s.store.List(ctx, child(k.ref(), eventsDir), false, cmp.Or(limit, 100), pageToken)
	if err != nil && !errors.Is(err, vfs.ErrNotFound) {
		return Session{}, nil, "", "", err
	}
	var events []Event
	for _, e := range entries {
		if e.Item == nil || e.IsDir {
			continue
		}
		ev, err := s.readEvent(ctx, *e.Item)
		if err != nil {
			return Session{}, nil, "", "", err
		}
		events = append(events, ev)
	}
	digest := ""
	if sess.DigestRef != "" {
		if _, body, err := s.readDigest(ctx, k); err == nil {
			digest = body
		} else if !errors.Is(err, vfs.ErrNotFound) {
			return Session{}, nil, "", "", err
		}
	}
	return sess, events, next, digest, nil
}

// List returns the sessions of project ("" for every project) started at
// or after since, most recently started first, at most limit (0 means 20).
func (s *Sessions) List(ctx context.Context, project string, limit int, since time.Time) ([]Session, error) {
	limit = cmp.Or(limit, 20)
	if project != "" {
		if err := checkProject(project); err != nil {
			return nil, err
		}
		return s.recent(ctx, project, since, limit, nil, 0)
	}
	projects, err := s.projects(ctx)
	if err != nil {
		return nil, err
	}
	var all []Session
	for _, p := range projects {
		ss, err := s.recent(ctx, p, since, limit, nil, 0)
		if err != nil {
			return nil, err
		}
		all = append(all, ss...)
	}
	slices.SortFunc(all, func(a, b Session) int {
		return cmp.Or(b.StartedAt.Compare(a.StartedAt), strings.Compare(a.Ref, b.Ref))
	})
	return all[:min(len(all), limit)], nil
}

// openScan bounds the sessions an event without a session id looks through
// for the project's latest open one: an older session is not "the current
// one" however long it stayed open.
const openScan = 20

// recent returns the project's sessions started at or after since, newest
// first, at most limit of those keep accepts (nil accepts all) among the
// newest scan (0: all). It walks the project's directory names, which sort
// by start, and reads the records of the newest only.
func (s *Sessions) recent(ctx context.Context, project string, since time.Time, limit int, keep func(Session) bool, scan int) ([]Session, error) {
	names, err := s.sessionDirs(ctx, project)
	if err != nil {
		return nil, err
	}
	floor := ""
	if !since.IsZero() {
		floor = since.UTC().Format(stampLayout)
	}
	if scan > 0 {
		names = names[max(0, len(names)-scan):]
	}
	var out []Session
	for i := len(names) - 1; i >= 0 && len(out) < limit; i-- {
		if names[i] < floor {
			break
		}
		sess, err := s.read(ctx, sessionKey{project, names[i]})
		if errors.Is(err, vfs.ErrNotFound) {
			continue // a directory without a record: not a session
		}
		if err != nil {
			return nil, err
		}
		if keep == nil || keep(sess) {
			out = append(out, sess)
		}
	}
	return out, nil
}

// sessionDirs lists the session directory names of a project, oldest
// first.
func (s *Sessions) sessionDirs(ctx context.Context, project string) ([]string, error) {
	var names []string
	err := s.children(ctx, vfs.Ref{Drive: Drive, Path: "/" + project}, func(e vfs.Entry) {
		if _, _, ok := splitDir(e.Name); ok && e.IsDir {
			names = append(names, e.Name)
		}
	})
	return names, err
}

// projects lists the projects that have sessions.
func (s *Sessions) projects(ctx context.Context) ([]string, error) {
	var out []string
	err := s.children(ctx, vfs.Ref{Drive: Drive, Path: "/"}, func(e vfs.Entry) {
		if e.IsDir && projectPattern.MatchString(e.Name) {
			out = append(out, e.Name)
		}
	})
	return out, err
}

// children calls fn for every child of dir, in name order; a missing dir
// has none.
func (s *Sessions) children(ctx context.Context, dir vfs.Ref, fn func(vfs.Entry)) error {
	for page := ""; ; {
		entries, next, err := s.store.List(ctx, dir, false, 1000, page)
		if errors.Is(err, vfs.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			fn(e)
		}
		if next == "" {
			return nil
		}
		page = next
	}
}

// find returns the directory of session id in project ("" for any
// project).
func (s *Sessions) find(ctx context.Context, project, id string) (sessionKey, bool, error) {
	if project == "" {
		projects, err := s.projects(ctx)
		if err != nil {
			return sessionKey{}, false, err
		}
		for _, p := range projects {
			if k, ok, err := s.find(ctx, p, id); err != nil || ok {
				return k, ok, err
			}
		}
		return sessionKey{}, false, nil
	}
	if dir, ok := s.dirs.Load(project + "\x00" + id); ok {
		k := sessionKey{project, dir.(string)}
		exists, _, err := s.store.Exists(ctx, child(k.ref(), recordName))
		if err != nil {
			return sessionKey{}, false, err
		}
		if exists {
			return k, true, nil
		}
		s.dirs.Delete(project + "\x00" + id)
	}
	names, err := s.sessionDirs(ctx, project)
	if err != nil {
		return sessionKey{}, false, err
	}
	for i := len(names) - 1; i >= 0; i-- {
		if _, got, _ := splitDir(names[i]); got == id {
			s.dirs.Store(project+"\x00"+id, names[i])
			return sessionKey{project, names[i]}, true, nil
		}
	}
	return sessionKey{}, false, nil
}

// mustFind is find that fails with vfs.ErrNotFound, after checking the id
// and the project.
func (s *Sessions) mustFind(ctx context.Context, project, id string) (sessionKey, error) {
	if err := checkID(id); err != nil {
		return sessionKey{}, err
	}
	if project != "" {
		if err := checkProject(project); err != nil {
			return sessionKey{}, err
		}
	}
	k, ok, err := s.find(ctx, project, id)
	if err != nil {
		return sessionKey{}, err
	}
	if !ok {
		where := "any project"
		if project != "" {
			where = "project " + project
		}
		return sessionKey{}, &vfs.Error{Kind: vfs.ErrNotFound, Message: fmt.Sprintf("No session %s in %s.", id, where),
			Hint: "list the sessions with `ctxd session list` (ListSessions); StartSession, or a session's first event, starts one"}
	}
	return k, nil
}

// read reads a session's record, and counts its events.
func (s *Sessions) read(ctx context.Context, k sessionKey) (Session, error) {
	_, content, err := s.store.ReadRaw(ctx, child(k.ref(), recordName))
	if err != nil {
		return Session{}, err
	}
	rec, err := decodeRecord(content)
	if err != nil {
		return Session{}, fmt.Errorf("session record %s: %w", child(k.ref(), recordName), err)
	}
	n, err := s.countEvents(ctx, k)
	if err != nil {
		return Session{}, err
	}
	digest := ""
	if ok, _, err := s.store.Exists(ctx, child(k.ref(), digestName)); err != nil {
		return Session{}, err
	} else if ok {
		digest = child(k.ref(), digestName).String()
	}
	return sessionOf(k, rec, n, digest), nil
}

func (s *Sessions) countEvents(ctx context.Context, k sessionKey) (int64, error) {
	_, n, err := s.store.DirSize(ctx, child(k.ref(), eventsDir))
	if errors.Is(err, vfs.ErrNotFound) {
		return 0, nil
	}
	return n, err
}

// readEvent reads an event item.
func (s *Sessions) readEvent(ctx context.Context, it vfs.Item) (Event, error) {
	it, content, err := s.store.ReadRaw(ctx, vfs.Ref{ID: it.ID})
	if err != nil {
		return Event{}, err
	}
	return decodeEvent(it, content)
}

// setEnded records the session's end in its record.
func (s *Sessions) setEnded(ctx context.Context, k sessionKey, at time.Time) error {
	ref := child(k.ref(), recordName)
	it, content, err := s.store.ReadRaw(ctx, ref)
	if err != nil {
		return err
	}
	rec, err := decodeRecord(content)
	if err != nil {
		return err
	}
	rec.Ended = at.UTC().Truncate(time.Second)
	if content, err = encodeRecord(rec); err != nil {
		return err
	}
	_, err = s.store.Write(ctx, vfs.WriteParams{Ref: ref, Content: content, IsText: true, MimeType: "text/markdown",
		OnConflict: vfs.ConflictOverwrite, ExpectedHash: it.ContentHash})
	return err
}

func keyOf(sess Session) sessionKey { return sessionKey{sess.Project, sess.dir} }

func sessionOf(k sessionKey, rec record, events int64, digest string) Session {
	return Session{ID: rec.Session, Project: k.project, Actor: rec.Actor, Cwd: rec.Cwd, StartedAt: rec.Started, EndedAt: rec.Ended,
		EventCount: events, DigestRef: digest, Ref: child(k.ref(), recordName).String(), dir: k.dir}
}

func encodeRecord(rec record) ([]byte, error) {
	b, err := yaml.Marshal(rec)
	if err != nil {
		return nil, err
	}
	return append(append([]byte("---\n"), b...), "---\n"...), nil
}

func decodeRecord(content []byte) (record, error) {
	block, _ := vfs.SplitFrontmatter(content)
	if block == nil {
		return record{}, errors.New("no frontmatter")
	}
	var rec record
	if err := yaml.Unmarshal(block, &rec); err != nil {
		return record{}, err
	}
	return rec, nil
}

// resolveProject is the project given, checked, or the one cwd derives.
func resolveProject(project, cwd string) (string, error) {
	if project == "" {
		return ProjectFromDir(cwd), nil
	}
	return project, checkProject(project)
}

func checkProject(project string) error {
	if !projectPattern.MatchString(project) {
		return invalid("the project %q is not 1 to 64 characters of a-z0-9._- starting with a letter or digit", project)
	}
	return nil
}

func checkID(id string) error {
	if !idPattern.MatchString(id) {
		return invalid("the session id %q is not 1 to 128 characters of A-Za-z0-9._- starting with a letter or digit", id)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return &vfs.Error{Kind: vfs.ErrInvalid, Message: fmt.Sprintf(format, args...) + ".",
		Hint: "see docs/sessions.md for the names and limits sessions take"}
}
