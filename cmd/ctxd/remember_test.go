package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/session"
)

// TestMCP_Remember drives remember through the real `ctxd mcp` against the
// real daemon: a decision and then a note go to one session of the project
// the daemon derives from `ctxd mcp`'s working directory (the session keeps
// that directory), in order and with their kinds and refs, and both are
// found by SessionService.SearchEvents and by a plain context_search on the
// session drive.
func TestMCP_Remember(t *testing.T) {
	socket := startDaemon(t)
	cs := startMCP(t, socket)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	project := session.ProjectFromDir(wd)

	decision, isErr := toolText(t, cs.ClientSession, "remember", map[string]any{
		"text": "Chose the quokka importer over the wombat one: it streams.", "kind": "decision", "refs": []string{"agent:/notes/importers.md"}})
	if isErr || !strings.HasPrefix(decision["ref"].(string), "session:/"+project+"/") || decision["project"] != project || decision["session_id"] == "" {
		t.Fatalf("remember a decision: %v (project %q)", decision, project)
	}
	note, isErr := toolText(t, cs.ClientSession, "remember", map[string]any{"text": "The wombat importer times out on large archives."})
	if isErr || note["session_id"] != decision["session_id"] || note["project"] != project || note["ref"] == decision["ref"] {
		t.Fatalf("remember a note: %v, want it in the decision's session %v", note, decision["session_id"])
	}

	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sessions := ctxdv1.NewSessionServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := sessions.GetSession(ctx, &ctxdv1.GetSessionRequest{SessionId: decision["session_id"].(string), Project: project})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetSession().GetCwd() != wd {
		t.Errorf("session cwd %q, want ctxd mcp's working directory %q", got.GetSession().GetCwd(), wd)
	}
	var kinds []ctxdv1.SessionEventKind
	for _, ev := range got.GetEvents() {
		kinds = append(kinds, ev.GetKind())
	}
	want := []ctxdv1.SessionEventKind{ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION, ctxdv1.SessionEventKind_SESSION_EVENT_KIND_NOTE}
	if !slices.Equal(kinds, want) || !slices.Equal(got.GetEvents()[0].GetRefs(), []string{"agent:/notes/importers.md"}) {
		t.Fatalf("events %v, want a decision with its ref, then a note", got.GetEvents())
	}

	// Searchable: SearchEvents finds the decision by its words, and a plain
	// search of the session drive finds the note. Both wait for the index.
	for {
		found, err := sessions.SearchEvents(ctx, &ctxdv1.SearchEventsRequest{Query: "quokka importer streams", Project: project,
			Kinds: []ctxdv1.SessionEventKind{ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION}, Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25})
		if err != nil {
			t.Fatal(err)
		}
		if hits := found.GetSessions(); len(hits) > 0 {
			if hits[0].GetSession().GetId() != decision["session_id"] || hits[0].GetHits()[0].GetResult().GetRef() != decision["ref"] {
				t.Fatalf("SearchEvents: %v, want the decision %v", found, decision["ref"])
			}
			break
		}
		waitOrFail(t, ctx, "SearchEvents never found the decision")
	}
	for {
		out, isErr := toolText(t, cs.ClientSession, "context_search", map[string]any{"queries": []string{"large archives"}, "mode": "bm25",
			"filter": map[string]any{"drives": []string{"session"}}})
		if results, _ := out["results"].([]any); !isErr && len(results) > 0 {
			if ref := results[0].(map[string]any)["ref"]; ref != note["ref"] {
				t.Fatalf("context_search on the session drive: %v, want the note %v first", out, note["ref"])
			}
			break
		}
		waitOrFail(t, ctx, "context_search never found the note")
	}
}

// waitOrFail waits a moment before a condition is checked again, failing
// the test once ctx ends.
func waitOrFail(t *testing.T, ctx context.Context, msg string) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatal(msg)
	case <-time.After(20 * time.Millisecond):
	}
}
