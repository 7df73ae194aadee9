package daemon

import (
	"context"
	"fmt"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/session"
)

// sessionService adapts SessionService calls onto package session.
type sessionService struct {
	ctxdv1.UnimplementedSessionServiceServer
	b *backend
}

func (s *sessionService) StartSession(ctx context.Context, req *ctxdv1.StartSessionRequest) (*ctxdv1.StartSessionResponse, error) {
	sess, created, err := s.b.sessions.Start(ctx, session.StartParams{ID: req.GetId(), Project: req.GetProject(), Actor: req.GetActor(), Cwd: req.GetCwd()})
	if err != nil {
		return nil, err
	}
	return &ctxdv1.StartSessionResponse{Session: SessionToProto(&sess), Created: created}, nil
}

func (s *sessionService) AppendEvents(ctx context.Context, req *ctxdv1.AppendEventsRequest) (*ctxdv1.AppendEventsResponse, error) {
	events := make([]session.Event, len(req.GetEvents()))
	for i, e := range req.GetEvents() {
		events[i] = SessionEventFromProto(e)
	}
	sess, stored, err := s.b.sessions.Append(ctx, session.AppendParams{SessionID: req.GetSessionId(), Project: req.GetProject(), Cwd: req.GetCwd(), Events: events})
	if err != nil {
		return nil, err
	}
	out := &ctxdv1.AppendEventsResponse{Session: SessionToProto(&sess)}
	for i := range stored {
		out.Events = append(out.Events, SessionEventToProto(&stored[i]))
	}
	return out, nil
}

func (s *sessionService) EndSession(ctx context.Context, req *ctxdv1.EndSessionRequest) (*ctxdv1.EndSessionResponse, error) {
	sess, d, err := s.b.sessions.End(ctx, req.GetSessionId(), req.GetProject(), req.GetWaitForEnricher())
	if err != nil {
		return nil, err
	}
	return &ctxdv1.EndSessionResponse{Session: SessionToProto(&sess), Digest: DigestToProto(&d)}, nil
}

func (s *sessionService) DigestSession(ctx context.Context, req *ctxdv1.DigestSessionRequest) (*ctxdv1.DigestSessionResponse, error) {
	d, err := s.b.sessions.Digest(ctx, req.GetSessionId(), req.GetProject(), req.GetWaitForEnricher())
	if err != nil {
		return nil, err
	}
	return &ctxdv1.DigestSessionResponse{Digest: DigestToProto(&d)}, nil
}

func (s *sessionService) GetSession(ctx context.Context, req *ctxdv1.GetSessionRequest) (*ctxdv1.GetSessionResponse, error) {
	if n := int(req.GetLimit()); n < 0 || n > s.b.limits.MaxListLimit {
		return nil, limitError("max_list_limit", fmt.Sprintf("The limit %d is outside 0 to %d.", n, s.b.limits.MaxListLimit), "ask for fewer events (limit, `ctxd session show --limit`) and page with next_page_token")
	}
	sess, events, next, digest, err := s.b.sessions.Get(ctx, req.GetSessionId(), req.GetProject(), int(req.GetLimit()), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	out := &ctxdv1.GetSessionResponse{Session: SessionToProto(&sess), NextPageToken: next, Digest: digest}
	for i := range events {
		out.Events = append(out.Events, SessionEventToProto(&events[i]))
	}
	return out, nil
}

func (s *sessionService) ListSessions(ctx context.Context, req *ctxdv1.ListSessionsRequest) (*ctxdv1.ListSessionsResponse, error) {
	if n := int(req.GetLimit()); n < 0 || n > s.b.limits.MaxListLimit {
		return nil, limitError("max_list_limit", fmt.Sprintf("The limit %d is outside 0 to %d.", n, s.b.limits.MaxListLimit), "ask for fewer sessions (limit, `ctxd session list --limit`), or only recent ones (since)")
	}
	list, err := s.b.sessions.List(ctx, req.GetProject(), int(req.GetLimit()), timeFromProto(req.GetSince()))
	if err != nil {
		return nil, err
	}
	out := &ctxdv1.ListSessionsResponse{}
	for i := range list {
		out.Sessions = append(out.Sessions, SessionToProto(&list[i]))
	}
	return out, nil
}

func (s *sessionService) SearchEvents(ctx context.Context, req *ctxdv1.SearchEventsRequest) (*ctxdv1.SearchEventsResponse, error) {
	if n, l := len(req.GetSessionIds()), s.b.limits.MaxFilterValues; n > l {
		return nil, overLimit("max_filter_values", fmt.Sprintf("The search names %d sessions; at most %d are allowed.", n, l))
	}
	if len(req.GetKinds()) > len(session.Kinds) {
		return nil, invalidSearch(fmt.Sprintf("The search names %d kinds; there are %d.", len(req.GetKinds()), len(session.Kinds)), "name each kind once")
	}
	sr, err := s.b.searchRequest(ctx, &ctxdv1.SearchRequest{Mode: req.GetMode(), Limit: req.GetLimit()})
	if err != nil {
		return nil, err
	}
	p := session.SearchParams{Query: req.GetQuery(), Project: req.GetProject(), SessionIDs: req.GetSessionIds(),
		After: timeFromProto(req.GetAfter()), Before: timeFromProto(req.GetBefore()), Search: sr}
	for _, k := range req.GetKinds() {
		kind, ok := kindsFromProto[k]
		if !ok {
			return nil, invalidSearch("A kind is not set or unknown.", "use PROMPT, TOOL_USE, DECISION, ERROR, NOTE, FILE_CHANGE or SUMMARY")
		}
		p.Kinds = append(p.Kinds, kind)
	}
	found, err := s.b.sessions.Search(ctx, p)
	if err != nil {
		return nil, searchError(err)
	}
	out := &ctxdv1.SearchEventsResponse{ModeUsed: modesToProto[found.Mode], ModeReason: found.ModeReason,
		Stale: found.Stale != "", StaleReason: found.Stale}
	var ids []string
	for _, g := range found.Groups {
		pg := &ctxdv1.SessionResults{Session: SessionToProto(&g.Session), Score: g.Score}
		for _, h := range g.Hits {
			pg.Hits = append(pg.Hits, &ctxdv1.SessionHit{Result: searchResultToProto(&h.Result), Event: SessionEventToProto(&h.Event)})
			ids = append(ids, h.Result.ItemID)
		}
		out.Sessions = append(out.Sessions, pg)
	}
	s.b.usage.Record(ids)
	return out, nil
}

func (s *sessionService) Recall(ctx context.Context, req *ctxdv1.RecallRequest) (*ctxdv1.RecallResponse, error) {
	sr, err := s.b.searchRequest(ctx, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25})
	if err != nil {
		return nil, err
	}
	res, project, err := s.b.sessions.Recall(ctx, session.RecallParams{
		Project: req.GetProject(), Cwd: req.GetCwd(), SessionID: req.GetSessionId(), Prompt: req.GetPrompt(),
		Budget: int(req.GetBudget()), Digests: int(req.GetDigests()), Roots: req.GetRoots(), Search: sr,
	})
	if err := s.b.assembled(&res, err); err != nil {
		return nil, err
	}
	c := ContextToProto(&res)
	return &ctxdv1.RecallResponse{Markdown: c.Markdown, Sections: c.Sections, Omitted: c.Omitted, TokensUsed: c.TokensUsed, Project: project, Warnings: c.Warnings,
		Stale: c.Stale, StaleReason: c.StaleReason}, nil
}
