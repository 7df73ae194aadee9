package daemon

import (
	"context"
	"net"
	"net/url"

	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// WhoAmI describes the grant the call was admitted with.
func (s *adminService) WhoAmI(ctx context.Context, _ *ctxdv1.WhoAmIRequest) (*ctxdv1.WhoAmIResponse, error) {
	g := callerFrom(ctx)
	return &ctxdv1.WhoAmIResponse{
		Name: g.name, Scopes: g.scopes.names(), Owner: g.isOwner(), Agent: g.agent,
		Drives: g.access.Drives(), Paths: g.access.Paths(),
	}, nil
}

// CreateSignInLink makes a one-time sign-in code for the web inspector.
// Only the owner may: the session it opens holds the owner's grant.
func (s *adminService) CreateSignInLink(ctx context.Context, _ *ctxdv1.CreateSignInLinkRequest) (*ctxdv1.CreateSignInLinkResponse, error) {
	g := callerFrom(ctx)
	if !g.isOwner() {
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED,
			"only the owner may make a sign-in link, and this call comes from "+g.name,
			"Run `ctxd ui` on the daemon's machine (the unix socket) or with the owner token; other tokens sign in by pasting the token on the inspector's sign-in page.")
	}
	code, expires, err := s.b.signIns.newCode(g)
	if err != nil {
		return nil, err
	}
	resp := &ctxdv1.CreateSignInLinkResponse{Code: code, ExpiresAt: timestamppb.New(expires)}
	if ui := s.b.uiURL.Load(); ui != nil {
		resp.Url = *ui + "#signin=" + code
	}
	return resp, nil
}

// inspectorURL is the web inspector's address on the HTTP listener addr;
// a wildcard address is reached through loopback.
func inspectorURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/ui/"}).String()
}
