package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// sessionEvents is a short session as a host records it.
func sessionEvents() []*ctxdv1.SessionEvent {
	return []*ctxdv1.SessionEvent{
		{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_PROMPT, Text: "Make the nightly backup job retry on timeouts"},
		{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_TOOL_USE, Tool: "Bash", Text: "systemctl --user status backup.timer"},
		{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_ERROR, Tool: "Bash", Text: "rsync: connection timed out after 30 seconds"},
		{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION, Text: "Retry rsync three times with exponential backoff before paging anyone."},
		{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_FILE_CHANGE, Tool: "Edit", Text: "Edit backup.sh", Refs: []string{"/home/me/ops/backup.sh"}},
		{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_TOOL_USE, Tool: "TodoWrite", Text: "- [x] add the retry loop\n- [ ] alert after the third failure"},
	}
}

func TestSessionService_GRPC(t *testing.T) {
	d := mustStart(t, withModel(t, testConfig(t)))
	conn := dial(t, "unix://"+d.cfg.Socket)
	sc := ctxdv1.NewSessionServiceClient(conn)
	ctx := context.Background()

	st, err := sc.StartSession(ctx, &ctxdv1.StartSessionRequest{Id: "cc-1", Project: "ops", Actor: "claude-code", Cwd: "/home/me/ops"})
	if err != nil || !st.Created || st.Session.Id != "cc-1" || st.Session.Project != "ops" {
		t.Fatalf("StartSession = %v, %v", st, err)
	}
	app, err := sc.AppendEvents(ctx, &ctxdv1.AppendEventsRequest{SessionId: "cc-1", Project: "ops", Events: sessionEvents()})
	if err != nil || len(app.Events) != len(sessionEvents()) || app.Session.EventCount != int64(len(sessionEvents())) {
		t.Fatalf("AppendEvents = %v, %v", app, err)
	}
	for _, e := range app.Events {
		if !strings.HasPrefix(e.Ref, "session:/ops/") || e.Time == nil {
			t.Errorf("stored event %v", e)
		}
	}
	// Another project's session, for the filters, a millisecond later.
	for time.Now().UnixMilli() <= app.Events[0].Time.AsTime().UnixMilli() {
		runtime.Gosched()
	}
	if _, err := sc.AppendEvents(ctx, &ctxdv1.AppendEventsRequest{SessionId: "cc-2", Project: "web",
		Events: []*ctxdv1.SessionEvent{{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_ERROR, Text: "the deploy timed out on rsync"}}}); err != nil {
		t.Fatal(err)
	}
	end, err := sc.EndSession(ctx, &ctxdv1.EndSessionRequest{SessionId: "cc-1"})
	if err != nil || end.Session.EndedAt == nil || end.Digest.Method != "extractive" || !strings.Contains(end.Digest.Markdown, "- [ ] alert after the third failure") {
		t.Fatalf("EndSession = %v, %v", end, err)
	}
	got, err := sc.GetSession(ctx, &ctxdv1.GetSessionRequest{SessionId: "cc-1"})
	if err != nil || len(got.Events) != len(sessionEvents()) || got.Digest != end.Digest.Markdown || got.Session.DigestRef == "" {
		t.Fatalf("GetSession = %v, %v", got, err)
	}
	list, err := sc.ListSessions(ctx, &ctxdv1.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 2 {
		t.Fatalf("ListSessions = %v, %v", list, err)
	}
	waitEmbedded(t, conn, 2*time.Minute)

	search := func(req *ctxdv1.SearchEventsRequest) []string {
		t.Helper()
		resp, err := sc.SearchEvents(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if req.Mode == ctxdv1.SearchMode_SEARCH_MODE_UNSPECIFIED && resp.ModeUsed != ctxdv1.SearchMode_SEARCH_MODE_HYBRID {
			t.Errorf("mode %v (%s), want hybrid", resp.ModeUsed, resp.ModeReason)
		}
		var out []string
		for _, g := range resp.Sessions {
			for _, h := range g.Hits {
				if h.Event.Ref != h.Result.Ref {
					t.Errorf("hit %s carries the event %s", h.Result.Ref, h.Event.Ref)
				}
				out = append(out, g.Session.Id+":"+strings.ToLower(strings.TrimPrefix(h.Event.Kind.String(), "SESSION_EVENT_KIND_")))
			}
		}
		return out
	}
	// Meaning, not words: hybrid finds the timeout errors asked about in
	// other words.
	if got := search(&ctxdv1.SearchEventsRequest{Query: "network connection timeouts", Kinds: []ctxdv1.SessionEventKind{ctxdv1.SessionEventKind_SESSION_EVENT_KIND_ERROR}}); !slices.Contains(got, "cc-1:error") || !slices.Contains(got, "cc-2:error") || len(got) != 2 {
		t.Errorf("errors about timeouts: %v", got)
	}
	if got := search(&ctxdv1.SearchEventsRequest{Query: "rsync timed out", Project: "web"}); !slices.Equal(got, []string{"cc-2:error"}) {
		t.Errorf("project web: %v", got)
	}
	if got := search(&ctxdv1.SearchEventsRequest{Query: "retry backoff", SessionIds: []string{"cc-1"}, Kinds: []ctxdv1.SessionEventKind{ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION, ctxdv1.SessionEventKind_SESSION_EVENT_KIND_SUMMARY}}); !slices.Contains(got, "cc-1:decision") || !slices.Contains(got, "cc-1:summary") {
		t.Errorf("decisions and digests of cc-1: %v", got)
	}
	if got := search(&ctxdv1.SearchEventsRequest{Query: "rsync", After: timestamppb.Now(), Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25}); len(got) != 0 {
		t.Errorf("events after every write: %v", got)
	}
	afterFirst := timestamppb.New(app.Events[0].Time.AsTime().Truncate(time.Millisecond).Add(time.Millisecond))
	if got := search(&ctxdv1.SearchEventsRequest{Query: "rsync", Before: afterFirst, Kinds: []ctxdv1.SessionEventKind{ctxdv1.SessionEventKind_SESSION_EVENT_KIND_ERROR, ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION}, Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25}); len(got) != 2 || !slices.Contains(got, "cc-1:error") || !slices.Contains(got, "cc-1:decision") {
		t.Errorf("events of the first append: %v", got)
	}

	rec, err := sc.Recall(ctx, &ctxdv1.RecallRequest{Project: "ops", SessionId: "cc-3"})
	if err != nil || !strings.Contains(rec.Markdown, "alert after the third failure") || rec.Project != "ops" || rec.TokensUsed == 0 {
		t.Errorf("Recall at a start = %v, %v", rec, err)
	}
	rec, err = sc.Recall(ctx, &ctxdv1.RecallRequest{Project: "ops", SessionId: "cc-3", Prompt: "How should the backup job retry when rsync times out?"})
	if err != nil || !strings.Contains(rec.Markdown, "exponential backoff") || strings.Contains(rec.Markdown, "the deploy timed out") {
		t.Errorf("Recall for a prompt = %q, %v", rec.GetMarkdown(), err)
	}

	// Bad input: a clear error, nothing written.
	for name, req := range map[string]*ctxdv1.AppendEventsRequest{
		"no kind":     {SessionId: "cc-1", Project: "ops", Events: []*ctxdv1.SessionEvent{{Text: "x"}}},
		"no events":   {SessionId: "cc-1", Project: "ops"},
		"bad project": {SessionId: "cc-1", Project: "Ops!", Events: sessionEvents()},
		"bad id":      {SessionId: "a/b", Project: "ops", Events: sessionEvents()},
	} {
		_, err := sc.AppendEvents(ctx, req)
		if code, det := errorDetail(t, err); code != codes.InvalidArgument || det.Type != ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT || det.NextActionHint == "" {
			t.Errorf("%s: %v %v", name, code, det)
		}
	}
	if _, err := sc.GetSession(ctx, &ctxdv1.GetSessionRequest{SessionId: "nope"}); err == nil {
		t.Error("GetSession of an unknown session succeeded")
	} else if code, det := errorDetail(t, err); code != codes.NotFound || !strings.Contains(det.NextActionHint, "ctxd session list") {
		t.Errorf("unknown session: %v %v", code, det)
	}
	if _, err := sc.ListSessions(ctx, &ctxdv1.ListSessionsRequest{Limit: 1_000_000}); err == nil {
		t.Error("a list over max_list_limit succeeded")
	} else if _, det := errorDetail(t, err); !strings.Contains(det.NextActionHint, "max_list_limit") {
		t.Errorf("over the limit: %v", det)
	}
	long := strings.Repeat("x", 100_000)
	app, err = sc.AppendEvents(ctx, &ctxdv1.AppendEventsRequest{SessionId: "cc-1", Project: "ops",
		Events: []*ctxdv1.SessionEvent{{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_NOTE, Text: long}}})
	if err != nil || !app.Events[0].Truncated || len(app.Events[0].Text) > d.cfg.Limits.MaxEventBytes || !strings.HasSuffix(app.Events[0].Text, "bytes]") {
		t.Errorf("a 100 KB text: %v", err)
	}
}

// gatewayJSON calls path on the gateway with the owner's token, body (nil:
// none) as JSON, and decodes the JSON answer into out; it returns the
// status.
func gatewayJSON(t *testing.T, d *testDaemon, method, path string, body any, out any) int {
	t.Helper()
	b := []byte{}
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	code, raw := httpCall(t, method, "http://"+d.HTTPAddr().String()+path, string(b), d.token)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s %s: %d %s: %v", method, path, code, raw, err)
	}
	return code
}

func TestSessionService_HTTP(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)

	var start map[string]any
	if code := gatewayJSON(t, d, "POST", "/v1/sessions/start", map[string]any{"id": "h-1", "project": "ops"}, &start); code != 200 || start["created"] != true {
		t.Fatalf("start: %d %v", code, start)
	}
	var app struct {
		Session struct {
			EventCount string `json:"event_count"`
		} `json:"session"`
		Events []struct {
			Ref  string `json:"ref"`
			Kind string `json:"kind"`
		} `json:"events"`
	}
	body := map[string]any{"session_id": "h-1", "project": "ops", "events": []map[string]any{
		{"kind": "SESSION_EVENT_KIND_DECISION", "text": "Keep backups for 35 days."},
		{"kind": "SESSION_EVENT_KIND_NOTE", "text": "The backup host is nas-2.", "refs": []string{"ssh://nas-2"}},
	}}
	if code := gatewayJSON(t, d, "POST", "/v1/sessions/events", body, &app); code != 200 || len(app.Events) != 2 || app.Session.EventCount != "2" || app.Events[0].Kind != "SESSION_EVENT_KIND_DECISION" {
		t.Fatalf("events: %d %+v", code, app)
	}
	// Read-your-writes does not apply to this test's timing: wait for the
	// index like any client that needs the events searchable.
	deadline := time.Now().Add(30 * time.Second)
	var found struct {
		Sessions []struct {
			Session struct{ ID string } `json:"session"`
			Hits    []struct {
				Event struct{ Kind, Text string } `json:"event"`
			} `json:"hits"`
		} `json:"sessions"`
	}
	for {
		code := gatewayJSON(t, d, "POST", "/v1/sessions/search", map[string]any{"query": "backup host", "project": "ops", "kinds": []string{"SESSION_EVENT_KIND_NOTE"}}, &found)
		if code != 200 {
			t.Fatalf("search: %d", code)
		}
		if len(found.Sessions) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(found.Sessions) != 1 || found.Sessions[0].Session.ID != "h-1" || len(found.Sessions[0].Hits) != 1 || found.Sessions[0].Hits[0].Event.Text != "The backup host is nas-2." {
		t.Errorf("search: %+v", found)
	}
	var got ctxdv1.GetSessionResponse
	var raw json.RawMessage
	if code := gatewayJSON(t, d, "GET", "/v1/session?session_id=h-1&project=ops", nil, &raw); code != 200 {
		t.Fatalf("get: %d %s", code, raw)
	}
	if err := protojson.Unmarshal(raw, &got); err != nil || len(got.Events) != 2 || got.Session.Id != "h-1" {
		t.Errorf("get: %v %v", got.String(), err)
	}
	var list ctxdv1.ListSessionsResponse
	if code := gatewayJSON(t, d, "GET", "/v1/sessions?project=ops", nil, &raw); code != 200 || protojson.Unmarshal(raw, &list) != nil || len(list.Sessions) != 1 {
		t.Errorf("list: %d %s", code, raw)
	}
	var end ctxdv1.EndSessionResponse
	if code := gatewayJSON(t, d, "POST", "/v1/sessions/end", map[string]any{"session_id": "h-1"}, &raw); code != 200 || protojson.Unmarshal(raw, &end) != nil || !strings.Contains(end.Digest.Markdown, "Keep backups for 35 days.") {
		t.Errorf("end: %d %s", code, raw)
	}
	var rec ctxdv1.RecallResponse
	if code := gatewayJSON(t, d, "POST", "/v1/sessions/recall", map[string]any{"project": "ops"}, &raw); code != 200 || protojson.Unmarshal(raw, &rec) != nil || !strings.Contains(rec.Markdown, "Keep backups for 35 days.") {
		t.Errorf("recall: %d %s", code, raw)
	}
	// Errors have the API's shape.
	var herr httpError
	if code := gatewayJSON(t, d, "POST", "/v1/sessions/events", map[string]any{"session_id": "h-1", "events": []map[string]any{{"text": "no kind"}}}, &herr); code != 400 || herr.Details[0].Type != "ERROR_TYPE_INVALID_ARGUMENT" || herr.Details[0].Hint == "" {
		t.Errorf("an event without a kind: %d %+v", code, herr)
	}
	if code := gatewayJSON(t, d, "GET", "/v1/session?session_id=nope", nil, &herr); code != 404 || herr.Details[0].Type != "ERROR_TYPE_NOT_FOUND" {
		t.Errorf("an unknown session: %d %+v", code, herr)
	}
}

// TestSessionService_EnricherDigest writes a digest through the daemon's
// configured enricher, a loopback OpenAI-compatible endpoint.
func TestSessionService_EnricherDigest(t *testing.T) {
	const digest = "# Session e-1 on ops\n\nBackups now retry rsync three times; alerting is still open.\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string }
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		answer := `["What does the note say?"]` // the question enricher's calls
		if req.Messages[0].Role == "system" && strings.Contains(req.Messages[0].Content, "digest") {
			answer = digest
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": answer}}}})
	}))
	defer srv.Close()
	cfg := testConfig(t)
	cfg.Enricher.Endpoint, cfg.Enricher.Model = srv.URL+"/v1", "test"
	d := mustStart(t, cfg)
	sc := ctxdv1.NewSessionServiceClient(dial(t, "unix://"+d.cfg.Socket))
	ctx := context.Background()
	if _, err := sc.AppendEvents(ctx, &ctxdv1.AppendEventsRequest{SessionId: "e-1", Project: "ops", Events: sessionEvents()}); err != nil {
		t.Fatal(err)
	}
	dg, err := sc.DigestSession(ctx, &ctxdv1.DigestSessionRequest{SessionId: "e-1", WaitForEnricher: true})
	if err != nil || dg.Digest.Method != "enricher" || dg.Digest.Markdown != digest {
		t.Fatalf("DigestSession waiting for the enricher = %v, %v", dg, err)
	}
	// Without waiting: the extractive digest now, the model's later.
	end, err := sc.EndSession(ctx, &ctxdv1.EndSessionRequest{SessionId: "e-1"})
	if err != nil || end.Digest.Method != "extractive" || !end.Digest.EnricherPending {
		t.Fatalf("EndSession = %v, %v", end, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := sc.GetSession(ctx, &ctxdv1.GetSessionRequest{SessionId: "e-1"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Digest == digest {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the enricher's digest never replaced the extractive one: %q", got.Digest)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSessionService_Access checks that sessions obey a token's paths like
// any item: a token limited to one project's sessions writes and finds
// only those.
func TestSessionService_Access(t *testing.T) {
	cfg := testConfig(t)
	cfg.GRPCTCP = "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{{Name: "ops-agent", SHA256: sha256Hex("ops-secret"), Scopes: []string{"read", "write"}, Agent: true, Paths: []string{"session:/ops/"}}}
	d := mustStart(t, cfg)
	owner := ctxdv1.NewSessionServiceClient(dial(t, "unix://"+d.cfg.Socket))
	agent := ctxdv1.NewSessionServiceClient(dial(t, "passthrough:///"+d.GRPCAddr().String()))
	actx := bearer("ops-secret")
	if _, err := owner.AppendEvents(context.Background(), &ctxdv1.AppendEventsRequest{SessionId: "w-1", Project: "web", Events: sessionEvents()}); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.AppendEvents(actx, &ctxdv1.AppendEventsRequest{SessionId: "o-1", Project: "ops", Events: sessionEvents()}); err != nil {
		t.Fatalf("the agent's own project: %v", err)
	}
	_, err := agent.AppendEvents(actx, &ctxdv1.AppendEventsRequest{SessionId: "w-2", Project: "web", Events: sessionEvents()})
	if code, _ := errorDetail(t, err); code != codes.PermissionDenied {
		t.Errorf("writing another project's session: %v", err)
	}
	list, err := agent.ListSessions(actx, &ctxdv1.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].Project != "ops" {
		t.Errorf("the agent lists %v, %v", list, err)
	}
	if _, err := agent.GetSession(actx, &ctxdv1.GetSessionRequest{SessionId: "w-1"}); err == nil {
		t.Error("the agent read another project's session")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := agent.SearchEvents(actx, &ctxdv1.SearchEventsRequest{Query: "rsync timed out", Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range resp.Sessions {
			if g.Session.Project != "ops" {
				t.Fatalf("the agent found a session of %s", g.Session.Project)
			}
		}
		if len(resp.Sessions) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}
