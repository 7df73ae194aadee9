package indexer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ctxd/ctxd/index/chunk"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/index/tokenize"
	"github.com/ctxd/ctxd/vfs"
	"github.com/ctxd/ctxd/vfs/backend"
)

// Batch sizes of the background passes: small enough that each store
// transaction is short, large enough that the embedder sees full batches.
const (
	chunkPassItems  = 16
	embedPassChunks = 256
	// embedPassQuestions is smaller: questions go at query priority.
	embedPassQuestions = 32
	// retryModelEvery is how often a missing model or runtime is looked for again.
	retryModelEvery = 30 * time.Second
	// indexBacklog is how many outbox changes the search indexes may trail
	// by before embedding waits for them: both compete for the CPU, and text
	// should be searchable by its words first, then by meaning. While a bulk
	// add streams in, embedding mostly waits (on 2 cores that made 6,000
	// files searchable in 3.9 s instead of 6.0 s).
	indexBacklog = 64
	// indexBacklogChunks is the same in chunks, for changes that are few
	// but large: one 60 MB item is one change of 85,000 chunks, and
	// embedding beside its indexing doubled its time to searchable.
	indexBacklogChunks = 4096
	// backlogPoll is how often a waiting embedder looks at the backlog again.
	backlogPoll = 50 * time.Millisecond
	// unreachableRetry is how soon a pass runs again after the store did
	// not answer, or while the embedder is unhealthy (a remote endpoint
	// failing): no change notice says when either is back.
	unreachableRetry = time.Second
	// probeTimeout bounds a remote provider's dimension probe, retries
	// included; a probe that fails is tried again every retryModelEvery.
	probeTimeout = 30 * time.Second
)

// Remote is an embedding provider outside the process
// (index/embed/openai.Client), used instead of the local model.
type Remote interface {
	embed.Embedder
	// Probe asks the endpoint once to learn (or check) its dimensions;
	// Spec has an ID once they are known.
	Probe(ctx context.Context) error
	// Endpoint names the endpoint in messages, without credentials.
	Endpoint() string
}

// Indexer keeps derived state current in the background: it chunks items
// that were stored without a chunker and embeds queued chunks with the one
// embedding worker. It degrades instead of failing: without a model the store
// keeps queueing, and the queues drain once the model is found.
type Indexer struct {
	store    *vfs.Store
	engine   *search.Engine
	log      *slog.Logger
	modelDir string
	libPath  string

	mu      sync.Mutex
	spec    embed.Spec
	tok     *tokenize.Tokenizer
	chunker *modelChunker  // the model's chunker, set with tok; it builds the embedded text
	worker  embed.Embedder // nil while embedding is unavailable
	// remote, when set, embeds instead of a model in modelDir, whose
	// tokenizer (when there is one) only bounds the chunks.
	remote  Remote
	reason  string  // why embedding is unavailable, or what is loading
	loading bool    // load is opening the model; reason says what
	rate    float64 // chunks/s, smoothed
	// embedded counts the chunk texts the model embedded since New.
	embedded int64
	stopped  chan struct{}
	// fallback is set once the model-less chunker is installed, warned to
	// the last reason logged; only Prepare and then the run goroutine
	// touch them.
	fallback bool
	warned   string
}

// New returns an Indexer for store and engine that loads the embedding
// model from modelDir with ONNX Runtime at libPath; Run starts it.
func New(store *vfs.Store, engine *search.Engine, log *slog.Logger, modelDir, libPath string) *Indexer {
	ix := &Indexer{store: store, engine: engine, log: log, modelDir: modelDir, libPath: libPath, stopped: make(chan struct{}), reason: noModelReason}
	// Status may be asked for before anything is loaded.
	if modelDir != "" {
		ix.reason, ix.loading = loadingReason(modelDir, ""), true
	}
	return ix
}

// NewRemote returns an Indexer that embeds with r instead of a local
// model. Chunks are bounded by r's Spec().MaxTokens, counted with the
// tokenizer in modelDir when it holds one (the remote model's own, or a
// close relative), else estimated from bytes.
func NewRemote(store *vfs.Store, engine *search.Engine, log *slog.Logger, modelDir string, r Remote) *Indexer {
	ix := New(store, engine, log, modelDir, "")
	ix.remote = r
	ix.reason, ix.loading = remoteReason(r, "asking for its dimensions"), true
	return ix
}

