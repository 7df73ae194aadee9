package daemon

import (
	"google.golang.org/grpc"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Ingestion from files and URLs is part of API v1 but not built yet. It
// answers UNIMPLEMENTED with a message saying what is missing, rather than
// grpc's bare "method not implemented".

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
