package toolset_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// recordingSessions is a SessionService client that records AppendEvents
// requests and answers as the daemon documents it; any other method panics
// (remember calls none).
type recordingSessions struct {
	ctxdv1.SessionServiceClient
	reqs []*ctxdv1.AppendEventsRequest
}

func (r *recordingSessions) AppendEvents(_ context.Context, in *ctxdv1.AppendEventsRequest, _ ...grpc.CallOption) (*ctxdv1.AppendEventsResponse, error) {
	r.reqs = append(r.reqs, in)
	ev := proto.CloneOf(in.Events[0])
	ev.Ref = "session:/proj/s1/events/0001-" + strings.ToLower(strings.TrimPrefix(ev.Kind.String(), "SESSION_EVENT_KIND_")) + ".md"
	ev.Truncated = len(ev.Text) > 20
	return &ctxdv1.AppendEventsResponse{
		Session: &ctxdv1.Session{Id: "s1", Project: "proj"},
		Events:  []*ctxdv1.SessionEvent{ev},
	}, nil
}

// TestCall_RememberArguments checks how remember turns its arguments into
// one AppendEvents request (kind, default note, refs, project, session, the
// backend's working directory) and its result, and that arguments the
// schema refuses never reach the daemon.
func TestCall_RememberArguments(t *testing.T) {
	rec := &recordingSessions{}
	b := toolset.Backend{Session: rec, Cwd: "/home/me/proj"}
	for _, c := range []struct {
		name, args string
		want       *ctxdv1.AppendEventsRequest
		wantOut    map[string]any
	}{
		{"a decision with everything", `{"text":"Chose bbolt for the store.","kind":"decision","refs":["disk:/home/me/proj/store.go"],"project":"proj","session_id":"s1"}`,
			&ctxdv1.AppendEventsRequest{SessionId: "s1", Project: "proj", Cwd: "/home/me/proj", Events: []*ctxdv1.SessionEvent{{
				Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION, Text: "Chose bbolt for the store.", Refs: []string{"disk:/home/me/proj/store.go"}}}},
			map[string]any{"ref": "session:/proj/s1/events/0001-decision.md", "session_id": "s1", "project": "proj", "truncated": true}},
		{"a note by default, session and project left to the daemon", `{"text":"Tests need -race."}`,
			&ctxdv1.AppendEventsRequest{Cwd: "/home/me/proj", Events: []*ctxdv1.SessionEvent{{
				Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_NOTE, Text: "Tests need -race."}}},
			map[string]any{"ref": "session:/proj/s1/events/0001-note.md", "session_id": "s1", "project": "proj"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec.reqs = nil
			r := toolset.Call(context.Background(), b, "remember", json.RawMessage(c.args))
			if r.IsError || len(rec.reqs) != 1 {
				t.Fatalf("remember(%s): %s, %d requests", c.args, r.Text, len(rec.reqs))
			}
			if !proto.Equal(rec.reqs[0], c.want) {
				t.Errorf("request %v, want %v", rec.reqs[0], c.want)
			}
			var out map[string]any
			if err := json.Unmarshal([]byte(r.Text), &out); err != nil || len(out) != len(c.wantOut) {
				t.Fatalf("result %s, want %v", r.Text, c.wantOut)
			}
			for k, v := range c.wantOut {
				if out[k] != v {
					t.Errorf("result %s: %s is %v, want %v", r.Text, k, out[k], v)
				}
			}
		})
	}
	tooMany, _ := json.Marshal(map[string]any{"text": "x", "refs": make([]string, 33)})
	for _, c := range []struct{ name, args, field string }{
		{"no text", `{"kind":"note"}`, `"text"`},
		{"empty text", `{"text":""}`, "text"},
		{"another kind", `{"text":"x","kind":"todo"}`, "kind"},
		{"33 refs", string(tooMany), "refs"},
		{"an unknown argument", `{"text":"x","tags":["a"]}`, `"tags"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec.reqs = nil
			r := toolset.Call(context.Background(), b, "remember", json.RawMessage(c.args))
			var out map[string]any
			_ = json.Unmarshal([]byte(r.Text), &out)
			if !r.IsError || out["error_type"] != "invalid_argument" || !strings.Contains(out["message"].(string), c.field) {
				t.Errorf("remember(%s): %s, want invalid_argument naming %s", c.args, r.Text, c.field)
			}
			if len(rec.reqs) != 0 {
				t.Errorf("remember(%s) reached the daemon", c.args)
			}
		})
	}
}
