package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/internal/fsync"
	"github.com/ctxd/ctxd/vfs"
	"github.com/ctxd/ctxd/vfs/backend"
)

const (
	// applyBatch is how many outbox entries one pass applies: one Bleve batch
	// and one short hold of the vector lock.
	applyBatch = 2048
	// applyChunks and applyBytes bound the chunks one Bleve batch holds, and
	// their text: Bleve holds every token of a batch in memory while it
	// analyses it (with the trigram fields of the time, some 50 bytes a byte
	// of text); 2,048 long documents took gigabytes, one 60 MB item 6 GB. An
	// item larger than that is read and indexed in steps. Rebuilds batch
	// the same way. At 1 MiB a batch a 60 MB item peaked at 434 MiB
	// resident, at 256 KiB at 297 MiB, in about the same time.
	applyChunks = 4096
	applyBytes  = 256 << 10
	// trimEvery is how many applied entries accumulate before the outbox is trimmed.
	trimEvery = 4096
	// reportEvery is how often an engine on a store shared by replicas
	// reports where it stands even when it has nothing to trim: a replica
	// silent for vfs.ReplicaRetention counts as gone.
	reportEvery = vfs.ReplicaRetention / 4
	// After a write wakes the applier it waits a moment so that one Bleve
	// batch carries many changes: every batch becomes a segment, and merging
	// many tiny segments costs far more than indexing. A busy stream of
	// writes (the last batch held more than bulkBatch entries) waits longer.
	// A search waiting for the writes (awaitWrites) cuts the wait short.
	quietDelay = 5 * time.Millisecond
	bulkDelay  = 150 * time.Millisecond
	bulkBatch  = 32

	lexicalDir   = "lexical"
	snapshotFile = "vectors.snap"
)

// Options configure an Engine.
type Options struct {
	// Dir holds the Bleve index and the vector snapshot.
	Dir string
	Log *slog.Logger
	// SnapshotLag is how many applied outbox entries past the last vector
	// snapshot trigger a new one; 0 means 100,000. Catch-up after a crash
	// replays at most about this many entries.
	SnapshotLag uint64
	// SnapshotEvery is how often a snapshot is written while any entry is
	// unsaved; 0 means 5 minutes.
	SnapshotEvery time.Duration
	// Limits bound every request; zero fields take DefaultLimits.
	Limits Limits
	// WriteWait is how long a search waits at most for the indexes to
	// apply the writes acknowledged before it started, before it answers
	// from them as they are and says so (Response.Stale); 0 means
	// DefaultWriteWait, negative turns the wait and the report off.
	WriteWait time.Duration
	// TimedDrives are the drives whose items' times the indexes keep, so
	// that Filter.After and Before can select them (session events): every
	// other item matches no time range. A time costs the lexical index 16
	// terms a chunk (a numeric field's precision steps), some 10% of its
	// indexing time, so it is kept only where a caller filters by it.
	TimedDrives []string
	// Hold, when set, bounds trimming for standing queries
	// (index/standing): matched is how far they matched the outbox (on a
	// shared store the replica reports no more than it as applied, so that
	// no replica trims what they have not matched), and trim how far this
	// engine may delete entries (they keep more for resuming subscribers).
	Hold func() (matched, trim uint64)
	// Observe, when set, is told how long each search and each of its legs
	// took (the daemon's metrics).
	Observe Observer
	// CompactIdle is how long the lexical index goes without a write
	// before the engine merges its segments into one, where that pays
	// (lexical.Segments.Worth); 0 means DefaultCompactIdle, negative never.
	CompactIdle time.Duration

	// beforeMark, when set (tests), runs before each background mark.
	beforeMark func()
	// beforeApply, when set (tests), runs on the run goroutine before each
	// pass applies outbox entries: blocking in it holds the applier.
	beforeApply func()
}

