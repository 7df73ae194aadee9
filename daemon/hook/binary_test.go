package hook_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ctxd/ctxd/daemon"
	"github.com/ctxd/ctxd/daemon/hook"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// These tests run the real ctxd binary as Claude Code runs a command hook:
// one process per event, the event's JSON on stdin, stdout and stderr
// read whole, the exit code checked; against a real daemon on a unix
// socket, and without one.

var (
	buildOnce sync.Once
	binPath   string
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// ctxdBinary builds cmd/ctxd once per test run, unless CTXD_TEST_BINARY
// names a build to run instead.
func ctxdBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if b := os.Getenv("CTXD_TEST_BINARY"); b != "" {
			binPath = b
			return
		}
		if binDir, buildErr = os.MkdirTemp("", "ctxdhookbin"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "ctxd")
		if out, err := exec.Command("go", "build", "-o", binPath, "github.com/ctxd/ctxd/cmd/ctxd").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// shortDir is a temp dir with a short path (unix socket paths are short),
// removed when the test ends.
func shortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctxdhook")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// hookEnv is the environment hooks run with: PATH holds only bin (where a
// test may put a systemctl), so the machine's own systemd plays no part.
func hookEnv(bin string, extra ...string) []string {
	return append([]string{"PATH=" + bin, "HOME=" + bin, "XDG_RUNTIME_DIR=" + bin}, extra...)
}

// hookResult is one hook process's outcome.
type hookResult struct {
	code           int
	stdout, stderr string
}

// stderrLines are the lines the hook wrote on stderr.
func (r hookResult) stderrLines() []string {
	if r.stderr == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
}

// runHook runs `ctxd --socket SOCKET hook claude-code ARGS` with input on
// stdin, as the host does, and fails the test if it has not exited after
// two minutes (the hook's own bounds are far below).
func runHook(t *testing.T, socket, input string, env []string, args ...string) hookResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ctxdBinary(t), append([]string{"--socket", socket, "hook", "claude-code"}, args...)...)
	cmd.Stdin = strings.NewReader(input)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the hook did not exit within 2 minutes; stderr: %s", errOut.String())
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return hookResult{cmd.ProcessState.ExitCode(), out.String(), errOut.String()}
}

// testDaemon is a real daemon in this process, on a socket in dir.
type testDaemon struct {
	*daemon.Daemon
	cfg  daemon.Config
	conn *grpc.ClientConn
}

// daemonConfig is a socket-only config without a model in dir.
func daemonConfig(dir string) daemon.Config {
	cfg := daemon.DefaultConfig()
	cfg.DataDir, cfg.Socket, cfg.HTTP, cfg.ModelDir = filepath.Join(dir, "data"), filepath.Join(dir, "s.sock"), "", ""
	cfg.TokenFile = filepath.Join(dir, "token")
	return cfg
}

// startDaemon starts a daemon with cfg, stopped when the test ends (or
// earlier with stop).
func startDaemon(t *testing.T, cfg daemon.Config) *testDaemon {
	t.Helper()
	d, err := daemon.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("unix://"+cfg.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	td := &testDaemon{Daemon: d, cfg: cfg, conn: conn}
	t.Cleanup(td.stop)
	return td
}

func (d *testDaemon) stop() {
	if d.Daemon == nil {
		return
	}
	d.conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d.Daemon.Stop(ctx)
	d.Daemon = nil
}

func (d *testDaemon) sessions() ctxdv1.SessionServiceClient {
	return ctxdv1.NewSessionServiceClient(d.conn)
}

// write stores an item.
func (d *testDaemon) write(t *testing.T, ref, content string) {
	t.Helper()
	if _, err := ctxdv1.NewVfsServiceClient(d.conn).Write(context.Background(), &ctxdv1.WriteRequest{
		Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: content}, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE}); err != nil {
		t.Fatal(err)
	}
}

