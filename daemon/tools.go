package daemon

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/ctxd/ctxd/daemon/toolset"
)

// defaultToolAgent is the agent name of CallTool's calls when the caller
// names none with ctxd-agent metadata.
const defaultToolAgent = "tools"

// startLoopback serves gRPC on an internal loopback listener and dials it.
// Tokens are checked there as on any TCP listener, so what the gateway and
// the tools call on a caller's behalf passes the same interceptors as the
// caller's own calls: scopes, access limits, agent guards.
func (d *Daemon) startLoopback() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen internal loopback: %w", err)
	}
	d.serve(ln)
	// The send limit admits any request under the cap, so that the server's
	// interceptors decide, with their CONTENT_TOO_LARGE error.
	d.loopback, err = grpc.NewClient("passthrough:///"+ln.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(int(d.cfg.MaxContentBytes)+messageSlack),
			grpc.MaxCallSendMsgSize(int(maxRequestBytes(d.cfg.MaxContentBytes)))),
	)
	if err != nil {
		return fmt.Errorf("dial internal loopback %s: %w", ln.Addr(), err)
	}
	return nil
}

// toolBackend is the daemon API for tools run on a caller's behalf: every
// call goes over the loopback connection carrying authorization (the
// caller's "Bearer <token>") and ctxd-agent (agent) metadata, so it runs as
// that agent with that token's scopes and limits.
func (d *Daemon) toolBackend(authorization, agent string) toolset.Backend {
	return toolset.NewBackend(toolset.WithMetadata(d.loopback, "authorization", authorization, AgentMetadata, agent))
}

// callerAuthorization is the authorization to make calls for the caller of
// ctx with: its own token, or the owner token for a unix-socket caller,
// the only caller admitted without one.
func (d *Daemon) callerAuthorization(ctx context.Context) string {
	if v := metadata.ValueFromIncomingContext(ctx, "authorization"); len(v) > 0 {
		return v[0]
	}
	return "Bearer " + d.auth.owner
}
