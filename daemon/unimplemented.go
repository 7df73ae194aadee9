package daemon

import (
	"context"

	"google.golang.org/grpc"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Search and ingestion from files and URLs are part of API v1 but not built
// yet. They answer UNIMPLEMENTED with a message saying what is missing, rather than
// grpc's bare "method not implemented".

type searchService struct {
	ctxdv1.UnimplementedSearchServiceServer
}

func (searchService) Search(context.Context, *ctxdv1.SearchRequest) (*ctxdv1.SearchResponse, error) {
	return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_UNIMPLEMENTED,
		"Search is not built yet: it needs the chunk, BM25 and vector indexes",
		"Use VfsService.Tree, List and Read to browse items until search lands.")
}

func (*ingestService) Add(*ctxdv1.AddRequest, grpc.ServerStreamingServer[ctxdv1.AddResponse]) error {
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNIMPLEMENTED,
		"Add is not built yet: file, tree and URL ingestion arrive with the ingest layer",
		"Use VfsService.Write to store content directly.")
}

func (*ingestService) Refresh(*ctxdv1.RefreshRequest, grpc.ServerStreamingServer[ctxdv1.RefreshResponse]) error {
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNIMPLEMENTED,
		"Refresh is not built yet: it needs ingested sources to re-read",
		"Use VfsService.Write with on_conflict OVERWRITE to replace content.")
}
