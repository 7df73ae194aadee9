package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/gen/openapi"
	"github.com/ctxd/ctxd/vfs"
)

func TestInterceptors_Admit(t *testing.T) {
	auth := &authenticator{tokens: map[[32]byte]grant{}}
	var ready atomic.Bool
	ic := &interceptors{log: slogDiscard(), auth: auth, ready: &ready}
	admit := func(ctx context.Context, method string) error { _, err := ic.admit(ctx, method); return err }
	unixCtx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.UnixAddr{Name: "/s", Net: "unix"}})
	tcpCtx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}})
	read := ctxdv1.VfsService_Read_FullMethodName

	// Not ready: domain calls wait, health does not.
	_, detail := errorDetail(t, admit(unixCtx, read))
	if detail.Type != ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE {
		t.Errorf("not ready: %v", detail)
	}
	if err := admit(unixCtx, "/grpc.health.v1.Health/Check"); err != nil {
		t.Errorf("health while starting: %v", err)
	}
	ready.Store(true)
	if err := admit(unixCtx, read); err != nil {
		t.Errorf("unix peer needs no token: %v", err)
	}
	code, _ := errorDetail(t, admit(tcpCtx, read))
	if code != codes.Unauthenticated {
		t.Errorf("tcp without token: %v", code)
	}
	auth.tokens[sha256Sum("tok")] = grant{name: "tok", scopes: ScopeRead}
	authed := metadata.NewIncomingContext(tcpCtx, metadata.Pairs("authorization", "Bearer tok"))
	if err := admit(authed, read); err != nil {
		t.Errorf("read token reading: %v", err)
	}
	code, _ = errorDetail(t, admit(authed, ctxdv1.VfsService_Write_FullMethodName))
	if code != codes.PermissionDenied {
		t.Errorf("read token writing: %v", code)
	}

	// The call's context names the caller as the actor of its changes.
	auth.tokens[sha256Sum("bot-secret")] = grant{name: "bot", scopes: ScopeRead, agent: true}
	for _, tt := range []struct {
		name string
		ctx  context.Context
		want vfs.Actor
	}{
		{"unix", unixCtx, vfs.Actor{Name: vfs.OwnerActor}},
		{"token", authed, vfs.Actor{Name: "tok"}},
		{"agent token", metadata.NewIncomingContext(tcpCtx, metadata.Pairs("authorization", "Bearer bot-secret")), vfs.Actor{Name: "bot", Agent: true}},
	} {
		ctx, err := ic.admit(tt.ctx, read)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := vfs.ActorFrom(ctx); got != tt.want {
			t.Errorf("%s: actor %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestAuthenticator_Scheme accepts the bearer scheme in any case (RFC 9110
// auth schemes are case-insensitive) and nothing else.
func TestAuthenticator_Scheme(t *testing.T) {
	a := &authenticator{tokens: map[[32]byte]grant{sha256Sum("tok"): {name: "tok", scopes: ScopeRead}}}
	read := ctxdv1.VfsService_Read_FullMethodName
	authorize := func(header, method string) error { _, err := a.authorize(header, method); return err }
	for _, header := range []string{"Bearer tok", "bearer tok", "BEARER tok", "Bearer  tok", " bearer tok "} {
		if err := authorize(header, read); err != nil {
			t.Errorf("%q: %v", header, err)
		}
	}
	for _, header := range []string{"", "tok", "Basic tok", "Bearertok", "Bearer ", "Bearer tok2"} {
		if code, _ := errorDetail(t, authorize(header, read)); code != codes.Unauthenticated {
			t.Errorf("%q: %v, want Unauthenticated", header, code)
		}
	}
}

// TestAuthenticator_PermissionHint names the scope the method needs.
func TestAuthenticator_PermissionHint(t *testing.T) {
	a := &authenticator{tokens: map[[32]byte]grant{sha256Sum("reader"): {name: "reader", scopes: ScopeRead}, sha256Sum("writer"): {name: "writer", scopes: ScopeRead | ScopeWrite}}}
	tests := []struct {
		token, method, want string
	}{
		{"reader", ctxdv1.VfsService_Write_FullMethodName, "write"},
		{"reader", ctxdv1.AdminService_Reindex_FullMethodName, "admin"},
		{"writer", ctxdv1.IngestService_Reembed_FullMethodName, "admin"},
		{"writer", ctxdv1.AdminService_Doctor_FullMethodName, "admin"},
	}
	for _, tt := range tests {
		_, err := a.authorize("Bearer "+tt.token, tt.method)
		code, detail := errorDetail(t, err)
		other := map[string]string{"write": "admin", "admin": "write"}[tt.want]
		if code != codes.PermissionDenied || !strings.Contains(detail.NextActionHint, `"`+tt.want+`"`) || strings.Contains(detail.NextActionHint, other) {
			t.Errorf("%s calling %s: %v, hint %q; want a hint naming only the %s scope", tt.token, tt.method, code, detail.NextActionHint, tt.want)
		}
	}
}

// TestScopes_EveryMethodHasOne walks the services registered on the real
// gRPC server: every method needs an explicit scope, and the table names no
// method the server lacks.
func TestScopes_EveryMethodHasOne(t *testing.T) {
	d := mustStart(t, testConfig(t))
	registered := map[string]bool{}
	for svc, info := range d.grpc.GetServiceInfo() {
		for _, m := range info.Methods {
			name := "/" + svc + "/" + m.Name
			registered[name] = true
			if _, ok := methodScopes[name]; !ok {
				t.Errorf("%s has no entry in methodScopes", name)
			}
		}
	}
	if len(registered) < 20 {
		t.Fatalf("only %d methods registered: %v", len(registered), registered)
	}
	for name := range methodScopes {
		if !registered[name] {
			t.Errorf("methodScopes names %s, which the server does not register", name)
		}
	}
	// Rebuilding the indexes and re-embedding are administration.
	for _, m := range []string{ctxdv1.AdminService_Reindex_FullMethodName, ctxdv1.AdminService_Doctor_FullMethodName, ctxdv1.IngestService_Reembed_FullMethodName} {
		if methodScopes[m] != ScopeAdmin {
			t.Errorf("%s needs %v, want admin", m, methodScopes[m])
		}
	}
	// Reading context and history changes nothing; reverting and context
	// init and update change items.
	for m, want := range map[string]Scope{
		ctxdv1.ContextService_BuildContext_FullMethodName: ScopeRead, ctxdv1.VfsService_History_FullMethodName: ScopeRead,
		ctxdv1.VfsService_ReadRevision_FullMethodName: ScopeRead, ctxdv1.VfsService_ListDeleted_FullMethodName: ScopeRead,
		ctxdv1.VfsService_Log_FullMethodName: ScopeRead, ctxdv1.VfsService_Revert_FullMethodName: ScopeWrite,
		ctxdv1.ContextService_Init_FullMethodName: ScopeWrite, ctxdv1.ContextService_Update_FullMethodName: ScopeWrite,
	} {
		if methodScopes[m] != want {
			t.Errorf("%s needs %v, want %v", m, methodScopes[m], want)
		}
	}
}

// TestScopes_TokenMethodMatrix calls every registered method with tokens of
// each scope, over gRPC TCP and over HTTP: a call is refused with
// PERMISSION_DENIED exactly when the token lacks the method's scope.
func TestScopes_TokenMethodMatrix(t *testing.T) {
	cfg := testConfig(t)
	cfg.GRPCTCP, cfg.HTTP = "127.0.0.1:0", "127.0.0.1:0"
	tokens := map[string]Scope{"read": ScopeRead, "write": ScopeWrite, "admin": ScopeAdmin, "read-write": ScopeRead | ScopeWrite}
	for name, s := range tokens {
		cfg.Tokens = append(cfg.Tokens, TokenConfig{Name: name, SHA256: sha256Hex(name + "-token"), Scopes: s.names()})
	}
	d := mustStart(t, cfg)
	tokens[d.token] = scopeAll
	secret := func(name string) string {
		if name == d.token {
			return name
		}
		return name + "-token"
	}
	conn := dial(t, "passthrough:///"+d.GRPCAddr().String())

	routes := openAPIRoutes(t)
	var httpCalls int
	for svc, info := range d.grpc.GetServiceInfo() {
		for _, m := range info.Methods {
			method := "/" + svc + "/" + m.Name
			need := methodScopes[method]
			for name, has := range tokens {
				// CreateSignInLink also checks, past its scope, that the
				// caller is the owner.
				wantDenied := has&need != need || method == ctxdv1.AdminService_CreateSignInLink_FullMethodName && name != d.token
				t.Run(svc+"."+m.Name+"/"+name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+secret(name))
					err := invokeEmpty(ctx, conn, svc, m)
					if denied := isDenied(err); denied != wantDenied {
						t.Errorf("gRPC: token %s (%v) calling %s (needs %v): %v, want denied=%v", name, has, method, need, err, wantDenied)
					}
					route, ok := routes[svc[strings.LastIndex(svc, ".")+1:]+"_"+m.Name]
					if !ok {
						return
					}
					httpCalls++
					body := ""
					if route.method == "POST" {
						body = "{}"
					}
					code, resp := httpCall(t, route.method, "http://"+d.HTTPAddr().String()+route.path, body, secret(name))
					denied := code == 403 && strings.Contains(string(resp), "ERROR_TYPE_PERMISSION_DENIED")
					if denied != wantDenied || code == 401 {
						t.Errorf("HTTP %s %s: token %s: %d %s, want denied=%v", route.method, route.path, name, code, resp, wantDenied)
					}
				})
			}
		}
	}
	if httpCalls == 0 {
		t.Error("no method was called over HTTP")
	}
	// The failure as reported: a read-scoped token rebuilt the indexes.
	if code, body := httpCall(t, "POST", "http://"+d.HTTPAddr().String()+"/v1/admin/reindex", "{}", secret("read")); code != 403 {
		t.Errorf("read token reindexing: %d %s", code, body)
	}
}

// invokeEmpty calls a method with an empty request message, reading the
// first response of a stream.
func invokeEmpty(ctx context.Context, conn *grpc.ClientConn, svc string, m grpc.MethodInfo) error {
	desc, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc + "." + m.Name))
	if err != nil {
		return err
	}
	md := desc.(protoreflect.MethodDescriptor)
	in, out := dynamicpb.NewMessage(md.Input()), dynamicpb.NewMessage(md.Output())
	method := "/" + svc + "/" + m.Name
	if !m.IsClientStream && !m.IsServerStream {
		return conn.Invoke(ctx, method, in, out)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends streams that would run on (health Watch)
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: m.IsClientStream, ServerStreams: m.IsServerStream}, method)
	if err != nil {
		return err
	}
	if err := stream.SendMsg(in); err != nil && err != io.EOF {
		return err
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	if err := stream.RecvMsg(out); err != io.EOF {
		return err
	}
	return nil
}

func isDenied(err error) bool {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if ed, ok := d.(*ctxdv1.ErrorDetail); ok && ed.Type == ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED {
			return true
		}
	}
	return false
}

type route struct{ method, path string }

// openAPIRoutes maps operation ids (AdminService_Reindex) to their HTTP
// method and path, from the OpenAPI document the gateway serves.
func openAPIRoutes(t *testing.T) map[string]route {
	t.Helper()
	var spec struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	routes := map[string]route{}
	for path, ops := range spec.Paths {
		for method, op := range ops {
			routes[op.OperationID] = route{strings.ToUpper(method), path}
		}
	}
	return routes
}