// Engine keeps the search indexes of a store and answers queries. Its
// methods are safe for concurrent use.
type Engine struct {
	store *vfs.Store
	opts  Options
	log   *slog.Logger

	mu    sync.RWMutex // guards the fields below; searches hold it shared
	lex   *lexical.Index
	vec   *vectorLeg // nil while no embedding model is known
	model string
	dims  int
	state State

	// Owned by the run goroutine.
	lexSeq, vecSeq, snapSeq, trimmed uint64
	reported                         uint64     // the position last reported to a shared store (TrimOutbox)
	reportedAt                       time.Time  // when; zero before the first report
	marked                           uint64     // lexSeq the store's IndexedAt reflects (Store.MarkIndexed)
	marking                          chan error // the Store.MarkIndexed in flight (markAsync), or nil
	markingTo                        uint64     // its target
	runCtx                           context.Context
	snapAt                           time.Time
	lastBatch                        int // entries the last pass applied
	rebuildLex, rebuildVec           bool
	haveSnap                         bool        // a snapshot file exists; snapSeq is its sequence
	lexWrittenAt                     time.Time   // when the lexical index last applied a write (or opened)
	compactChecked                   bool        // whether compacting was considered since then
	compaction                       *compaction // the compaction running, or nil

	// fresh is what searches see of the store (awaitWrites); a search
	// waiting for it asks, on hurry, to apply without the batching delay.
	fresh fresh
	hurry chan struct{}

	models  chan modelSpec
	reqs    chan func(context.Context)
	cancel  context.CancelFunc
	stopped chan struct{}
}

// errStopped is the error of a call made to a closed Engine.
var errStopped = errors.New("search engine stopped")

// State reports how far the indexes are. It is what Status shows.
type State struct {
	// AppliedSeq is the outbox sequence both indexes have applied and the
	// items' IndexedAt reflects.
	AppliedSeq uint64
	// LexicalChunks and VectorChunks count indexed chunks.
	LexicalChunks, VectorChunks int64
	// Model is the embedding model whose vectors the vector leg holds.
	Model string
	// Rebuilding is set while an index is rebuilt from the store.
	Rebuilding bool
	// Checking is set while Doctor compares the indexes with the store;
	// they apply no changes meanwhile.
	Checking bool
	// LexicalSegments counts the lexical index's segments: after a bulk
	// ingest about ten, one once the engine has compacted it (CompactIdle).
	LexicalSegments int
	// Compacting is set while the lexical index is being compacted.
	Compacting bool
}

type modelSpec struct {
	id   string
	dims int
}

// Open opens (creating if needed) the indexes in opts.Dir and starts
// applying the store's outbox in the background. The vector leg starts once
// SetModel names the store's embedding model.
func Open(store *vfs.Store, opts Options) (*Engine, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.SnapshotLag == 0 {
		opts.SnapshotLag = 100_000
	}
	if opts.SnapshotEvery == 0 {
		opts.SnapshotEvery = 5 * time.Minute
	}
	opts.Limits = opts.Limits.withDefaults()
	if opts.WriteWait == 0 {
		opts.WriteWait = DefaultWriteWait
	}
	if opts.CompactIdle == 0 {
		opts.CompactIdle = DefaultCompactIdle
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("index dir: %w", err)
	}
	e := &Engine{
		store: store, opts: opts, log: opts.Log,
		models: make(chan modelSpec, 1), reqs: make(chan func(context.Context)),
		hurry: make(chan struct{}, 1), stopped: make(chan struct{}),
		lexWrittenAt: time.Now(),
	}
	lex, err := openLexical(filepath.Join(opts.Dir, lexicalDir), e.log)
	if err != nil {
		return nil, err
	}
	e.lex = lex
	if e.lexSeq, err = lex.AppliedSeq(); err != nil {
		lex.Close()
		return nil, err
	}
	n, err := lex.Count()
	if err != nil {
		lex.Close()
		return nil, err
	}
	// An empty index over a store with chunks was discarded or predates the
	// outbox: build it from the store.
	stats, err := store.EmbedStats(context.Background())
	if err != nil {
		lex.Close()
		return nil, err
	}
	e.rebuildLex = n == 0 && stats.Chunks > 0
	e.snapSeq, e.haveSnap = peekSnapshotSeq(filepath.Join(opts.Dir, snapshotFile))
	// Entries earlier runs trimmed need no trimming again.
	_, retained, err := store.Changes(context.Background(), 0, 0)
	if err != nil {
		lex.Close()
		return nil, err
	}
	e.trimmed = retained - 1
	e.state = State{AppliedSeq: e.lexSeq, LexicalChunks: int64(n)}
	e.publish()
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go e.run(ctx)
	return e, nil
}