// Context files of the tests: one always loaded, one for prompts about
// factorials.
const (
	alwaysFile      = "---\nloading: always\ntitle: House rules\n---\nAlways run make lint before committing; the CI rejects unformatted Go.\n"
	alwaysText      = "Always run make lint before committing"
	contextualFile  = "---\nloading: contextual\ntitle: Factorial helpers\ndescription: How we compute factorials\n---\nFactorials use math/big beyond 20!; the factorial function lives in mathx/factorial.go.\n"
	contextualText  = "the factorial function lives in mathx/factorial.go"
	unmatchedPrompt = "Rename the zebra crossing lighthouse"
)

// projectDir is a working directory named like the project.
func projectDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(shortDir(t), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHook_DaemonDown: with no daemon (no socket, or a socket file nobody
// listens on) every documented event exits 0 at once, prints nothing on
// stdout and one line on stderr; a SessionStart does not wait, however
// long --wait.
func TestHook_DaemonDown(t *testing.T) {
	dir := shortDir(t)
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	for _, socket := range []string{filepath.Join(dir, "absent.sock"), stale} {
		for name, input := range reference {
			t.Run(filepath.Base(socket)+"/"+name, func(t *testing.T) {
				r := runHook(t, socket, input, hookEnv(dir), "--wait", "10m")
				event, _, _ := strings.Cut(name, "/")
				want := "ctxd hook: " + event + ": no daemon at " + socket + ";"
				if name == "Stop/active" {
					want = "" // nothing to do: the hook does not even call
				}
				if r.code != 0 || r.stdout != "" || len(r.stderrLines()) > 1 || !strings.HasPrefix(r.stderr, want) {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 0, no stdout, one line %q…", r.code, r.stdout, r.stderr, want)
				}
			})
		}
	}
}

// TestHook_BadInput: whatever the input or the flags, the hook exits 0,
// prints nothing on stdout and at most one line on stderr; unknown events
// are ignored silently.
func TestHook_BadInput(t *testing.T) {
	dir := shortDir(t)
	d := startDaemon(t, daemonConfig(dir))
	tests := []struct {
		name, input string
		args        []string
		stderr      string // a part of the one line; "" for none
	}{
		{"garbage", "garbage", nil, "the hook input is not a JSON object"},
		{"empty", "", nil, "the hook input is not a JSON object"},
		{"array", "[1, 2]", nil, "the hook input is not a JSON object"},
		{"unknown event", withSession(`{`+commonFields+`"hook_event_name": "Notification", "message": "Claude needs your permission", "notification_type": "permission_prompt"}`, "s1", dir), nil, ""},
		{"no session id", strings.Replace(reference["PostToolUse/Write"], `"session_id": "abc123",`, "", 1), nil, "the input has no session_id"},
		{"bad session id", withSession(reference["SessionEnd"], "bad id!", dir), nil, "end the session: InvalidArgument: the session id"},
		{"unknown flag", reference["Stop"], []string{"--verbose"}, "unknown flag: --verbose"},
		{"bad flag value", reference["Stop"], []string{"--budget", "lots"}, `invalid argument "lots"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHook(t, d.cfg.Socket, tt.input, hookEnv(dir), tt.args...)
			lines := r.stderrLines()
			if r.code != 0 || r.stdout != "" || tt.stderr == "" && len(lines) != 0 ||
				tt.stderr != "" && (len(lines) != 1 || !strings.Contains(lines[0], tt.stderr)) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 0, no stdout, stderr with %q", r.code, r.stdout, r.stderr, tt.stderr)
			}
		})
	}
}

// TestHook_Session drives a whole Claude Code session through the binary,
// event by event with the documented inputs, then a second session of the
// same project, and checks what was injected and what the daemon holds.
func TestHook_Session(t *testing.T) {
	dir := shortDir(t)
	d := startDaemon(t, daemonConfig(dir))
	d.write(t, "self:/rules.md", alwaysFile)
	d.write(t, "self:/factorial.md", contextualFile)
	cwd := projectDir(t, "myproject")
	env := hookEnv(dir)
	ctx := context.Background()
	run := func(input string) hookResult {
		t.Helper()
		r := runHook(t, d.cfg.Socket, withSession(input, "sess-1", cwd), env)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
		return r
	}
	quiet := func(input string) {
		t.Helper()
		if r := run(input); r.stdout != "" {
			t.Errorf("stdout %q, want nothing", r.stdout)
		}
	}

	// SessionStart: the always file, as the documented JSON.
	event, context := decodeOutput(t, []byte(run(reference["SessionStart"]).stdout))
	if event != hook.SessionStart || !strings.Contains(context, alwaysText) {
		t.Errorf("SessionStart injected %s %q", event, context)
	}
	got, err := d.sessions().GetSession(ctx, &ctxdv1.GetSessionRequest{SessionId: "sess-1"})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Session; s.Project != "myproject" || s.Actor != "claude-code" || s.Cwd != cwd || s.EndedAt != nil {
		t.Errorf("session %v", s)
	}

	// UserPromptSubmit: recorded; the contextual file that matches is
	// injected, nothing for a prompt that matches nothing.
	event, context = decodeOutput(t, []byte(run(reference["UserPromptSubmit"]).stdout))
	if event != hook.UserPromptSubmit || !strings.Contains(context, contextualText) || strings.Contains(context, alwaysText) {
		t.Errorf("UserPromptSubmit injected %s %q", event, context)
	}
	quiet(strings.Replace(reference["UserPromptSubmit"], "Write a function to calculate the factorial of a number", unmatchedPrompt, 1))

	// Tool uses, failures, a task list, a secret file and a secret.
	quiet(reference["PostToolUse/Write"])
	quiet(reference["PostToolUseFailure/Bash"])
	quiet(postToolUse("TodoWrite", `{"todos": [
      {"content": "write the factorial function", "status": "completed", "activeForm": "Writing it"},
      {"content": "handle negative input", "status": "in_progress", "activeForm": "Handling negative input"},
      {"content": "benchmark math/big", "status": "pending", "activeForm": "Benchmarking"}]}`, `{"oldTodos": [], "newTodos": []}`))
	quiet(postToolUse("Read", `{"file_path": "`+cwd+`/.env"}`, `{"type": "text", "file": {"filePath": "`+cwd+`/.env", "content": "STRIPE_KEY=abc"}}`))
	quiet(postToolUse("Bash", `{"command": "curl -H 'Authorization: Bearer `+ghToken+`' https://api.github.com/user", "description": "Check the token"}`,
		`{"stdout": "{}", "stderr": "", "interrupted": false, "isImage": false}`))

	// Stop digests (not when Claude Code already continues for a Stop
	// hook), PreCompact too.
	quiet(reference["Stop/active"])
	if got, _ = d.sessions().GetSession(ctx, &ctxdv1.GetSessionRequest{SessionId: "sess-1"}); got.Digest != "" {
		t.Errorf("an active Stop digested: %q", got.Digest)
	}
	quiet(reference["Stop"])
	if got, _ = d.sessions().GetSession(ctx, &ctxdv1.GetSessionRequest{SessionId: "sess-1"}); !strings.Contains(got.Digest, "npm test") {
		t.Errorf("digest after Stop: %q", got.Digest)
	}
	quiet(reference["PreCompact/auto"])
	// Claude Code starts the session again after compacting: same session.
	decodeOutput(t, []byte(run(strings.Replace(reference["SessionStart"], `"startup"`, `"compact"`, 1)).stdout))
	quiet(reference["SessionEnd"])

	got, err = d.sessions().GetSession(ctx, &ctxdv1.GetSessionRequest{SessionId: "sess-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Session.EndedAt == nil {
		t.Error("SessionEnd did not end the session")
	}
	type ev struct {
		kind ctxdv1.SessionEventKind
		text string
	}
	want := []ev{
		{ctxdv1.SessionEventKind_SESSION_EVENT_KIND_PROMPT, "Write a function to calculate the factorial of a number"},
		{ctxdv1.SessionEventKind_SESSION_EVENT_KIND_PROMPT, unmatchedPrompt},
		{fileChange, "Write: /path/to/file.txt (12 bytes)"},
		{errorKind, "npm test failed: Command exited with non-zero status code 1\ndescription: Run test suite"},
		{toolUse, "TodoWrite: 3 todos (1 completed, 1 in progress, 1 pending)\n- [x] write the factorial function\n- [ ] handle negative input\n- [ ] benchmark math/big"},
		{toolUse, "Read: " + cwd + "/.env (secret file name .env: nothing else recorded)"},
		{toolUse, "curl -H 'Authorization: Bearer [REDACTED]' https://api.github.com/user\ndescription: Check the token"},
	}
	if len(got.Events) != len(want) {
		t.Fatalf("%d events: %v", len(got.Events), got.Events)
	}
	for i, w := range want {
		if e := got.Events[i]; e.Kind != w.kind || e.Text != w.text {
			t.Errorf("event %d: %v %q, want %v %q", i, e.Kind, e.Text, w.kind, w.text)
		}
	}
	for _, s := range []string{"Files changed", "/path/to/file.txt", "npm test", "handle negative input", "benchmark math/big"} {
		if !strings.Contains(got.Digest, s) {
			t.Errorf("the digest lacks %q:\n%s", s, got.Digest)
		}
	}

	// The next session of the project starts with the rules, the first
	// session's digest and its open goals.
	r := runHook(t, d.cfg.Socket, withSession(reference["SessionStart"], "sess-2", cwd), env)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	_, context = decodeOutput(t, []byte(r.stdout))
	for _, s := range []string{alwaysText, "handle negative input", "benchmark math/big", "/path/to/file.txt"} {
		if !strings.Contains(context, s) {
			t.Errorf("the second session's context lacks %q:\n%s", s, context)
		}
	}
	if strings.Contains(context, "- [ ] write the factorial function") {
		t.Errorf("a completed todo is an open goal:\n%s", context)
	}
	list, err := d.sessions().ListSessions(ctx, &ctxdv1.ListSessionsRequest{Project: "myproject"})
	if err != nil || len(list.Sessions) != 2 {
		t.Errorf("sessions %v %v", list, err)
	}
}

// stderrWatcher hands over a process's stderr line by line.
func stderrWatcher(t *testing.T, cmd *exec.Cmd) (lines chan string, all func() string) {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	lines = make(chan string, 16)
	var mu sync.Mutex
	var got []string
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			mu.Lock()
			got = append(got, sc.Text())
			mu.Unlock()
			lines <- sc.Text()
		}
		close(lines)
	}()
	return lines, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(got, "\n")
	}
}

// waitLine waits for a line of lines that contains want.
func waitLine(t *testing.T, lines chan string, want string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stderr closed before a line with %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("no line with %q on stderr within a minute", want)
		}
	}
}

// startHook starts a SessionStart hook and returns its process, stdout
// and stderr lines.
func startHook(t *testing.T, socket, cwd string, env []string) (*exec.Cmd, *bytes.Buffer, chan string, func() string) {
	t.Helper()
	cmd := exec.Command(ctxdBinary(t), "--socket", socket, "hook", "claude-code", "--wait", "2m")
	cmd.Stdin = strings.NewReader(withSession(reference["SessionStart"], "sess-wait", cwd))
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	lines, all := stderrWatcher(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, &out, lines, all
}

// finish waits for the hook to exit 0 with the always file injected and
// only the waiting line on stderr.
func finish(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer, lines chan string, all func() string) {
	t.Helper()
	for range lines { // drain until stderr closes
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hook: %v; stderr %q", err, all())
	}
	_, context := decodeOutput(t, out.Bytes())
	if !strings.Contains(context, alwaysText) {
		t.Errorf("context %q", context)
	}
	if stderr := all(); strings.Count(stderr, "\n") != 0 || !strings.Contains(stderr, "is starting; waiting up to 2m0s") {
		t.Errorf("stderr %q, want the one waiting line", stderr)
	}
}

// TestHook_WaitsForAStartingDaemon: a SessionStart that meets a daemon
// whose socket answers but which has not opened its store yet (health
// NOT_SERVING) waits for it and injects the context, instead of nothing.
// The daemon is a `ctxd serve` process whose store the test holds locked
// (so it stays starting), frozen with SIGSTOP while the hook starts; the
// test lets it go once the hook says it waits.
func TestHook_WaitsForAStartingDaemon(t *testing.T) {
	dir := shortDir(t)
	cfg := daemonConfig(dir)
	first := startDaemon(t, cfg)
	first.write(t, "self:/rules.md", alwaysFile)
	first.stop()

	lock, err := os.OpenFile(filepath.Join(cfg.DataDir, "ctxd.db"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	serve := exec.Command(ctxdBinary(t), "serve", "--data-dir", cfg.DataDir, "--socket", cfg.Socket, "--http", "", "--model-dir", "", "--log-level", "error")
	serve.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Signal(syscall.SIGCONT)
		serve.Process.Kill()
		serve.Wait()
	})
	// The daemon listens first and opens its store after: wait for its
	// NOT_SERVING, then freeze it. It gives up on the lock after a second,
	// so the test looks for the socket before it dials, and retries fast.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(cfg.Socket); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon never listened")
		}
	}
	conn, err := grpc.NewClient("unix://"+cfg.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithConnectParams(hook.ConnectParams))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
		cancel()
		if err == nil && resp.Status == healthpb.HealthCheckResponse_NOT_SERVING {
			break
		}
		if err == nil || time.Now().After(deadline) {
			t.Fatalf("the daemon never said NOT_SERVING: %v %v", resp, err)
		}
	}
	if err := serve.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}

	cmd, out, lines, all := startHook(t, cfg.Socket, projectDir(t, "proj"), hookEnv(dir))
	waitLine(t, lines, "is starting; waiting")
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := serve.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	finish(t, cmd, out, lines, all)
}

// TestHook_WaitsThroughASystemdRestart: with the socket gone, a SessionStart
// waits only when systemd says the unit is on its way (activating), and
// then injects the context once the daemon is back; when systemd says the
// unit is inactive it reports the daemon down at once.
func TestHook_WaitsThroughASystemdRestart(t *testing.T) {
	dir := shortDir(t)
	cfg := daemonConfig(dir)
	first := startDaemon(t, cfg)
	first.write(t, "self:/rules.md", alwaysFile)
	first.stop()
	cwd := projectDir(t, "proj")
	systemctl := func(state string) {
		script := "#!/bin/sh\n[ \"$*\" = \"--user is-active " + hook.SystemdUnit + "\" ] && echo " + state + "\n"
		if err := os.WriteFile(filepath.Join(dir, "systemctl"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	systemctl("inactive")
	r := runHook(t, cfg.Socket, withSession(reference["SessionStart"], "sess-wait", cwd), hookEnv(dir), "--wait", "10m")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no daemon at") || len(r.stderrLines()) != 1 {
		t.Errorf("unit inactive: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	systemctl("activating")
	cmd, out, lines, all := startHook(t, cfg.Socket, cwd, hookEnv(dir))
	waitLine(t, lines, "is starting; waiting")
	startDaemon(t, cfg)
	finish(t, cmd, out, lines, all)
}

// TestHook_InstalledCommandRuns: `ctxd hook install claude-code --project`
// writes a command the host's shell runs as is; uninstall takes it away.
func TestHook_InstalledCommandRuns(t *testing.T) {
	dir := shortDir(t)
	d := startDaemon(t, daemonConfig(dir))
	d.write(t, "self:/rules.md", alwaysFile)
	project := projectDir(t, "proj")
	bin := ctxdBinary(t)
	cli := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = hookEnv(dir)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.Run()
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}
	if strings.HasPrefix(bin, filepath.Clean(os.TempDir())+"/") {
		// A binary in the temp dir would vanish: install refuses it by default.
		if code, _, errOut := cli("hook", "install", "claude-code", "--project", "--dir", project); code != 1 || !strings.Contains(errOut, "--ctxd PATH") {
			t.Errorf("install from the temp dir: exit %d, %q", code, errOut)
		}
	}
	code, out, errOut := cli("--socket", d.cfg.Socket, "hook", "install", "claude-code", "--project", "--dir", project, "--ctxd", bin, "--budget", "1500")
	path := filepath.Join(project, ".claude", "settings.json")
	if code != 0 || !strings.Contains(out, "installed 7 ctxd hooks in "+path) {
		t.Fatalf("install: exit %d, %q %q", code, out, errOut)
	}
	s := readHooks(t, path)
	command := s.Hooks[hook.SessionStart][0].Hooks[0].Command
	if want := bin + " --socket " + d.cfg.Socket + " hook claude-code --budget 1500"; command != want {
		t.Errorf("command %q, want %q", command, want)
	}
	sh := exec.Command("sh", "-c", command)
	sh.Stdin = strings.NewReader(withSession(reference["SessionStart"], "sess-sh", project))
	sh.Env = hookEnv(dir)
	var shOut, shErr bytes.Buffer
	sh.Stdout, sh.Stderr = &shOut, &shErr
	if err := sh.Run(); err != nil || shErr.Len() > 0 {
		t.Fatalf("the installed command: %v %q", err, shErr.String())
	}
	if _, context := decodeOutput(t, shOut.Bytes()); !strings.Contains(context, alwaysText) {
		t.Errorf("the installed command injected %q", context)
	}
	if code, out, _ := cli("hook", "install", "claude-code", "--project", "--dir", project, "--ctxd", bin, "--socket", d.cfg.Socket, "--budget", "1500"); code != 0 || !strings.Contains(out, "already in") {
		t.Errorf("second install: exit %d, %q", code, out)
	}
	if code, out, _ := cli("hook", "uninstall", "claude-code", "--project", "--dir", project); code != 0 || !strings.Contains(out, "removed 7 ctxd hooks") {
		t.Errorf("uninstall: exit %d, %q", code, out)
	}
	if data, _ := os.ReadFile(path); string(data) != "{}\n" {
		t.Errorf("after uninstall: %q", data)
	}
	// A Claude Code that predates PostToolUseFailure would reject the whole
	// file for it: install leaves it out, and adds it once Claude Code is
	// updated.
	fakeClaude := func(version string) {
		if err := os.WriteFile(filepath.Join(dir, "claude"), []byte("#!/bin/sh\necho '"+version+" (Claude Code)'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fakeClaude("1.0.88")
	code, out, _ = cli("hook", "install", "claude-code", "--project", "--dir", project, "--ctxd", bin)
	if code != 0 || !strings.Contains(out, "not registering PostToolUseFailure: Claude Code 1.0.88 predates it") || !strings.Contains(out, "installed 6 ctxd hooks") {
		t.Errorf("install for Claude Code 1.0.88: exit %d, %q", code, out)
	}
	if s := readHooks(t, path); len(s.Hooks) != 6 || s.Hooks[hook.PostToolUseFailure] != nil {
		t.Errorf("events for Claude Code 1.0.88: %v", s.Hooks)
	}
	fakeClaude("2.1.50")
	if code, out, _ = cli("hook", "install", "claude-code", "--project", "--dir", project, "--ctxd", bin); code != 0 || !strings.Contains(out, "installed 7 ctxd hooks") {
		t.Errorf("install after the update: exit %d, %q", code, out)
	}
	checkInstalled(t, path, bin+" hook claude-code")
	if code, _, errOut := cli("hook", "install", "codex"); code != 2 || !strings.Contains(errOut, "claude-code") {
		t.Errorf("another host: exit %d, %q", code, errOut)
	}
}
