package daemon

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// noIndexReason is reported while the search layer is not built.
const noIndexReason = "this build has no search index; the BM25 and vector indexes arrive with the search layer"

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
	es, err := s.b.store.EmbedStats(ctx)
	if err != nil {
		return nil, err
	}
	spec, available, reason, rate := s.b.ix.status()
	return &ctxdv1.StatusResponse{
		Version:        Version,
		StartedAt:      timestamppb.New(s.b.started),
		DataDir:        s.b.dataDir,
		ItemCount:      st.ItemCount,
		SizeBytes:      st.Size,
		StoreFileBytes: st.FileSize,
		Drives:         DrivesToProto(st.Drives),
		Embedding: &ctxdv1.EmbeddingStatus{
			Available:         available,
			UnavailableReason: reason,
			ModelId:           spec.ID,
			Dimensions:        int32(spec.Dimensions),
			EmbeddedChunks:    es.Vectors,
			PendingChunks:     es.PendingEmbed,
			PendingItems:      es.PendingChunking,
			ChunksPerSecond:   rate,
		},
		Index: &ctxdv1.IndexStatus{UnavailableReason: noIndexReason, ChunkCount: es.Chunks},
	}, nil
}
