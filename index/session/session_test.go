package session

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ctxd/ctxd/index/enrich"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

func TestProjectFromDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "My Repo")
	deep := filepath.Join(root, "cmd", "tool")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "Notes_2026")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		root:                               "my-repo",
		deep:                               "my-repo", // the repository's root names it
		outside:                            "notes_2026",
		"":                                 DefaultProject,
		"/":                                DefaultProject,
		"/srv/...":                         DefaultProject, // nothing of the name is kept
		"/srv/Ünïcode app":                 "-n-code-app",
		"/srv/" + strings.Repeat("a", 100): strings.Repeat("a", 64),
	} {
		got := ProjectFromDir(dir)
		if got != want && !(dir == "/srv/Ünïcode app" && projectPattern.MatchString(got)) {
			t.Errorf("ProjectFromDir(%q) = %q, want %q", dir, got, want)
		}
		if !projectPattern.MatchString(got) {
			t.Errorf("ProjectFromDir(%q) = %q, not a project name", dir, got)
		}
	}
}

func TestSessions_Start(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	first, created, err := e.s.Start(ctx, StartParams{ID: "9ecf22fa-edf8-4332-ae85-b6d5456eda64", Project: "ctxd", Actor: "claude-code", Cwd: "/home/me/src/ctxd"})
	if err != nil || !created {
		t.Fatalf("Start = %+v, created %v, %v", first, created, err)
	}
	if first.Project != "ctxd" || first.Actor != "claude-code" || first.Cwd != "/home/me/src/ctxd" || !first.Open() ||
		!strings.HasPrefix(first.Ref, "session:/ctxd/") || !strings.HasSuffix(first.Ref, "-9ecf22fa-edf8-4332-ae85-b6d5456eda64/session.md") {
		t.Errorf("session %+v", first)
	}
	// A resume: the same session, unchanged.
	again, created, err := e.s.Start(ctx, StartParams{ID: first.ID, Project: "ctxd", Actor: "other"})
	if err != nil || created || again.Ref != first.Ref || again.Actor != "claude-code" {
		t.Errorf("second Start = %+v, created %v, %v; want the first, unchanged", again, created, err)
	}
	// The record is not searchable: it has no body.
	e.sync()
	if st, err := e.store.EmbedStats(ctx); err != nil || st.Chunks != 0 {
		t.Errorf("a session record made chunks: %+v, %v", st, err)
	}
	generated, created, err := e.s.Start(ctx, StartParams{Project: "ctxd"})
	if err != nil || !created || !idPattern.MatchString(generated.ID) || generated.ID == first.ID {
		t.Errorf("Start without an id = %+v, %v, %v", generated, created, err)
	}
	for name, p := range map[string]StartParams{
		"id with a slash":      {ID: "a/b", Project: "ctxd"},
		"id with a space":      {ID: "a b", Project: "ctxd"},
		"id too long":          {ID: strings.Repeat("a", 129), Project: "ctxd"},
		"upper-case project":   {ID: "x", Project: "Ctxd"},
		"project with a slash": {ID: "x", Project: "a/b"},
	} {
		if _, _, err := e.s.Start(ctx, p); !errors.Is(err, vfs.ErrInvalid) {
			t.Errorf("%s: Start = %v, want ErrInvalid", name, err)
		}
	}
}

