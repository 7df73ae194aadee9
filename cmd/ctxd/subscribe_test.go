package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxd/ctxd/daemon"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ctxd subscribe prints the pushes a token limited to a drive may see and
// ends cleanly when stopped; ctxd subscription creates, lists, reads and
// removes a durable one, and another token sees none of it.
func TestCLI_Subscribe(t *testing.T) {
	cfg, dir := tempConfig(t)
	cfg.TokenFile, cfg.SocketAuth = filepath.Join(dir, "token"), true
	cfg.Tokens = []daemon.TokenConfig{
		{Name: "agent", SHA256: sha256Hex("agent-token"), Scopes: []string{"read", "write"}, Drives: []string{"agent"}},
		{Name: "other", SHA256: sha256Hex("other-token"), Scopes: []string{"read"}},
	}
	runDaemon(t, cfg)
	s := cfg.Socket
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runWith(ctx, []string{"--socket", s, "--token", "agent-token", "subscribe", "heron sighting"}, strings.NewReader(""), &out, &errOut)
	}()
	waitFor(t, "subscribed", func() bool { return strings.Contains(errOut.String(), "subscribed") })
	if code, _, e := ctxd(t, s, "A heron sighting at the vault.", "--token", "agent-token", "write", "vault:/h.md"); code != 1 || !strings.Contains(e, "PERMISSION_DENIED") {
		t.Fatalf("the limited token wrote outside its drive: %d %s", code, e)
	}
	owner := readToken(t, cfg.TokenFile)
	if code, _, e := ctxd(t, s, "A heron sighting at the vault.", "--token", owner, "write", "vault:/h.md"); code != 0 {
		t.Fatal(e)
	}
	if code, _, e := ctxd(t, s, "A heron sighting by the lake.", "--token", "agent-token", "write", "agent:/h.md"); code != 0 {
		t.Fatal(e)
	}
	waitFor(t, "the push", func() bool { return strings.Contains(out.String(), "agent:/h.md") })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("subscribe ended with %d: %s", code, errOut.String())
	}
	if o := out.String(); strings.Contains(o, "vault:") || !strings.Contains(o, "write by agent, rev 1") || !strings.Contains(o, "resume: r1.") {
		t.Fatalf("subscribe printed %q", o)
	}

	steps := []struct {
		token    string
		args     []string
		wantCode int
		want     string
	}{
		{"agent-token", []string{"subscription", "create", "herons", "heron"}, 0, "created herons (ctxd-subscription://herons)"},
		{"agent-token", []string{"subscription", "list"}, 0, `herons  "heron"`},
		{"other-token", []string{"subscription", "list"}, 0, "no subscriptions"},
		{"other-token", []string{"subscription", "read", "herons"}, 1, "NOT_FOUND"},
	}
	for _, st := range steps {
		code, o, e := ctxd(t, s, "", append([]string{"--token", st.token}, st.args...)...)
		if code != st.wantCode || !strings.Contains(o+e, st.want) {
			t.Fatalf("ctxd %v = %d\n%s%s\nwant %d, %q", st.args, code, o, e, st.wantCode, st.want)
		}
	}
	if code, _, e := ctxd(t, s, "Two herons.", "--token", owner, "write", "agent:/h2.md"); code != 0 {
		t.Fatal(e)
	}
	waitFor(t, "the inbox", func() bool {
		_, o, _ := ctxd(t, s, "", "--token", "agent-token", "subscription", "read", "herons", "--peek")
		return strings.Contains(o, "agent:/h2.md")
	})
	if code, o, e := ctxd(t, s, "", "--token", "agent-token", "subscription", "read", "herons"); code != 0 || !strings.Contains(o, "agent:/h2.md") {
		t.Fatalf("read: %d %s %s", code, o, e)
	}
	if code, o, _ := ctxd(t, s, "", "--token", "agent-token", "subscription", "read", "herons"); code != 0 || !strings.Contains(o, "no new matches") {
		t.Fatalf("read after ack: %d %s", code, o)
	}
	if code, o, e := ctxd(t, s, "", "--token", "agent-token", "subscription", "rm", "herons"); code != 0 || !strings.Contains(o, "deleted herons") {
		t.Fatalf("rm: %d %s %s", code, o, e)
	}
}

// waitFor polls cond until it holds, failing after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// readToken reads the owner token the daemon wrote.
func readToken(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
