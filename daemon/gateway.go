package daemon

import (
	"context"
	"fmt"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/gen/openapi"
)

// jsonOptions are shared by the gateway and its error bodies: snake_case field
// names as in the protos, and every field present so scripts need no defaults.
var jsonOptions = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// newGateway returns the JSON/HTTP handler. It calls the gRPC server over
// grpcAddr, a loopback TCP listener, forwarding the caller's Authorization
// header so that the gRPC interceptors check scopes exactly as for gRPC
// clients. The returned connection must be closed after the HTTP server stops.
func newGateway(ctx context.Context, grpcAddr string, auth *authenticator, maxContent int64) (http.Handler, *grpc.ClientConn, error) {
	conn, err := grpc.NewClient("passthrough:///"+grpcAddr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(int(maxContent)+messageSlack),
			grpc.MaxCallSendMsgSize(int(maxContent)+messageSlack)),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("gateway: dial %s: %w", grpcAddr, err)
	}
	mux := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.JSONPb{
		MarshalOptions:   jsonOptions,
		UnmarshalOptions: protojson.UnmarshalOptions{},
	}))
	for _, register := range []func(context.Context, *runtime.ServeMux, *grpc.ClientConn) error{
		ctxdv1.RegisterVfsServiceHandler,
		ctxdv1.RegisterSearchServiceHandler,
		ctxdv1.RegisterIngestServiceHandler,
		ctxdv1.RegisterAdminServiceHandler,
	} {
		if err := register(ctx, mux, conn); err != nil {
			conn.Close()
			return nil, nil, fmt.Errorf("gateway: %w", err)
		}
	}
	top := http.NewServeMux()
	top.Handle("/v1/", mux)
	top.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openapi.Spec)
	})
	return requireToken(auth, top), conn, nil
}

// requireToken rejects HTTP requests without a valid bearer token before they
// reach the gateway; per-method scopes are checked by the gRPC interceptors.
func requireToken(auth *authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := auth.authorize(r.Header.Get("Authorization"), ""); err != nil {
			body, _ := jsonOptions.Marshal(status.Convert(err).Proto())
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("WWW-Authenticate", `Bearer realm="ctxd"`)
			w.WriteHeader(http.StatusUnauthorized)
			w.Write(body)
			return
		}
		next.ServeHTTP(w, r)
	})
}
