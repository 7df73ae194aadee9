package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/ctxd/ctxd/vfs"
)

// DefaultTTL is how long a fetched page counts as fresh unless Add says otherwise.
const DefaultTTL = 24 * time.Hour

// Config configures an Ingester.
type Config struct {
	Policy     Policy        // which local paths may be read
	Fetch      FetchOptions  // HTTP limits; MaxBytes 0 means the store's content limit
	DefaultTTL time.Duration // 0 means DefaultTTL
	Workers    int           // sources read and written at once; 0 means 8
}

// Ingester adds and refreshes items from files and URLs. It is safe for
// concurrent use.
type Ingester struct {
	store   *vfs.Store
	cfg     Config
	fetcher *Fetcher
}

// New returns an Ingester writing to store.
func New(store *vfs.Store, cfg Config) *Ingester {
	if cfg.DefaultTTL == 0 {
		cfg.DefaultTTL = DefaultTTL
	}
	if cfg.Workers == 0 {
		cfg.Workers = 8
	}
	if cfg.Fetch.MaxBytes == 0 {
		cfg.Fetch.MaxBytes = store.MaxContentBytes()
	}
	return &Ingester{store: store, cfg: cfg, fetcher: NewFetcher(cfg.Fetch)}
}

// Action is what happened to one item.
type Action int

// Actions, as reported per item.
const (
	Added     Action = iota + 1 // a new item was written
	Updated                     // the source changed and the item was rewritten
	Unchanged                   // the source is as stored
	Skipped                     // left alone: it exists (skip), policy refused it inside a tree, or it has no source
	Missing                     // the source is gone; the item is kept
	Failed                      // see Err
)

// ItemResult reports one item.
type ItemResult struct {
	Ref    string // drive:/path
	Source string // file path or URL
	Action Action
	// Chunks of the new content queued for embedding (not embedded yet: the
	// embedding worker takes them after the write, see vfs.EmbedStats), and
	// chunks whose text already had a vector, which is reused. Both are 0
	// while no model is loaded.
	ChunksQueued, ChunksReused int
	Bytes                      int64 // read from the source
	Err                        error // why it failed, is missing, or was skipped
	// DuplicateOf is, with AddOptions.Dedupe, the ref of the stored item
	// this new source duplicates, which is why it was Skipped.
	DuplicateOf string
}

// Progress is a running count of an operation.
type Progress struct {
	Phase                 string // walking, ingesting, listing, refreshing
	ItemsDone, ItemsTotal int64
	ChunksDone            int64
	BytesDone, BytesTotal int64
	Elapsed               time.Duration
}

// Summary closes an operation.
type Summary struct {
	Added, Updated, Unchanged, Skipped, Missing, Failed int64
	ChunksQueued, ChunksReused, Bytes                   int64
	Elapsed                                             time.Duration
}

// Sink receives an operation's events, one call at a time. Either func may be nil.
type Sink struct {
	Progress func(Progress)
	Item     func(ItemResult)
}

// AddOptions describe an Add.
type AddOptions struct {
	Sources       []string       // absolute file or directory paths, http(s) URLs
	Drive         string         // overrides the natural drive when set
	OnConflict    vfs.OnConflict // for items that exist
	Exclude       []string       // gitignore-style patterns, beside .gitignore files
	IncludeHidden bool
	Tags          []string
	TTL           time.Duration // freshness of fetched pages; 0 means the configured default
	// Dedupe, when set, skips a new text source that duplicates a stored
	// item. Sources already stored (updates) and binary ones are not
	// compared.
	Dedupe Deduper
}

// Deduper finds the stored item a new source duplicates (AddOptions.Dedupe).
type Deduper interface {
	// DuplicateOf returns the ref of an item that already holds content,
	// were it written at ref as a text item of mime type mt with a chosen
	// title ("" for none), or "" when none does. Items are those stored,
	// and the sources of this Add it returned "" for (they may not be
	// searchable yet).
	DuplicateOf(ctx context.Context, ref vfs.Ref, content []byte, mt, title string) (string, error)
}

