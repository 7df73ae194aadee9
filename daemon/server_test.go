package daemon

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func TestInterceptors_Admit(t *testing.T) {
	auth := &authenticator{tokens: map[[32]byte]Scope{}}
	var ready atomic.Bool
	ic := &interceptors{log: slogDiscard(), auth: auth, ready: &ready}
	unixCtx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.UnixAddr{Name: "/s", Net: "unix"}})
	tcpCtx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}})
	read := ctxdv1.VfsService_Read_FullMethodName

	// Not ready: domain calls wait, health does not.
	_, detail := errorDetail(t, ic.admit(unixCtx, read))
	if detail.Type != ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE {
		t.Errorf("not ready: %v", detail)
	}
	if err := ic.admit(unixCtx, "/grpc.health.v1.Health/Check"); err != nil {
		t.Errorf("health while starting: %v", err)
	}
	ready.Store(true)
	if err := ic.admit(unixCtx, read); err != nil {
		t.Errorf("unix peer needs no token: %v", err)
	}
	code, _ := errorDetail(t, ic.admit(tcpCtx, read))
	if code != codes.Unauthenticated {
		t.Errorf("tcp without token: %v", code)
	}
	auth.tokens[sha256Sum("tok")] = ScopeRead
	authed := metadata.NewIncomingContext(tcpCtx, metadata.Pairs("authorization", "Bearer tok"))
	if err := ic.admit(authed, read); err != nil {
		t.Errorf("read token reading: %v", err)
	}
	code, _ = errorDetail(t, ic.admit(authed, ctxdv1.VfsService_Write_FullMethodName))
	if code != codes.PermissionDenied {
		t.Errorf("read token writing: %v", code)
	}
}
