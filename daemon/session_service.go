package daemon

import (
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// sessionService adapts SessionService calls onto package session.
type sessionService struct {
	ctxdv1.UnimplementedSessionServiceServer
	b *backend
}
