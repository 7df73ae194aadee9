package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// BenchmarkReplicas_Write16 is durable write throughput with 16 clients
// through daemon processes on a real socket, beside each other in one run:
// one daemon on its bbolt file, one replica on PostgreSQL (a server of the
// benchmark's own), and two replicas on one PostgreSQL with the clients
// split between them. Each write is a 1 KiB item in a directory of 1,000
// (BenchmarkWrite's shape: overwrites once it is full), acknowledged once
// committed (fsync on both backends). It reports writes/s and the p50/p99
// of one write.
func BenchmarkReplicas_Write16(b *testing.B) {
	body := strings.Repeat(strings.Repeat("w", 63)+"\n", 16)
	for _, setup := range []struct {
		name     string
		replicas int // 0: bbolt
	}{{"bolt", 0}, {"postgres-1-replica", 1}, {"postgres-2-replicas", 2}} {
		b.Run(setup.name, func(b *testing.B) {
			var args []string
			if setup.replicas > 0 {
				_, url := pgStore(b)
				args = []string{"--store", url}
			}
			var clients []ctxdv1.VfsServiceClient
			for range max(setup.replicas, 1) {
				dir := shortTempDir(b)
				socket := filepath.Join(dir, "s.sock")
				startProcess(b, filepath.Join(dir, "data"), socket, args...)
				clients = append(clients, ctxdv1.NewVfsServiceClient(dial(b, "unix://"+socket)))
			}
			runClients(b, 16, func(i int) error {
				_, err := clients[i%len(clients)].Write(context.Background(), &ctxdv1.WriteRequest{
					Ref:        fmt.Sprintf("bench:/w/%d.md", i%1000),
					Body:       &ctxdv1.WriteRequest_Content{Content: body},
					OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE,
				})
				return err
			})
		})
	}
}
