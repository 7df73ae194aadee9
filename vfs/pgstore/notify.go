package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// notifyChannel is the LISTEN/NOTIFY channel every write transaction
// notifies when it commits.
const notifyChannel = "ctxd_changed"

// Reconnection backoff of the change listener.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = 5 * time.Second
	// readyTimeout bounds how long Changed waits for the listener's first
	// connection, so that a commit right after Changed returns is seen.
	readyTimeout = 5 * time.Second
)

// listener holds a dedicated connection LISTENing on notifyChannel and
// turns notifications into values on changed.
type listener struct {
	changed chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

func startListener(parent context.Context, cfg *pgx.ConnConfig) *listener {
	ctx, cancel := context.WithCancel(parent)
	l := &listener{changed: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	ready := make(chan struct{})
	go l.run(ctx, cfg, ready)
	select {
	case <-ready:
	case <-time.After(readyTimeout):
	}
	return l
}

func (l *listener) signal() {
	select {
	case l.changed <- struct{}{}:
	default: // one value waiting says it all
	}
}

func (l *listener) run(ctx context.Context, cfg *pgx.ConnConfig, ready chan struct{}) {
	defer close(l.done)
	backoff := minBackoff
	for attempt := 0; ; attempt++ {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+notifyChannel)
		}
		if attempt == 0 {
			close(ready)
		}
		if err == nil {
			if attempt > 0 {
				l.signal() // changes may have been missed while disconnected
			}
			backoff = minBackoff
			for err == nil {
				if _, err = conn.WaitForNotification(ctx); err == nil {
					l.signal()
				}
			}
		}
		if conn != nil {
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.Close(closeCtx)
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

func (l *listener) stop() {
	l.cancel()
	<-l.done
}
