package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Options configure New.
type Options struct {
	// Tools are the tools to list: a toolset.Profile, Allowed for the
	// caller's scopes, so that a host lists only what the caller may run.
	// A call of any other tool toolset knows runs too (see New).
	Tools []toolset.Tool
	// Backend returns the daemon API one request runs against. extra is the
	// SDK's transport information: under streamable HTTP it holds that HTTP
	// request's header; over stdio it is nil.
	Backend func(extra *mcp.RequestExtra) toolset.Backend
	// Version is the server version the initialize response reports.
	Version string
	// Logger receives the SDK's diagnostics; nil discards them.
	Logger *slog.Logger
}

// instructions tell the host's model what ctxd is, in the initialize response.
const instructions = `ctxd is your memory: items addressed as drive:/path (agent:/ is your scratch space, self:/ holds your context files such as soul.md, beliefs.md and goals.md; disk:/ and url:/ hold ingested files and pages). ` +
	`Search (context_search) before you read, read before you edit, and cite the refs you used; keep what you decide or learn with remember. ` +
	`A failed tool returns JSON {error_type, message, next_action_hint}: follow the hint. ` +
	`Items are also resources ctxd://DRIVE/PATH, and the prompt build_context assembles the context of a task.`

// New returns the MCP server: the tools of opts.Tools, items as resources and
// the build_context prompt, every request running against opts.Backend.
//
// tools/list offers opts.Tools, but tools/call runs any tool toolset knows
// (toolset.Known): a harness that calls context_delete or context_exists by
// name keeps working under the core profile, as it does over CallTool. The
// daemon checks the caller's scopes for those as for any call.
func New(opts Options) *mcp.Server {
	watch := &subscriptionWatch{backend: opts.Backend, watching: map[string]*watcher{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "ctxd", Title: "ctxd", Version: opts.Version}, &mcp.ServerOptions{
		Instructions:       instructions,
		Logger:             opts.Logger,
		SubscribeHandler:   watch.subscribe,
		UnsubscribeHandler: watch.unsubscribe,
	})
	watch.server = s
	listed := map[string]bool{}
	for _, t := range opts.Tools {
		s.AddTool(mcpTool(t), toolHandler(t.Name, opts.Backend))
		listed[t.Name] = true
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params != nil &&
				!listed[r.Params.Name] && toolset.Known(r.Params.Name) {
				return toolHandler(r.Params.Name, opts.Backend)(ctx, r)
			}
			return next(ctx, method, req)
		}
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "item",
		Title:       "ctxd item",
		URITemplate: "ctxd://{drive}/{+path}",
		Description: "An item of the store, by drive and path: ctxd://agent/notes/plan.md is the item agent:/notes/plan.md. Text items read as text, others as a blob, with the item's MIME type.",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return readResource(ctx, opts.Backend(req.Extra), req.Params.URI)
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "subscription",
		Title:       "ctxd durable subscription",
		URITemplate: subscriptionScheme + "{name}",
		MIMEType:    "application/json",
		Description: "The matches waiting in a durable subscription's inbox (context_watch_query), left there; subscribe to be told when one arrives, and acknowledge with context_read_subscription.",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return readSubscriptionResource(ctx, opts.Backend(req.Extra), req.Params.URI)
	})
	// The SDK lists registered resources only; the items are listed from
	// the store instead (the template above gives the resources capability).
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			var cursor string
			if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil {
				cursor = p.Cursor
			}
			return listResources(ctx, opts.Backend(req.GetExtra()), cursor)
		}
	})
	s.AddPrompt(buildContextPrompt, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return buildContext(ctx, opts.Backend(req.Extra), req.Params.Arguments)
	})
	return s
}

// mcpTool is t as MCP lists it. Every hint is spelled out: MCP's defaults
// (destructive, open world) are not what an absent field means here.
func mcpTool(t toolset.Tool) *mcp.Tool {
	destructive, openWorld := t.Annotations.Destructive, t.Annotations.OpenWorld
	return &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    t.Annotations.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Annotations.Idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
}

