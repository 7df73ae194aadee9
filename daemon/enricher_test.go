package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func TestEnricherConfig_LoadEnvValidate(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.Enricher.Endpoint != "" || cfg.Enricher.QuestionsPerChunk != 3 || cfg.Enricher.RequestsPerMinute != 60 {
		t.Errorf("defaults: %+v, want off with 3 questions and 60 requests a minute", cfg.Enricher)
	}
	err := cfg.LoadConfig(strings.NewReader(`
[enricher]
endpoint = "http://127.0.0.1:11434/v1"
model = "llama3.2"
api_key_env = "OLLAMA_KEY"
questions_per_chunk = 5
requests_per_minute = 30
max_retries = 0
timeout = "20s"
rescan_interval = "5m"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := EnricherConfig{Endpoint: "http://127.0.0.1:11434/v1", Model: "llama3.2", APIKeyEnv: "OLLAMA_KEY", QuestionsPerChunk: 5,
		RequestsPerMinute: 30, MaxRetries: 0, Timeout: Duration{20 * time.Second}, RescanInterval: Duration{5 * time.Minute}}
	if cfg.Enricher != want {
		t.Errorf("loaded %+v, want %+v", cfg.Enricher, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	env := map[string]string{"CTXD_ENRICHER_MODEL": "qwen3", "CTXD_ENRICHER_QUESTIONS_PER_CHUNK": "2", "CTXD_ENRICHER_TIMEOUT": "1m"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if err := cfg.ApplyEnv(lookup); err != nil {
		t.Fatal(err)
	}
	if cfg.Enricher.Model != "qwen3" || cfg.Enricher.QuestionsPerChunk != 2 || cfg.Enricher.Timeout.Duration != time.Minute {
		t.Errorf("env not applied: %+v", cfg.Enricher)
	}
	env["CTXD_ENRICHER_MAX_RETRIES"] = "many"
	if err := cfg.ApplyEnv(lookup); err == nil || !strings.Contains(err.Error(), "CTXD_ENRICHER_MAX_RETRIES") {
		t.Errorf("bad number: %v", err)
	}

	for _, tc := range []struct {
		name   string
		mutate func(*EnricherConfig)
		want   string
	}{
		{"endpoint without scheme", func(c *EnricherConfig) { c.Endpoint = "127.0.0.1:11434/v1" }, "enricher.endpoint"},
		{"endpoint with a query", func(c *EnricherConfig) { c.Endpoint = "http://h/v1?key=x" }, "enricher.endpoint"},
		{"no model", func(c *EnricherConfig) { c.Model = "" }, "enricher.model"},
		{"no questions", func(c *EnricherConfig) { c.QuestionsPerChunk = 0 }, "enricher.questions_per_chunk"},
		{"too many questions", func(c *EnricherConfig) { c.QuestionsPerChunk = 11 }, "enricher.questions_per_chunk"},
		{"no requests", func(c *EnricherConfig) { c.RequestsPerMinute = 0 }, "enricher.requests_per_minute"},
		{"negative retries", func(c *EnricherConfig) { c.MaxRetries = -1 }, "enricher.max_retries"},
		{"too many retries", func(c *EnricherConfig) { c.MaxRetries = 11 }, "enricher.max_retries"},
		{"zero timeout", func(c *EnricherConfig) { c.Timeout.Duration = 0 }, "enricher.timeout"},
		{"zero rescan", func(c *EnricherConfig) { c.RescanInterval.Duration = 0 }, "enricher.rescan_interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig(t)
			c.Enricher = want
			tc.mutate(&c.Enricher)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// loopbackChat is a loopback server speaking the chat completions API: it
// answers each prompt with the JSON array of questions answer gives for the
// passage, once gate (if any) is closed.
type loopbackChat struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string
}

// firstWords answers two questions naming the passage's first words.
func firstWords(passage string) []string {
	words := append(strings.Fields(passage), "this", "passage")[:2]
	return []string{"What does " + strings.Join(words, " ") + " say?", "Why " + words[0] + "?"}
}

func newLoopbackChat(t *testing.T, answer func(passage string) []string, gate chan struct{}) *loopbackChat {
	lc := &loopbackChat{}
	lc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gate != nil {
			<-gate
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		lc.mu.Lock()
		lc.auth = append(lc.auth, r.Header.Get("Authorization"))
		lc.mu.Unlock()
		_, passage, _ := strings.Cut(req.Messages[len(req.Messages)-1].Content, "Passage:\n")
		content, _ := json.Marshal(answer(strings.TrimSpace(passage)))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": string(content)}}},
		})
	}))
	t.Cleanup(lc.srv.Close)
	return lc
}

// TestDaemon_EnricherGeneratesQuestionVectors runs the daemon with the real
// model and the enricher pointed at a loopback chat server: every chunk gets
// generated questions, the indexer embeds them, and Status shows both.
func TestDaemon_EnricherGeneratesQuestionVectors(t *testing.T) {
	chat := newLoopbackChat(t, firstWords, nil)
	t.Setenv("CTXD_TEST_CHAT_KEY", "sk-loopback")
	cfg := withModel(t, testConfig(t))
	cfg.Enricher.Endpoint, cfg.Enricher.Model, cfg.Enricher.APIKeyEnv = chat.srv.URL+"/v1", "test-chat", "CTXD_TEST_CHAT_KEY"
	cfg.Enricher.RequestsPerMinute = 60_000
	cfg.Enricher.RescanInterval = Duration{100 * time.Millisecond} // chunks written after a pass are found soon
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)
	writeText(t, d.vfsClient(t), "/docs/install.md", sampleMarkdown)
	admin := ctxdv1.NewAdminServiceClient(conn)

	st := waitStatus(t, admin, 2*time.Minute, "every chunk to carry a question vector", func(st *ctxdv1.StatusResponse) bool {
		e := st.Embedding
		return e.Enricher != nil && e.Enricher.PendingChunks == 0 && e.PendingQuestions == 0 &&
			e.ChunksWithQuestions == st.Index.ChunkCount && st.Index.ChunkCount > 0
	})
	en := st.Embedding.Enricher
	if en.Endpoint != chat.srv.URL+"/v1" || en.Model != "test-chat" || en.FailedCalls != 0 || en.LastError != "" || en.LastErrorAt != nil {
		t.Errorf("enricher status = %v", en)
	}
	if en.EnrichedChunks == 0 || en.EnrichedChunks > st.Index.ChunkCount || st.Embedding.ChunksWithoutQuestions != 0 {
		t.Errorf("enriched %d of %d chunks, %d without questions", en.EnrichedChunks, st.Index.ChunkCount, st.Embedding.ChunksWithoutQuestions)
	}
	chat.mu.Lock()
	for _, a := range chat.auth {
		if a != "Bearer sk-loopback" {
			t.Errorf("a call sent Authorization %q, want the key from api_key_env", a)
		}
	}
	chat.mu.Unlock()
}

// TestDaemon_EnricherQuestionsChangeRanking: with the real model, a vector
// search phrased as a question ranks the talks note first; once the
// enricher has given the kitchen note a matching question (and the talks
// note one of its own), the kitchen note comes first.
func TestDaemon_EnricherQuestionsChangeRanking(t *testing.T) {
	const (
		talks   = "Lunch and learn talks are held in the large meeting room on the first Friday of every month."
		kitchen = "The kitchen on the third floor opens at half past eleven and closes at two, Monday to Friday."
		query   = "When is lunch served?"
	)
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	chat := newLoopbackChat(t, func(passage string) []string {
		if passage == kitchen {
			return []string{"What time does the kitchen serve lunch?"}
		}
		return []string{"Where are the lunch and learn talks held?"}
	}, gate)
	t.Cleanup(release) // runs before the server's Close, which waits for held calls
	cfg := withModel(t, testConfig(t))
	cfg.Enricher.Endpoint, cfg.Enricher.Model = chat.srv.URL+"/v1", "test-chat"
	cfg.Enricher.RequestsPerMinute = 60_000
	cfg.Enricher.RescanInterval = Duration{100 * time.Millisecond}
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := d.vfsClient(t)
	writeText(t, c, "notes:/talks.md", talks)
	writeText(t, c, "notes:/kitchen.md", kitchen)
	admin := ctxdv1.NewAdminServiceClient(conn)
	search := func() []string {
		t.Helper()
		resp, err := ctxdv1.NewSearchServiceClient(conn).Search(context.Background(), &ctxdv1.SearchRequest{
			Queries: []*ctxdv1.SearchQuery{{Text: query}}, Mode: ctxdv1.SearchMode_SEARCH_MODE_VECTOR, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, r := range resp.Results {
			refs = append(refs, r.Ref)
		}
		return refs
	}

	waitStatus(t, admin, time.Minute, "the chunks to be embedded and indexed", func(st *ctxdv1.StatusResponse) bool {
		e := st.Embedding
		return e.Available && st.Index.ChunkCount == 2 && e.PendingChunks == 0 && st.Index.AppliedSequence == st.Index.OutboxSequence
	})
	if refs := search(); len(refs) != 2 || refs[0] != "notes:/talks.md" {
		t.Fatalf("before the enricher answers, vector search ranks %v, want notes:/talks.md first", refs)
	}
	release()
	waitStatus(t, admin, time.Minute, "both chunks to carry question vectors, indexed", func(st *ctxdv1.StatusResponse) bool {
		e := st.Embedding
		return e.ChunksWithQuestions == 2 && e.PendingQuestions == 0 && st.Index.AppliedSequence == st.Index.OutboxSequence
	})
	if refs := search(); len(refs) != 2 || refs[0] != "notes:/kitchen.md" {
		t.Fatalf("after the enricher answered, vector search ranks %v, want notes:/kitchen.md first (its generated question)", refs)
	}
}

func TestDaemon_EnricherOffByDefault(t *testing.T) {
	d := mustStart(t, testConfig(t))
	st, err := ctxdv1.NewAdminServiceClient(dial(t, "unix://"+d.cfg.Socket)).Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedding.Enricher != nil {
		t.Errorf("enricher status %v with no endpoint configured", st.Embedding.Enricher)
	}
}

func TestDaemon_EnricherKeyEnvUnset(t *testing.T) {
	cfg := testConfig(t)
	cfg.Enricher.Endpoint, cfg.Enricher.Model, cfg.Enricher.APIKeyEnv = "http://127.0.0.1:1/v1", "m", "CTXD_TEST_UNSET_KEY"
	t.Setenv("CTXD_TEST_UNSET_KEY", "")
	d, err := Start(context.Background(), cfg, slogDiscard())
	if err == nil {
		d.Stop(context.Background())
		t.Fatal("Start succeeded with api_key_env naming an empty variable")
	}
	if !strings.Contains(err.Error(), "enricher.api_key_env") || !strings.Contains(err.Error(), "CTXD_TEST_UNSET_KEY") {
		t.Errorf("err = %v, want it to name enricher.api_key_env and the variable", err)
	}
}
