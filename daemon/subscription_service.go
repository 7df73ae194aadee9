package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/index/standing"
	"github.com/ctxd/ctxd/internal/runes"
	"github.com/ctxd/ctxd/vfs"
)

// subscriptionService answers SubscriptionService calls with the standing
// query hub.
type subscriptionService struct {
	ctxdv1.UnimplementedSubscriptionServiceServer
	b *backend
}

// maxQueryWordBytes is the bytes a standing query may spend per word on
// average (StandingQuery.queries: max_query_terms words of 16 bytes).
const maxQueryWordBytes = 16

// Subscribe streams the matches of an inline standing query, or of a
// durable subscription, until the caller leaves.
func (s *subscriptionService) Subscribe(req *ctxdv1.SubscribeRequest, stream grpc.ServerStreamingServer[ctxdv1.SubscribeResponse]) error {
	ctx := stream.Context()
	if req.GetName() != "" && req.GetQuery() != nil {
		return invalidSearch("Subscribe takes a query or the name of a durable subscription, not both.", "pass query for a subscription live for the stream, or name for a durable one (`ctxd subscribe --name`)")
	}
	if req.GetName() != "" {
		return s.subscribeDurable(ctx, req, stream)
	}
	q, err := s.b.standingQuery(req.GetQuery())
	if err != nil {
		return err
	}
	o := s.b.streamOptions(ctx)
	if tok := req.GetResumeToken(); tok != "" {
		seq, err := standing.ParseToken(tok)
		if err != nil {
			return invalidSearch(err.Error(), "pass the resume_token of a push this daemon sent (or of Ready), or none to start from now")
		}
		o.Resume, o.HasResume = seq, true
	}
	sub, err := s.b.subs.Subscribe(ctx, q, o)
	if err != nil {
		return s.b.subscribeError(err)
	}
	defer sub.Close()
	return streamEvents(ctx, sub, stream, nil)
}

// streamOptions are the stream settings of the caller: its access, its
// token's name and the limits.
func (b *backend) streamOptions(ctx context.Context) standing.SubscribeOptions {
	return standing.SubscribeOptions{
		Access: vfs.AccessFrom(ctx), Owner: vfs.ActorFrom(ctx).Name,
		MaxPerOwner: b.limits.MaxSubscriptionsPerToken, MaxTotal: b.limits.MaxSubscriptions,
		Pending: b.limits.MaxSubscriptionPending,
	}
}

// streamEvents sends Ready and then sub's events until the stream ends;
// sent, when set, is told of each match sent (a durable subscription acks it).
func streamEvents(ctx context.Context, sub *standing.Sub, stream grpc.ServerStreamingServer[ctxdv1.SubscribeResponse], sent func(*standing.Match) error) error {
	last := standing.Token(sub.Ready())
	if err := stream.Send(&ctxdv1.SubscribeResponse{Event: &ctxdv1.SubscribeResponse_Ready{Ready: &ctxdv1.SubscriptionReady{
		ResumeToken: last, Subscription: sub.ID(),
	}}}); err != nil {
		return err
	}
	for {
		ev, err := sub.Next(ctx)
		switch {
		case errors.Is(err, standing.ErrCutOff):
			return slowConsumer(last)
		case errors.Is(err, standing.ErrClosed):
			return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, "the daemon is stopping",
				fmt.Sprintf("Reconnect once it is back with resume_token %q (`ctxd subscribe --resume %s`) to get what matched meanwhile.", last, last))
		case err != nil:
			return err
		}
		var out *ctxdv1.SubscribeResponse
		if ev.Gap != nil {
			out = &ctxdv1.SubscribeResponse{Event: &ctxdv1.SubscribeResponse_Gap{Gap: gapToProto(ev.Gap)}}
		} else {
			m := matchToProto(ev.Match)
			last = m.ResumeToken
			out = &ctxdv1.SubscribeResponse{Event: &ctxdv1.SubscribeResponse_Match{Match: m}}
		}
		if err := stream.Send(out); err != nil {
			return err
		}
		if sent != nil && ev.Match != nil {
			if err := sent(ev.Match); err != nil {
				return err
			}
		}
	}
}

