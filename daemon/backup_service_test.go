package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// TestAdminService_Backup streams a backup and checks its messages (at
// most 1 MiB, the summary in the last only and true to the bytes), that a
// second backup is refused while one runs, and that a caller who leaves
// stops the first: its slot and temporary file are freed and the next
// backup completes. On bbolt and on PostgreSQL.
func TestAdminService_Backup(t *testing.T) {
	for _, backend := range []string{"bolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			cfg := testConfig(t)
			if backend == "postgres" {
				_, cfg.Store = pgStore(t)
			}
			d := mustStart(t, cfg)
			vc := d.vfsClient(t)
			admin := ctxdv1.NewAdminServiceClient(dial(t, "unix://"+cfg.Socket))
			// Incompressible content well over the transport's windows, so
			// that a backup nobody reads stays running.
			for i := range 6 {
				data := make([]byte, 4<<20)
				rand.Read(data)
				if _, err := vc.Write(context.Background(), &ctxdv1.WriteRequest{Ref: fmt.Sprintf("files:/%d.bin", i), Body: &ctxdv1.WriteRequest_Data{Data: data}}); err != nil {
					t.Fatal(err)
				}
			}
			writeText(t, vc, "notes:/a.md", "# A\n")

			data, sum := readBackup(t, admin)
			if sum.Size != int64(len(data)) || sum.Sha256 != sha256Hex(string(data)) {
				t.Errorf("summary says %d bytes, sha %s; received %d bytes", sum.Size, sum.Sha256, len(data))
			}
			if sum.Items != 7 || sum.OutboxSeq == 0 || sum.SourceStore != backend || sum.TakenAt.AsTime().IsZero() {
				t.Errorf("summary = %v; want 7 items, a sequence, store %s, a time", sum, backend)
			}
			file := filepath.Join(t.TempDir(), "b.db")
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if info, err := vfs.InspectBackup(context.Background(), file); err != nil || info.Items != 7 || info.OutboxSeq != uint64(sum.OutboxSeq) {
				t.Errorf("InspectBackup of the streamed file = %+v, %v", info, err)
			}

			// A backup whose caller reads one message and then waits.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			first, err := admin.Backup(ctx, &ctxdv1.BackupRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := first.Recv(); err != nil {
				t.Fatal(err)
			}
			second, err := admin.Backup(context.Background(), &ctxdv1.BackupRequest{})
			if err == nil {
				_, err = second.Recv()
			}
			if st, _ := status.FromError(err); st.Code() != codes.ResourceExhausted || !hasHint(st, "Wait for the running backup") {
				t.Errorf("a second backup while one runs: %v; want RESOURCE_EXHAUSTED with a hint", err)
			}
			cancel()
			// The first one stops: the next backup gets the slot (the
			// handler returns soon after the cancel, not at once).
			deadline := time.Now().Add(30 * time.Second)
			for {
				_, _, err := tryBackup(admin)
				if err == nil {
					break
				}
				if status.Code(err) != codes.ResourceExhausted || time.Now().After(deadline) {
					t.Fatalf("backup after cancelling one: %v", err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if left, _ := filepath.Glob(filepath.Join(cfg.DataDir, "ctxd-backup-*")); len(left) > 0 {
				t.Errorf("temporary files left in the data dir: %v", left)
			}
		})
	}
}

// TestAdminService_BackupNeedsAdmin refuses a token without the admin scope.
func TestAdminService_BackupNeedsAdmin(t *testing.T) {
	d := startTokenDaemon(t)
	stream, err := ctxdv1.NewAdminServiceClient(d.tcp).Backup(bearer(ciSecret), &ctxdv1.BackupRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("backup with a read-write token: %v; want PERMISSION_DENIED", err)
	}
}

// readBackup takes a whole backup and checks its messages.
func readBackup(t *testing.T, admin ctxdv1.AdminServiceClient) ([]byte, *ctxdv1.BackupSummary) {
	t.Helper()
	data, sum, err := tryBackup(admin)
	if err != nil {
		t.Fatal(err)
	}
	return data, sum
}

// tryBackup takes a backup; it fails on a message over 1 MiB, a summary
// before the last message, or none at all.
func tryBackup(admin ctxdv1.AdminServiceClient) ([]byte, *ctxdv1.BackupSummary, error) {
	stream, err := admin.Backup(context.Background(), &ctxdv1.BackupRequest{})
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	var sum *ctxdv1.BackupSummary
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if sum == nil {
				return nil, nil, errors.New("no summary")
			}
			return buf.Bytes(), sum, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if sum != nil {
			return nil, nil, errors.New("a message after the summary")
		}
		if len(msg.Data) > backupChunk {
			return nil, nil, fmt.Errorf("a message of %d bytes", len(msg.Data))
		}
		buf.Write(msg.Data)
		sum = msg.Summary
	}
}

func hasHint(st *status.Status, want string) bool {
	for _, d := range st.Details() {
		if ed, ok := d.(*ctxdv1.ErrorDetail); ok && strings.Contains(ed.NextActionHint, want) {
			return true
		}
	}
	return false
}
