package standing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

const (
	// DefaultRetain is how many outbox entries the hub keeps past those it
	// has matched, so that a stream resuming with an older token gets what
	// it missed (about 40 bytes each in the store).
	DefaultRetain = 100_000
	// DefaultPending is the default bound of a stream's queue of pushes.
	DefaultPending = 1000
	// batchChanges bounds the outbox entries one matching pass reads, and
	// readChunks and readBytes the chunks (and their text) one read of the
	// changed items holds, as the search engine's passes do.
	batchChanges = 1024
	readChunks   = 4096
	readBytes    = 1 << 20
	// idfEvery is how often the term weights are read again from the
	// lexical index while queries are registered.
	idfEvery = time.Minute
	// maxVersions bounds the item versions a subscription remembers to
	// push each version once; past it the oldest half is forgotten (a
	// version forgotten may be pushed twice: delivery is at least once).
	maxVersions = 10_000
)

// Errors of Subscribe.
var (
	// ErrInvalid marks a query that cannot be registered as given.
	ErrInvalid = errors.New("invalid standing query")
	// ErrNoModel marks a vector query while no embedding model can run.
	ErrNoModel = errors.New("no embedding model can run")
	// ErrTooMany marks a subscription over a count limit (LimitError says which).
	ErrTooMany = errors.New("too many subscriptions")
	// ErrClosed is the end of every stream when the hub closes.
	ErrClosed = errors.New("standing queries stopped")
	// ErrCutOff ends a stream whose consumer fell behind by more than its
	// pending bound.
	ErrCutOff = errors.New("slow consumer cut off")
)

// Options configure a Hub.
type Options struct {
	Log *slog.Logger
	// Embed embeds a query text with the store's embedding model; nil, or
	// an error, when none can run (hybrid queries then match by their
	// lexical leg alone).
	Embed func(ctx context.Context, text string) ([]float32, error)
	// Retain is how many matched outbox entries are kept for resuming
	// streams; 0 means DefaultRetain, negative none.
	Retain int64
	// ReplicaID is this daemon's replica id on a shared store.
	ReplicaID string
	// MaxInbox bounds each durable subscription's inbox; 0 means
	// DefaultInbox.
	MaxInbox int
	// OnInbox, when set, is called after matches were added to the inbox
	// of durable subscription name (MCP's resource updates).
	OnInbox func(name string)
}

// Query is a standing query: a chunk matches when its score is at least
// MinScore (see the package doc).
type Query struct {
	Texts  []string
	Filter lexical.Filter
	// Mode: BM25 (the lexical leg), Vector, or Hybrid (both).
	Mode search.Mode
	// MinScore in [0, 1]; 0 means DefaultLexicalMin for the lexical leg and
	// DefaultVectorMin for the vector leg.
	MinScore float64
	// SnippetChars is the snippet length of a push; 0 means the default.
	SnippetChars int
}

// Change is the change that made an item match.
type Change struct {
	Seq       uint64 // the outbox sequence of the item's last change matched
	Op, Actor string // history's, "" when history is off
	Rev       int64
	Time      time.Time
	ReplicaID string
	Remote    bool
}

// Match is one item that newly matches, with its best chunk.
type Match struct {
	Result search.Result
	Change Change
}

// Gap says changes in [From, To] were not matched for a stream.
type Gap struct {
	From, To uint64
	Dropped  int64
	Reason   string
}

// Event is a Match or a Gap.
type Event struct {
	Match *Match
	Gap   *Gap
}

// Hub holds the standing queries of open streams and matches the store's
// changes against all of them once the search indexes have applied them.
type Hub struct {
	store  *vfs.Store
	engine *search.Engine
	opts   Options
	log    *slog.Logger

	mu      sync.Mutex
	subs    map[*Sub]bool
	gen     uint64 // bumped by every change of subs
	pos     uint64 // the outbox sequence matched (or being matched) through
	nextID  atomic.Uint64
	cutOffs atomic.Int64
	wake    chan struct{}
	durable map[string]*Sub          // by name; also in subs
	notify  map[string]chan struct{} // InboxChanged

	// Owned by the run goroutine.
	persistAt uint64 // the position persisted for durable subscriptions
	m         *matcher
	mGen      uint64
	idf       map[string]float64
	idfAt     time.Time
	cancel    context.CancelFunc
	done      chan struct{}
}

