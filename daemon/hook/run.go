package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Defaults of Config.
const (
	// Actor names Claude Code in the sessions it starts.
	Actor = "claude-code"
	// DefaultBudget is the token budget of the context injected at
	// SessionStart.
	DefaultBudget = 2000
	// DefaultPromptBudget is the token budget of the context injected for
	// a prompt; it comes with every prompt, so it is smaller.
	DefaultPromptBudget = 1000
	// DefaultDeadline bounds one event: reading the input and every call.
	DefaultDeadline = 3 * time.Second
	// DefaultWait bounds how long a SessionStart waits for a daemon that
	// is starting.
	DefaultWait = 10 * time.Second
)

// sessions is the part of SessionService the hook calls.
type sessions interface {
	// StartSession opens the host's session, or returns it on a resume.
	StartSession(ctx context.Context, in *ctxdv1.StartSessionRequest, opts ...grpc.CallOption) (*ctxdv1.StartSessionResponse, error)
	// AppendEvents records prompts and tool uses.
	AppendEvents(ctx context.Context, in *ctxdv1.AppendEventsRequest, opts ...grpc.CallOption) (*ctxdv1.AppendEventsResponse, error)
	// DigestSession writes the digest at PreCompact and Stop.
	DigestSession(ctx context.Context, in *ctxdv1.DigestSessionRequest, opts ...grpc.CallOption) (*ctxdv1.DigestSessionResponse, error)
	// EndSession ends the session at SessionEnd.
	EndSession(ctx context.Context, in *ctxdv1.EndSessionRequest, opts ...grpc.CallOption) (*ctxdv1.EndSessionResponse, error)
	// Recall assembles the context injected at SessionStart and for prompts.
	Recall(ctx context.Context, in *ctxdv1.RecallRequest, opts ...grpc.CallOption) (*ctxdv1.RecallResponse, error)
}

// Config is one run of the hook.
type Config struct {
	// Conn is the connection to the daemon; Socket its path, for
	// WaitReady and for messages.
	Conn   grpc.ClientConnInterface
	Socket string
	// Project is the sessions' project; empty lets the daemon derive it
	// from the host's cwd.
	Project string
	// Budget and PromptBudget are the token budgets of the context
	// injected at SessionStart and for a prompt; 0 means the defaults.
	Budget, PromptBudget int32
	// Deadline bounds one event: reading the input and every call; 0
	// means DefaultDeadline.
	Deadline time.Duration
	// Wait bounds how long a SessionStart waits for a daemon that is
	// starting (WaitReady); 0 never waits.
	Wait time.Duration
}

// Run is `ctxd hook claude-code`: it reads one hook input from stdin,
// records and recalls through the daemon, and writes to stdout exactly the
// JSON the host documents (Output), or nothing. Whatever happens (a bad
// input, no daemon, a daemon error, the deadline, a panic) it returns, and
// says what went wrong in one line on stderr ("ctxd hook: EVENT: …"); a
// SessionStart that waits for a starting daemon says so in a line first.
// The command then exits 0: a hook never blocks or breaks its host.
//
// Every event ends within Deadline, a SessionStart within Wait + Deadline.
func Run(ctx context.Context, cfg Config, stdin io.Reader, stdout, stderr io.Writer) {
	if cfg.Deadline <= 0 {
		cfg.Deadline = DefaultDeadline
	}
	event := ""
	say := func(format string, args ...any) {
		msg := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
		if event != "" {
			msg = event + ": " + msg
		}
		fmt.Fprintf(stderr, "ctxd hook: %s\n", msg)
	}
	defer func() {
		if r := recover(); r != nil {
			say("internal error, nothing done: %v", r)
		}
	}()
	start := time.Now()
	readCtx, cancelRead := context.WithTimeout(ctx, cfg.Deadline)
	in, err := readWithin(readCtx, stdin)
	cancelRead()
	if err != nil {
		say("%v", err)
		return
	}
	event = in.HookEventName
	wait := event == SessionStart && cfg.Wait > 0
	bound := cfg.Deadline
	if wait {
		bound += cfg.Wait
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(bound))
	defer cancel()
	if wait {
		err := WaitReady(ctx, cfg.Conn, cfg.Wait, Readiness{Socket: cfg.Socket,
			Waiting: func() { say("the daemon at %s is starting; waiting up to %s for it (--wait)", cfg.Socket, cfg.Wait) }})
		if err != nil {
			say("%s", describe(cfg, []error{err}))
			return
		}
	}
	out, errs := handle(ctx, cfg, ctxdv1.NewSessionServiceClient(cfg.Conn), in)
	if len(out) > 0 {
		stdout.Write(out)
	}
	if len(errs) > 0 {
		say("%s", describe(cfg, errs))
	}
}

// readWithin reads the input, giving up when ctx ends (a host that never
// closes stdin).
func readWithin(ctx context.Context, r io.Reader) (*Input, error) {
	type result struct {
		in  *Input
		err error
	}
	done := make(chan result, 1)
	go func() {
		in, err := ReadInput(r)
		done <- result{in, err}
	}()
	select {
	case res := <-done:
		return res.in, res.err
	case <-ctx.Done():
		return nil, errors.New("no complete hook input on stdin within the deadline (--deadline)")
	}
}

