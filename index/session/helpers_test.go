package session

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/assemble"
	"github.com/ctxd/ctxd/index/indexer"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// env is a real store, search engine, indexer (without a model: BM25) and
// context builder over a temporary directory, with Sessions over them.
type env struct {
	t     testing.TB
	store *vfs.Store
	eng   *search.Engine
	ix    *indexer.Indexer
	s     *Sessions
}

func newEnv(t testing.TB, opts Options) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := vfs.Open(filepath.Join(dir, "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := search.Open(st, search.Options{Dir: filepath.Join(dir, "index"), TimedDrives: []string{Drive}})
	if err != nil {
		t.Fatal(err)
	}
	ix := indexer.New(st, eng, slog.New(slog.DiscardHandler), "", "")
	ctx, cancel := context.WithCancel(context.Background())
	go ix.Run(ctx)
	t.Cleanup(func() {
		cancel()
		ix.Wait()
		eng.Close()
		st.Close()
	})
	b := assemble.NewBuilder(st, eng, assemble.Options{Tokenizer: ix.Tokenizer})
	return &env{t: t, store: st, eng: eng, ix: ix, s: New(st, eng, b, opts)}
}

// sync waits until every item is chunked and the search indexes have
// applied every change.
func (e *env) sync() {
	e.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := e.store.EmbedStats(ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		seq, err := e.store.OutboxSeq(ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		if es := e.eng.State(); st.PendingChunking == 0 && es.AppliedSeq >= seq && !es.Rebuilding {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatal("timed out waiting for the indexes")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) start(id, project string) Session {
	e.t.Helper()
	sess, _, err := e.s.Start(context.Background(), StartParams{ID: id, Project: project, Actor: "claude-code", Cwd: "/home/me/src/" + project})
	if err != nil {
		e.t.Fatalf("start %s: %v", id, err)
	}
	return sess
}

func (e *env) append(id, project string, events ...Event) []Event {
	e.t.Helper()
	_, out, err := e.s.Append(context.Background(), AppendParams{SessionID: id, Project: project, Events: events})
	if err != nil {
		e.t.Fatalf("append to %s: %v", id, err)
	}
	return out
}

func (e *env) write(ref, content string) {
	e.t.Helper()
	r, err := vfs.ParseRef(ref)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.Write(context.Background(), vfs.WriteParams{Ref: r, Content: []byte(content), IsText: true, OnConflict: vfs.ConflictOverwrite}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(ref string) string {
	e.t.Helper()
	r, err := vfs.ParseRef(ref)
	if err != nil {
		e.t.Fatal(err)
	}
	_, b, err := e.store.ReadRaw(context.Background(), r)
	if err != nil {
		e.t.Fatalf("read %s: %v", ref, err)
	}
	return string(b)
}

// recorded is a session as a Claude Code host's hooks record it: prompts,
// tool uses (shell commands, edits, a task list updated twice), a decision,
// a note and an error.
func recorded() []Event {
	return []Event{
		{Kind: KindPrompt, Text: "Fix the flaky search test in daemon/search_test.go"},
		{Kind: KindToolUse, Tool: "Bash", Text: "go test ./daemon -run TestSearch\nexit status 1"},
		{Kind: KindError, Tool: "Bash", Text: "--- FAIL: TestSearch_WriteThenSearch: the note just written was not found"},
		{Kind: KindToolUse, Tool: "TodoWrite", Text: "- [ ] reproduce the flaky test\n- [ ] make search wait for the index\n- [ ] run the race detector"},
		{Kind: KindDecision, Text: "Search waits for the index to reach the store's sequence, at most one second."},
		{Kind: KindFileChange, Tool: "Edit", Text: "Edit index/search/engine.go", Refs: []string{"/home/me/src/ctxd/index/search/engine.go"}},
		{Kind: KindFileChange, Tool: "Edit", Text: "Edit index/search/engine.go", Refs: []string{"/home/me/src/ctxd/index/search/engine.go"}},
		{Kind: KindFileChange, Tool: "Write", Text: "Write daemon/ryw_test.go", Refs: []string{"/home/me/src/ctxd/daemon/ryw_test.go"}},
		{Kind: KindToolUse, Tool: "Bash", Text: "go test ./daemon -run TestSearch"},
		{Kind: KindToolUse, Tool: "Bash", Text: "go test ./daemon -run TestSearch"},
		{Kind: KindToolUse, Tool: "TodoWrite", Text: "- [x] reproduce the flaky test\n- [x] make search wait for the index\n- [ ] run the race detector"},
		{Kind: KindNote, Text: "The gateway test needs a token file."},
	}
}