// New returns a hub over store; Start starts it. Its Hold bounds the
// engine's trimming from the engine's start (search.Options.Hold).
func New(store *vfs.Store, opts Options) *Hub {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	switch {
	case opts.Retain == 0:
		opts.Retain = DefaultRetain
	case opts.Retain < 0:
		opts.Retain = 0
	}
	if opts.MaxInbox == 0 {
		opts.MaxInbox = DefaultInbox
	}
	return &Hub{store: store, opts: opts, log: opts.Log, subs: map[*Sub]bool{}, durable: map[string]*Sub{}, notify: map[string]chan struct{}{},
		wake: make(chan struct{}, 1), done: make(chan struct{}), idf: map[string]float64{}}
}

// Start starts matching the changes engine applies from now on, and for
// the durable subscriptions from where they were matched through before.
func (h *Hub) Start(ctx context.Context, engine *search.Engine) error {
	applied, _ := engine.Applied()
	p, err := h.position(ctx)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.engine = engine
	h.pos = applied
	if p > 0 && p < applied {
		h.pos, h.persistAt = p, p
	}
	h.mu.Unlock()
	if err := h.reload(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go h.run(ctx)
	return nil
}

// Close ends every stream with ErrClosed and stops matching. Hold keeps
// answering, so that the engine, closed after it, trims no entry the hub
// still needs.
func (h *Hub) Close() {
	if h.cancel != nil {
		h.cancel()
		<-h.done
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.end(ErrClosed)
	}
	clear(h.subs)
}

// Hold is search.Options.Hold: the outbox sequence the hub has matched
// through, and the one the engine may trim through, which keeps
// Options.Retain entries more for resuming streams, and every entry a
// resumed stream has yet to replay (both 0 before Start).
func (h *Hub) Hold() (matched, trim uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	trim = h.pos - min(h.pos, uint64(h.opts.Retain))
	for s := range h.subs {
		trim = min(trim, s.held.Load())
	}
	return h.pos, trim
}

// Counts reports the durable subscriptions, the open streams and the
// streams cut off since New.
func (h *Hub) Counts() (durable, streams int, cutOff int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.durable), len(h.subs) - len(h.durable), h.cutOffs.Load()
}

// Token encodes an outbox sequence as a resume token.
func Token(seq uint64) string { return "r1." + strconv.FormatUint(seq, 36) }

// ParseToken decodes a resume token.
func ParseToken(tok string) (uint64, error) {
	rest, ok := strings.CutPrefix(tok, "r1.")
	seq, err := strconv.ParseUint(rest, 36, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("%w: resume token %q is not one a push carried", ErrInvalid, tok)
	}
	return seq, nil
}

// SubscribeOptions are a stream's own settings.
type SubscribeOptions struct {
	// Access bounds what the stream is told of.
	Access vfs.Access
	// Owner names the token that opened it; MaxPerOwner and MaxTotal bound
	// the open streams (0: no bound).
	Owner                 string
	MaxPerOwner, MaxTotal int
	// Pending bounds the pushes queued for the stream; 0 means DefaultPending.
	Pending int
	// Resume, with HasResume, is the sequence of the last push received:
	// the stream starts after it.
	Resume    uint64
	HasResume bool
}

// LimitError is an ErrTooMany naming the bound.
type LimitError struct {
	PerOwner bool // the owner's bound, else the total
	Max      int
}

func (e *LimitError) Error() string {
	if e.PerOwner {
		return fmt.Sprintf("this token already holds %d standing queries (streams and durable subscriptions), the most one token may", e.Max)
	}
	return fmt.Sprintf("the daemon already holds %d standing queries (streams and durable subscriptions), the most it serves", e.Max)
}