// remoteReason says what the indexer is doing with r's endpoint.
func remoteReason(r Remote, doing string) string {
	return fmt.Sprintf("embedding endpoint %s: %s", r.Endpoint(), doing)
}

// noModelReason is why embedding is unavailable without a model_dir.
const noModelReason = "no model configured (model_dir is empty)"

// loadingReason says what load is loading: the model in dir, and its id
// once its spec is read ("" before).
func loadingReason(dir, id string) string {
	if id == "" {
		return "loading the embedding model in " + dir
	}
	return fmt.Sprintf("loading the embedding model %s from %s into ONNX Runtime", id, dir)
}

// Prepare installs the chunker: the model's tokenizer when its directory
// holds one, else chunking without a model. A text item written while no
// chunker is installed waits to be chunked, unsearchable, until the model
// has loaded (seconds), so the daemon calls Prepare before it serves: its
// writes are chunked, and searchable, from the first one. Run loads the
// model after it (and would install the chunker itself without Prepare).
func (ix *Indexer) Prepare(ctx context.Context) {
	ix.loadChunker(ctx)
}

// Run loads what it can and then works until ctx ends.
func (ix *Indexer) Run(ctx context.Context) {
	defer close(ix.stopped)
	defer ix.closeWorker()
	work := ix.store.Work()
	ix.load(ctx)
	retry := time.NewTicker(retryModelEvery)
	defer retry.Stop()
	unreachable := false // the last pass found the store out of reach
	for {
		busy, err := ix.pass(ctx)
		switch {
		case err == nil && unreachable:
			unreachable = false
			ix.log.Info("store reachable again; chunking and embedding resume")
		case err != nil && errors.Is(err, embed.ErrUnavailable):
			// The embedder said so in its Health, which Status reports;
			// the pass looks again once it is healthy.
		case err != nil && ctx.Err() == nil && backend.IsUnavailable(err):
			if !unreachable { // said once, not at every retry
				ix.log.Warn("store unreachable; chunking and embedding resume once it answers", "err", err)
			}
			unreachable = true
		case err != nil && ctx.Err() == nil:
			ix.log.Error("indexing pass failed", "err", err)
		}
		if err != nil {
			busy = false
		}
		if busy {
			continue
		}
		var again <-chan time.Time // while the store or the embedder is out of reach: look again soon
		if w := ix.Available(); unreachable || w != nil && w.Health() != "" {
			again = time.After(unreachableRetry)
		}
		select {
		case <-ctx.Done():
			return
		case <-work:
		case <-again:
		case <-retry.C:
			if ix.Available() == nil {
				ix.load(ctx)
			}
		}
	}
}

// load installs the chunker (needs the tokenizer and spec) and then the
// embedding model (needs ONNX Runtime as well). Each missing piece is
// recorded as the reason embeddings are unavailable.
func (ix *Indexer) load(ctx context.Context) {
	if ix.remote != nil {
		ix.loadRemote(ctx)
		return
	}
	if !ix.loadChunker(ctx) {
		return
	}
	m, err := embed.Open(ix.modelDir, embed.Options{LibraryPath: ix.libPath})
	if err != nil {
		ix.setReason(fmt.Sprintf("embedding model cannot run: %v", err))
		return
	}
	ix.mu.Lock()
	ix.worker, ix.reason, ix.loading = embed.NewWorker(m), "", false
	ix.mu.Unlock()
	ix.log.Info("embedding model loaded", "model", ix.spec.ID, "dimensions", ix.spec.Dimensions, "max_tokens", ix.spec.MaxTokens)
}

