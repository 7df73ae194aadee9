package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ctxd/ctxd/daemon"
	"github.com/ctxd/ctxd/daemon/mcpserver"
	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// startDaemon runs a real daemon on a temp unix socket (no TCP, no HTTP, no
// model) and returns the socket.
func startDaemon(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "ctxdmcp")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	cfg := daemon.DefaultConfig()
	cfg.DataDir, cfg.Socket, cfg.HTTP, cfg.ModelDir = filepath.Join(dir, "data"), filepath.Join(dir, "s.sock"), "", ""
	d, err := daemon.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Stop(ctx)
	})
	return cfg.Socket
}

// dial connects to the daemon's socket.
func dial(tb testing.TB, socket string) *grpc.ClientConn {
	tb.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn
}

// connect serves New over in-memory transports against conn and returns
// the client's session.
func connect(t *testing.T, conn *grpc.ClientConn) *mcp.ClientSession {
	t.Helper()
	b := toolset.NewBackend(conn)
	srv := mcpserver.New(mcpserver.Options{
		Tools: toolset.Tools(), Backend: func(*mcp.RequestExtra) toolset.Backend { return b }, Version: "test",
	})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func write(t *testing.T, conn *grpc.ClientConn, ref, content string) {
	t.Helper()
	_, err := ctxdv1.NewVfsServiceClient(conn).Write(context.Background(), &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: content}})
	if err != nil {
		t.Fatalf("write %s: %v", ref, err)
	}
}

// TestNew_ResourcesList pages through the self drive then the agent drive,
// items only (no directories), ResourcePageSize per page, each page naming
// the next with a cursor, and stops at MaxListedResources.
func TestNew_ResourcesList(t *testing.T) {
	conn := dial(t, startDaemon(t))
	write(t, conn, "self:/soul.md", "who I am\n")
	write(t, conn, "agent:/dir/sub/deep.md", "deep\n")
	for i := range mcpserver.MaxListedResources + 50 {
		write(t, conn, fmt.Sprintf("agent:/n/%04d.md", i), "x\n")
	}
	cs := connect(t, conn)
	ctx := context.Background()

	var uris []string
	pages := 0
	params := &mcp.ListResourcesParams{}
	for {
		res, err := cs.ListResources(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(res.Resources) > mcpserver.ResourcePageSize {
			t.Errorf("page %d has %d resources", pages, len(res.Resources))
		}
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if res.NextCursor == "" {
			break
		}
		params.Cursor = res.NextCursor
	}
	if len(uris) != mcpserver.MaxListedResources {
		t.Fatalf("listed %d resources over %d pages, want %d", len(uris), pages, mcpserver.MaxListedResources)
	}
	want := []string{"ctxd://self/soul.md", "ctxd://agent/dir/sub/deep.md", "ctxd://agent/n/0000.md"}
	if !slices.Equal(uris[:3], want) || uris[len(uris)-1] != fmt.Sprintf("ctxd://agent/n/%04d.md", mcpserver.MaxListedResources-3) {
		t.Errorf("listed %v ... %s", uris[:3], uris[len(uris)-1])
	}
	if slices.Contains(uris, "ctxd://agent/dir") || slices.Contains(uris, "ctxd://agent/n") {
		t.Error("a directory is listed as a resource")
	}

	if _, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "not-a-cursor"}); err == nil || !strings.Contains(err.Error(), "invalid_argument") {
		t.Errorf("a forged cursor: %v", err)
	}
}

// TestNew_ResourceURIs: paths with spaces and other escaped characters
// read back; binary items read as a blob; a URI that is not an item's is
// invalid_argument, with a hint.
func TestNew_ResourceURIs(t *testing.T) {
	conn := dial(t, startDaemon(t))
	write(t, conn, "work:/my notes/a#b%.md", "spaced\n")
	if _, err := ctxdv1.NewVfsServiceClient(conn).Write(context.Background(), &ctxdv1.WriteRequest{
		Ref: "agent:/logo.png", Body: &ctxdv1.WriteRequest_Data{Data: []byte("\x89PNG\r\n\x1a\n\x00\x01")},
	}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, conn)
	ctx := context.Background()

	uri := "ctxd://work/my%20notes/a%23b%25.md"
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || res.Contents[0].Text != "spaced\n" || res.Contents[0].URI != uri {
		t.Errorf("read %s: %+v %v", uri, res, err)
	}
	res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ctxd://agent/logo.png"})
	if err != nil || string(res.Contents[0].Blob) != "\x89PNG\r\n\x1a\n\x00\x01" || res.Contents[0].Text != "" || res.Contents[0].MIMEType != "image/png" {
		t.Errorf("binary item: %+v %v", res.Contents[0], err)
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ctxd://agent/logo.png?x=1"})
	if err == nil || !strings.Contains(err.Error(), `"error_type":"invalid_argument"`) || !strings.Contains(err.Error(), "ctxd://DRIVE/PATH") {
		t.Errorf("a query in the URI: %v", err)
	}
}
