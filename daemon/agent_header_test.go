package daemon

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// withAgentMD returns ctx sending the ctxd-agent metadata with name.
func withAgentMD(ctx context.Context, name string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, AgentMetadata, name)
}

// TestAgentMetadata_Downgrade: the owner on the unix socket and a non-agent
// token become agents with the ctxd-agent metadata, so a protected context
// file refuses their changes with READ_ONLY, while the same calls without
// it succeed; history names the actor. An invalid name is INVALID_ARGUMENT.
func TestAgentMetadata_Downgrade(t *testing.T) {
	d := startTokenDaemon(t)
	ctx := context.Background()
	if _, err := d.contextClient(t).Init(ctx, &ctxdv1.InitRequest{}); err != nil {
		t.Fatal(err)
	}
	unix := d.vfsClient(t)
	tcp := ctxdv1.NewVfsServiceClient(d.tcp)
	write := func(c ctxdv1.VfsServiceClient, ctx context.Context, ref, content string) error {
		_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: content}, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
		return err
	}

	for _, tt := range []struct {
		name   string
		c      ctxdv1.VfsServiceClient
		caller context.Context
		actor  string // the history's actor as an agent
	}{
		{"owner on the socket", unix, ctx, "mcp"},
		{"non-agent token", tcp, bearer(ciSecret), "ci"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantReadOnly(t, write(tt.c, withAgentMD(tt.caller, "mcp"), "self:/soul.md", "taken over\n"), "self:/soul.md")
			if err := write(tt.c, withAgentMD(tt.caller, "mcp"), "agent:/notes/"+tt.actor+".md", "an agent's note\n"); err != nil {
				t.Fatalf("agent writing its own drive: %v", err)
			}
			h, err := unix.History(ctx, &ctxdv1.HistoryRequest{Ref: "agent:/notes/" + tt.actor + ".md"})
			if err != nil {
				t.Fatal(err)
			}
			if revs := h.GetRevisions(); len(revs) != 1 || revs[0].GetActor() != tt.actor {
				t.Errorf("history %v, want one revision by %q", revs, tt.actor)
			}
			if err := write(tt.c, tt.caller, "self:/soul.md", "# Soul\n\nThe owner's edit.\n"); err != nil {
				t.Errorf("without the metadata: %v", err)
			}
		})
	}

	// An agent token stays an agent: the metadata never upgrades.
	wantReadOnly(t, write(tcp, bearer(botSecret), "self:/soul.md", "x\n"), "self:/soul.md")

	for _, bad := range []string{"", strings.Repeat("a", 65), "my agent", "agent/1", "a:b"} {
		err := write(unix, withAgentMD(ctx, bad), "agent:/x.md", "x\n")
		code, detail := errorDetail(t, err)
		if code != codes.InvalidArgument || detail.GetType() != ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT || !strings.Contains(detail.GetNextActionHint(), AgentMetadata) {
			t.Errorf("ctxd-agent %q: %v %v, want INVALID_ARGUMENT with a hint naming %s", bad, code, detail, AgentMetadata)
		}
	}
}

// TestInterceptors_AdmitAgent: the downgrade sets Agent on the actor and on
// the stored grant, keeps a token's name and scopes, and applies to the
// owner's socket calls under the agent's name.
func TestInterceptors_AdmitAgent(t *testing.T) {
	var ready atomic.Bool
	ready.Store(true)
	ic := &interceptors{log: slogDiscard(), auth: &authenticator{tokens: map[[32]byte]grant{
		sha256Sum("ci"): {name: "ci", scopes: ScopeRead | ScopeWrite},
	}}, ready: &ready}
	unixPeer := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.UnixAddr{Name: "/s", Net: "unix"}})
	tcpPeer := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}})
	read := ctxdv1.VfsService_Read_FullMethodName
	tests := []struct {
		name  string
		ctx   context.Context
		want  vfs.Actor
		grant grant
	}{
		{"owner", metadata.NewIncomingContext(unixPeer, metadata.Pairs(AgentMetadata, "claude.code-1")),
			vfs.Actor{Name: "claude.code-1", Agent: true}, grant{name: "claude.code-1", scopes: scopeAll, agent: true}},
		{"token", metadata.NewIncomingContext(tcpPeer, metadata.Pairs("authorization", "Bearer ci", AgentMetadata, "mcp")),
			vfs.Actor{Name: "ci", Agent: true}, grant{name: "ci", scopes: ScopeRead | ScopeWrite, agent: true}},
	}
	for _, tt := range tests {
		ctx, err := ic.admit(tt.ctx, read)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := vfs.ActorFrom(ctx); got != tt.want {
			t.Errorf("%s: actor %+v, want %+v", tt.name, got, tt.want)
		}
		if got := callerFrom(ctx); got.name != tt.grant.name || got.scopes != tt.grant.scopes || got.agent != tt.grant.agent {
			t.Errorf("%s: grant %+v, want %+v", tt.name, got, tt.grant)
		}
	}
}
