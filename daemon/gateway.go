package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/gen/openapi"
)

// jsonOptions are shared by the gateway and its error bodies: snake_case field
// names as in the protos, and every field present so scripts need no defaults.
var jsonOptions = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// newGateway returns the JSON/HTTP handler. It calls the gRPC server over
// conn, the daemon's internal connection (startInternal), forwarding the
// caller's Authorization header so that the gRPC interceptors check scopes
// exactly as for gRPC clients.
func newGateway(ctx context.Context, conn *grpc.ClientConn, auth *authenticator, maxContent int64) (http.Handler, error) {
	limit := maxRequestBytes(maxContent)
	ge, err := newGatewayErrors(maxContent)
	if err != nil {
		return nil, err
	}
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.JSONPb{
			MarshalOptions:   jsonOptions,
			UnmarshalOptions: protojson.UnmarshalOptions{},
		}),
		runtime.WithErrorHandler(ge.handle),
		runtime.WithRoutingErrorHandler(ge.routing),
	)
	for _, register := range []func(context.Context, *runtime.ServeMux, *grpc.ClientConn) error{
		ctxdv1.RegisterVfsServiceHandler,
		ctxdv1.RegisterSearchServiceHandler,
		ctxdv1.RegisterAdminServiceHandler,
		ctxdv1.RegisterContextServiceHandler,
		ctxdv1.RegisterSessionServiceHandler,
		ctxdv1.RegisterToolServiceHandler,
		ctxdv1.RegisterWatchServiceHandler,
		func(ctx context.Context, mux *runtime.ServeMux, conn *grpc.ClientConn) error {
			return ctxdv1.RegisterIngestServiceHandlerClient(ctx, mux, ingestFirstMessage{ctxdv1.NewIngestServiceClient(conn)})
		},
		func(ctx context.Context, mux *runtime.ServeMux, conn *grpc.ClientConn) error {
			return ctxdv1.RegisterSubscriptionServiceHandlerClient(ctx, mux, subscribeFirstMessage{ctxdv1.NewSubscriptionServiceClient(conn)})
		},
	} {
		if err := register(ctx, mux, conn); err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
	}
	top := http.NewServeMux()
	top.Handle("/", mux)
	top.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openapi.Spec)
	})
	top.HandleFunc("/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, HEAD")
		writeStatus(w, http.StatusMethodNotAllowed, methodNotAllowed(r, "GET"))
	})
	return requireToken(auth, limitBody(limit, maxContent, top)), nil
}

// requireToken rejects HTTP requests without a valid bearer token before they
// reach the gateway; per-method scopes are checked by the gRPC interceptors.
func requireToken(auth *authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := auth.authenticate(r.Header.Get("Authorization")); err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ctxd"`)
			writeStatus(w, http.StatusUnauthorized, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// limitBody refuses a body over limit bytes with 413: at once when its
// Content-Length says so, otherwise when reading it reaches the limit, so an
// endless body costs at most limit bytes.
func limitBody(limit, maxContent int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			w.Header().Set("Connection", "close") // do not read the body to reuse the connection
			writeStatus(w, http.StatusRequestEntityTooLarge, bodyTooLarge(limit, maxContent))
			return
		}
		r.Body = &cappedBody{ReadCloser: http.MaxBytesReader(w, r.Body, limit)}
		next.ServeHTTP(w, r)
	})
}

// cappedBody is an http.MaxBytesReader that remembers reaching its limit, so
// the gateway's error handler can tell an oversize body from malformed JSON
// (the gateway reports both as a decoding error).
type cappedBody struct {
	io.ReadCloser
	exceeded bool
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		b.exceeded = true
	}
	return n, err
}

func bodyTooLarge(limit, maxContent int64) error {
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE,
		fmt.Sprintf("the request body is over %d bytes, the most the daemon reads", limit), contentLimitHint(maxContent))
}

// contentLimitHint says what to do about a request over the size limits.
func contentLimitHint(maxContent int64) string {
	return fmt.Sprintf("Items hold at most %d bytes of content (max_content_bytes), and a request at most that plus %d bytes "+
		"(an HTTP body twice that, for JSON escaping). Split the content into several items, or raise the limit with "+
		"--max-content-bytes or max_content_bytes in the daemon config.", maxContent, messageSlack)
}

// writeStatus writes err as the JSON of its status, the body of every error
// the HTTP edge returns.
func writeStatus(w http.ResponseWriter, httpStatus int, err error) {
	body, _ := jsonOptions.Marshal(status.Convert(err).Proto())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	w.Write(body)
}

// gatewayErrors gives the errors the gateway itself produces (malformed
// JSON, unknown fields, wrong methods, unknown paths) an ErrorDetail like
// every error from the services, and sets the HTTP status.
type gatewayErrors struct {
	maxContent int64
	allow      map[string]string // path -> its methods ("GET"), from the OpenAPI document
}

func newGatewayErrors(maxContent int64) (*gatewayErrors, error) {
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Spec, &spec); err != nil {
		return nil, fmt.Errorf("gateway: read the OpenAPI document: %w", err)
	}
	ge := &gatewayErrors{maxContent: maxContent, allow: map[string]string{}}
	for path, ops := range spec.Paths {
		var methods []string
		for m := range ops {
			methods = append(methods, strings.ToUpper(m))
		}
		sort.Strings(methods)
		ge.allow[path] = strings.Join(methods, ", ")
	}
	return ge, nil
}

