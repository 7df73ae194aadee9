package daemon

import (
	"context"
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

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// messageSlack is room for a request's fields beyond its content, so that an
// item just over the content limit reaches the store and gets its precise
// CONTENT_TOO_LARGE error instead of grpc's generic size error.
const messageSlack = 1 << 20

// interceptors holds what every call passes through.
type interceptors struct {
	log   *slog.Logger
	auth  *authenticator
	ready *atomic.Bool
}

// newGRPCServer builds the one gRPC server: interceptors (recover, logging,
// auth, readiness, error mapping), then reflection and health. Services are
// registered separately.
func newGRPCServer(ic *interceptors, maxContent int64, hs *health.Server) *grpc.Server {
	srv := grpc.NewServer(
		grpc.MaxRecvMsgSize(int(maxContent)+messageSlack),
		grpc.MaxSendMsgSize(int(maxContent)+messageSlack),
		grpc.ChainUnaryInterceptor(ic.unary),
		grpc.ChainStreamInterceptor(ic.stream),
	)
	reflection.Register(srv)
	healthpb.RegisterHealthServer(srv, hs)
	return srv
}

// admit decides whether a call may proceed: the token for non-unix peers,
// then readiness for everything but health and reflection.
func (ic *interceptors) admit(ctx context.Context, method string) error {
	if p, ok := peer.FromContext(ctx); !ok || p.Addr == nil || p.Addr.Network() != "unix" {
		md, _ := metadata.FromIncomingContext(ctx)
		if err := ic.auth.authorizeContext(md, method); err != nil {
			return err
		}
	}
	if !ic.ready.Load() && strings.HasPrefix(method, "/ctxd.") {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE,
			"the daemon is starting or stopping", "Retry in a moment; the health service reports SERVING when ready.")
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
	if err := ic.admit(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	resp, err = handler(ctx, req)
	return resp, toStatus(ic.log, info.FullMethod, err)
}

func (ic *interceptors) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			err = ic.panicked(info.FullMethod, r)
		}
		ic.logCall(info.FullMethod, start, err)
	}()
	if err := ic.admit(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return toStatus(ic.log, info.FullMethod, handler(srv, ss))
}

func (ic *interceptors) panicked(method string, r any) error {
	ic.log.Error("panic in handler", "method", method, "panic", r, "stack", string(debug.Stack()))
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_INTERNAL, "internal error", "The daemon log has the details.")
}

func (ic *interceptors) logCall(method string, start time.Time, err error) {
	code := status.Code(err)
	level := slog.LevelDebug
	switch code {
	case codes.OK, codes.NotFound, codes.AlreadyExists, codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange, codes.Aborted:
	case codes.Internal, codes.Unknown, codes.DataLoss:
		level = slog.LevelError
	default:
		level = slog.LevelInfo
	}
	ic.log.Log(context.Background(), level, "rpc", "method", method, "code", code.String(), "duration", time.Since(start))
}
