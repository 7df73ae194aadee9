package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ctxd/ctxd/daemon/metrics"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// messageSlack is room for a request's fields beyond its content: a request
// may be max_content_bytes plus this. An item just over the content limit
// reaches the store and gets its precise error, naming the item.
const messageSlack = 1 << 20

// maxRequestBytes is the largest request the daemon reads, over gRPC or as
// an HTTP body: twice max_content_bytes plus messageSlack, room for the JSON
// of content (escaping and base64 at most double it, short of control
// characters written as \u00XX). Requests between the limit (max_content_bytes
// plus messageSlack) and this get CONTENT_TOO_LARGE from the interceptors. Over it grpc-go refuses the message by its length prefix
// with a bare RESOURCE_EXHAUSTED, from inside its own receive, which writes
// the status before any interceptor or handler sees the error; the CLI
// explains that status. The HTTP gateway caps bodies at this size, so it
// never meets that status.
func maxRequestBytes(maxContent int64) int64 { return 2*maxContent + messageSlack }

// interceptors holds what every call passes through.
type interceptors struct {
	log        *slog.Logger
	auth       *authenticator
	ready      *atomic.Bool
	maxContent int64 // requests may be this plus messageSlack bytes
	// socketAuth makes unix-socket callers present a token too (socket_auth).
	socketAuth bool
	// store names the store in errors; storeDown is told when a call found
	// it unreachable.
	store     *storeInfo
	storeDown func(error)
	// metrics counts every call and its latency by method and code; the
	// gateway's and MCP's calls reach this server too, so are counted once,
	// here.
	metrics *metrics.Metrics
}

// newGRPCServer builds the one gRPC server: interceptors (recover, logging,
// auth, readiness, request size, error mapping), then reflection and health.
// Services are registered separately.
func newGRPCServer(ic *interceptors, hs *health.Server) *grpc.Server {
	srv := grpc.NewServer(
		grpc.MaxRecvMsgSize(int(maxRequestBytes(ic.maxContent))),
		grpc.MaxSendMsgSize(int(ic.maxContent)+messageSlack),
		grpc.ChainUnaryInterceptor(ic.unary),
		grpc.ChainStreamInterceptor(ic.stream),
	)
	reflection.Register(srv)
	healthpb.RegisterHealthServer(srv, hs)
	return srv
}

// checkSize refuses a request message over max_content_bytes plus
// messageSlack with CONTENT_TOO_LARGE.
func (ic *interceptors) checkSize(req any) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	if size, limit := proto.Size(m), ic.maxContent+messageSlack; int64(size) > limit {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE,
			fmt.Sprintf("the request is %d bytes; the daemon accepts at most %d", size, limit), contentLimitHint(ic.maxContent))
	}
	return nil
}

// sizeCheckedStream applies checkSize to every message a stream receives,
// and gives the handler the context admit made.
type sizeCheckedStream struct {
	grpc.ServerStream
	ic  *interceptors
	ctx context.Context
}

func (s sizeCheckedStream) Context() context.Context { return s.ctx }

func (s sizeCheckedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return s.ic.checkSize(m)
}

// admit decides whether a call may proceed: the token for non-unix peers
// (unix ones too with socket_auth, but for health checks), the ctxd-agent
// metadata, then readiness for everything but health and reflection. It
// returns ctx carrying the caller's grant (callerFrom) and the actor of the
// call's changes: the owner on the unix socket without socket_auth, otherwise
// the token's name and agent flag; an agent when ctxd-agent asks for it.
func (ic *interceptors) admit(ctx context.Context, method string) (context.Context, error) {
	g := ownerGrant
	md, _ := metadata.FromIncomingContext(ctx)
	p, ok := peer.FromContext(ctx)
	unix := ok && p.Addr != nil && p.Addr.Network() == "unix"
	if !unix || ic.socketAuth && !openOnSocket(method) {
		var err error
		if g, err = ic.auth.authorizeContext(md, method); err != nil {
			if unix {
				err = socketAuthError(err)
			}
			return nil, err
		}
	}
	if v := md.Get(AgentMetadata); len(v) > 0 {
		var err error
		if g, err = asAgent(g, v[0]); err != nil {
			return nil, err
		}
	}
	if !ic.ready.Load() && strings.HasPrefix(method, "/ctxd.") {
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE,
			"the daemon is starting or stopping", "Retry in a moment; the health service reports SERVING when ready.")
	}
	return vfs.WithAccess(vfs.WithActor(withCaller(ctx, g), g.actor()), g.access), nil
}

