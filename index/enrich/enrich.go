package enrich

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/ctxd/ctxd/internal/openaiapi"
	"github.com/ctxd/ctxd/internal/runes"
	"github.com/ctxd/ctxd/vfs"
)

// Defaults and bounds of Config.
const (
	DefaultQuestionsPerChunk = 3
	// MaxQuestionsPerChunk bounds Config.QuestionsPerChunk.
	MaxQuestionsPerChunk     = 10
	DefaultRequestsPerMinute = 60
	// DefaultMaxRetries is the daemon's default for Config.MaxRetries.
	DefaultMaxRetries = 3
	// MaxRetriesLimit bounds Config.MaxRetries.
	MaxRetriesLimit = 10
	DefaultTimeout  = 2 * time.Minute
	DefaultRescan   = time.Minute
)

const (
	// maxPromptText bounds the chunk text sent in one prompt (chunks are
	// bounded in model tokens already; this bounds a chat call's size).
	maxPromptText = 4 << 10
	// maxPromptField bounds the title and the heading in a prompt.
	maxPromptField = 256
	// maxResponseBytes bounds the response body read.
	maxResponseBytes = 1 << 20
	// pageSize is how many tasks one store read returns.
	pageSize = 16
	// countPage is the page size of the count at the start of a pass.
	countPage = 256
	// baseBackoff doubles per retry up to maxBackoff when the endpoint
	// sends no Retry-After; a Retry-After is honoured up to maxBackoff.
	baseBackoff = 500 * time.Millisecond
	maxBackoff  = 2 * time.Minute
)

// Store is the part of *vfs.Store the enricher uses.
type Store interface {
	// QuestionTasks returns up to limit chunks after cursor after ("" =
	// from the start) whose text was never asked about; next is the cursor
	// for the following call, "" at the end.
	QuestionTasks(ctx context.Context, after string, limit int) (tasks []vfs.QuestionTask, next string, err error)
	// SetGeneratedQuestions stores the questions generated for chunk text
	// hash; an empty list records that the answer held none.
	SetGeneratedQuestions(ctx context.Context, hash [32]byte, questions []string) error
	// OutboxSeq is the store's change sequence: every write moves it.
	OutboxSeq(ctx context.Context) (uint64, error)
}

// Config says which endpoint to ask and how hard. Zero numbers take the
// defaults, except MaxRetries.
type Config struct {
	// Endpoint is the base URL of an OpenAI-compatible API, for example
	// http://127.0.0.1:11434/v1 (Ollama); the enricher POSTs to
	// Endpoint + "/chat/completions".
	Endpoint string
	// Model is the chat model asked.
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// QuestionsPerChunk is how many questions to ask for, at most
	// MaxQuestionsPerChunk.
	QuestionsPerChunk int
	// RequestsPerMinute bounds the calls, retries included.
	RequestsPerMinute int
	// MaxRetries is how often a failed call is retried (429, 5xx,
	// transport errors), at most MaxRetriesLimit; 0 means never.
	MaxRetries int
	// Timeout bounds one call.
	Timeout time.Duration
	// Rescan is the pause after a pass over the store; a pass that asked
	// about everything is repeated only once the store has changed.
	Rescan time.Duration
}

func (c *Config) withDefaults() {
	if c.QuestionsPerChunk <= 0 {
		c.QuestionsPerChunk = DefaultQuestionsPerChunk
	}
	c.QuestionsPerChunk = min(c.QuestionsPerChunk, MaxQuestionsPerChunk)
	if c.RequestsPerMinute <= 0 {
		c.RequestsPerMinute = DefaultRequestsPerMinute
	}
	c.MaxRetries = min(max(c.MaxRetries, 0), MaxRetriesLimit)
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Rescan <= 0 {
		c.Rescan = DefaultRescan
	}
}

// Status is a snapshot of the enricher.
type Status struct {
	// Endpoint is the configured base URL, any password redacted.
	Endpoint string
	Model    string
	// Pending is the chunks still to be asked about: counted at the start
	// of each pass, less those asked since. Chunks with the same text are
	// asked about once and count once (within a page of the count).
	Pending int64
	// Enriched is the chunk texts that got questions since the enricher
	// started (a text shared by several chunks counts once).
	Enriched int64
	// FailedCalls counts failed calls, retried ones included.
	FailedCalls int64
	// LastError is the last failure ("" if none) and LastErrorAt its time.
	LastError   string
	LastErrorAt time.Time
}