// loadChunker installs the model's chunker, once, or the model-less one
// when there is no model, and reports whether the model can be opened next.
func (ix *Indexer) loadChunker(ctx context.Context) bool {
	if ix.remote != nil {
		return ix.loadRemoteChunker(ctx)
	}
	if ix.modelDir == "" {
		ix.setReason(noModelReason)
		ix.useFallbackChunker(ctx)
		return false
	}
	ix.setLoading(loadingReason(ix.modelDir, ix.spec.ID))
	if ix.tok == nil {
		spec, err := embed.LoadSpec(ix.modelDir)
		if err != nil {
			ix.setReason(fmt.Sprintf("no model at %s: %v; run `make setup-run` or point --model-dir at a model directory", ix.modelDir, err))
			ix.useFallbackChunker(ctx)
			return false
		}
		tok, err := tokenize.Load(ix.modelDir)
		if err != nil {
			ix.setReason(fmt.Sprintf("model tokenizer: %v", err))
			return false
		}
		id, err := chunkerID(ix.modelDir, spec)
		if err != nil {
			ix.setReason(err.Error())
			return false
		}
		chunker := &modelChunker{id: id, tok: tok, maxTokens: spec.MaxTokens}
		if !ix.installIndexing(ctx, chunker, spec.ID) {
			return false
		}
		ix.mu.Lock()
		ix.spec, ix.tok, ix.chunker = spec, tok, chunker
		ix.reason = loadingReason(ix.modelDir, spec.ID)
		ix.mu.Unlock()
		// The store's vectors serve searches with a query vector even
		// before (or without) ONNX Runtime.
		ix.engine.SetModel(spec.ID, spec.Dimensions)
	}
	return true
}

// fallbackMaxTokens is the window of chunking without a model.
const fallbackMaxTokens = 256

// useFallbackChunker chunks by an estimated token count while no model is
// installed, so that BM25 search works without one. Installing a model later
// changes the chunker id, which chunks every item again.
func (ix *Indexer) useFallbackChunker(ctx context.Context) {
	if ix.fallback {
		return
	}
	c := &modelChunker{id: bytesChunkerID(fallbackMaxTokens), tok: chunk.ByteCounter{}, maxTokens: fallbackMaxTokens}
	if _, err := ix.store.SetIndexing(ctx, c, ""); err != nil {
		ix.log.Error("install fallback chunker", "err", err)
		return
	}
	ix.fallback = true
}

func (ix *Indexer) setReason(r string) {
	ix.mu.Lock()
	ix.reason, ix.loading = r, false
	ix.mu.Unlock()
	// Once for each reason: Prepare and Run's first load meet the same one.
	if r != ix.warned {
		ix.log.Warn("embeddings unavailable", "reason", r)
		ix.warned = r
	}
}

// setLoading records that load is loading what r says.
func (ix *Indexer) setLoading(r string) {
	ix.mu.Lock()
	ix.reason, ix.loading = r, true
	ix.mu.Unlock()
}

// Tokenizer returns the model's tokenizer, or nil before one is loaded.
func (ix *Indexer) Tokenizer() *tokenize.Tokenizer {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.tok
}

// Available returns the embedder, or nil while embedding is unavailable.
func (ix *Indexer) Available() embed.Embedder {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.worker
}

// pass does one bounded unit of work and reports whether there may be more.
func (ix *Indexer) pass(ctx context.Context) (bool, error) {
	n, err := ix.store.ChunkPending(ctx, chunkPassItems)
	if err != nil || n > 0 {
		return n > 0, err
	}
	w := ix.Available()
	if w == nil || w.Health() != "" {
		// An unhealthy embedder's backlog stays queued in the store.
		return false, nil
	}
	if err := ix.waitForIndex(ctx); err != nil {
		return false, err
	}
	pending, err := ix.store.PendingEmbeddings(ctx, embedPassChunks)
	if err != nil {
		return false, err
	}
	if len(pending) > 0 {
		return true, ix.embed(ctx, w, pending, embed.Background)
	}
	// Questions once every chunk has its vector: one attaches to the chunk
	// whose vector is closest.
	questions, err := ix.store.PendingQuestions(ctx, embedPassQuestions)
	if err != nil || len(questions) == 0 {
		return false, err
	}
	return true, ix.embedQuestions(ctx, w, questions)
}

