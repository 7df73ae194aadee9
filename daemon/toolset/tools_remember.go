package toolset

import (
	"context"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// rememberKinds maps remember's kinds to the session events they append.
var rememberKinds = map[string]ctxdv1.SessionEventKind{
	"note":     ctxdv1.SessionEventKind_SESSION_EVENT_KIND_NOTE,
	"decision": ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION,
}

type rememberArgs struct {
	Text      string   `json:"text" jsonschema:"What to remember, in words; cut past limits.max_event_bytes (8 KiB)." schema:"minLength=1"`
	Kind      string   `json:"kind,omitempty" jsonschema:"decision: what was decided and why; note: anything else." schema:"default=note,enum=note|decision"`
	Refs      []string `json:"refs,omitempty" jsonschema:"Refs or file paths it is about; max 32, each max 1 KiB." schema:"maxItems=32"`
	Project   string   `json:"project,omitempty" jsonschema:"1-64 of a-z0-9._-; default from the working directory."`
	SessionID string   `json:"session_id,omitempty" jsonschema:"Default the project's open session; 1-128 of A-Za-z0-9._-."`
}

func init() {
	register(Tool{
		Name:  "remember",
		Title: "Remember a decision or note",
		Description: "Keep a decision or a note of yours in this project's session memory, where later sessions recall it and searches find it. " +
			"For documents use context_write.",
		Annotations: Annotations{}, Scopes: writeScope, core: true,
	}, func(ctx context.Context, b Backend, in *rememberArgs) (any, error) {
		// One event, in the session named or the project's open one; the
		// host's working directory lets the daemon derive the project.
		resp, err := b.Session.AppendEvents(ctx, &ctxdv1.AppendEventsRequest{
			SessionId: in.SessionID, Project: in.Project, Cwd: b.Cwd,
			Events: []*ctxdv1.SessionEvent{{Kind: rememberKinds[in.Kind], Text: in.Text, Refs: in.Refs}},
		})
		if err != nil {
			return nil, err
		}
		out := struct {
			Ref       string `json:"ref"`
			SessionID string `json:"session_id"`
			Project   string `json:"project"`
			Truncated bool   `json:"truncated,omitempty"`
		}{SessionID: resp.GetSession().GetId(), Project: resp.GetSession().GetProject()}
		if evs := resp.GetEvents(); len(evs) > 0 {
			out.Ref, out.Truncated = evs[0].GetRef(), evs[0].GetTruncated()
		}
		return out, nil
	})
}
