package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// These tests run the real ctxd binary as a separate process, so that it can
// be killed with SIGKILL mid-write.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// ctxdBinary builds cmd/ctxd once per test run.
func ctxdBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "ctxdbin"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "ctxd")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/ctxd/ctxd/cmd/ctxd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// daemonProcess is a ctxd serve child process.
type daemonProcess struct {
	cmd    *exec.Cmd
	socket string
	exited chan struct{}
	err    error // the exit status, once exited is closed
}

// startProcess runs `ctxd serve` on dataDir with extra flags and waits until
// health is SERVING.
func startProcess(t testing.TB, dataDir, socket string, args ...string) *daemonProcess {
	return startProcessEnv(t, nil, dataDir, socket, args...)
}

// startProcessEnv is startProcess with extra KEY=VALUE environment.
func startProcessEnv(t testing.TB, env []string, dataDir, socket string, args ...string) *daemonProcess {
	t.Helper()
	args = append([]string{"serve", "--data-dir", dataDir, "--socket", socket, "--http", "", "--model-dir", "", "--log-level", "warn"}, args...)
	cmd := exec.Command(ctxdBinary(t), args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dataDir, "..", "config"))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &daemonProcess{cmd: cmd, socket: socket, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	health := healthpb.NewHealthClient(dial(t, "unix://"+socket))
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.Status == healthpb.HealthCheckResponse_SERVING {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not serving after 30s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops the process with SIGKILL: no chance to flush or clean up.
func (p *daemonProcess) kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// stop sends SIGTERM and requires a clean exit within 15s.
func (p *daemonProcess) stop(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		if p.err != nil {
			t.Fatalf("exit after SIGTERM: %v", p.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("daemon did not stop within 15s of SIGTERM")
	}
}

// loadThenKill runs writers concurrently, each calling write(w, i) for
// i = 0, 1, … until a call fails, kills p with SIGKILL without warning once
// n writes were acknowledged, and returns the keys write returned for every
// acknowledged write.
func loadThenKill(t testing.TB, p *daemonProcess, writers, n int, write func(w, i int) (string, error)) []string {
	t.Helper()
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				key, err := write(w, i)
				if err != nil {
					return // the daemon died
				}
				mu.Lock()
				acked = append(acked, key)
				mu.Unlock()
			}
		}()
	}
	for {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		done := len(acked) >= n
		mu.Unlock()
		if done {
			break
		}
	}
	p.kill(t)
	wg.Wait()
	return acked
}

func TestProcess_KillDuringWritesLosesNothing(t *testing.T) {
	dir := shortTempDir(t)
	dataDir, socket := filepath.Join(dir, "data"), filepath.Join(dir, "s.sock")
	p := startProcess(t, dataDir, socket)
	c := ctxdv1.NewVfsServiceClient(dial(t, "unix://"+socket))

	body := func(ref string) string { return "item " + ref + "\n" }
	acked := loadThenKill(t, p, 8, 400, func(w, i int) (string, error) {
		ref := fmt.Sprintf("agent:/w%d/item-%05d.md", w, i)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: body(ref)}})
		return ref, err
	})

	startProcess(t, dataDir, socket)
	c = ctxdv1.NewVfsServiceClient(dial(t, "unix://"+socket))
	ctx := context.Background()
	for _, ref := range acked {
		r, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: ref})
		if err != nil {
			t.Fatalf("acknowledged write %s lost after kill -9: %v", ref, err)
		}
		if r.Content != body(ref) {
			t.Fatalf("%s = %q after restart, want %q", ref, r.Content, body(ref))
		}
	}
	drives, err := c.ListDrives(ctx, &ctxdv1.ListDrivesRequest{})
	if err != nil || len(drives.Drives) != 1 || drives.Drives[0].ItemCount < int64(len(acked)) {
		t.Errorf("drives after restart = %v, %v; want >= %d items", drives, err, len(acked))
	}
	t.Logf("%d acknowledged writes survived kill -9", len(acked))
}

func TestProcess_SIGTERMStopsGracefully(t *testing.T) {
	dir := shortTempDir(t)
	p := startProcess(t, filepath.Join(dir, "data"), filepath.Join(dir, "s.sock"))
	p.stop(t)
	if _, err := os.Stat(p.socket); !os.IsNotExist(err) {
		t.Errorf("socket still present after stop: %v", err)
	}
}

// TestProcess_NotifiesSystemd stands in for systemd: it listens on a
// NOTIFY_SOCKET and expects READY=1 once the daemon serves.
func TestProcess_NotifiesSystemd(t *testing.T) {
	dir := shortTempDir(t)
	notify := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notify, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	startProcessEnv(t, []string{"NOTIFY_SOCKET=" + notify}, filepath.Join(dir, "data"), filepath.Join(dir, "s.sock"))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 256)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	if got := string(buf[:n]); !strings.Contains(got, "READY=1") {
		t.Errorf("notification = %q, want READY=1", got)
	}
}