// embedQuestions computes the vectors of pending questions and saves them.
// Questions are embedded as queries are (the model's query prefix), so
// they share the queries' priority; embedPassQuestions keeps each pass
// short enough that a search waits for at most one small batch.
func (ix *Indexer) embedQuestions(ctx context.Context, w embed.Embedder, pending []vfs.PendingQuestion) error {
	var texts []string
	var at []int
	for i, p := range pending {
		if !p.Have {
			texts, at = append(texts, p.Text), append(at, i)
		}
	}
	vecs := make([][]float32, len(pending))
	if len(texts) > 0 {
		out, err := w.EmbedAt(ctx, texts, embed.Query)
		if err != nil {
			return fmt.Errorf("embed questions: %w", err)
		}
		for j, i := range at {
			vecs[i] = out[j]
		}
	}
	return ix.store.SaveQuestionVectors(ctx, w.Spec().ID, pending, vecs)
}

// promptChunks is how many chunks embedNow takes at a time: few, so that
// its caller sees progress often.
const promptChunks = 32

// EmbedNow embeds the queued chunks of items (ids from vfs.Store.Reembed)
// for a caller that waits for them: at Prompt priority, so they go ahead of
// the background backlog. It calls progress with how many of their chunks
// are still queued before each step and returns once none is. A chunk the
// background pass has already taken may be embedded twice; the second save
// changes nothing.
func (ix *Indexer) EmbedNow(ctx context.Context, w embed.Embedder, items []string, progress func(queued int64) error) error {
	for {
		pending, queued, err := ix.store.PendingEmbeddingsOf(ctx, items, promptChunks)
		if err != nil {
			return err
		}
		if err := progress(queued); err != nil || queued == 0 {
			return err
		}
		if err := ix.embed(ctx, w, pending, embed.Prompt); err != nil {
			return err
		}
	}
}

// embed computes the vectors pending needs at priority prio and saves them.
func (ix *Indexer) embed(ctx context.Context, w embed.Embedder, pending []vfs.PendingChunk, prio embed.Priority) error {
	start := time.Now()
	ix.mu.Lock()
	c := ix.chunker
	ix.mu.Unlock()
	var texts []string
	var at []int
	for i, p := range pending {
		if !p.Have {
			texts, at = append(texts, string(c.embedText(nil, p.Title, p.Description, p.Heading, p.Text))), append(at, i)
		}
	}
	vecs := make([][]float32, len(pending))
	if len(texts) > 0 {
		out, err := w.EmbedAt(ctx, texts, prio)
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		for j, i := range at {
			vecs[i] = out[j]
		}
		ix.mu.Lock()
		ix.embedded += int64(len(texts))
		ix.mu.Unlock()
	}
	if err := ix.store.SaveEmbeddings(ctx, w.Spec().ID, pending, vecs); err != nil {
		return err
	}
	ix.observe(len(texts), time.Since(start))
	return nil
}

// waitForIndex returns once the search indexes trail the store by less than
// indexBacklog changes and indexBacklogChunks chunks.
func (ix *Indexer) waitForIndex(ctx context.Context) error {
	for {
		seq, err := ix.store.OutboxSeq(ctx)
		if err != nil {
			return err
		}
		st := ix.engine.State()
		if seq <= st.AppliedSeq {
			return nil
		}
		stats, err := ix.store.EmbedStats(ctx)
		if err != nil || seq < st.AppliedSeq+indexBacklog && stats.Chunks < st.LexicalChunks+indexBacklogChunks {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backlogPoll):
		}
	}
}

// observe smooths the embedding throughput reported by Status.
func (ix *Indexer) observe(n int, d time.Duration) {
	if n == 0 || d <= 0 {
		return
	}
	r := float64(n) / d.Seconds()
	ix.mu.Lock()
	if ix.rate == 0 {
		ix.rate = r
	} else {
		ix.rate = 0.8*ix.rate + 0.2*r
	}
	ix.mu.Unlock()
}

// WithPendingNote appends to a vector search's mode reason how many chunks
// its leg could not see because they wait to be embedded (or chunked), so
// that "no results" during a first ingest is not taken for an answer.
func (ix *Indexer) WithPendingNote(ctx context.Context, reason string) string {
	st, err := ix.store.EmbedStats(ctx)
	if err != nil || st.PendingEmbed == 0 && st.PendingChunking == 0 {
		return reason
	}
	note := fmt.Sprintf("the vector index is incomplete: %d chunks are still waiting to be embedded", st.PendingEmbed)
	if st.PendingChunking > 0 {
		note += fmt.Sprintf(" and %d items to be chunked", st.PendingChunking)
	}
	note += " (`ctxd status` shows progress; BM25 or hybrid mode searches them by their words)"
	if reason == "" {
		return note
	}
	return reason + "; " + note
}

