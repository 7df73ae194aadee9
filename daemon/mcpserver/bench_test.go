package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/metadata"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// BenchmarkMCP_Stdio measures what `ctxd mcp` adds to a call: a real daemon,
// `ctxd mcp` spawned as a host would (the Go SDK's CommandTransport over its
// stdin and stdout), and the same calls made directly over gRPC on the same
// socket, interleaved one for one so that machine noise falls on both
// paths. It makes CTXD_BENCH_MCP_CALLS (default 1000) calls per path of
// context_read (a 2 KB item) and context_search (bm25, 10 results, over 500
// items), and reports p50/p99 per path and the added latency at p50 and p99.
// The binary is $CTXD_BIN, else built into a temp dir. Run with -benchtime=1x.
func BenchmarkMCP_Stdio(b *testing.B) {
	calls := 1000
	if v := os.Getenv("CTXD_BENCH_MCP_CALLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("CTXD_BENCH_MCP_CALLS=%q: want a positive number", v)
		}
		calls = n
	}
	bin := ctxdBinary(b)
	socket := startDaemon(b)
	conn := dial(b, socket)
	ctx := context.Background()
	vfs, search := ctxdv1.NewVfsServiceClient(conn), ctxdv1.NewSearchServiceClient(conn)
	body := strings.Repeat("The zebrafish importer reads plate scans and writes one record per well.\n", 28)
	for i := range 500 {
		if _, err := vfs.Write(ctx, &ctxdv1.WriteRequest{Ref: fmt.Sprintf("agent:/bench/doc%03d.md", i),
			Body: &ctxdv1.WriteRequest_Content{Content: fmt.Sprintf("# Doc %d\n\n%s", i, body)}}); err != nil {
			b.Fatal(err)
		}
	}
	searchReq := &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "zebrafish plate scans"}}, Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Limit: 10}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		r, err := search.Search(ctx, searchReq)
		if err == nil && len(r.GetResults()) == 10 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the items never became searchable: %v %v", r, err)
		}
	}

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx,
		&mcp.CommandTransport{Command: exec.Command(bin, "--socket", socket, "mcp")}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	// The direct calls carry the agent metadata too, as `ctxd mcp` does.
	agentCtx := metadata.AppendToOutgoingContext(ctx, "ctxd-agent", "mcp")
	paths := []struct {
		name string
		mcp  *mcp.CallToolParams
		grpc func() error
	}{
		{"read", &mcp.CallToolParams{Name: "context_read", Arguments: map[string]any{"path": "/bench/doc007.md"}}, func() error {
			_, err := vfs.Read(agentCtx, &ctxdv1.ReadRequest{Ref: "agent:/bench/doc007.md"})
			return err
		}},
		{"search", &mcp.CallToolParams{Name: "context_search", Arguments: map[string]any{"queries": []string{"zebrafish plate scans"}, "mode": "bm25"}}, func() error {
			_, err := search.Search(agentCtx, searchReq)
			return err
		}},
	}
	b.ResetTimer()
	for range b.N {
		for _, p := range paths {
			var viaMCP, viaGRPC []time.Duration
			for range calls {
				t0 := time.Now()
				res, err := cs.CallTool(ctx, p.mcp)
				if err != nil || res.IsError {
					b.Fatalf("%s over MCP: %v %v", p.name, err, res)
				}
				viaMCP = append(viaMCP, time.Since(t0))
				t0 = time.Now()
				if err := p.grpc(); err != nil {
					b.Fatalf("%s over gRPC: %v", p.name, err)
				}
				viaGRPC = append(viaGRPC, time.Since(t0))
			}
			m50, m99 := percentiles(viaMCP)
			g50, g99 := percentiles(viaGRPC)
			b.ReportMetric(m50, p.name+"-mcp-p50-ms")
			b.ReportMetric(m99, p.name+"-mcp-p99-ms")
			b.ReportMetric(g50, p.name+"-grpc-p50-ms")
			b.ReportMetric(g99, p.name+"-grpc-p99-ms")
			b.ReportMetric(m50-g50, p.name+"-added-p50-ms")
			b.ReportMetric(m99-g99, p.name+"-added-p99-ms")
		}
	}
}

// percentiles returns the p50 and p99 of d in milliseconds.
func percentiles(d []time.Duration) (p50, p99 float64) {
	slices.Sort(d)
	at := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000 }
	return at(0.50), at(0.99)
}

// ctxdBinary is $CTXD_BIN, or the ctxd command built into a temp dir.
func ctxdBinary(b *testing.B) string {
	if bin := os.Getenv("CTXD_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "ctxd")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/ctxd/ctxd/cmd/ctxd").CombinedOutput(); err != nil {
		b.Fatalf("build ctxd: %v\n%s", err, out)
	}
	return bin
}