// openLexical opens the Bleve index, discarding one built with another mapping.
func openLexical(dir string, log *slog.Logger) (*lexical.Index, error) {
	lex, err := lexical.Open(dir)
	if errors.Is(err, lexical.ErrMappingMismatch) {
		log.Warn("lexical index has an old mapping; rebuilding it from the store", "dir", dir)
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		lex, err = lexical.Open(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("open lexical index: %w", err)
	}
	return lex, nil
}

// SetModel names the embedding model whose vectors the vector leg serves.
// The engine loads its snapshot for that model or rebuilds from the store.
func (e *Engine) SetModel(id string, dims int) {
	select {
	case <-e.models:
	default:
	}
	e.models <- modelSpec{id, dims}
}

// Close stops applying, saves the vector snapshot and closes the indexes.
func (e *Engine) Close() error {
	e.cancel()
	<-e.stopped
	e.mu.Lock()
	defer e.mu.Unlock()
	var err error
	if e.vec != nil && e.vecSeq > e.snapSeq {
		err = e.writeSnapshot()
	}
	// Trim now rather than at the next start, where the write would wait
	// behind the indexes' own start-up I/O.
	if err == nil {
		err = e.maybeTrim(context.Background(), false)
	}
	return errors.Join(err, e.lex.Close())
}

// State returns how far the indexes are.
func (e *Engine) State() State {
	e.mu.RLock()
	defer e.mu.RUnlock()
	st := e.state
	if seg, err := e.lex.Segments(); err == nil {
		st.LexicalSegments = seg.Count
	}
	return st
}

// run applies the outbox until ctx ends, serving model changes and requests
// in between.
func (e *Engine) run(ctx context.Context) {
	defer close(e.stopped)
	e.runCtx = ctx
	defer e.joinMark() // ctx has ended: it returns soon
	defer e.stopCompaction()
	work := e.store.Work()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	unreachable := false // the last pass found the store out of reach
	for ctx.Err() == nil {
		more, err := e.pass(ctx)
		switch {
		case err == nil && unreachable:
			unreachable = false
			e.log.Info("store reachable again; the search indexes catch up")
		case err != nil && ctx.Err() == nil && backend.IsUnavailable(err):
			// A store that stops answering (PostgreSQL restarting) is
			// retried every second, said once rather than every time.
			if !unreachable {
				e.log.Warn("store unreachable; the search indexes apply its changes once it answers", "err", err)
			}
			unreachable = true
		case err != nil && ctx.Err() == nil:
			e.log.Error("search index update failed; retrying", "err", err)
		}
		if err != nil && ctx.Err() == nil {
			more = false
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
		if more {
			select {
			case m := <-e.models:
				e.useModel(m)
			case fn := <-e.reqs:
				fn(ctx)
			default:
			}
			continue
		}
		select {
		case <-ctx.Done():
		case <-work:
			delay := quietDelay
			if e.lastBatch > bulkBatch {
				delay = bulkDelay
			}
			// A search waiting for the writes cuts the delay short.
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			case <-e.hurry:
			}
		case <-e.hurry:
		case m := <-e.models:
			e.useModel(m)
		case fn := <-e.reqs:
			fn(ctx)
		case <-tick.C:
		case <-e.compactTimer():
			e.maybeCompact(ctx)
		case err := <-e.compactDone():
			e.compacted(err)
		}
	}
}

// do runs fn on the run goroutine and waits for it.
func (e *Engine) do(ctx context.Context, fn func(context.Context) error) error {
	errc := make(chan error, 1)
	select {
	case e.reqs <- func(c context.Context) {
		// fn stops when the caller leaves as well as when the engine closes.
		fc, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(c, cancel)()
		errc <- fn(fc)
	}:
	case <-ctx.Done():
		return ctx.Err()
	case <-e.stopped:
		return errStopped
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pass does one unit of index work and reports whether more is waiting.
func (e *Engine) pass(ctx context.Context) (bool, error) {
	if e.opts.beforeApply != nil {
		e.opts.beforeApply()
	}
	// This pass applies what any waiting search asked for: it reads the
	// outbox after the ask (or, when the outbox holds more than one pass,
	// reports more and the next pass follows at once).
	select {
	case <-e.hurry:
	default:
	}
	more, err := e.catchUp(ctx)
	if err != nil {
		return false, err
	}
	// Applying marks as it goes, a batch behind; once the outbox is applied
	// this marks the rest (and catches up after a start or a failed mark).
	if !more {
		if err := e.markIndexed(ctx); err != nil {
			return false, err
		}
	}
	if err := e.maybeSnapshot(more); err != nil {
		e.log.Error("vector snapshot failed", "err", err)
	}
	return more, e.maybeTrim(ctx, more)
}

// catchUp rebuilds an index that needs it, else applies the next batch of
// outbox entries, and reports whether more is waiting.
func (e *Engine) catchUp(ctx context.Context) (bool, error) {
	if e.rebuildLex || e.rebuildVec {
		e.stopCompaction() // a rebuild replaces the index it works on
		_, err := e.rebuild(ctx, e.rebuildLex, e.rebuildVec)
		return err == nil, err
	}
	return e.applyChanges(ctx)
}

// applyChanges applies the next batch of outbox entries to whichever index
// has not applied them.
func (e *Engine) applyChanges(ctx context.Context) (bool, error) {
	from := e.lexSeq
	if e.vec != nil {
		from = min(from, e.vecSeq)
	}
	changes, retained, err := e.store.Changes(ctx, from, applyBatch)
	if err != nil {
		return false, err
	}
	if retained > from+1 {
		// Entries this index needs were trimmed (an index dir was deleted or
		// a snapshot lost): only a rebuild can recover.
		e.log.Warn("search index is behind the retained outbox; rebuilding", "lexical_seq", e.lexSeq, "vector_seq", e.vecSeq, "retained", retained)
		e.rebuildLex = e.lexSeq+1 < retained
		e.rebuildVec = e.vec != nil && e.vecSeq+1 < retained
		return true, nil
	}
	if len(changes) == 0 {
		e.lastBatch = 0
		return false, nil
	}
	// What each item needs, in order of its first change.
	byID := map[string]*itemChange{}
	var need []*itemChange
	for i, c := range changes {
		ch := byID[c.ItemID]
		if ch == nil {
			ch = &itemChange{first: i, from: math.MaxInt}
			byID[c.ItemID] = ch
		}
		ch.prev = max(ch.prev, c.PrevChunks)
		lex := c.Seq > e.lexSeq && !c.VectorsOnly
		vec := e.vec != nil && c.Seq > e.vecSeq
		if (lex || vec) && !ch.lex && !ch.vec {
			need = append(need, ch)
		}
		ch.lex, ch.vec = ch.lex || lex, ch.vec || vec
		switch {
		case lex || vec && !c.VectorsOnly:
			ch.all = true
		case vec:
			ch.from, ch.to = min(ch.from, c.VectorsFrom), max(ch.to, c.VectorsTo)
		}
	}
	reads := make([]vfs.IndexRead, len(need))
	for i, ch := range need {
		reads[i] = ch.read(changes[ch.first].ItemID)
	}
	docs, err := e.store.IndexDocs(ctx, reads, e.vec != nil, applyChunks, applyBytes)
	if err != nil {
		return false, err
	}
	full := len(changes) == applyBatch
	if len(docs) < len(reads) {
		// Stop before the first change of the first item not read; the
		// rest is the next pass.
		changes, full = changes[:need[len(docs)].first], true
	}
	e.lastBatch = len(changes)
	last := changes[len(changes)-1].Seq
	for {
		for i := range docs {
			e.untime(&docs[i])
		}
		// An item larger than one batch comes in steps; only the last
		// step records the pass as applied.
		step := len(docs) > 0 && docs[len(docs)-1].More
		if err := e.applyDocs(ctx, docs, byID, last, !step); err != nil {
			return false, err
		}
		if !step {
			return full, nil
		}
		d := docs[0]
		r := byID[d.ItemID].read(d.ItemID)
		r.From = d.From + len(d.Chunks)
		if docs, err = e.store.IndexDocs(ctx, []vfs.IndexRead{r}, e.vec != nil, applyChunks, applyBytes); err != nil {
			return false, err
		}
	}
}

// itemChange is what one pass must apply of an item.
type itemChange struct {
	first    int  // index of its first change in the pass
	prev     int  // most chunk records it had before a change
	lex, vec bool // which indexes need it
	all      bool // every chunk, else only the vectors of chunks [from, to)
	from, to int
}

func (ch *itemChange) read(id string) vfs.IndexRead {
	if ch.all {
		return vfs.IndexRead{ItemID: id}
	}
	return vfs.IndexRead{ItemID: id, From: ch.from, To: ch.to}
}

// applyDocs applies docs to the indexes that need them. With final set they
// complete the pass and last is recorded as applied; else they are one step
// of a large item, which a restart applies again.
func (e *Engine) applyDocs(ctx context.Context, docs []vfs.IndexDoc, byID map[string]*itemChange, last uint64, final bool) error {
	if last > e.lexSeq {
		var up []lexical.Doc
		var del []string
		for _, d := range docs {
			ch := byID[d.ItemID]
			if !ch.lex {
				continue
			}
			up = appendLexDocs(up, d)
			if !d.More {
				for i := d.Total; i < ch.prev; i++ {
					del = append(del, ChunkID(d.ItemID, i))
				}
			}
		}
		seq := e.lexSeq
		if final {
			seq = last
		}
		if err := e.lex.Apply(up, del, seq); err != nil {
			return err
		}
		e.lexSeq = seq
		e.lexWrittenAt, e.compactChecked = time.Now(), false
		// The previous batch's mark ran beside this batch's Bleve work;
		// this one's runs beside the next.
		if err := e.joinMark(); err != nil {
			return err
		}
		e.markAsync()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.vec != nil && last > e.vecSeq {
		for _, d := range docs {
			if byID[d.ItemID].vec {
				e.vec.apply(d, e.log)
			}
		}
		if final {
			e.vecSeq = last
		}
	}
	e.refreshState()
	e.publish()
	return nil
}

// markIndexed sets IndexedAt of the items the lexical index now holds in
// their current state (Item.IndexedAt: their chunks are searchable), after
// the mark in flight, and shows the sequence in the state.
func (e *Engine) markIndexed(ctx context.Context) error {
	if err := e.joinMark(); err != nil {
		return err
	}
	if e.marked < e.lexSeq {
		if err := e.store.MarkIndexed(ctx, e.lexSeq); err != nil {
			return fmt.Errorf("mark items indexed: %w", err)
		}
		e.marked = e.lexSeq
	}
	e.mu.Lock()
	e.refreshState()
	e.mu.Unlock()
	return nil
}

// markAsync starts marking through lexSeq on another goroutine, unless a
// mark is in flight: during a bulk ingest a mark's bbolt transaction took
// about 15% of the engine's time, waiting on the commit. It runs under the
// run goroutine's context, never a caller's (Doctor's pins a read
// transaction that ends with its call).
func (e *Engine) markAsync() {
	if e.marking != nil || e.marked >= e.lexSeq {
		return
	}
	ctx, to, done := e.runCtx, e.lexSeq, make(chan error, 1)
	go func() {
		if e.opts.beforeMark != nil {
			e.opts.beforeMark()
		}
		done <- e.store.MarkIndexed(ctx, to)
	}()
	e.marking, e.markingTo = done, to
}

// joinMark waits for the mark in flight, if any, and records it. Marks never
// overlap: each walks the outbox from where the last one stopped.
func (e *Engine) joinMark() error {
	if e.marking == nil {
		return nil
	}
	err := <-e.marking
	e.marking = nil
	if err != nil {
		return fmt.Errorf("mark items indexed: %w", err)
	}
	e.marked = max(e.marked, e.markingTo)
	return nil
}

// refreshState updates e.state; the caller holds e.mu.
func (e *Engine) refreshState() {
	applied := min(e.lexSeq, e.marked)
	var vn int64
	if e.vec != nil {
		applied = min(applied, e.vecSeq)
		vn = int64(e.vec.chunkRows())
	}
	ln, _ := e.lex.Count()
	e.state = State{AppliedSeq: applied, LexicalChunks: int64(ln), VectorChunks: vn, Model: e.model, Rebuilding: e.state.Rebuilding, Checking: e.state.Checking, Compacting: e.state.Compacting}
}

// ChunkID names chunk i of an item, as results and the lexical index show it.
func ChunkID(itemID string, i int) string { return itemID + "#" + strconv.Itoa(i) }

// ParseChunkID splits a ChunkID into its item id and chunk index.
func ParseChunkID(id string) (itemID string, i int, ok bool) {
	itemID, n, ok := strings.Cut(id, "#")
	if !ok {
		return "", 0, false
	}
	i, err := strconv.Atoi(n)
	return itemID, i, err == nil
}

func appendLexDocs(up []lexical.Doc, d vfs.IndexDoc) []lexical.Doc {
	for i, c := range d.Chunks {
		up = append(up, lexical.Doc{
			ID: ChunkID(d.ItemID, d.From+i), Text: c.Text, Heading: c.Heading, Title: d.Title, Description: d.Description,
			Drive: d.Drive, Path: d.Path, Mime: d.Mime, Tags: d.Tags, Time: d.Time,
		})
	}
	return up
}

// untime clears the time of d unless it is on a timed drive
// (Options.TimedDrives), so neither index keeps it.
func (e *Engine) untime(d *vfs.IndexDoc) {
	if !slices.Contains(e.opts.TimedDrives, d.Drive) {
		d.Time = time.Time{}
	}
}

// textBytes is the chunk text d holds.
func textBytes(d vfs.IndexDoc) int {
	n := 0
	for _, c := range d.Chunks {
		n += len(c.Text)
	}
	return n
}

// useModel switches the vector leg to model m: from its snapshot when one
// matches, else by a rebuild from the store.
func (e *Engine) useModel(m modelSpec) {
	if m.id == e.model && m.dims == e.dims {
		return
	}
	snap, err := loadSnapshot(filepath.Join(e.opts.Dir, snapshotFile), m.id, m.dims, e.store)
	e.mu.Lock()
	e.model, e.dims = m.id, m.dims
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			e.log.Warn("vector snapshot unusable; rebuilding from the store", "err", err)
		}
		e.vec = newVectorLeg(m.dims, e.store)
		e.vecSeq, e.snapSeq = 0, 0
		e.rebuildVec = true
	} else {
		e.vec = snap.leg
		e.vecSeq, e.snapSeq, e.snapAt = snap.seq, snap.seq, time.Now()
		e.log.Info("vector index loaded", "model", m.id, "vectors", snap.leg.chunkRows(), "questions", snap.leg.qrows, "seq", snap.seq)
	}
	e.refreshState()
	e.publish()
	e.mu.Unlock()
}

// RebuildResult reports a rebuild.
type RebuildResult struct {
	LexicalChunks, VectorChunks int64
	Seq                         uint64
	Took                        time.Duration
}

// Reindex rebuilds both indexes from the store, while searches keep using
// the old ones until the new ones replace them.
func (e *Engine) Reindex(ctx context.Context) (RebuildResult, error) {
	var res RebuildResult
	err := e.do(ctx, func(c context.Context) error {
		var err error
		res, err = e.rebuild(c, true, e.vec != nil)
		return err
	})
	if err != nil {
		// The rebuild may still be stopping: res is not the caller's.
		return RebuildResult{}, err
	}
	return res, nil
}

// rebuild reads every indexed item of the store in one snapshot and builds
// the chosen indexes from it beside the live ones, then swaps them in.
func (e *Engine) rebuild(ctx context.Context, lex, vec bool) (RebuildResult, error) {
	start := time.Now()
	e.mu.Lock()
	e.state.Rebuilding = true
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.state.Rebuilding = false
		e.refreshState()
		e.mu.Unlock()
	}()
	var res RebuildResult
	newDir := filepath.Join(e.opts.Dir, lexicalDir+".new")
	var nl *lexical.Index
	if lex {
		if err := os.RemoveAll(newDir); err != nil {
			return res, err
		}
		var err error
		if nl, err = lexical.Open(newDir); err != nil {
			return res, fmt.Errorf("rebuild: %w", err)
		}
	}
	var nv *vectorLeg
	if vec {
		nv = newVectorLeg(e.dims, e.store)
	}
	var pending []lexical.Doc
	var pendingBytes int
	seq, err := e.store.ScanIndexDocs(ctx, vec, func(d vfs.IndexDoc) error {
		e.untime(&d)
		if nl != nil {
			if n := len(d.Chunks); len(pending) > 0 && (len(pending)+n > applyChunks || pendingBytes+textBytes(d) > applyBytes) {
				res.LexicalChunks += int64(len(pending))
				if err := nl.Apply(pending, nil, 0); err != nil {
					return err
				}
				pending, pendingBytes = pending[:0], 0
			}
			pending, pendingBytes = appendLexDocs(pending, d), pendingBytes+textBytes(d)
		}
		if nv != nil {
			nv.apply(d, e.log)
		}
		return nil
	})
	if err == nil {
		err = ctx.Err() // a caller that left gets no swap
	}
	if err == nil && nl != nil {
		res.LexicalChunks += int64(len(pending))
		// The sequence goes in last: a crash mid-rebuild leaves a new index
		// that claims nothing and is built again.
		err = nl.Apply(pending, nil, seq)
	}
	if err != nil {
		if nl != nil {
			nl.Close()
			os.RemoveAll(newDir)
		}
		return res, fmt.Errorf("rebuild: %w", err)
	}
	res.Seq = seq
	if nl != nil {
		if err := e.swapLexical(nl, newDir); err != nil {
			return res, err
		}
		e.lexSeq, e.rebuildLex = seq, false
		// Before the state shows the sequence (pass retries a failure).
		if err := e.markIndexed(ctx); err != nil && ctx.Err() == nil {
			e.log.Error("marking items indexed failed", "err", err)
		}
	}
	if nv != nil {
		res.VectorChunks = int64(nv.chunkRows())
		e.mu.Lock()
		e.vec, e.vecSeq = nv, seq
		err := e.writeSnapshot()
		e.mu.Unlock()
		if err != nil {
			e.log.Error("vector snapshot failed", "err", err)
		}
		e.rebuildVec = false
	}
	e.publish()
	res.Took = time.Since(start)
	e.log.Info("search indexes rebuilt", "lexical_chunks", res.LexicalChunks, "vectors", res.VectorChunks, "seq", seq, "took", res.Took)
	return res, nil
}

// swapLexical replaces the live Bleve index with the one built in newDir.
func (e *Engine) swapLexical(nl *lexical.Index, newDir string) error {
	dir := filepath.Join(e.opts.Dir, lexicalDir)
	if err := nl.Close(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.lex.Close(); err != nil {
		return err
	}
	old := dir + ".old"
	os.RemoveAll(old)
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Rename(newDir, dir); err != nil {
		return err
	}
	fsync.Dir(e.opts.Dir) // best effort: the index is derived, a lost entry is rebuilt
	lex, err := lexical.Open(dir)
	if err != nil {
		return fmt.Errorf("reopen rebuilt lexical index: %w", err)
	}
	e.lex = lex
	return os.RemoveAll(old)
}

// maybeSnapshot saves the vector matrix when enough is unsaved, or when
// anything is unsaved and the last save is old enough.
func (e *Engine) maybeSnapshot(busy bool) error {
	if e.vec == nil || e.vecSeq <= e.snapSeq {
		return nil
	}
	lag := e.vecSeq - e.snapSeq
	if lag < e.opts.SnapshotLag && (busy || time.Since(e.snapAt) < e.opts.SnapshotEvery) {
		return nil
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.writeSnapshot()
}

// maybeTrim drops outbox entries both indexes have made durable, once
// enough have accumulated (or, when not busy, any). A snapshot on disk bounds
// trimming even before its model is known, so that loading it never finds
// entries missing; so does marking, which needs the entries it has not
// walked. On a store shared by replicas trimming is also how this replica
// reports its position: when idle after it moved (a replica started after
// others trimmed has nothing to trim, yet must say where it stands), and at
// least every reportEvery.
func (e *Engine) maybeTrim(ctx context.Context, busy bool) error {
	upto := min(e.lexSeq, e.marked)
	if e.vec != nil || e.haveSnap {
		upto = min(upto, e.snapSeq)
	}
	through := upto
	if e.opts.Hold != nil {
		matched, trim := e.opts.Hold()
		upto, through = min(upto, matched), min(upto, trim)
	}
	report := e.store.Shared() && (!busy && upto != e.reported || time.Since(e.reportedAt) >= reportEvery)
	if !report && (through <= e.trimmed || (busy && through-e.trimmed < trimEvery)) {
		return nil
	}
	if err := e.store.TrimOutboxTo(ctx, upto, through); err != nil {
		return err
	}
	e.trimmed, e.reported, e.reportedAt = max(e.trimmed, through), upto, time.Now()
	return nil
}
