package enrich

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxd/ctxd/internal/openaiapi"
	"github.com/ctxd/ctxd/internal/testchunk"
	"github.com/ctxd/ctxd/vfs"
)

// mustStore opens a real store with the paragraph chunker and writes the
// given items (ref -> content).
func mustStore(t *testing.T, items map[string]string) *vfs.Store {
	t.Helper()
	s, err := vfs.Open(filepath.Join(t.TempDir(), "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	if _, err := s.SetIndexing(ctx, testchunk.Paragraphs{Headings: true}, "test-model"); err != nil {
		t.Fatal(err)
	}
	for ref, content := range items {
		r, err := vfs.ParseRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(ctx, vfs.WriteParams{Ref: r, Content: []byte(content), IsText: true}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// chatServer is a loopback server speaking the chat completions API: it
// decodes each request as the API defines it and answers with what reply
// returns for it (status, headers, assistant content).
type chatServer struct {
	t     *testing.T
	srv   *httptest.Server
	reply func(n int, req chatCompletionRequest) (status int, header http.Header, content string)

	mu   sync.Mutex
	reqs []chatCompletionRequest
	auth []string
}

// chatCompletionRequest is the request body as the API documents it.
type chatCompletionRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Stream *bool `json:"stream"`
}

func (r chatCompletionRequest) user() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

func newChatServer(t *testing.T, reply func(n int, req chatCompletionRequest) (int, http.Header, string)) *chatServer {
	cs := &chatServer{t: t, reply: reply}
	cs.srv = httptest.NewServer(http.HandlerFunc(cs.serve))
	t.Cleanup(cs.srv.Close)
	return cs
}

func (cs *chatServer) endpoint() string { return cs.srv.URL + "/v1" }

func (cs *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req chatCompletionRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Model == "" || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	cs.mu.Lock()
	n := len(cs.reqs)
	cs.reqs = append(cs.reqs, req)
	cs.auth = append(cs.auth, r.Header.Get("Authorization"))
	cs.mu.Unlock()
	status, header, content := cs.reply(n, req)
	for k, v := range header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status != http.StatusOK {
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": content, "type": "rate_limit_exceeded", "code": nil}})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content},
		}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	})
}

func (cs *chatServer) requests() []chatCompletionRequest {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return slices.Clone(cs.reqs)
}

// passage is the passage text of a prompt.
func passage(req chatCompletionRequest) string {
	_, p, _ := strings.Cut(req.user(), "Passage:\n")
	return strings.TrimSpace(p)
}

// questionsFor is the answer the test server gives for a passage: two
// questions naming its first word, as a JSON array.
func questionsFor(passage string) []string {
	word := strings.Fields(strings.TrimPrefix(passage, "# "))[0]
	return []string{"What is " + word + "?", "Why does " + word + " matter?"}
}

func jsonAnswer(qs []string) string {
	b, _ := json.Marshal(qs)
	return string(b)
}

func newEnricher(t *testing.T, s Store, cfg Config) *Enricher {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "test-chat"
	}
	cfg.RequestsPerMinute = max(cfg.RequestsPerMinute, 60_000) // tests don't wait for the limiter
	e, err := New(s, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// hashOf is the chunk text hash of the paragraph chunker.
func hashOf(text string) [32]byte { return sha256.Sum256([]byte(text)) }

func generated(t *testing.T, s *vfs.Store, text string) (questions []string, asked bool) {
	t.Helper()
	qs, asked, err := s.GeneratedQuestions(context.Background(), hashOf(text))
	if err != nil {
		t.Fatal(err)
	}
	return qs, asked
}

func TestEnricher_Pass_StoresQuestions(t *testing.T) {
	const (
		shared = "Invoices are numbered by year and sequence."
		heated = "# Boilers\nBoilers heat water for the radiators."
		other  = "Reminders go out seven days after the due date."
	)
	s := mustStore(t, map[string]string{
		"notes:/billing.md": "---\ntitle: Billing handbook\n---\n" + shared + "\n\n" + other,
		"notes:/copy.md":    shared, // the same text: asked once, shared
		"notes:/house.md":   heated,
	})
	cs := newChatServer(t, func(_ int, req chatCompletionRequest) (int, http.Header, string) {
		return http.StatusOK, nil, "```json\n" + jsonAnswer(questionsFor(passage(req))) + "\n```"
	})
	e := newEnricher(t, s, Config{Endpoint: cs.endpoint(), APIKey: "sk-test", QuestionsPerChunk: 2})
	if _, err := e.pass(context.Background()); err != nil {
		t.Fatal(err)
	}

	for _, text := range []string{shared, heated, other} {
		qs, asked := generated(t, s, text)
		if want := questionsFor(text); !asked || !slices.Equal(qs, want) {
			t.Errorf("questions of %q = %q (asked %v), want %q", text, qs, asked, want)
		}
	}
	reqs := cs.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d calls, want 3 (one per distinct chunk text)", len(reqs))
	}
	for i, req := range reqs {
		if req.Model != "test-chat" || req.Stream == nil || *req.Stream || cs.auth[i] != "Bearer sk-test" {
			t.Errorf("request %d: model %q, stream %v, authorization %q", i, req.Model, req.Stream, cs.auth[i])
		}
		if !strings.Contains(req.user(), "Write 2 short, distinct questions") {
			t.Errorf("request %d does not ask for 2 questions:\n%s", i, req.user())
		}
	}
	var billing, house string
	for _, req := range reqs {
		switch passage(req) {
		case other:
			billing = req.user()
		case heated:
			house = req.user()
		}
	}
	if !strings.Contains(billing, "Document: Billing handbook\n") {
		t.Errorf("the prompt lacks the item's title:\n%s", billing)
	}
	if !strings.Contains(house, "Section: Boilers\n") {
		t.Errorf("the prompt lacks the chunk's heading:\n%s", house)
	}
	st := e.Status()
	if st.Enriched != 3 || st.Pending != 0 || st.FailedCalls != 0 || st.LastError != "" {
		t.Errorf("status = %+v, want 3 enriched, none pending or failed", st)
	}
	tasks, _, err := s.QuestionTasks(context.Background(), "", 100)
	if err != nil || len(tasks) != 0 {
		t.Errorf("after a pass QuestionTasks = %d tasks, %v; want none", len(tasks), err)
	}
	if _, err := e.pass(context.Background()); err != nil || len(cs.requests()) != 3 {
		t.Errorf("a second pass made %d calls in all (%v), want still 3", len(cs.requests()), err)
	}
}

func TestEnricher_Pass_RetriesAfter429(t *testing.T) {
	const text = "Boilers heat water for the radiators."
	s := mustStore(t, map[string]string{"notes:/house.md": text})
	cs := newChatServer(t, func(n int, req chatCompletionRequest) (int, http.Header, string) {
		if n == 0 {
			return http.StatusTooManyRequests, http.Header{"Retry-After": {"1"}}, "Rate limit reached for requests"
		}
		return http.StatusOK, nil, jsonAnswer(questionsFor(passage(req)))
	})
	e := newEnricher(t, s, Config{Endpoint: cs.endpoint(), MaxRetries: 2})
	if _, err := e.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if qs, _ := generated(t, s, text); !slices.Equal(qs, questionsFor(text)) {
		t.Errorf("questions = %q, want %q", qs, questionsFor(text))
	}
	if n := len(cs.requests()); n != 2 {
		t.Errorf("%d calls, want 2 (the 429, then the retry)", n)
	}
	st := e.Status()
	if st.FailedCalls != 1 || st.Enriched != 1 || !strings.Contains(st.LastError, "429") ||
		!strings.Contains(st.LastError, "Rate limit reached") || st.LastErrorAt.IsZero() {
		t.Errorf("status = %+v, want one failed call (the 429, with its message) and one enriched chunk", st)
	}
}

func TestEnricher_Pass_GarbageAnswerRecordedEmpty(t *testing.T) {
	const text = "Boilers heat water for the radiators."
	s := mustStore(t, map[string]string{"notes:/house.md": text})
	cs := newChatServer(t, func(int, chatCompletionRequest) (int, http.Header, string) {
		return http.StatusOK, nil, "I am sorry, but I cannot help with that."
	})
	e := newEnricher(t, s, Config{Endpoint: cs.endpoint()})
	for range 2 {
		if _, err := e.pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if qs, asked := generated(t, s, text); !asked || len(qs) != 0 {
		t.Errorf("questions = %q (asked %v), want none recorded as asked", qs, asked)
	}
	if n := len(cs.requests()); n != 1 {
		t.Errorf("%d calls over two passes, want 1: a garbage answer is not retried nor asked again", n)
	}
	if st := e.Status(); st.FailedCalls != 0 || st.Enriched != 0 || st.Pending != 0 {
		t.Errorf("status = %+v, want nothing failed, enriched or pending", st)
	}
}

func TestEnricher_Pass_EndpointDown(t *testing.T) {
	const a, b = "Boilers heat water for the radiators.", "Invoices are numbered by year."
	s := mustStore(t, map[string]string{"notes:/house.md": a, "notes:/bills.md": b})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now: connections are refused
	e := newEnricher(t, s, Config{Endpoint: endpoint, MaxRetries: 1})
	if _, err := e.pass(context.Background()); err == nil {
		t.Fatal("a pass against a down endpoint succeeded")
	}
	st := e.Status()
	// The first chunk's call and its one retry fail, then the pass stops
	// instead of failing on every chunk.
	if st.FailedCalls != 2 || !strings.Contains(st.LastError, "connection refused") || st.LastErrorAt.IsZero() {
		t.Errorf("status = %+v, want 2 failed calls and the refusal as the last error", st)
	}
	if st.Pending != 2 || st.Enriched != 0 {
		t.Errorf("status = %+v, want both chunks still pending", st)
	}
	for _, text := range []string{a, b} {
		if _, asked := generated(t, s, text); asked {
			t.Errorf("%q recorded as asked after failed calls; it must be asked again at the next pass", text)
		}
	}
}

func TestEnricher_Pass_ServerErrorsBounded(t *testing.T) {
	const text = "Boilers heat water for the radiators."
	s := mustStore(t, map[string]string{"notes:/house.md": text})
	cs := newChatServer(t, func(int, chatCompletionRequest) (int, http.Header, string) {
		return http.StatusServiceUnavailable, http.Header{"Retry-After-Ms": {"10"}}, "model is loading"
	})
	e := newEnricher(t, s, Config{Endpoint: cs.endpoint(), MaxRetries: 2})
	if _, err := e.pass(context.Background()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("pass = %v, want the 503", err)
	}
	if n := len(cs.requests()); n != 3 {
		t.Errorf("%d calls, want 3 (the call and max_retries 2)", n)
	}
	if st := e.Status(); st.FailedCalls != 3 || !strings.Contains(st.LastError, "model is loading") {
		t.Errorf("status = %+v, want 3 failed calls with the server's message", st)
	}
	if _, asked := generated(t, s, text); asked {
		t.Error("a chunk whose calls failed was recorded as asked")
	}
}

func TestEnricher_Pass_ChunkRefusedSkipped(t *testing.T) {
	const bad, good = "Refused passage about boilers.", "Invoices are numbered by year."
	s := mustStore(t, map[string]string{"notes:/a.md": bad, "notes:/b.md": good})
	cs := newChatServer(t, func(_ int, req chatCompletionRequest) (int, http.Header, string) {
		if passage(req) == bad {
			return http.StatusBadRequest, nil, "This model's maximum context length is 8 tokens"
		}
		return http.StatusOK, nil, jsonAnswer(questionsFor(passage(req)))
	})
	e := newEnricher(t, s, Config{Endpoint: cs.endpoint(), MaxRetries: 3})
	if complete, err := e.pass(context.Background()); err != nil || complete {
		t.Fatalf("pass: complete %v, %v; want incomplete (a chunk was skipped)", complete, err)
	}
	if _, asked := generated(t, s, bad); asked {
		t.Error("the refused chunk was recorded as asked; it must be asked again at the next pass")
	}
	if qs, _ := generated(t, s, good); !slices.Equal(qs, questionsFor(good)) {
		t.Errorf("the other chunk got %q, want %q: a chunk's refusal must not stop the pass", qs, questionsFor(good))
	}
	if n := len(cs.requests()); n != 2 {
		t.Errorf("%d calls, want 2: a 400 is not retried", n)
	}
	if st := e.Status(); st.FailedCalls != 1 || st.Enriched != 1 || st.Pending != 0 {
		t.Errorf("status = %+v, want 1 failed call, 1 enriched, none pending", st)
	}
}

func TestEnricher_Pass_PromptBounded(t *testing.T) {
	long := strings.Repeat("Boilers heat water for the radiators é. ", 400) // > 4 KiB, multi-byte characters
	s := mustStore(t, map[string]string{"notes:/long.md": long})
	cs := newChatServer(t, func(int, chatCompletionRequest) (int, http.Header, string) {
		return http.StatusOK, nil, `["What heats the radiators?"]`
	})
	e := newEnricher(t, s, Config{Endpoint: cs.endpoint()})
	if _, err := e.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := cs.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d calls, want 1", len(reqs))
	}
	p := passage(reqs[0])
	if len(p) > maxPromptText || !strings.HasPrefix(long, p) || len(p) < maxPromptText-4 {
		t.Errorf("passage sent is %d bytes, want the first %d bytes (at a character boundary) of the %d-byte chunk", len(p), maxPromptText, len(long))
	}
}

func TestEnricher_Run_StopsOnCancel(t *testing.T) {
	s := mustStore(t, map[string]string{"notes:/house.md": "Boilers heat water."})
	asked := make(chan struct{}, 1)
	cs := newChatServer(t, func(int, chatCompletionRequest) (int, http.Header, string) {
		asked <- struct{}{}
		return http.StatusOK, nil, `["What heats water?"]`
	})
	e := newEnricher(t, s, Config{Endpoint: cs.endpoint(), Rescan: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	<-asked // the first pass is under way; Run then sleeps for an hour
	cancel()
	<-done
}

// countingStore counts the scans of a real store.
type countingStore struct {
	*vfs.Store
	scans atomic.Int64
}

func (c *countingStore) QuestionTasks(ctx context.Context, after string, limit int) ([]vfs.QuestionTask, string, error) {
	if after == "" {
		c.scans.Add(1)
	}
	return c.Store.QuestionTasks(ctx, after, limit)
}

// TestEnricher_Run_IdleUntilTheStoreChanges: once a pass has asked about
// everything, Run does not scan the store again until something is written.
func TestEnricher_Run_IdleUntilTheStoreChanges(t *testing.T) {
	s := &countingStore{Store: mustStore(t, map[string]string{"notes:/house.md": "Boilers heat water."})}
	cs := newChatServer(t, func(_ int, req chatCompletionRequest) (int, http.Header, string) {
		return http.StatusOK, nil, jsonAnswer(questionsFor(passage(req)))
	})
	e := newEnricher(t, s, Config{Endpoint: cs.endpoint(), Rescan: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("the first chunk's questions", func() bool { _, asked := generated(t, s.Store, "Boilers heat water."); return asked })
	// Without the skip, every 1 ms rescan interval would scan again.
	waitFor("50 rescan intervals without a scan", func() bool {
		before := s.scans.Load()
		time.Sleep(50 * time.Millisecond)
		return s.scans.Load() == before
	})
	idle := s.scans.Load()
	if _, err := s.Write(context.Background(), vfs.WriteParams{Ref: vfs.Ref{Drive: "notes", Path: "/kitchen.md"}, Content: []byte("Ovens bake bread."), IsText: true}); err != nil {
		t.Fatal(err)
	}
	waitFor("the new chunk's questions", func() bool { _, asked := generated(t, s.Store, "Ovens bake bread."); return asked })
	if s.scans.Load() == idle {
		t.Fatal("the new chunk was asked about without a scan")
	}
}

func TestRetryWait(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		try   int
		want  time.Duration
		retry bool
	}{
		{"429 with Retry-After", &openaiapi.StatusError{Code: 429, RetryAfter: 7 * time.Second}, 0, 7 * time.Second, true},
		{"Retry-After capped", &openaiapi.StatusError{Code: 429, RetryAfter: time.Hour}, 0, maxBackoff, true},
		{"503 backs off", &openaiapi.StatusError{Code: 503}, 2, 4 * baseBackoff, true},
		{"transport error backs off", io.ErrUnexpectedEOF, 0, baseBackoff, true},
		{"backoff capped", io.ErrUnexpectedEOF, 40, maxBackoff, true},
		{"401 not retried", &openaiapi.StatusError{Code: 401}, 0, 0, false},
		{"400 not retried", &openaiapi.StatusError{Code: 400}, 0, 0, false},
		{"not a chat completion", &openaiapi.ProtocolError{Msg: "x"}, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, retry := retryWait(tc.err, tc.try)
			if got != tc.want || retry != tc.retry {
				t.Errorf("retryWait = %v, %v; want %v, %v", got, retry, tc.want, tc.retry)
			}
		})
	}
}

func TestNew_Validates(t *testing.T) {
	for _, cfg := range []Config{
		{Endpoint: "", Model: "m"},
		{Endpoint: "127.0.0.1:11434/v1", Model: "m"},
		{Endpoint: "ftp://host/v1", Model: "m"},
		{Endpoint: "http://host/v1?x=1", Model: "m"},
		{Endpoint: "http://host/v1"},
	} {
		if _, err := New(nil, cfg, slog.New(slog.DiscardHandler)); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	e, err := New(nil, Config{Endpoint: "http://user:secret@127.0.0.1:11434/v1/", Model: "m", QuestionsPerChunk: 50}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if e.url != "http://user:secret@127.0.0.1:11434/v1/chat/completions" || e.cfg.QuestionsPerChunk != MaxQuestionsPerChunk {
		t.Errorf("url %q, questions per chunk %d", e.url, e.cfg.QuestionsPerChunk)
	}
	if st := e.Status(); strings.Contains(st.Endpoint, "secret") {
		t.Errorf("status shows the endpoint's password: %q", st.Endpoint)
	}
}