// toolHandler runs the tool with toolset.Call. Its result, success or
// failure, is a tool result with the JSON text as its one text content. The
// tools declare no output schema, so there is no structuredContent: a copy of
// the text there would double every result's bytes and encoding time, which
// is most of what `ctxd mcp` adds to a call. toolset validates the arguments,
// so the raw handler of Server.AddTool is the one to use.
func toolHandler(name string, backend func(*mcp.RequestExtra) toolset.Backend) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := toolset.Call(ctx, backend(req.Extra), name, req.Params.Arguments)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}, nil
	}
}

// buildContextPrompt is the prompt form of the build_context tool.
var buildContextPrompt = &mcp.Prompt{
	Name:  "build_context",
	Title: "Build the context of a task",
	Description: "Assembles what ctxd knows for a task: the always-loaded context files (soul, beliefs, goals, capabilities), " +
		"the contextual files the task matches and the best search results, within a token budget, as one markdown message.",
	Arguments: []*mcp.PromptArgument{
		{Name: "task", Title: "Task", Description: "The task, in words; it selects the contextual files and is the search query.", Required: true},
		{Name: "budget", Title: "Token budget", Description: "Token budget as a whole number; empty means the daemon's default (4000), at most its limits.max_token_budget (default 100000)."},
	},
}

// buildContext answers prompts/get for build_context: the assembled markdown
// as one user message; the description gives the accounting and warnings.
func buildContext(ctx context.Context, b toolset.Backend, args map[string]string) (*mcp.GetPromptResult, error) {
	req := &ctxdv1.BuildContextRequest{Task: args["task"]}
	if v := strings.TrimSpace(args["budget"]); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return nil, requestError("", invalidArgument(fmt.Sprintf("budget %q is not a whole number of tokens", v),
				"Pass budget as a whole number such as 4000, or leave it empty for the daemon's default."))
		}
		req.Budget = int32(n)
	}
	resp, err := b.Context.BuildContext(ctx, req)
	if err != nil {
		return nil, requestError("", err)
	}
	desc := fmt.Sprintf("Context for %q: %d sections, %d of %d tokens", req.Task, len(resp.GetSections()), resp.GetTokensUsed(), resp.GetBudget())
	if n := len(resp.GetOmitted()); n > 0 {
		desc += fmt.Sprintf(", %d left out", n)
	}
	if w := resp.GetWarnings(); len(w) > 0 {
		desc += ". " + strings.Join(w, " ")
	}
	return &mcp.GetPromptResult{
		Description: desc,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: resp.GetMarkdown()}}},
	}, nil
}

// invalidArgument is an INVALID_ARGUMENT status with the daemon's
// ErrorDetail, so toolset.ErrorResult renders it like the daemon's own.
func invalidArgument(msg, hint string) error {
	st, err := status.New(codes.InvalidArgument, msg).WithDetails(&ctxdv1.ErrorDetail{
		Type: ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, NextActionHint: hint,
	})
	if err != nil { // only for a detail that can not be marshaled
		return status.Error(codes.InvalidArgument, msg)
	}
	return st.Err()
}

// requestError turns a failed resource read or prompt into the JSON-RPC
// error MCP expects there (these have no isError result): the message is the
// seed's JSON error text, as a failed tool's; data names the resource, if
// any. A missing item is MCP's resource-not-found.
func requestError(uri string, err error) error {
	text := toolset.ErrorResult(err).Text
	code := int64(jsonrpc.CodeInternalError)
	switch status.Code(err) {
	case codes.NotFound:
		code = mcp.CodeResourceNotFound
	case codes.InvalidArgument, codes.OutOfRange:
		code = jsonrpc.CodeInvalidParams
	}
	e := &jsonrpc.Error{Code: code, Message: text}
	if uri != "" {
		e.Data, _ = json.Marshal(map[string]string{"uri": uri}) // a string always marshals
	}
	return e
}
