package daemon

import (
	"context"
	"errors"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/assemble"
	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/vfs"
)

// contextService adapts ContextService calls onto package assemble.
type contextService struct {
	ctxdv1.UnimplementedContextServiceServer
	b *backend
}

func (s *contextService) Init(ctx context.Context, req *ctxdv1.InitRequest) (*ctxdv1.InitResponse, error) {
	root := req.GetRoot()
	if root == "" {
		root = s.b.contextRoots[0]
	}
	created, existing, err := assemble.Init(ctx, s.b.store, root)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.InitResponse{Created: created, Existing: existing}, nil
}

func (s *contextService) Update(ctx context.Context, req *ctxdv1.UpdateRequest) (*ctxdv1.UpdateResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	res, err := assemble.Update(ctx, s.b.store, ref, []byte(req.GetBody()), req.GetExpectedContentHash())
	if err != nil {
		return nil, err
	}
	return &ctxdv1.UpdateResponse{Item: ItemToProto(&res.Item), Warnings: res.Warnings}, nil
}

// assembleLimitKeys maps the bounds of a BuildContext request to their
// config keys.
var assembleLimitKeys = map[assemble.Limit]string{
	assemble.LimitBudget:    "max_token_budget",
	assemble.LimitTaskBytes: "max_query_bytes",
	assemble.LimitRoots:     "max_filter_values",
}

func (s *contextService) BuildContext(ctx context.Context, req *ctxdv1.BuildContextRequest) (*ctxdv1.BuildContextResponse, error) {
	sr, err := s.b.searchRequest(ctx, &ctxdv1.SearchRequest{Mode: req.GetMode(), Filter: req.GetFilter(), Limit: req.GetLimit()})
	if err != nil {
		return nil, err
	}
	res, err := s.b.builder.Build(ctx, assemble.Request{Task: req.GetTask(), Budget: int(req.GetBudget()), Roots: req.GetRoots(), Search: sr})
	if err := s.b.assembled(&res, err); err != nil {
		return nil, err
	}
	return ContextToProto(&res), nil
}

// assembled gives the errors of assembling a context (Build, a session's
// Recall) their API types, and records its chunks as retrievals that
// prompt re-validation of stale pages, as Search does.
func (b *backend) assembled(res *assemble.Result, err error) error {
	var le *assemble.LimitError
	if errors.As(err, &le) {
		return limitError(assembleLimitKeys[le.Limit], le.Message, le.Hint)
	}
	if err != nil {
		return searchError(err)
	}
	var ids, fetched []string
	for _, sec := range res.Sections {
		if sec.Kind == assemble.KindChunk {
			ids = append(ids, sec.Item.ID)
			if ingest.IsURL(sec.Item.SourceURL) {
				fetched = append(fetched, sec.Item.ID)
			}
		}
	}
	b.usage.Record(ids)
	b.fresh.Notice(fetched)
	return nil
}

func (s *contextService) Compact(ctx context.Context, req *ctxdv1.CompactRequest) (*ctxdv1.CompactResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	r := assemble.CompactRequest{Ref: ref, MinTokens: int(req.GetMinTokens()), TargetTokens: int(req.GetTargetTokens()),
		DryRun: req.GetDryRun(), ExpectedHash: req.GetExpectedContentHash()}
	if tok := s.b.ix.Tokenizer(); tok != nil {
		r.Count = tok.Count
	}
	if s.b.enricher != nil {
		r.Summarizer = s.b.enricher
	}
	res, err := assemble.Compact(ctx, s.b.store, r)
	if err != nil {
		return nil, err
	}
	out := &ctxdv1.CompactResponse{Compacted: res.Compacted, TokensBefore: int32(res.TokensBefore), TokensAfter: int32(res.TokensAfter),
		Body: res.Body, Method: res.Method, PreviousRev: res.PreviousRev, EnricherError: res.EnricherError}
	if res.Item.ID != "" {
		out.Item = ItemToProto(&res.Item)
	}
	return out, nil
}
