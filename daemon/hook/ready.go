package hook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// ConnectParams make a connection retry every 50–250 ms while the daemon
// starts; grpc's default waits a second after the first failed attempt,
// which a waiting SessionStart would spend idle.
var ConnectParams = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 250 * time.Millisecond},
	MinConnectTimeout: time.Second,
}

// SystemdUnit is the systemd user unit whose state tells that a daemon is
// on its way when its socket is absent (contrib/systemd/ctxd.service).
const SystemdUnit = "ctxd.service"

// probeTimeout bounds the first health check, and the systemctl call.
const probeTimeout = 500 * time.Millisecond

// ErrDown says no daemon is running or on its way.
var ErrDown = errors.New("no daemon is running")

// ErrNotReady says the daemon was starting and did not become ready within
// the wait.
var ErrNotReady = errors.New("the daemon did not become ready in time")

// Readiness tells WaitReady what it needs to know besides the connection.
type Readiness struct {
	// Socket is the daemon's unix socket path.
	Socket string
	// Starting reports whether a daemon is on its way although its socket
	// is absent or refuses connections; nil means UnitStarting.
	Starting func(context.Context) bool
	// Waiting is called once when WaitReady starts to wait.
	Waiting func()
}

// WaitReady returns nil once the daemon behind conn serves, waiting at most
// wait for one that is starting, and ErrDown at once when none is running
// or on its way, so that a user without a daemon is not delayed.
//
// How "starting" is told from "down":
//   - the socket answers health SERVING: ready;
//   - the socket answers NOT_SERVING (the daemon listens from its first
//     moment and opens its store after), or accepts connections without
//     answering within probeTimeout: starting (or stopping, before a
//     restart), so WaitReady watches the health service until it says
//     SERVING, across the restart if the daemon goes away meanwhile;
//   - the socket is absent or refuses connections (a file left by a daemon
//     that died): down, unless Starting says a daemon is on its way (the
//     systemd unit activating, deactivating or waiting to restart), in
//     which case WaitReady waits for the socket to appear and serve.
func WaitReady(ctx context.Context, conn grpc.ClientConnInterface, wait time.Duration, r Readiness) error {
	starting := r.Starting
	if starting == nil {
		starting = UnitStarting
	}
	health := healthpb.NewHealthClient(conn)
	if _, err := os.Stat(r.Socket); err != nil {
		if !starting(ctx) {
			return ErrDown
		}
	} else {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		resp, err := health.Check(pctx, &healthpb.HealthCheckRequest{})
		cancel()
		switch {
		case err == nil && resp.Status == healthpb.HealthCheckResponse_SERVING:
			return nil
		case status.Code(err) == codes.Unavailable && !starting(ctx):
			return ErrDown
		}
	}
	if r.Waiting != nil {
		r.Waiting()
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		// WaitForReady: the call waits for the socket to appear and the
		// connection to be made, retrying with ConnectParams' backoff.
		stream, err := health.Watch(wctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
		for err == nil {
			var resp *healthpb.HealthCheckResponse
			if resp, err = stream.Recv(); err == nil && resp.Status == healthpb.HealthCheckResponse_SERVING {
				return nil
			}
		}
		if wctx.Err() != nil {
			return fmt.Errorf("%w (waited %s)", ErrNotReady, wait)
		}
		// The stream ended: the daemon went away (a restart); watch again.
		select {
		case <-wctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// UnitStarting reports whether systemd says SystemdUnit is on its way:
// `systemctl --user is-active` answers activating (starting, or waiting to
// restart after a failure), deactivating (stopping before a restart) or
// reloading. Without systemd, or when the unit is inactive or failed, it
// is false. It runs only when the socket is absent or refuses connections.
func UnitStarting(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, _ := exec.CommandContext(ctx, "systemctl", "--user", "is-active", SystemdUnit).Output()
	switch strings.TrimSpace(string(out)) {
	case "activating", "deactivating", "reloading":
		return true
	}
	return false
}
