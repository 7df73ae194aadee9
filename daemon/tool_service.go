package daemon

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// maxToolNameLen bounds CallToolRequest.name; tool names are far shorter.
const maxToolNameLen = 64

// toolService serves the agent tools of package toolset to tool loops
// without MCP. Tools run over d.toolBackend with the caller's credentials,
// so they never check scopes or access themselves.
type toolService struct {
	ctxdv1.UnimplementedToolServiceServer
	d *Daemon
}

func (s *toolService) ListTools(ctx context.Context, req *ctxdv1.ListToolsRequest) (*ctxdv1.ListToolsResponse, error) {
	format := req.GetFormat()
	if format == "" {
		format = "mcp"
	}
	if !slices.Contains(toolset.Formats, format) {
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, fmt.Sprintf("unknown tool format %q", format),
			fmt.Sprintf("Pass format %s (empty means mcp); `ctxd tools --format` takes the same names.", strings.Join(toolset.Formats, ", ")))
	}
	tools, err := toolset.Profile(req.GetProfile())
	if err != nil {
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, fmt.Sprintf("unknown tool profile %q", req.GetProfile()),
			fmt.Sprintf("Pass profile %s (empty means core); `ctxd tools --tools` takes the same names.", strings.Join(toolset.Profiles, ", ")))
	}
	out, err := toolset.Export(toolset.Allowed(tools, callerFrom(ctx).scopes.names()), format)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.ListToolsResponse{ToolsJson: string(out)}, nil
}

func (s *toolService) CallTool(ctx context.Context, req *ctxdv1.CallToolRequest) (*ctxdv1.CallToolResponse, error) {
	name := req.GetName()
	if n := utf8.RuneCountInString(name); n == 0 || n > maxToolNameLen {
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT,
			fmt.Sprintf("tool name has %d characters; it must have 1 to %d", n, maxToolNameLen),
			"Pass the name of a tool ListTools lists, for example context_read.")
	}
	args := []byte(req.GetArgumentsJson()) // toolset.Call reads empty as {}
	if a := req.GetArguments(); a != nil {
		var err error
		if args, err = protojson.Marshal(a); err != nil { // only NaN or infinite numbers, which JSON lacks
			return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, "arguments: "+err.Error(),
				"Pass the arguments as a JSON object matching the tool's input schema.")
		}
	}
	agent := defaultToolAgent
	if v := metadata.ValueFromIncomingContext(ctx, AgentMetadata); len(v) > 0 {
		agent = v[0]
	}
	res := toolset.Call(ctx, s.d.toolBackend(s.d.callerAuthorization(ctx), agent), name, args)
	if res.IsError {
		if err := callEnded(ctx); err != nil {
			return nil, err // the caller's deadline or cancellation, not the tool, ended it
		}
	}
	return &ctxdv1.CallToolResponse{Content: res.Text, IsError: res.IsError}, nil
}

// callEnded returns why ctx ended, or nil. A deadline that has passed counts
// before ctx's own timer fires: the tool's calls carry the same deadline,
// and their timers may fire first.
func callEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}
