package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/spf13/cobra"
)

// maxMessage lets the CLI send and receive items up to the daemon's largest
// content limit; the daemon enforces its own configured limit.
const maxMessage = 1 << 30

// clients are the API stubs of one connection.
type clients struct {
	conn  *grpc.ClientConn
	vfs   ctxdv1.VfsServiceClient
	admin ctxdv1.AdminServiceClient
}

// dial connects to the daemon's unix socket, with extra dial options after
// the CLI's own. grpc connects lazily, so a missing daemon surfaces as
// UNAVAILABLE on the first call.
func (c *cli) dial(extra ...grpc.DialOption) (*clients, error) {
	// A relative socket path is relative to the working directory; a unix://
	// target must be absolute (a relative one would parse as an authority).
	socket, err := filepath.Abs(c.socket)
	if err != nil {
		return nil, fmt.Errorf("socket path %s: %w", c.socket, err)
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)),
	}
	if tok := cmp.Or(c.token, os.Getenv("CTXD_TOKEN")); tok != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearerToken(tok)))
	}
	conn, err := grpc.NewClient("unix://"+socket, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", c.socket, err)
	}
	return &clients{conn: conn, vfs: ctxdv1.NewVfsServiceClient(conn), admin: ctxdv1.NewAdminServiceClient(conn)}, nil
}

// bearerToken sends a token as "authorization: Bearer <token>" on every
// call, which a daemon with socket_auth requires. The unix socket is local,
// so the token needs no transport security.
type bearerToken string

func (t bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

func (bearerToken) RequireTransportSecurity() bool { return false }

// call dials, runs fn with a deadline, and closes the connection.
func (c *cli) call(ctx context.Context, fn func(context.Context, *clients) error) error {
	cl, err := c.dial()
	if err != nil {
		return err
	}
	defer cl.conn.Close()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return fn(ctx, cl)
}

var jsonOut = protojson.MarshalOptions{Multiline: true, Indent: "  ", UseProtoNames: true, EmitUnpopulated: true}

// printJSON writes a response message as JSON.
func (c *cli) printJSON(m proto.Message) error {
	b, err := jsonOut.Marshal(m)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, string(b))
	return nil
}

// printJSONLine prints m as one line of JSON: an event of a stream.
func (c *cli) printJSONLine(m proto.Message) error {
	b, err := jsonLine.Marshal(m)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, string(b))
	return nil
}

// untilInterrupted returns the context of a call that runs until SIGINT or
// SIGTERM (a clean end), or --timeout when it was given.
func (c *cli) untilInterrupted(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	if !cmd.Flags().Changed("timeout") {
		return ctx, stop
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	return ctx, func() { cancel(); stop() }
}

// printError reports a failed call: the message, the error type and the hint
// for people; the status as JSON on stderr with --json.
func (c *cli) printError(err error) {
	st, ok := status.FromError(err)
	if !ok {
		fmt.Fprintf(c.stderr, "ctxd: %v\n", err)
		return
	}
	var detail *ctxdv1.ErrorDetail
	for _, d := range st.Details() {
		if ed, ok := d.(*ctxdv1.ErrorDetail); ok {
			detail = ed
		}
	}
	if c.json {
		b, _ := jsonOut.Marshal(st.Proto())
		fmt.Fprintln(c.stderr, string(b))
		return
	}
	msg := st.Message()
	switch {
	case st.Code() == codes.Unavailable && detail == nil:
		msg = fmt.Sprintf("cannot reach the daemon at %s: %s", c.socket, msg)
		detail = &ctxdv1.ErrorDetail{NextActionHint: "Start it with `ctxd serve` (or `make run`), or point --socket / CTXD_SOCKET at its socket."}
	case st.Code() == codes.ResourceExhausted && detail == nil:
		// grpc refuses a request over twice the daemon's limit before the
		// daemon sees it, so the status carries no detail; say what it means.
		detail = &ctxdv1.ErrorDetail{Type: ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE,
			NextActionHint: "The request is far over the daemon's size limit (max_content_bytes per item). Split the content into several items, or restart the daemon with a larger --max-content-bytes (max_content_bytes in its config)."}
	}
	kind := st.Code().String()
	if detail != nil && detail.Type != ctxdv1.ErrorType_ERROR_TYPE_UNSPECIFIED {
		kind = strings.TrimPrefix(detail.Type.String(), "ERROR_TYPE_")
	}
	fmt.Fprintf(c.stderr, "ctxd: %s: %s\n", kind, msg)
	if detail != nil && detail.NextActionHint != "" {
		fmt.Fprintf(c.stderr, "hint: %s\n", cliHint(detail.NextActionHint))
	}
}