// callError is a failed call, named for the message.
type callError struct {
	call string
	err  error
}

func (e *callError) Error() string { return e.call + ": " + e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// handle runs one event and returns the output and the failed calls.
func handle(ctx context.Context, cfg Config, c sessions, in *Input) ([]byte, []error) {
	var (
		mu   sync.Mutex
		errs []error
	)
	fail := func(call string, err error) {
		mu.Lock()
		errs = append(errs, &callError{call, err})
		mu.Unlock()
	}
	session := in.SessionID
	needSession := func() bool {
		if session == "" {
			fail("record", errors.New("the input has no session_id"))
		}
		return session != ""
	}
	recall := func(prompt string, budget int32) string {
		resp, err := c.Recall(ctx, &ctxdv1.RecallRequest{Project: cfg.Project, Cwd: in.Cwd, SessionId: session, Prompt: prompt, Budget: budget})
		if err != nil {
			fail("recall", err)
			return ""
		}
		return resp.Markdown
	}
	switch in.HookEventName {
	case SessionStart:
		// Starting and recalling are independent (the daemon derives the
		// same project from cwd for both): run them side by side.
		var wg sync.WaitGroup
		if needSession() {
			wg.Go(func() {
				if _, err := c.StartSession(ctx, &ctxdv1.StartSessionRequest{Id: session, Project: cfg.Project, Actor: Actor, Cwd: in.Cwd}); err != nil {
					fail("start the session", err)
				}
			})
		}
		markdown := recall("", orDefault(cfg.Budget, DefaultBudget))
		wg.Wait()
		return Output(SessionStart, markdown), errs
	case UserPromptSubmit:
		var wg sync.WaitGroup
		if needSession() {
			wg.Go(func() {
				if _, err := c.AppendEvents(ctx, &ctxdv1.AppendEventsRequest{SessionId: session, Project: cfg.Project, Cwd: in.Cwd,
					Events: []*ctxdv1.SessionEvent{PromptEvent(in.Prompt)}}); err != nil {
					fail("record the prompt", err)
				}
			})
		}
		var markdown string
		if strings.TrimSpace(in.Prompt) != "" {
			prompt := PromptEvent(in.Prompt).Text
			markdown = recall(prompt, orDefault(cfg.PromptBudget, DefaultPromptBudget))
		}
		wg.Wait()
		return Output(UserPromptSubmit, markdown), errs
	case PostToolUse, PostToolUseFailure:
		if needSession() {
			if _, err := c.AppendEvents(ctx, &ctxdv1.AppendEventsRequest{SessionId: session, Project: cfg.Project, Cwd: in.Cwd,
				Events: []*ctxdv1.SessionEvent{ToolEvent(in)}}); err != nil {
				fail("record the tool use", err)
			}
		}
	case PreCompact, Stop:
		// A Stop that Claude Code runs again because a Stop hook made it
		// continue digests nothing new.
		if in.HookEventName == Stop && in.StopHookActive {
			return nil, nil
		}
		if needSession() {
			if _, err := c.DigestSession(ctx, &ctxdv1.DigestSessionRequest{SessionId: session, Project: cfg.Project}); err != nil {
				fail("digest the session", err)
			}
		}
	case SessionEnd:
		if needSession() {
			if _, err := c.EndSession(ctx, &ctxdv1.EndSessionRequest{SessionId: session, Project: cfg.Project}); err != nil {
				fail("end the session", err)
			}
		}
	}
	return nil, errs
}

func orDefault(v, def int32) int32 {
	if v > 0 {
		return v
	}
	return def
}

// describe turns what failed into the one line of stderr: one sentence
// when the daemon is down, not ready or too old, else each failed call.
func describe(cfg Config, errs []error) string {
	down := func(err error) bool {
		if errors.Is(err, ErrDown) {
			return true
		}
		st, ok := status.FromError(errors.Unwrap(err))
		if !ok || st.Code() != codes.Unavailable || len(st.Details()) > 0 {
			return false
		}
		_, statErr := os.Stat(cfg.Socket)
		return statErr != nil || strings.Contains(st.Message(), "connection refused")
	}
	for _, err := range errs {
		switch {
		case down(err):
			return fmt.Sprintf("no daemon at %s; nothing recorded or recalled (start it: `ctxd serve`, or `systemctl --user start ctxd`)", cfg.Socket)
		case errors.Is(err, ErrNotReady):
			return fmt.Sprintf("%v; nothing recorded or recalled", err)
		case status.Code(errors.Unwrap(err)) == codes.Unimplemented:
			return fmt.Sprintf("the daemon at %s does not serve sessions (an older ctxd: upgrade it); nothing recorded or recalled", cfg.Socket)
		}
	}
	var parts []string
	for _, err := range errs {
		var ce *callError
		if !errors.As(err, &ce) {
			parts = append(parts, err.Error())
			continue
		}
		st, ok := status.FromError(ce.err)
		switch {
		case !ok:
			parts = append(parts, ce.Error())
		case st.Code() == codes.DeadlineExceeded:
			parts = append(parts, fmt.Sprintf("%s: no answer within %s (--deadline)", ce.call, cfg.Deadline))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s: %s", ce.call, st.Code(), st.Message()))
		}
	}
	return strings.Join(parts, "; ")
}