// handle is the gateway's error handler. CONTENT_TOO_LARGE answers 413;
// other types keep the HTTP status of their gRPC code.
func (ge *gatewayErrors) handle(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	httpStatus := 0
	var hs *runtime.HTTPStatusError
	if errors.As(err, &hs) {
		httpStatus, err = hs.HTTPStatus, hs.Err
	}
	if b, ok := r.Body.(*cappedBody); ok && b.exceeded {
		err = bodyTooLarge(maxRequestBytes(ge.maxContent), ge.maxContent)
	}
	st := status.Convert(err)
	detail := errorDetailOf(st)
	if detail == nil {
		st = status.Convert(withDetail(st))
		detail = errorDetailOf(st)
	}
	switch {
	case detail != nil && detail.Type == ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE:
		httpStatus = http.StatusRequestEntityTooLarge
	case httpStatus == 0:
		httpStatus = runtime.HTTPStatusFromCode(st.Code())
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, &runtime.HTTPStatusError{HTTPStatus: httpStatus, Err: st.Err()})
}

// withDetail adds an ErrorDetail to a status the gateway or grpc made.
// Cancellation and deadlines have no error type and stay as they are.
func withDetail(st *status.Status) error {
	switch st.Code() {
	case codes.InvalidArgument: // the request did not parse
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, "malformed request: "+st.Message(),
			"Send a JSON object with the request's fields, named in snake_case as /openapi.json lists them; query parameters must parse as their field's type.")
	case codes.Unavailable:
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, st.Message(), "Retry in a moment; the daemon may be starting or stopping.")
	case codes.Unimplemented:
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNIMPLEMENTED, st.Message(), "/openapi.json lists the endpoints.")
	case codes.Canceled, codes.DeadlineExceeded:
		return st.Err()
	}
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_INTERNAL, st.Message(), "The daemon log has the details; retry, and report it if it persists.")
}

// routing answers requests that match no endpoint: 405 with the Allow
// header when the path exists under another method, else 404.
func (ge *gatewayErrors) routing(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	var err error
	switch httpStatus {
	case http.StatusMethodNotAllowed:
		allow := ge.allow[r.URL.Path]
		if allow != "" {
			w.Header().Set("Allow", allow)
		}
		err = methodNotAllowed(r, allow)
	case http.StatusNotFound:
		err = apiError(ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND, fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path),
			"/openapi.json lists the endpoints; paths start with /v1/.")
	case http.StatusBadRequest:
		err = apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, fmt.Sprintf("malformed path %s", r.URL.Path),
			"/openapi.json lists the endpoints.")
	default:
		err = apiError(ctxdv1.ErrorType_ERROR_TYPE_INTERNAL, "unexpected routing error", "The daemon log has the details.")
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, &runtime.HTTPStatusError{HTTPStatus: httpStatus, Err: err})
}

func methodNotAllowed(r *http.Request, allow string) error {
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path),
		fmt.Sprintf("Use %s %s (/openapi.json lists the endpoints).", allow, r.URL.Path))
}

// errorDetailOf returns the ErrorDetail of st, or nil.
func errorDetailOf(st *status.Status) *ctxdv1.ErrorDetail {
	for _, d := range st.Details() {
		if ed, ok := d.(*ctxdv1.ErrorDetail); ok {
			return ed
		}
	}
	return nil
}

// ingestFirstMessage waits for each stream's first message, so that a stream
// failing before it fails the call itself: the gateway then answers as for a
// unary call, the status as the body with its HTTP code, instead of an
// {"error": ...} chunk. Errors after the first message still arrive as such
// chunks of the 200 response.
type ingestFirstMessage struct{ ctxdv1.IngestServiceClient }

func (c ingestFirstMessage) Add(ctx context.Context, in *ctxdv1.AddRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[ctxdv1.AddResponse], error) {
	return firstMessage(c.IngestServiceClient.Add(ctx, in, opts...))
}

func (c ingestFirstMessage) Refresh(ctx context.Context, in *ctxdv1.RefreshRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[ctxdv1.RefreshResponse], error) {
	return firstMessage(c.IngestServiceClient.Refresh(ctx, in, opts...))
}

func (c ingestFirstMessage) Reembed(ctx context.Context, in *ctxdv1.ReembedRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[ctxdv1.ReembedResponse], error) {
	return firstMessage(c.IngestServiceClient.Reembed(ctx, in, opts...))
}

// subscribeFirstMessage waits for Subscribe's first message (Ready, or the
// refusal), as ingestFirstMessage does.
type subscribeFirstMessage struct {
	ctxdv1.SubscriptionServiceClient
}

func (c subscribeFirstMessage) Subscribe(ctx context.Context, in *ctxdv1.SubscribeRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[ctxdv1.SubscribeResponse], error) {
	return firstMessage(c.SubscriptionServiceClient.Subscribe(ctx, in, opts...))
}

func firstMessage[T any](s grpc.ServerStreamingClient[T], err error) (grpc.ServerStreamingClient[T], error) {
	if err != nil {
		return nil, err
	}
	first, err := s.Recv()
	switch {
	case errors.Is(err, io.EOF):
		return s, nil // an empty stream; Recv keeps returning io.EOF
	case err != nil:
		return nil, err
	}
	return &peekedStream[T]{ServerStreamingClient: s, first: first}, nil
}

// peekedStream replays the first message, already received.
type peekedStream[T any] struct {
	grpc.ServerStreamingClient[T]
	first *T
}

func (p *peekedStream[T]) Recv() (*T, error) {
	if m := p.first; m != nil {
		p.first = nil
		return m, nil
	}
	return p.ServerStreamingClient.Recv()
}