// job is one file or URL to bring in.
type job struct {
	src  source
	size int64
}

// Add ingests files, directory trees and URLs. Sources that cannot be read
// are reported per item and the rest go on; the returned error is for the
// call as a whole (bad options, an ON_CONFLICT_ERROR collision, cancellation).
func (in *Ingester) Add(ctx context.Context, o AddOptions, sink Sink) (Summary, error) {
	if err := in.checkAdd(o); err != nil {
		return Summary{}, err
	}
	op := newOp(sink, "walking")
	jobs, err := in.walkSources(ctx, o, op)
	if err != nil {
		return op.summary(), err
	}
	if o.OnConflict == vfs.ConflictError {
		if err := in.checkNoneExist(ctx, jobs); err != nil {
			return op.summary(), err
		}
	}
	op.setPhase("ingesting")
	in.parallel(ctx, len(jobs), func(i int) {
		op.report(in.addOne(ctx, jobs[i], o), jobs[i].size)
	})
	return op.summary(), ctx.Err()
}

func (in *Ingester) checkAdd(o AddOptions) error {
	if len(o.Sources) == 0 {
		return newError(ErrInvalid, "", "name at least one file, directory or http(s) URL", "Add needs at least one source.")
	}
	if o.Drive != "" {
		if err := vfs.ValidateDrive(o.Drive); err != nil {
			return err
		}
	}
	if o.TTL < 0 {
		return newError(ErrInvalid, "", "pass a positive TTL, or 0 for the default", "The TTL %s is negative.", o.TTL)
	}
	return CheckPatterns(o.Exclude)
}

// walkSources expands the sources into jobs: one per URL and per file found
// in each tree. What cannot be ingested is reported as it is found.
func (in *Ingester) walkSources(ctx context.Context, o AddOptions, op *op) ([]job, error) {
	var jobs []job
	wo := WalkOptions{Exclude: o.Exclude, IncludeHidden: o.IncludeHidden, MaxFileBytes: in.store.MaxContentBytes(), Policy: in.cfg.Policy}
	for _, raw := range o.Sources {
		src, err := classify(raw, o.Drive)
		if err != nil {
			op.report(ItemResult{Source: raw, Action: Failed, Err: err}, 0)
			continue
		}
		if src.file == "" {
			jobs = append(jobs, job{src: src})
			op.addTotal(1, 0)
			continue
		}
		err = Walk(ctx, src.file, wo, func(e Entry) error {
			s := src
			s.file, s.path = e.Path, filepath.ToSlash(e.Path)
			if e.Err != nil {
				// Inside a tree, refusals (a secret, a symlink out) and files
				// over the size cap are policy working as meant, not failures.
				act := Failed
				if (errors.Is(e.Err, ErrRefused) || errors.Is(e.Err, ErrTooLarge)) && e.Path != src.file {
					act = Skipped
				}
				op.report(ItemResult{Ref: s.ref(), Source: e.Path, Action: act, Err: e.Err}, 0)
				return nil
			}
			jobs = append(jobs, job{src: s, size: e.Size})
			op.addTotal(1, e.Size)
			return nil
		})
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			op.report(ItemResult{Ref: src.ref(), Source: src.file, Action: Failed, Err: err}, 0)
		}
	}
	return jobs, nil
}

// checkNoneExist fails the whole Add, before anything is read, when any
// destination exists: ON_CONFLICT_ERROR is a fast failure, not a partial add.
func (in *Ingester) checkNoneExist(ctx context.Context, jobs []job) error {
	var taken []string
	for _, j := range jobs {
		ok, isDir, err := in.store.Exists(ctx, vfs.Ref{Drive: j.src.drive, Path: j.src.path})
		if err != nil {
			return err
		}
		if ok && !isDir {
			taken = append(taken, j.src.ref())
		}
	}
	if len(taken) == 0 {
		return nil
	}
	shown := taken[:min(len(taken), 5)]
	return newError(ErrExists, shown[0], "pass on_conflict skip to add only what is new, or overwrite to refresh what exists",
		"%d of %d sources are already stored, for example %v; nothing was added.", len(taken), len(jobs), shown)
}

