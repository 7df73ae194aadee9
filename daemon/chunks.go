package daemon

import (
	"context"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// Chunks reports how an item is cut for search and which vectors exist.
func (s *vfsService) Chunks(ctx context.Context, req *ctxdv1.ChunksRequest) (*ctxdv1.ChunksResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	rep, err := s.b.store.ChunkReport(ctx, ref)
	if err != nil {
		return nil, err
	}
	resp := &ctxdv1.ChunksResponse{Questions: questionsToProto(rep.Questions)}
	for _, c := range rep.Chunks {
		resp.Chunks = append(resp.Chunks, &ctxdv1.ChunkInfo{
			StartByte: int64(c.Start), EndByte: int64(c.End), StartLine: int64(c.StartLine), EndLine: int64(c.EndLine),
			Heading: c.Heading, Tokens: int32(c.Tokens), Embedded: c.Embedded, GeneratedQuestions: questionsToProto(c.Questions),
		})
	}
	return resp, nil
}

func questionsToProto(qs []vfs.QuestionInfo) []*ctxdv1.QuestionInfo {
	out := make([]*ctxdv1.QuestionInfo, len(qs))
	for i, q := range qs {
		out[i] = &ctxdv1.QuestionInfo{Text: q.Text, Embedded: q.Embedded}
	}
	return out
}