// Status describes the embedding side.
type Status struct {
	// Spec is the model's, once its spec has been read.
	Spec embed.Spec
	// Available is set while embedding runs.
	Available bool
	// Loading is set while the model is being opened: right after start,
	// and when a missing model is looked for again.
	Loading bool
	// Reason says, when embedding is not available, why not or, while
	// Loading, what is being loaded; it is never empty then.
	Reason string
	// Rate is the recent throughput in chunks/s.
	Rate float64
	// Embedded counts the chunk texts the model embedded since the
	// Indexer was made (a chunk whose vector the store already had is not
	// embedded). On a store shared by replicas each counts its own.
	Embedded int64
	// Health, while Available, says why the embedder takes no work now
	// (a remote endpoint failing: searches run in BM25 mode and the
	// backlog waits in the store); "" while it does.
	Health string
}

// Status reports the embedding side.
func (ix *Indexer) Status() Status {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st := Status{Spec: ix.spec, Available: ix.worker != nil, Rate: ix.rate, Embedded: ix.embedded}
	if !st.Available {
		st.Loading, st.Reason = ix.loading, ix.reason
	} else {
		st.Health = ix.worker.Health()
	}
	return st
}

// Wait returns once Run has returned and closed the embedding worker.
func (ix *Indexer) Wait() { <-ix.stopped }

func (ix *Indexer) closeWorker() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.worker != nil {
		ix.worker.Close()
		ix.worker, ix.reason, ix.loading = nil, "the daemon is stopping", false
	}
}

// chunkerID names the chunking scheme: its version (v2: the item's title
// and description are embedded with every chunk; frontmatter is not chunked),
// the tokenizer's vocabulary and the model window. Changing any re-chunks
// every item; switching between models that share them (fp32 and int8
// builds) only re-embeds.
func chunkerID(dir string, spec embed.Spec) (string, error) {
	for _, name := range []string{"tokenizer.json", "vocab.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", name, err)
		}
		sum := sha256.Sum256(b)
		return fmt.Sprintf("chunk/v2/%s/%d", hex.EncodeToString(sum[:6]), spec.MaxTokens), nil
	}
	return "", fmt.Errorf("model %s has neither tokenizer.json nor vocab.txt", dir)
}

// modelChunker adapts index/chunk to the store: chunks bounded by the
// model's window, each hashed by the exact text the model will embed, which
// starts with the item's title and description (chunk.Prefix).
type modelChunker struct {
	id        string
	tok       chunk.Counter
	maxTokens int
}

func (c *modelChunker) ID() string { return c.id }

func (c *modelChunker) Chunk(content []byte, doc vfs.ChunkDoc) []vfs.ChunkSpan {
	prefix := chunk.Prefix(doc.Title, doc.Description, c.tok, c.maxTokens)
	chunks := chunk.SplitWithPrefix(content, doc.MimeType, doc.Path, prefix, c.tok, c.maxTokens)
	out := make([]vfs.ChunkSpan, len(chunks))
	var buf []byte
	for i, ch := range chunks {
		buf = chunk.AppendEmbedText(buf[:0], prefix, ch.Heading, content[ch.Start:ch.End])
		out[i] = vfs.ChunkSpan{
			Start: ch.Start, End: ch.End, Heading: ch.Heading, Tokens: ch.Tokens,
			Hash: sha256.Sum256(buf),
		}
	}
	return out
}

// embedText appends to dst the text embedded for a chunk of an item with
// title and description: what Chunk hashed for it.
func (c *modelChunker) embedText(dst []byte, title, description, heading string, text []byte) []byte {
	return chunk.AppendEmbedText(dst, chunk.Prefix(title, description, c.tok, c.maxTokens), heading, text)
}