func TestSessions_Append(t *testing.T) {
	e := newEnv(t, Options{MaxEventBytes: 1024, Redact: func(s string) string { return strings.ReplaceAll(s, "hunter2", "[REDACTED]") }})
	ctx := context.Background()

	t.Run("starts the session and keeps the order", func(t *testing.T) {
		evs := e.append("s1", "ctxd", recorded()...)
		if len(evs) != len(recorded()) {
			t.Fatalf("%d events stored", len(evs))
		}
		sess, got, _, _, err := e.s.Get(ctx, "s1", "ctxd", 0, "")
		if err != nil {
			t.Fatal(err)
		}
		if sess.EventCount != int64(len(evs)) {
			t.Errorf("event count %d, want %d", sess.EventCount, len(evs))
		}
		for i, ev := range got {
			want := recorded()[i]
			if ev.Kind != want.Kind || ev.Text != want.Text || ev.Tool != want.Tool || !slices.Equal(ev.Refs, want.Refs) || ev.Ref != evs[i].Ref || ev.Time.IsZero() {
				t.Errorf("event %d read back as %+v, want %+v", i, ev, want)
			}
			if i > 0 && ev.Time.Before(got[i-1].Time) {
				t.Errorf("event %d is older than the one before it", i)
			}
		}
	})
	t.Run("text is cut, never refused, and redacted", func(t *testing.T) {
		long := strings.Repeat("é", 2000) // 4000 bytes, 2-byte runes
		evs := e.append("s1", "ctxd", Event{Kind: KindNote, Text: long}, Event{Kind: KindNote, Text: "the password is hunter2\x00 and \xff"})
		got := evs[0]
		if !got.Truncated || len(got.Text) > 1024 || !utf8.ValidString(got.Text) || !strings.HasSuffix(got.Text, "…[cut "+strconv.Itoa(4000-strings.Index(got.Text, "…"))+" bytes]") {
			t.Errorf("a long text stored as %d bytes %q…, truncated %v", len(got.Text), got.Text[len(got.Text)-40:], got.Truncated)
		}
		if evs[1].Text != "the password is [REDACTED]\uFFFD and \uFFFD" || evs[1].Truncated {
			t.Errorf("stored %q", evs[1].Text)
		}
		if body := e.read(evs[1].Ref); strings.Contains(body, "hunter2") {
			t.Errorf("the secret reached the store: %q", body)
		}
	})
	t.Run("bad events are refused and nothing is written", func(t *testing.T) {
		before, _, _, _, err := e.s.Get(ctx, "s1", "ctxd", 0, "")
		if err != nil {
			t.Fatal(err)
		}
		for name, evs := range map[string][]Event{
			"no events":       nil,
			"no kind":         {{Text: "x"}},
			"unknown kind":    {{Kind: "thought", Text: "x"}},
			"no text":         {{Kind: KindNote, Text: " \n"}},
			"too many refs":   {{Kind: KindFileChange, Text: "x", Refs: slices.Repeat([]string{"/a"}, MaxEventRefs+1)}},
			"long tool":       {{Kind: KindToolUse, Text: "x", Tool: strings.Repeat("t", MaxToolBytes+1)}},
			"one bad of two":  {{Kind: KindNote, Text: "fine"}, {Kind: "bad", Text: "x"}},
			"too many events": slices.Repeat([]Event{{Kind: KindNote, Text: "x"}}, MaxEventsPerAppend+1),
		} {
			if _, _, err := e.s.Append(ctx, AppendParams{SessionID: "s1", Project: "ctxd", Events: evs}); !errors.Is(err, vfs.ErrInvalid) {
				t.Errorf("%s: Append = %v, want ErrInvalid", name, err)
			}
		}
		after, _, _, _, err := e.s.Get(ctx, "s1", "ctxd", 0, "")
		if err != nil || after.EventCount != before.EventCount {
			t.Errorf("events %d after refused appends, %d before (%v)", after.EventCount, before.EventCount, err)
		}
	})
	t.Run("no session id: the latest open session, else a new one", func(t *testing.T) {
		e.start("s2", "notes")
		sess, _, err := e.s.Append(ctx, AppendParams{Project: "notes", Events: []Event{{Kind: KindDecision, Text: "use pgx"}}})
		if err != nil || sess.ID != "s2" {
			t.Fatalf("appended to %+v, %v; want s2", sess, err)
		}
		if _, _, err := e.s.End(ctx, "s2", "notes", false); err != nil {
			t.Fatal(err)
		}
		sess, _, err = e.s.Append(ctx, AppendParams{Project: "notes", Events: []Event{{Kind: KindNote, Text: "after the end"}}})
		if err != nil || sess.ID == "s2" || !sess.Open() {
			t.Errorf("appended to %+v, %v; want a new open session", sess, err)
		}
	})
}