// Enricher asks the endpoint about the store's chunks; see the package doc.
type Enricher struct {
	store   Store
	cfg     Config
	log     *slog.Logger
	url     string
	client  *http.Client
	limiter *rate.Limiter

	pending, enriched, failed atomic.Int64
	mu                        sync.Mutex
	lastErr                   string
	lastErrAt                 time.Time
}

// New returns an enricher of store; Run starts it. The endpoint must be an
// http or https URL and the model must be set.
func New(store Store, cfg Config, log *slog.Logger) (*Enricher, error) {
	if err := CheckEndpoint(cfg.Endpoint); err != nil {
		return nil, err
	}
	if cfg.Model == "" {
		return nil, errors.New("enricher: a model must be set")
	}
	cfg.withDefaults()
	return &Enricher{
		store:   store,
		cfg:     cfg,
		log:     log,
		url:     strings.TrimSuffix(cfg.Endpoint, "/") + "/chat/completions",
		client:  &http.Client{Timeout: cfg.Timeout},
		limiter: rate.NewLimiter(rate.Every(time.Minute/time.Duration(cfg.RequestsPerMinute)), 1),
	}, nil
}

// CheckEndpoint reports whether endpoint is an absolute http or https URL
// without a query, as a base URL must be.
func CheckEndpoint(endpoint string) error {
	return openaiapi.CheckBaseURL("enricher endpoint", endpoint)
}