func (in *Ingester) addOne(ctx context.Context, j job, o AddOptions) ItemResult {
	ref := vfs.Ref{Drive: j.src.drive, Path: j.src.path}
	if err := vfs.AccessFrom(ctx).CheckChange(ref.Drive, ref.Path); err != nil { // refused before the source is read
		return ItemResult{Ref: j.src.ref(), Source: j.src.origin(), Action: Failed, Err: err}
	}
	info, err := in.store.Info(ctx, ref)
	var existing *vfs.Item
	switch {
	case err == nil && !info.Item.IsDir:
		if o.OnConflict == vfs.ConflictSkip {
			return ItemResult{Ref: j.src.ref(), Source: j.src.origin(), Action: Skipped}
		}
		existing = &info.Item
	case err != nil && !errors.Is(err, vfs.ErrNotFound):
		return ItemResult{Ref: j.src.ref(), Source: j.src.origin(), Action: Failed, Err: err}
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = in.cfg.DefaultTTL
	}
	return in.sync(ctx, j.src, existing, syncArgs{tags: o.Tags, ttl: ttl, onConflict: o.OnConflict, dedupe: o.Dedupe})
}

// syncArgs tune sync.
type syncArgs struct {
	force      bool           // read the source even if size, mtime or validators say unchanged
	tags       []string       // added to the item's tags
	ttl        time.Duration  // for a new URL item
	onConflict vfs.OnConflict // for a new item that appears meanwhile
	dedupe     Deduper        // for a new item; nil: none
}

// fetched is a source's content as the store will hold it.
type fetched struct {
	unchanged bool // the cheap check says the source is as stored
	content   []byte
	isText    bool
	mime      string
	text      []byte // searchable text of binary content
	title     string
	origin    vfs.Origin
}

// sync brings the item at src up to date with its source. existing is the
// item stored there, or nil. Unchanged content is never rewritten, so its
// chunks are neither indexed nor embedded again; changed content is written
// whole, and the store embeds only chunks whose text is new.
func (in *Ingester) sync(ctx context.Context, src source, existing *vfs.Item, a syncArgs) ItemResult {
	res := ItemResult{Ref: src.ref(), Source: src.origin()}
	var (
		f   fetched
		err error
	)
	if src.file != "" {
		f, err = in.readFile(src.file, existing, a.force)
	} else {
		f, err = in.fetchPage(ctx, src.fetchURL, existing, a)
	}
	if err != nil {
		res.Action, res.Err = Failed, err
		if errors.Is(err, ErrMissing) && existing != nil {
			res.Action = Missing
		}
		return res
	}
	res.Bytes = int64(len(f.content))
	if existing != nil && (f.unchanged || vfs.HashContent(f.content) == existing.ContentHash) {
		res.Action = Unchanged
		var err error
		switch {
		case existing.SourceURL != src.origin():
			// The item moved with its source (a watch pairs a rename).
			_, err = in.store.SetSource(ctx, vfs.Ref{ID: existing.ID}, src.origin(), f.origin, existing.ContentHash)
		case f.origin != existing.Origin:
			_, err = in.store.SetOrigin(ctx, vfs.Ref{ID: existing.ID}, f.origin, existing.ContentHash)
		}
		if err != nil {
			res.Action, res.Err = Failed, err
		}
		return res
	}
	if a.dedupe != nil && existing == nil && f.isText {
		dup, err := a.dedupe.DuplicateOf(ctx, vfs.Ref{Drive: src.drive, Path: src.path}, f.content, f.mime, f.title)
		switch {
		case err != nil:
			res.Action, res.Err = Failed, err
			return res
		case dup != "":
			res.Action, res.DuplicateOf = Skipped, dup
			return res
		}
	}
	p := vfs.WriteParams{
		Ref:        vfs.Ref{Drive: src.drive, Path: src.path},
		Content:    f.content,
		IsText:     f.isText,
		MimeType:   f.mime,
		Title:      f.title,
		SourceURL:  src.origin(),
		Tags:       a.tags,
		Text:       f.text,
		Origin:     f.origin,
		OnConflict: a.onConflict,
	}
	if existing != nil {
		// The source is authoritative for content, and for what its
		// frontmatter says; what people or agents set on the item
		// (description, tags, importance, a custom title) stays.
		p.OnConflict, p.ExpectedHash = vfs.ConflictOverwrite, existing.ContentHash
		kept := func(field string) bool { return !slices.Contains(existing.FrontmatterFields, field) }
		if kept("description") {
			p.Description = existing.Description
		}
		if kept("importance") {
			p.Importance = existing.Importance
		}
		if kept("tags") {
			p.Tags = append(slices.Clone(existing.Tags), a.tags...)
		}
		if derived := existing.Title == defaultTitle(existing) || existing.Title == existing.Origin.Title; kept("title") && (f.title == "" || !derived) {
			p.Title = existing.Title
		}
	}
	w, err := in.store.Write(ctx, p)
	switch {
	case err != nil:
		res.Action, res.Err = Failed, err
	case w.Skipped:
		res.Action = Skipped
	case w.Created:
		res.Action = Added
	default:
		res.Action = Updated
	}
	res.ChunksQueued, res.ChunksReused = w.ChunksToEmbed, w.ChunksReused
	return res
}