// slowConsumer ends a stream whose consumer fell behind.
func slowConsumer(last string) error {
	msg := "subscription stream cut off: the client did not read its pushes as fast as they matched, and more than limits.max_subscription_pending waited"
	st, err := status.New(codes.ResourceExhausted, msg).WithDetails(&ctxdv1.ErrorDetail{
		Type: ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE,
		NextActionHint: fmt.Sprintf("Reconnect with resume_token %q (the last push delivered; `ctxd subscribe --resume %s`) to get what was missed, and read the stream without blocking on other work; or narrow the query (a filter, a higher min_score).",
			last, last),
	})
	if err != nil {
		return status.Error(codes.ResourceExhausted, msg)
	}
	return st.Err()
}

// subscribeError converts the hub's registration errors.
func (b *backend) subscribeError(err error) error {
	var le *standing.LimitError
	switch {
	case errors.As(err, &le) && le.PerOwner:
		return limitError("max_subscriptions_per_token", le.Error(), "close a stream or delete a durable subscription this token no longer needs (`ctxd subscription rm`)")
	case errors.As(err, &le):
		return limitError("max_subscriptions", le.Error(), "close streams or delete durable subscriptions no longer needed (`ctxd subscription list`, `ctxd subscription rm`)")
	case errors.Is(err, standing.ErrNoModel):
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, err.Error(),
			"Subscribe in BM25 mode, or wait for the embedding model (`ctxd status` says when it is available); HYBRID subscribes with its lexical leg alone meanwhile.")
	case errors.Is(err, standing.ErrInvalid):
		return invalidSearch(err.Error(), "fix the standing query: see the StandingQuery field docs; 0 means the default for every number")
	}
	return err
}

// standingQuery converts and bounds a StandingQuery.
func (b *backend) standingQuery(p *ctxdv1.StandingQuery) (standing.Query, error) {
	lim := b.limits
	var q standing.Query
	if len(p.GetQueries()) == 0 {
		return q, invalidSearch("A standing query needs at least one query text.", "pass queries (`ctxd subscribe QUERY...`)")
	}
	if n := len(p.GetQueries()); n > lim.MaxSubscriptionQueries {
		return q, overLimit("max_subscription_queries", fmt.Sprintf("%d queries in one standing query; at most %d.", n, lim.MaxSubscriptionQueries))
	}
	for i, sq := range p.GetQueries() {
		text := strings.TrimSpace(sq.GetText())
		if text == "" || len(sq.GetVector()) > 0 {
			return q, invalidSearch(fmt.Sprintf("Query %d of the standing query has no text, or a vector.", i), "give every query a text; a standing query's vector is the model's embedding of it")
		}
		if words := len(strings.Fields(text)); words > lim.MaxQueryTerms || len(text) > lim.MaxQueryTerms*maxQueryWordBytes {
			return q, limitError("max_query_terms", fmt.Sprintf("query %d of the standing query has %d words in %d bytes; at most %d words, %d bytes.", i, words, len(text), lim.MaxQueryTerms, lim.MaxQueryTerms*maxQueryWordBytes),
				"keep a standing query to its key words; split a wider interest into several queries")
		}
		q.Texts = append(q.Texts, text)
	}
	q.Filter = filterFromProto(p.GetFilter())
	for _, vals := range [][]string{q.Filter.Drives, q.Filter.PathPrefixes, q.Filter.Mimes, q.Filter.Tags} {
		if len(vals) > lim.MaxFilterValues {
			return q, overLimit("max_filter_values", fmt.Sprintf("a filter list has %d values; at most %d.", len(vals), lim.MaxFilterValues))
		}
	}
	switch p.GetMode() {
	case ctxdv1.SearchMode_SEARCH_MODE_UNSPECIFIED, ctxdv1.SearchMode_SEARCH_MODE_BM25:
		q.Mode = search.BM25
	case ctxdv1.SearchMode_SEARCH_MODE_HYBRID:
		q.Mode = search.Hybrid
	case ctxdv1.SearchMode_SEARCH_MODE_VECTOR:
		q.Mode = search.Vector
	default:
		return q, invalidSearch("Unknown search mode.", "use BM25 (the default), HYBRID or VECTOR")
	}
	q.MinScore = p.GetMinScore()
	if !(q.MinScore >= 0 && q.MinScore <= 1) {
		return q, invalidSearch(fmt.Sprintf("min_score %v is outside [0, 1].", q.MinScore), "pass a min_score in (0, 1] (`ctxd subscribe --min-score`), or 0 for the defaults: 1 (every term) for BM25, 0.5 for the vector leg")
	}
	if n := int(p.GetSnippetLength()); n < 0 || n > lim.MaxSnippetLength {
		return q, overLimit("max_snippet_length", fmt.Sprintf("snippet_length %d; at most %d.", n, lim.MaxSnippetLength))
	}
	q.SnippetChars = int(p.GetSnippetLength())
	return q, nil
}

