package daemon

import (
	"encoding/hex"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// backupChunk is the most file bytes one BackupResponse carries.
const backupChunk = 1 << 20

// Backup streams a consistent copy of the store (vfs.Store.Backup) in
// messages of at most backupChunk bytes, the summary in the last. One
// backup runs at a time; a caller that leaves stops it, which ends its
// read transaction and removes its temporary file.
func (s *adminService) Backup(_ *ctxdv1.BackupRequest, stream grpc.ServerStreamingServer[ctxdv1.BackupResponse]) error {
	ctx := stream.Context()
	if a := vfs.AccessFrom(ctx); a.Limited() {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED,
			"a backup copies the whole store, and this token is limited to "+a.String(),
			"Take the backup with a token without drives or paths (tokens[].drives, tokens[].paths in the daemon config), or use `ctxd export --under` for a part of the store.")
	}
	if !s.b.backupRunning.CompareAndSwap(false, true) {
		st, err := status.New(codes.ResourceExhausted, "a backup is already running on this daemon").WithDetails(&ctxdv1.ErrorDetail{
			NextActionHint: "Wait for the running backup to finish (one runs at a time), then call Backup again.",
		})
		if err != nil {
			return status.Error(codes.ResourceExhausted, "a backup is already running on this daemon")
		}
		return st.Err()
	}
	defer s.b.backupRunning.Store(false)
	w := &backupWriter{stream: stream, buf: make([]byte, 0, backupChunk)}
	info, err := s.b.store.Backup(ctx, w, vfs.BackupOptions{TempDir: s.b.dataDir})
	if err != nil {
		return err
	}
	return stream.Send(&ctxdv1.BackupResponse{Data: w.buf, Summary: &ctxdv1.BackupSummary{
		Size: info.Size, Sha256: hex.EncodeToString(info.SHA256[:]), OutboxSeq: int64(info.OutboxSeq), Items: info.Items,
		TakenAt: timestamppb.New(info.TakenAt), SourceStore: info.Source,
	}})
}

// backupWriter sends what is written to it in messages of backupChunk
// bytes; what is left is sent with the summary.
type backupWriter struct {
	stream grpc.ServerStreamingServer[ctxdv1.BackupResponse]
	buf    []byte
}

func (w *backupWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), backupChunk-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == backupChunk {
			if err := w.stream.Send(&ctxdv1.BackupResponse{Data: w.buf}); err != nil {
				return 0, err
			}
			w.buf = make([]byte, 0, backupChunk) // grpc may hold a sent message
		}
	}
	return n, nil
}