// defaultTitle is the title an item gets when nothing better is known.
func defaultTitle(it *vfs.Item) string { return filepath.Base(it.Path) }

// readFile reads a local file, or only stats it when its size and mtime match
// what existing recorded when ingest last read it. The policy guards reading
// and what errors reveal, so a file found unchanged is not checked against
// it again: resolving its symlinks was half the time of refreshing an
// unchanged tree.
func (in *Ingester) readFile(path string, existing *vfs.Item, force bool) (fetched, error) {
	fi, err := os.Stat(path)
	if err == nil && existing != nil && !force && existing.Origin.ModTime.Equal(fi.ModTime()) && existing.Origin.Size == fi.Size() {
		return fetched{unchanged: true, origin: existing.Origin}, nil
	}
	if err := in.cfg.Policy.Check(path); err != nil {
		return fetched{}, err
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fetched{}, newError(ErrMissing, path, "restore the file, or delete the item if it should go",
			"%s no longer exists.", path)
	case err != nil:
		return fetched{}, newError(ErrUnreadable, path, "check the file's permissions", "Cannot read %s: %v.", path, err)
	case !fi.Mode().IsRegular():
		return fetched{}, newError(ErrUnreadable, path, "ingest regular files or directories", "%s is not a regular file.", path)
	case fi.Size() > in.store.MaxContentBytes():
		return fetched{}, newError(ErrTooLarge, path, "raise max_content_bytes in the daemon config, or split the file",
			"%s is %d bytes; the limit is %d.", path, fi.Size(), in.store.MaxContentBytes())
	}
	o := vfs.Origin{ModTime: fi.ModTime().UTC(), Size: fi.Size(), CheckedAt: time.Now().UTC()}
	data, err := os.ReadFile(path)
	if err != nil {
		return fetched{}, newError(ErrUnreadable, path, "check the file's permissions", "Cannot read %s: %v.", path, err)
	}
	c := Detect(data)
	o.Title = c.Title
	return fetched{content: c.Data, isText: c.IsText, mime: c.MimeType, text: c.Text, title: c.Title, origin: o}, nil
}

