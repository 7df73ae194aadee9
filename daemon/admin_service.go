package daemon

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Reasons reported while the search and embedding layers are not built.
const (
	noEmbeddingReason = "this build has no embedding model; embeddings arrive with the chunking and embedding layer"
	noIndexReason     = "this build has no search index; the BM25 and vector indexes arrive with the search layer"
)

// adminService reports on the daemon.
type adminService struct {
	ctxdv1.UnimplementedAdminServiceServer
	b *backend
}

func (s *adminService) Status(ctx context.Context, _ *ctxdv1.StatusRequest) (*ctxdv1.StatusResponse, error) {
	st, err := s.b.store.Stats(ctx)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.StatusResponse{
		Version:        Version,
		StartedAt:      timestamppb.New(s.b.started),
		DataDir:        s.b.dataDir,
		ItemCount:      st.ItemCount,
		SizeBytes:      st.Size,
		StoreFileBytes: st.FileSize,
		Drives:         DrivesToProto(st.Drives),
		Embedding:      &ctxdv1.EmbeddingStatus{UnavailableReason: noEmbeddingReason},
		Index:          &ctxdv1.IndexStatus{UnavailableReason: noIndexReason},
	}, nil
}