// Status returns the enricher's counts and last failure.
func (e *Enricher) Status() Status {
	endpoint := e.cfg.Endpoint
	if u, err := url.Parse(endpoint); err == nil {
		endpoint = u.Redacted()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return Status{
		Endpoint: endpoint, Model: e.cfg.Model,
		Pending: max(e.pending.Load(), 0), Enriched: e.enriched.Load(), FailedCalls: e.failed.Load(),
		LastError: e.lastErr, LastErrorAt: e.lastErrAt,
	}
}

// Run makes passes over the store until ctx ends, pausing Rescan after each.
// A pass that asked about everything is not repeated until the store
// changes, so an idle daemon does not scan its chunks every Rescan.
func (e *Enricher) Run(ctx context.Context) {
	var doneAt uint64 // the store's sequence when a pass left nothing to ask
	done := false
	for {
		seq, err := e.store.OutboxSeq(ctx)
		if err == nil && !(done && seq == doneAt) {
			var complete bool
			complete, err = e.pass(ctx)
			done, doneAt = err == nil && complete, seq
		}
		if err != nil && ctx.Err() == nil {
			e.log.Warn("question enricher pass stopped; retrying at the next pass", "err", err, "next_pass_in", e.cfg.Rescan)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(e.cfg.Rescan):
		}
	}
}

// pass asks about every chunk whose text has no generated questions yet;
// complete is false when it skipped a chunk the endpoint refused. A call
// that fails for a reason that is not the chunk's own ends the pass.
func (e *Enricher) pass(ctx context.Context) (complete bool, _ error) {
	if err := e.count(ctx); err != nil {
		return false, err
	}
	complete = true
	asked := map[[32]byte]bool{} // texts shared by chunks across pages, or failed on their own
	after := ""
	for {
		tasks, next, err := e.store.QuestionTasks(ctx, after, pageSize)
		if err != nil {
			return false, fmt.Errorf("read chunks to ask about: %w", err)
		}
		for _, t := range tasks {
			if asked[t.Hash] {
				continue
			}
			asked[t.Hash] = true
			questions, err := e.ask(ctx, t)
			if err != nil {
				if ctx.Err() != nil {
					return false, ctx.Err()
				}
				if chunkFault(err) {
					complete = false
					e.pending.Add(-1)
					e.log.Warn("question enricher: the endpoint refused a chunk; skipped until the next pass", "ref", t.Ref, "chunk", t.Chunk, "err", err)
					continue
				}
				return false, fmt.Errorf("ask about %s chunk %d: %w", t.Ref, t.Chunk, err)
			}
			if err := e.store.SetGeneratedQuestions(ctx, t.Hash, questions); err != nil {
				return false, fmt.Errorf("store questions of %s chunk %d: %w", t.Ref, t.Chunk, err)
			}
			e.pending.Add(-1)
			if len(questions) > 0 {
				e.enriched.Add(1)
			} else {
				e.log.Debug("question enricher: no usable question in the answer; not asked again", "ref", t.Ref, "chunk", t.Chunk)
			}
		}
		if next == "" {
			return complete, nil
		}
		after = next
	}
}

// count sets pending to the chunks the pass about to start will ask about.
func (e *Enricher) count(ctx context.Context) error {
	var n int64
	after := ""
	for {
		tasks, next, err := e.store.QuestionTasks(ctx, after, countPage)
		if err != nil {
			return fmt.Errorf("count chunks to ask about: %w", err)
		}
		n += int64(len(tasks))
		if next == "" {
			e.pending.Store(n)
			return nil
		}
		after = next
	}
}

// ask asks for the questions t answers, retrying as the package doc says.
// An answer without a usable question returns an empty list and no error.
func (e *Enricher) ask(ctx context.Context, t vfs.QuestionTask) ([]string, error) {
	answer, err := e.complete(ctx, prompt(t, e.cfg.QuestionsPerChunk))
	if err != nil {
		return nil, err
	}
	return parseQuestions(answer, e.cfg.QuestionsPerChunk), nil
}

// maxSummarizeInput bounds the text one Summarize sends.
const maxSummarizeInput = 32 << 10

// Summarize asks the endpoint to answer instructions (the system message)
// about text (the user message, cut to 32 KiB) and returns its answer:
// session digests and compactions use it. Calls are rate-limited and
// retried like the enricher's own, within ctx and the configured timeout
// per call; failures count in Status.
func (e *Enricher) Summarize(ctx context.Context, instructions, text string) (string, error) {
	return e.complete(ctx, []chatMessage{
		{Role: "system", Content: instructions},
		{Role: "user", Content: runes.Cut(text, maxSummarizeInput)},
	})
}

// complete makes a chat completion call, retried as retryWait allows, and
// returns the answer's text.
func (e *Enricher) complete(ctx context.Context, messages []chatMessage) (string, error) {
	body, err := json.Marshal(chatRequest{Model: e.cfg.Model, Messages: messages})
	if err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		if err := e.limiter.Wait(ctx); err != nil {
			return "", err
		}
		answer, err := e.call(ctx, body)
		if err == nil {
			return answer, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		e.fail(err)
		wait, retry := retryWait(err, attempt)
		if !retry || attempt >= e.cfg.MaxRetries {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
	}
}

// retryWait says whether a call that failed with err may be retried, and
// after how long: the endpoint's Retry-After, else a backoff doubling per
// attempt, both at most maxBackoff.
func retryWait(err error, attempt int) (time.Duration, bool) {
	return openaiapi.RetryWait(err, attempt, baseBackoff, maxBackoff, false)
}

func (e *Enricher) fail(err error) {
	e.failed.Add(1)
	e.mu.Lock()
	e.lastErr, e.lastErrAt = err.Error(), time.Now()
	e.mu.Unlock()
}

// call makes one chat completion call and returns the answer's text.
func (e *Enricher) call(ctx context.Context, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	res, err := e.client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes))
	if err != nil {
		return "", fmt.Errorf("read the answer: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return "", openaiapi.NewStatusError("chat endpoint", res, raw)
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return "", &openaiapi.ProtocolError{Msg: fmt.Sprintf("the answer is not a chat completion (%v); check the endpoint (it must end before /chat/completions)", err)}
	}
	if len(cr.Choices) == 0 {
		return "", &openaiapi.ProtocolError{Msg: "the answer has no choices"}
	}
	return cr.Choices[0].Message.Content, nil
}

// chatRequest and chatResponse are the parts of the chat completions API's
// JSON the enricher uses.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
}

// chunkFault reports whether err concerns the chunk asked about (its
// prompt was refused as too large or malformed) rather than the endpoint,
// its key or its model, so the pass may go on with the next chunk.
func chunkFault(err error) bool {
	var se *openaiapi.StatusError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// prompt asks for n questions about t's text.
func prompt(t vfs.QuestionTask, n int) []chatMessage {
	var b strings.Builder
	fmt.Fprintf(&b, "Write %d short, distinct questions that the passage below answers, phrased as someone searching for it would ask them. "+
		"Answer with a JSON array of %d strings and nothing else.\n\n", n, n)
	if t.Title != "" {
		fmt.Fprintf(&b, "Document: %s\n", runes.Cut(t.Title, maxPromptField))
	}
	if t.Heading != "" {
		fmt.Fprintf(&b, "Section: %s\n", runes.Cut(t.Heading, maxPromptField))
	}
	fmt.Fprintf(&b, "Passage:\n%s\n", runes.Cut(string(t.Text), maxPromptText))
	return []chatMessage{
		{Role: "system", Content: "You write the questions a passage answers, for a search index. You answer with a JSON array of strings only."},
		{Role: "user", Content: b.String()},
	}
}