// standingQueryToProto converts a standing query back, for listings.
func standingQueryToProto(q standing.Query) *ctxdv1.StandingQuery {
	p := &ctxdv1.StandingQuery{MinScore: q.MinScore, SnippetLength: int32(q.SnippetChars), Mode: modesToProto[q.Mode]}
	for _, t := range q.Texts {
		p.Queries = append(p.Queries, &ctxdv1.SearchQuery{Text: t})
	}
	f := q.Filter
	if len(f.Drives)+len(f.PathPrefixes)+len(f.Mimes)+len(f.Tags) > 0 {
		p.Filter = &ctxdv1.SearchFilter{Drives: f.Drives, PathPrefixes: f.PathPrefixes, MimeTypes: f.Mimes, Tags: f.Tags}
	}
	return p
}

// changeKinds maps history's operations to change kinds.
var changeKinds = map[string]ctxdv1.ChangeKind{
	vfs.OpWrite: ctxdv1.ChangeKind_CHANGE_KIND_WRITE, vfs.OpEdit: ctxdv1.ChangeKind_CHANGE_KIND_EDIT,
	vfs.OpRefresh: ctxdv1.ChangeKind_CHANGE_KIND_REFRESH, vfs.OpMove: ctxdv1.ChangeKind_CHANGE_KIND_MOVE,
	vfs.OpCopy: ctxdv1.ChangeKind_CHANGE_KIND_MOVE, vfs.OpRevert: ctxdv1.ChangeKind_CHANGE_KIND_REVERT,
}

// ingestDrives are the drives whose items come from a source: a first
// write of one is an ingest.
var ingestDrives = map[string]bool{"disk": true, "url": true, "github": true}

// changeKind is the kind of change c of an item on drive.
func changeKind(c standing.Change, drive string) ctxdv1.ChangeKind {
	switch k, ok := changeKinds[c.Op]; {
	case c.Op == "":
		return ctxdv1.ChangeKind_CHANGE_KIND_UNSPECIFIED
	case c.Op == vfs.OpWrite && c.Rev == 1 && ingestDrives[drive]:
		return ctxdv1.ChangeKind_CHANGE_KIND_INGEST
	case ok:
		return k
	}
	return ctxdv1.ChangeKind_CHANGE_KIND_OTHER
}

// matchToProto converts a push.
func matchToProto(m *standing.Match) *ctxdv1.SubscriptionMatch {
	c := m.Change
	return &ctxdv1.SubscriptionMatch{
		Result: searchResultToProto(&m.Result),
		Change: &ctxdv1.ItemChange{
			Kind: changeKind(c, m.Result.Drive), Op: c.Op, Actor: c.Actor, Rev: c.Rev, Time: timeToProto(c.Time),
			ReplicaId: c.ReplicaID, Remote: c.Remote, Sequence: c.Seq,
		},
		ResumeToken: standing.Token(c.Seq),
	}
}

func gapToProto(g *standing.Gap) *ctxdv1.SubscriptionGap {
	return &ctxdv1.SubscriptionGap{FromSequence: g.From, ToSequence: g.To, Dropped: g.Dropped, Reason: g.Reason}
}

// embedQuery embeds a standing query's text with the model, when it runs.
func (b *backend) embedQuery(ctx context.Context, text string) ([]float32, error) {
	w := b.ix.Available()
	if w == nil {
		return nil, errors.New("the embedding model is not available")
	}
	v, err := w.EmbedAt(ctx, []string{runes.Cut(text, w.Spec().MaxTokens*windowBytesPerToken)}, embed.Query)
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// subscriptionCounts is what Status reports of the standing queries.
func (b *backend) subscriptionCounts() *ctxdv1.SubscriptionCounts {
	durable, streams, cut := b.subs.Counts()
	return &ctxdv1.SubscriptionCounts{Durable: int64(durable), Streams: int64(streams), CutOff: cut}
}