// fetchPage GETs a URL, conditionally when existing has validators.
func (in *Ingester) fetchPage(ctx context.Context, u string, existing *vfs.Item, a syncArgs) (fetched, error) {
	var v Validators
	ttl := a.ttl
	if existing != nil {
		ttl = existing.Origin.TTL
		if !a.force {
			v = Validators{ETag: existing.Origin.ETag, LastModified: existing.Origin.LastModified}
		}
	}
	page, err := in.fetcher.Fetch(ctx, u, v)
	if err != nil {
		return fetched{}, err
	}
	o := vfs.Origin{ETag: page.ETag, LastModified: page.LastModified, Size: int64(len(page.Content)), CheckedAt: time.Now().UTC(), TTL: ttl}
	if page.NotModified {
		o.Size, o.Title = existing.Origin.Size, existing.Origin.Title
		return fetched{unchanged: true, origin: o}, nil
	}
	f := fetched{content: page.Content, isText: page.IsText, mime: page.MimeType, title: page.Title}
	if !page.IsText {
		c := Detect(page.Content)
		f.text = c.Text
		if f.title == "" {
			f.title = c.Title
		}
	}
	o.Title = f.title
	f.origin = o
	return f, nil
}

// parallel runs fn(0..n-1) on the configured number of workers, stopping
// early when ctx is done.
func (in *Ingester) parallel(ctx context.Context, n int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(in.cfg.Workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	defer wg.Wait()
	defer close(next)
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			return
		}
	}
}

// op tracks one operation's counts and throttles its progress events.
type op struct {
	sink         Sink
	start        time.Time
	mu           sync.Mutex
	progress     Progress
	sum          Summary
	lastProgress time.Time
}

// progressEvery bounds progress events to a handful a second.
const progressEvery = 200 * time.Millisecond

func newOp(sink Sink, phase string) *op {
	o := &op{sink: sink, start: time.Now()}
	o.setPhase(phase)
	return o
}

func (o *op) setPhase(phase string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.progress.Phase = phase
	o.emitProgress(true)
}

func (o *op) addTotal(items, bytes int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.progress.ItemsTotal += items
	o.progress.BytesTotal += bytes
	o.emitProgress(false)
}

// report records one item's outcome; size is what the walk found the source
// to be, which progress counts whether or not it had to be read.
func (o *op) report(r ItemResult, size int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := &o.sum
	switch r.Action {
	case Added:
		s.Added++
	case Updated:
		s.Updated++
	case Unchanged:
		s.Unchanged++
	case Skipped:
		s.Skipped++
	case Missing:
		s.Missing++
	case Failed:
		s.Failed++
	}
	s.ChunksQueued += int64(r.ChunksQueued)
	s.ChunksReused += int64(r.ChunksReused)
	s.Bytes += r.Bytes
	o.progress.ItemsDone++
	o.progress.BytesDone += max(size, r.Bytes)
	o.progress.ChunksDone += int64(r.ChunksQueued + r.ChunksReused)
	if o.sink.Item != nil {
		o.sink.Item(r)
	}
	o.emitProgress(false)
}

func (o *op) emitProgress(force bool) {
	now := time.Now()
	if o.sink.Progress == nil || (!force && now.Sub(o.lastProgress) < progressEvery) {
		return
	}
	o.lastProgress = now
	p := o.progress
	p.Elapsed = now.Sub(o.start)
	o.sink.Progress(p)
}

func (o *op) summary() Summary {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.progress.Phase = "done"
	o.emitProgress(true)
	s := o.sum
	s.Elapsed = time.Since(o.start)
	return s
}

func (s source) ref() string { return vfs.FormatRef(s.drive, s.path) }

// origin is what the item's SourceURL records: the file path or the URL to fetch.
func (s source) origin() string {
	if s.file != "" {
		return s.file
	}
	return s.fetchURL
}

// String names an action as the API does.
func (a Action) String() string {
	switch a {
	case Added:
		return "added"
	case Updated:
		return "updated"
	case Unchanged:
		return "unchanged"
	case Skipped:
		return "skipped"
	case Missing:
		return "missing"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("action(%d)", int(a))
}