// AgentMetadata is the gRPC metadata key with which a caller runs as an
// agent, named by its value (`ctxd mcp` sends it, and so do the daemon's
// own tool calls): agent guards then apply as for an agent token.
const AgentMetadata = "ctxd-agent"

// maxAgentName is the longest agent name ctxd-agent may carry.
const maxAgentName = 64

// asAgent downgrades g to an agent named name. Scopes stay as they are, so
// the metadata never grants more. The owner takes the agent's name in
// history; a token keeps its own, so no token records changes under
// another name.
func asAgent(g grant, name string) (grant, error) {
	if err := checkAgentName(name); err != nil {
		return grant{}, err
	}
	if g.name == vfs.OwnerActor {
		g.name = name
	}
	g.agent = true
	return g, nil
}

// checkAgentName accepts 1..maxAgentName characters of [A-Za-z0-9._-].
func checkAgentName(name string) error {
	hint := fmt.Sprintf("Name the agent with 1 to %d characters of A-Z, a-z, 0-9, '.', '_' and '-' in the %s metadata (`ctxd mcp --agent-name`), or leave the metadata out.", maxAgentName, AgentMetadata)
	if name == "" || len(name) > maxAgentName {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT,
			fmt.Sprintf("the %s metadata is %d characters; an agent name has 1 to %d", AgentMetadata, len(name), maxAgentName), hint)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT,
				fmt.Sprintf("the %s metadata %q is not an agent name: it has %q", AgentMetadata, name, r), hint)
		}
	}
	return nil
}

func (ic *interceptors) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			err = ic.panicked(info.FullMethod, r)
		}
		ic.logCall(info.FullMethod, start, err)
	}()
	ctx, err = ic.admit(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	if err := ic.checkSize(req); err != nil {
		return nil, err
	}
	resp, err = handler(ctx, req)
	return resp, ic.toStatus(info.FullMethod, err)
}

func (ic *interceptors) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			err = ic.panicked(info.FullMethod, r)
		}
		ic.logCall(info.FullMethod, start, err)
	}()
	ctx, err := ic.admit(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	return ic.toStatus(info.FullMethod, handler(srv, sizeCheckedStream{ss, ic, ctx}))
}

// toStatus converts a handler's error, telling storeDown when the store
// did not answer.
func (ic *interceptors) toStatus(method string, err error) error {
	if _, ok := unreachable(err); ok {
		ic.storeDown(err)
	}
	return toStatus(ic.log, ic.store, method, err)
}

func (ic *interceptors) panicked(method string, r any) error {
	ic.log.Error("panic in handler", "method", method, "panic", r, "stack", string(debug.Stack()))
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_INTERNAL, "internal error", "The daemon log has the details.")
}

// logCall logs a call and counts it in the metrics.
func (ic *interceptors) logCall(method string, start time.Time, err error) {
	code := status.Code(err)
	took := time.Since(start)
	if ic.metrics != nil {
		ic.metrics.ObserveRPC(method, code, took)
	}
	level := slog.LevelDebug
	switch code {
	case codes.OK, codes.NotFound, codes.AlreadyExists, codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange, codes.Aborted:
	case codes.Internal, codes.Unknown, codes.DataLoss:
		level = slog.LevelError
	default:
		level = slog.LevelInfo
	}
	ic.log.Log(context.Background(), level, "rpc", "method", method, "code", code.String(), "duration", took)
}