func (e *LimitError) Unwrap() error { return ErrTooMany }

// Subscribe registers q for a stream until Close of the returned Sub (or
// ctx's end). Changes the store commits after it returns are matched;
// with a resume point, so are those after it that the outbox still holds.
func (h *Hub) Subscribe(ctx context.Context, q Query, o SubscribeOptions) (*Sub, error) {
	s, err := h.compile(ctx, q)
	if err != nil {
		return nil, err
	}
	s.hub, s.access, s.owner = h, o.Access, o.Owner
	s.events = make(chan Event, cmp.Or(o.Pending, DefaultPending))
	s.id = "live-" + strconv.FormatUint(h.nextID.Add(1), 10)
	h.mu.Lock()
	if o.MaxTotal > 0 && len(h.subs) >= o.MaxTotal {
		h.mu.Unlock()
		return nil, &LimitError{Max: o.MaxTotal}
	}
	if o.MaxPerOwner > 0 && h.countLocked(o.Owner) >= o.MaxPerOwner {
		h.mu.Unlock()
		return nil, &LimitError{PerOwner: true, Max: o.MaxPerOwner}
	}
	// Changes committed from here on: the hub may still be matching older
	// ones (catching up after a start), which this stream is not told of.
	applied, _ := h.engine.Applied()
	now := max(h.pos, applied)
	s.from, s.ready, s.replayTo = now, now, h.pos
	if o.HasResume {
		// Replay covers what the hub has matched after the token; the
		// hub pushes the rest.
		s.replayFrom, s.from, s.ready = o.Resume, max(o.Resume, h.pos), o.Resume
	} else {
		s.replayFrom = h.pos
	}
	s.holdReplay()
	h.subs[s] = true
	h.gen++
	h.mu.Unlock()
	h.poke()
	stop := context.AfterFunc(ctx, s.Close)
	s.mu.Lock()
	s.stopCtx = stop
	s.mu.Unlock()
	return s, nil
}

func (h *Hub) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// compile validates q and analyses (and embeds) its texts.
func (h *Hub) compile(ctx context.Context, q Query) (*Sub, error) {
	if len(q.Texts) == 0 {
		return nil, fmt.Errorf("%w: no queries", ErrInvalid)
	}
	if !(q.MinScore >= 0 && q.MinScore <= 1) {
		return nil, fmt.Errorf("%w: min score must be in [0, 1], not %v", ErrInvalid, q.MinScore)
	}
	if q.SnippetChars < 0 {
		return nil, fmt.Errorf("%w: snippet length must not be negative", ErrInvalid)
	}
	if q.Mode != search.BM25 && q.Mode != search.Hybrid && q.Mode != search.Vector {
		return nil, fmt.Errorf("%w: unknown mode %d", ErrInvalid, q.Mode)
	}
	if err := q.Filter.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	s := &Sub{q: q, filter: search.NewFilterMatch(q.Filter), done: make(chan struct{}), versions: map[string]int64{}}
	s.held.Store(math.MaxUint64) // nothing to replay
	s.terms = make([][]string, len(q.Texts))
	s.vecs = make([][]float32, len(q.Texts))
	for i, t := range q.Texts {
		terms, err := lexical.QueryTerms(t)
		if err != nil {
			return nil, err
		}
		if len(terms) == 0 && q.Mode == search.BM25 {
			return nil, fmt.Errorf("%w: query %d (%q) has no searchable words (only stop words or punctuation)", ErrInvalid, i, t)
		}
		s.terms[i] = terms
		if q.Mode == search.BM25 {
			continue
		}
		var v []float32
		var err2 error = ErrNoModel
		if h.opts.Embed != nil {
			v, err2 = h.opts.Embed(ctx, t)
		}
		if err2 != nil && q.Mode == search.Vector {
			return nil, fmt.Errorf("%w: %v", ErrNoModel, err2)
		}
		s.vecs[i] = unit(v)
	}
	return s, nil
}

// unit returns v scaled to length 1 (nil for nil or zero).
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return nil
	}
	out := make([]float32, len(v))
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}
