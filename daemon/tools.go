package daemon

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	"github.com/ctxd/ctxd/daemon/toolset"
)

// defaultToolAgent is the agent name of CallTool's calls when the caller
// names none with ctxd-agent metadata.
const defaultToolAgent = "tools"

// internalBufferBytes is what each direction of the in-memory connection
// buffers before a writer waits for the reader: room for several HTTP/2
// frames, so that neither side waits on every frame.
const internalBufferBytes = 1 << 20

// startInternal serves gRPC on an in-memory listener and dials it: the
// daemon's own connection, which nothing outside the process can reach, so
// the daemon listens only where it is configured to. It is grpc-go's
// bufconn, made for this (a listener over net.Pipe would need hand-written
// Accept and Close, and net.Pipe's unbuffered writes would make every
// HTTP/2 frame wait for the reader). Its peers are not unix-socket ones, so
// tokens are checked there as on a TCP listener, by the same server and
// interceptors: what the gateway and the tools call on a caller's behalf
// passes the same checks as the caller's own calls: scopes, access limits,
// agent guards.
func (d *Daemon) startInternal() error {
	ln := bufconn.Listen(internalBufferBytes)
	d.serve(ln)
	// The send limit admits any request under the cap, so that the server's
	// interceptors decide, with their CONTENT_TOO_LARGE error.
	var err error
	d.internal, err = grpc.NewClient("passthrough:///internal",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(int(d.cfg.MaxContentBytes)+messageSlack),
			grpc.MaxCallSendMsgSize(int(maxRequestBytes(d.cfg.MaxContentBytes)))),
	)
	if err != nil {
		return fmt.Errorf("dial the in-memory listener: %w", err)
	}
	return nil
}

// toolBackend is the daemon API for tools run on a caller's behalf: every
// call goes over the internal connection carrying authorization (the
// caller's "Bearer <token>") and ctxd-agent (agent) metadata, so it runs as
// that agent with that token's scopes and limits.
func (d *Daemon) toolBackend(authorization, agent string) toolset.Backend {
	return toolset.NewBackend(toolset.WithMetadata(d.internal, "authorization", authorization, AgentMetadata, agent))
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