// loadRemote installs the chunker and, once the remote endpoint's
// dimensions are known (configured, or learned by a probe), the remote
// embedder. A probe that fails is the reason embedding is unavailable;
// Run probes again every retryModelEvery.
func (ix *Indexer) loadRemote(ctx context.Context) {
	if !ix.loadRemoteChunker(ctx) {
		return
	}
	if ix.remote.Spec().ID == "" {
		ix.setLoading(remoteReason(ix.remote, "asking for its dimensions"))
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := ix.remote.Probe(pctx)
		cancel()
		if err != nil {
			ix.setReason(remoteReason(ix.remote, fmt.Sprintf("%v; asking again every %s", err, retryModelEvery)))
			return
		}
		if !ix.setModel(ctx) {
			return
		}
	}
	spec := ix.remote.Spec()
	ix.mu.Lock()
	ix.worker, ix.reason, ix.loading = ix.remote, "", false
	ix.mu.Unlock()
	ix.log.Info("embedding provider ready", "endpoint", ix.remote.Endpoint(), "model", spec.ID, "dimensions", spec.Dimensions, "max_tokens", spec.MaxTokens)
}

// loadRemoteChunker installs, once, the chunker a remote model's chunks
// are bounded by, and the model id once it is known; it reports whether
// the embedder can be installed next.
func (ix *Indexer) loadRemoteChunker(ctx context.Context) bool {
	if ix.chunker != nil {
		return true
	}
	maxTokens := ix.remote.Spec().MaxTokens
	c := &modelChunker{id: bytesChunkerID(maxTokens), tok: chunk.ByteCounter{}, maxTokens: maxTokens}
	var tok *tokenize.Tokenizer
	if ix.modelDir != "" {
		// The local model's tokenizer counts tokens closer to the remote
		// model's than bytes do; without one, bytes it is.
		if _, err := embed.LoadSpec(ix.modelDir); err == nil {
			if t, err := tokenize.Load(ix.modelDir); err == nil {
				if id, err := chunkerID(ix.modelDir, embed.Spec{MaxTokens: maxTokens}); err == nil {
					tok, c = t, &modelChunker{id: id, tok: t, maxTokens: maxTokens}
				}
			}
		}
	}
	ix.mu.Lock()
	ix.tok, ix.chunker = tok, c
	ix.mu.Unlock()
	if ix.remote.Spec().ID == "" {
		// No model id yet: the store queues no chunk until the probe
		// names one, and then queues every chunk without its vector.
		if !ix.installIndexing(ctx, c, "") {
			ix.mu.Lock()
			ix.chunker = nil
			ix.mu.Unlock()
			return false
		}
		return true
	}
	if !ix.setModel(ctx) {
		ix.mu.Lock()
		ix.chunker = nil
		ix.mu.Unlock()
		return false
	}
	return true
}

// setModel records the remote embedder's model id with the chunker in the
// store (re-embedding when it changed) and in the search engine.
func (ix *Indexer) setModel(ctx context.Context) bool {
	spec := ix.remote.Spec()
	ix.mu.Lock()
	c := ix.chunker
	ix.mu.Unlock()
	if !ix.installIndexing(ctx, c, spec.ID) {
		return false
	}
	ix.mu.Lock()
	ix.spec = spec
	ix.mu.Unlock()
	ix.engine.SetModel(spec.ID, spec.Dimensions)
	return true
}

// installIndexing records chunker c and model id in the store, which
// queues what they change to be chunked or embedded again, and says so.
func (ix *Indexer) installIndexing(ctx context.Context, c *modelChunker, model string) bool {
	change, err := ix.store.SetIndexing(ctx, c, model)
	if err != nil {
		ix.setReason(fmt.Sprintf("install chunker: %v", err))
		return false
	}
	if change.PrevModel != "" && model != "" && change.PrevModel != model {
		ix.log.Warn("embedding model changed; re-embedding with the new one", "from", change.PrevModel, "to", model, "chunks", change.Reembed)
	}
	if change.PrevChunker != "" && change.Rechunk > 0 {
		ix.log.Info("chunking changed; chunking items again", "items", change.Rechunk)
	}
	return true
}

// bytesChunkerID names chunking by estimated tokens, without a tokenizer,
// for a window of maxTokens.
func bytesChunkerID(maxTokens int) string { return fmt.Sprintf("chunk/v2/bytes/%d", maxTokens) }