func TestSessions_ListAndGet(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	e.start("a1", "alpha")
	e.start("b1", "beta")
	e.start("a2", "alpha")
	list, err := e.s.List(ctx, "alpha", 0, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	// Started within one second: both orders are newest first by name.
	if len(ids) != 2 || !slices.Contains(ids, "a1") || !slices.Contains(ids, "a2") {
		t.Errorf("alpha's sessions %v", ids)
	}
	all, err := e.s.List(ctx, "", 2, time.Time{})
	if err != nil || len(all) != 2 {
		t.Errorf("List of every project with limit 2 = %d sessions, %v", len(all), err)
	}
	if none, err := e.s.List(ctx, "alpha", 0, time.Now().Add(time.Hour)); err != nil || len(none) != 0 {
		t.Errorf("List since an hour ahead = %d sessions, %v", len(none), err)
	}
	e.append("a1", "alpha", slices.Repeat([]Event{{Kind: KindNote, Text: "n"}}, 5)...)
	_, page1, next, _, err := e.s.Get(ctx, "a1", "", 3, "")
	if err != nil || len(page1) != 3 || next == "" {
		t.Fatalf("first page %d events, next %q, %v", len(page1), next, err)
	}
	_, page2, next, _, err := e.s.Get(ctx, "a1", "", 3, next)
	if err != nil || len(page2) != 2 || next != "" {
		t.Errorf("second page %d events, next %q, %v", len(page2), next, err)
	}
	if _, _, _, _, err := e.s.Get(ctx, "nope", "alpha", 0, ""); !errors.Is(err, vfs.ErrNotFound) {
		t.Errorf("Get of an unknown session = %v, want ErrNotFound", err)
	}
}

func TestSessions_Digest(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	e.start("s1", "ctxd")
	evs := e.append("s1", "ctxd", recorded()...)
	sess, d, err := e.s.End(ctx, "s1", "ctxd", false)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Open() || sess.DigestRef != d.Ref || d.Method != MethodExtractive || d.EventCount != int64(len(evs)) || d.EnricherPending {
		t.Errorf("ended %+v, digest %+v", sess, d)
	}
	md := d.Markdown
	for _, want := range []string{
		"# Session s1 on ctxd",
		"12 events: 1 prompt, 5 tool_use, 1 decision, 1 error, 1 note, 3 file_change",
		"## Prompts (1)", "Fix the flaky search test in daemon/search_test.go",
		"## Decisions and notes (2)", "decision: Search waits for the index", "note: The gateway test needs a token file.",
		"## Errors (1)", "Bash: --- FAIL: TestSearch_WriteThenSearch", evs[2].Ref,
		"## Files changed (2)", "`/home/me/src/ctxd/index/search/engine.go` (2×)", "`/home/me/src/ctxd/daemon/ryw_test.go`",
		"## Commands run (1)", "`go test ./daemon -run TestSearch` (3×)",
		"## Open goals (1)", "- [ ] run the race detector",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the digest lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "reproduce the flaky test") {
		t.Errorf("a done task is listed as open:\n%s", md)
	}
	if !slices.Equal(d.OpenGoals, []string{"run the race detector"}) {
		t.Errorf("open goals %q", d.OpenGoals)
	}
	stored := e.read(d.Ref)
	if !strings.Contains(stored, "open_goals:") || !strings.HasSuffix(stored, md) {
		t.Errorf("the stored digest differs:\n%s", stored)
	}
	// The digest is searchable as a summary, grouped with its session.
	e.sync()
	found, err := e.s.Search(ctx, SearchParams{Query: "race detector", Kinds: []Kind{KindSummary}, Search: search.Request{Mode: search.BM25}})
	if err != nil || len(found.Groups) != 1 || found.Groups[0].Session.ID != "s1" || found.Groups[0].Hits[0].Event.Kind != KindSummary {
		t.Errorf("a summary search found %+v, %v", found.Groups, err)
	}
}

func TestSessions_Search(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	e.start("s1", "ctxd")
	e.append("s1", "ctxd", recorded()...)
	mid := time.Now()
	for time.Now().UnixMilli() <= mid.UnixMilli() {
	}
	e.start("s2", "ctxd")
	later := e.append("s2", "ctxd",
		Event{Kind: KindError, Tool: "Bash", Text: "the search test failed again: flaky under load"},
		Event{Kind: KindDecision, Text: "Keep the search wait bounded at one second."})
	e.start("o1", "other")
	e.append("o1", "other", Event{Kind: KindError, Text: "the search test of another project failed"})
	e.write("agent:/notes/search.md", "A note about the search test, not a session.")
	e.sync()

	ids := func(f Found) []string {
		var out []string
		for _, g := range f.Groups {
			for _, h := range g.Hits {
				out = append(out, g.Session.Project+"/"+g.Session.ID+":"+string(h.Event.Kind))
			}
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name string
		p    SearchParams
		want []string
	}{
		{"project", SearchParams{Query: "search test failed", Project: "other"}, []string{"other/o1:error"}},
		{"session", SearchParams{Query: "search test", SessionIDs: []string{"s2"}}, []string{"ctxd/s2:decision", "ctxd/s2:error"}},
		{"unknown session", SearchParams{Query: "search test", SessionIDs: []string{"nope"}}, nil},
		{"kinds", SearchParams{Query: "search test", Project: "ctxd", Kinds: []Kind{KindError}}, []string{"ctxd/s1:error", "ctxd/s2:error"}},
		{"time", SearchParams{Query: "search", Project: "ctxd", After: later[0].Time}, []string{"ctxd/s2:decision", "ctxd/s2:error"}},
		{"before", SearchParams{Query: "flaky", Project: "ctxd", Before: mid.Add(time.Millisecond)}, []string{"ctxd/s1:prompt", "ctxd/s1:tool_use", "ctxd/s1:tool_use"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.Search.Mode = search.BM25
			tc.p.Search.Limit = 20
			found, err := e.s.Search(ctx, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(found); !slices.Equal(got, tc.want) {
				t.Errorf("found %v, want %v", got, tc.want)
			}
			for _, g := range found.Groups {
				for i := 1; i < len(g.Hits); i++ {
					if g.Hits[i].Result.Score > g.Hits[i-1].Result.Score {
						t.Errorf("session %s: hits not best first", g.Session.ID)
					}
				}
			}
		})
	}
	// Groups: each session once, the best hit's session first.
	found, err := e.s.Search(ctx, SearchParams{Query: "search test failed flaky", Search: search.Request{Mode: search.BM25, Limit: 20}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, g := range found.Groups {
		if seen[g.Session.Ref] {
			t.Errorf("session %s in two groups", g.Session.Ref)
		}
		seen[g.Session.Ref] = true
		if i > 0 && g.Score > found.Groups[i-1].Score {
			t.Errorf("groups not ordered by their best hit")
		}
	}
	if _, err := e.s.Search(ctx, SearchParams{Query: "x", Kinds: []Kind{"thought"}}); !errors.Is(err, vfs.ErrInvalid) {
		t.Errorf("an unknown kind: %v, want ErrInvalid", err)
	}
}

func TestSessions_Expire(t *testing.T) {
	e := newEnv(t, Options{EventTTL: 48 * time.Hour, ProjectTTL: map[string]time.Duration{"keep": 90 * 24 * time.Hour}})
	ctx := context.Background()
	e.start("old", "ctxd")
	e.append("old", "ctxd", recorded()...)
	e.start("kept", "keep")
	e.append("kept", "keep", recorded()...)

	if n, err := e.s.Expire(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("Expire now = %d, %v; nothing is past its TTL", n, err)
	}
	n, err := e.s.Expire(ctx, time.Now().Add(72*time.Hour))
	if err != nil || n != int64(len(recorded())) {
		t.Fatalf("Expire in three days = %d, %v; want the %d events of ctxd", n, err, len(recorded()))
	}
	sess, evs, _, digest, err := e.s.Get(ctx, "old", "ctxd", 0, "")
	if err != nil || len(evs) != 0 || sess.EventCount != 0 {
		t.Errorf("after expiry: %+v, %d events, %v", sess, len(evs), err)
	}
	// The session never ended, so expiry wrote its digest first.
	if !strings.Contains(digest, "## Open goals (1)") || !strings.Contains(digest, "12 events") {
		t.Errorf("the digest written before expiry:\n%s", digest)
	}
	if _, evs, _, _, err := e.s.Get(ctx, "kept", "keep", 0, ""); err != nil || len(evs) != len(recorded()) {
		t.Errorf("a project with a longer TTL lost events: %d left, %v", len(evs), err)
	}
	// History keeps the expired events restorable, as for any delete.
	deleted, err := e.store.Deleted(ctx, vfs.Ref{Drive: Drive, Path: "/ctxd"}, 100)
	if err != nil || len(deleted) != len(recorded()) || deleted[0].Actor != "retention" {
		t.Errorf("deleted revisions %d (%v), want %d by retention", len(deleted), err, len(recorded()))
	}
}

func TestSessions_Recall(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	e.write("self:/soul.md", "---\nloading: always\n---\nI am the project's agent.\n")
	e.start("s1", "ctxd")
	e.append("s1", "ctxd", recorded()...)
	if _, _, err := e.s.End(ctx, "s1", "ctxd", false); err != nil {
		t.Fatal(err)
	}
	e.start("o1", "other")
	e.append("o1", "other", Event{Kind: KindDecision, Text: "Keep the flaky search test quarantined."})
	if _, _, err := e.s.End(ctx, "o1", "other", false); err != nil {
		t.Fatal(err)
	}
	e.start("s2", "ctxd")
	e.sync()

	t.Run("a session's start", func(t *testing.T) {
		res, project, err := e.s.Recall(ctx, RecallParams{Project: "ctxd", SessionID: "s2"})
		if err != nil || project != "ctxd" {
			t.Fatal(project, err)
		}
		md := res.Markdown
		for _, want := range []string{"I am the project's agent.", "## Open goals from earlier sessions", "- [ ] run the race detector", "## Earlier sessions", "# Session s1 on ctxd"} {
			if !strings.Contains(md, want) {
				t.Errorf("the recall lacks %q:\n%s", want, md)
			}
		}
		if strings.Contains(md, "quarantined") {
			t.Errorf("another project's digest is recalled:\n%s", md)
		}
		if res.TokensUsed > res.Budget || res.Budget != DefaultRecallBudget {
			t.Errorf("tokens %d of %d", res.TokensUsed, res.Budget)
		}
		tight, _, err := e.s.Recall(ctx, RecallParams{Project: "ctxd", SessionID: "s2", Budget: 60})
		if err != nil || tight.TokensUsed > 60 || len(tight.Omitted) == 0 {
			t.Errorf("a 60-token recall used %d tokens and omitted %d sections (%v)", tight.TokensUsed, len(tight.Omitted), err)
		}
	})
	t.Run("a prompt that matches", func(t *testing.T) {
		e.append("s2", "ctxd", Event{Kind: KindPrompt, Text: "Why did the flaky search test fail and what did we decide?"})
		e.sync()
		res, _, err := e.s.Recall(ctx, RecallParams{Project: "ctxd", SessionID: "s2", Prompt: "Why did the flaky search test fail and what did we decide?"})
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, s := range res.Sections {
			refs = append(refs, s.Ref)
		}
		if !slices.ContainsFunc(refs, func(r string) bool { return strings.Contains(r, "-s1/") }) {
			t.Errorf("the earlier session's memory is not recalled: %q", refs)
		}
		for _, r := range refs {
			if strings.Contains(r, "-s2/") || strings.HasPrefix(r, "session:/other/") {
				t.Errorf("recalled %s: the asking session's own events or another project's", r)
			}
		}
		if strings.Contains(res.Markdown, "I am the project's agent.") {
			t.Errorf("a prompt's recall repeats the always files")
		}
	})
	t.Run("a prompt nothing matches", func(t *testing.T) {
		res, _, err := e.s.Recall(ctx, RecallParams{Project: "ctxd", SessionID: "s2", Prompt: "Recommend a telescope eyepiece for observing Jupiter's moons"})
		if err != nil || res.Markdown != "" {
			t.Errorf("recall = %q, %v; want nothing", res.Markdown, err)
		}
	})
}

// The host records a prompt as it recalls for it, so the recall may run
// before or after the prompt's event is indexed: either way it is the same.
// Counted, the event holds every word of the prompt, and in a small store
// that takes a file's match below the relevance share.
func TestSessions_Recall_OwnPromptDoesNotCount(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	e.write("self:/rules.md", "---\nloading: always\n---\nAlways run make lint before committing.\n")
	e.write("self:/factorial.md", "---\nloading: contextual\ntitle: Factorial helpers\n---\nThe factorial function lives in mathx/factorial.go.\n")
	e.start("s1", "ctxd")
	e.sync()
	const prompt = "Write a function to calculate the factorial of a number"
	recall := func() string {
		t.Helper()
		res, _, err := e.s.Recall(ctx, RecallParams{Project: "ctxd", SessionID: "s1", Prompt: prompt})
		if err != nil {
			t.Fatal(err)
		}
		return res.Markdown
	}
	before := recall()
	if !strings.Contains(before, "mathx/factorial.go") {
		t.Fatalf("before the prompt is recorded, the recall lacks the factorial file: %q", before)
	}
	e.append("s1", "ctxd", Event{Kind: KindPrompt, Text: prompt})
	e.sync()
	if after := recall(); after != before {
		t.Errorf("once the prompt is recorded the recall changes:\n%q\nwant %q", after, before)
	}
}

// chatServer is a loopback OpenAI-compatible endpoint: it answers every
// chat completion with answer, or with status when it is not 200, and
// keeps the last request's messages.
func chatServer(t *testing.T, status int, answer string) (*httptest.Server, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = nil
		for _, m := range req.Messages {
			got = append(got, m.Content)
		}
		mu.Unlock()
		if status != http.StatusOK {
			http.Error(w, `{"error":{"message":"the model is overloaded"}}`, status)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": answer}}}})
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func TestSessions_DigestWithEnricher(t *testing.T) {
	const answer = "# Session s1 on ctxd\n\nThe flaky search test was fixed by making search wait for the index.\n"
	enricher := func(t *testing.T, status int) (*enrich.Enricher, *[]string) {
		srv, got := chatServer(t, status, answer)
		en, err := enrich.New(nil, enrich.Config{Endpoint: srv.URL + "/v1", Model: "test", MaxRetries: 0, Timeout: 10 * time.Second}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return en, got
	}
	ctx := context.Background()

	t.Run("waited for", func(t *testing.T) {
		en, got := enricher(t, http.StatusOK)
		e := newEnv(t, Options{Summarizer: en})
		e.start("s1", "ctxd")
		e.append("s1", "ctxd", recorded()...)
		d, err := e.s.Digest(ctx, "s1", "ctxd", true)
		if err != nil {
			t.Fatal(err)
		}
		if d.Method != MethodEnricher || d.Markdown != answer || d.EnricherError != "" || !slices.Equal(d.OpenGoals, []string{"run the race detector"}) {
			t.Errorf("digest %+v", d)
		}
		// The model saw the extractive digest and the events.
		if len(*got) != 2 || !strings.Contains((*got)[1], "## Open goals (1)") || !strings.Contains((*got)[1], "The gateway test needs a token file.") {
			t.Errorf("the model was asked %q", *got)
		}
		if stored := e.read(d.Ref); !strings.HasSuffix(stored, answer) || !strings.Contains(stored, "method: enricher") {
			t.Errorf("stored digest:\n%s", stored)
		}
	})
	t.Run("failing: the extractive digest stays", func(t *testing.T) {
		en, _ := enricher(t, http.StatusServiceUnavailable)
		e := newEnv(t, Options{Summarizer: en})
		e.start("s1", "ctxd")
		e.append("s1", "ctxd", recorded()...)
		d, err := e.s.Digest(ctx, "s1", "ctxd", true)
		if err != nil {
			t.Fatal(err)
		}
		if d.Method != MethodExtractive || !strings.Contains(d.EnricherError, "503") || !strings.Contains(d.Markdown, "## Open goals (1)") {
			t.Errorf("digest %+v", d)
		}
	})
	t.Run("in the background after an end", func(t *testing.T) {
		en, _ := enricher(t, http.StatusOK)
		e := newEnv(t, Options{Summarizer: en})
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { e.s.Run(runCtx); close(done) }()
		t.Cleanup(func() { stop(); <-done })
		e.start("s1", "ctxd")
		e.append("s1", "ctxd", recorded()...)
		_, d, err := e.s.End(ctx, "s1", "ctxd", false)
		if err != nil || d.Method != MethodExtractive || !d.EnricherPending {
			t.Fatalf("End = %+v, %v; want the extractive digest, the model's pending", d, err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !strings.HasSuffix(e.read(d.Ref), answer) {
			if time.Now().After(deadline) {
				t.Fatalf("the model's digest never replaced the extractive one:\n%s", e.read(d.Ref))
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func TestIsEvent(t *testing.T) {
	for _, tc := range []struct {
		drive, path string
		want        bool
	}{
		{"session", "/proj/20261127T101500Z-s1/events/e1.md", true},
		{"session", "/proj/s1/events/e1", true},
		{"session", "/proj/s1/events/2026/e1", false}, // events are flat
		{"session", "/proj/s1/digest.md", false},
		{"session", "/proj/s1/session.md", false},
		{"session", "/proj/events/e1", false}, // events is the second segment, a session's id
		{"notes", "/proj/s1/events/e1", false},
		{"agent", "/events", false},
	} {
		if got := IsEvent(tc.drive, tc.path); got != tc.want {
			t.Errorf("IsEvent(%q, %q) = %v, want %v", tc.drive, tc.path, got, tc.want)
		}
	}
}
