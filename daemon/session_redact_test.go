package daemon

import (
	"context"
	"strings"
	"testing"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestSessionService_RedactsEvents: an event appended by any caller, not
// only a hook that redacts on its side, is stored with its secrets
// redacted by ingest.Redact.
func TestSessionService_RedactsEvents(t *testing.T) {
	d := mustStart(t, testConfig(t))
	sc := ctxdv1.NewSessionServiceClient(dial(t, "unix://"+d.cfg.Socket))
	ctx := context.Background()
	key := "sk-proj-" + strings.Repeat("Xy7_", 12)
	resp, err := sc.AppendEvents(ctx, &ctxdv1.AppendEventsRequest{SessionId: "redact-1", Project: "p", Events: []*ctxdv1.SessionEvent{
		{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_TOOL_USE, Tool: "Bash", Text: "curl -H 'Authorization: Bearer " + key + "' https://api.example.com"},
		{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_NOTE, Text: "the staging DB is postgres://app:hunter2@db/staging"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := sc.GetSession(ctx, &ctxdv1.GetSessionRequest{SessionId: "redact-1", Project: "p"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"curl -H 'Authorization: Bearer [REDACTED]' https://api.example.com", "the staging DB is postgres://app:[REDACTED]@db/staging"}
	for i, evs := range [][]*ctxdv1.SessionEvent{resp.Events, got.Events} {
		if len(evs) != 2 || evs[0].Text != want[0] || evs[1].Text != want[1] {
			t.Errorf("events (%d): %v", i, evs)
		}
	}
}
