package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/daemon"
)

// TestCLI_SocketAuth: against a daemon with socket_auth the CLI needs a
// token, from --token or CTXD_TOKEN, and says so when it has none.
func TestCLI_SocketAuth(t *testing.T) {
	cfg, dir := tempConfig(t)
	cfg.TokenFile, cfg.SocketAuth = filepath.Join(dir, "token"), true
	runDaemon(t, cfg)
	b, err := os.ReadFile(cfg.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(b))
	t.Setenv("CTXD_TOKEN", "")

	code, _, errOut := ctxd(t, cfg.Socket, "", "drives")
	_, hint, _ := strings.Cut(errOut, "\nhint: ")
	if code != 1 || !strings.Contains(errOut, "UNAUTHENTICATED") {
		t.Fatalf("no token: exit %d, %s; want UNAUTHENTICATED", code, errOut)
	}
	for _, want := range []string{"--token", "CTXD_TOKEN", "socket_auth"} {
		if !strings.Contains(hint, want) {
			t.Errorf("hint %q does not name %s", hint, want)
		}
	}
	if code, _, errOut := ctxd(t, cfg.Socket, "", "--token", "wrong", "drives"); code != 1 || !strings.Contains(errOut, "UNAUTHENTICATED") {
		t.Errorf("wrong token: exit %d, %s", code, errOut)
	}
	if code, _, errOut := ctxd(t, cfg.Socket, "a\n", "--token", token, "write", "/a.md"); code != 0 {
		t.Errorf("--token: exit %d, %s", code, errOut)
	}
	t.Setenv("CTXD_TOKEN", token)
	if code, out, errOut := ctxd(t, cfg.Socket, "", "read", "/a.md"); code != 0 || out != "a\n" {
		t.Errorf("CTXD_TOKEN: exit %d, %q %s", code, out, errOut)
	}
	// --token wins over the environment.
	if code, _, errOut := ctxd(t, cfg.Socket, "", "--token", "wrong", "read", "/a.md"); code != 1 || !strings.Contains(errOut, "UNAUTHENTICATED") {
		t.Errorf("--token over CTXD_TOKEN: exit %d, %s", code, errOut)
	}
}

// TestServe_EdgeFlags: the serve flags for socket_auth, allowed_hosts and
// allowed_origins reach the config.
func TestServe_EdgeFlags(t *testing.T) {
	cmd := (&cli{}).serveCommand()
	if err := cmd.ParseFlags([]string{"--socket-auth", "--allowed-host", "a.example", "--allowed-host", "b.example:8443", "--allowed-origin", "https://a.example"}); err != nil {
		t.Fatal(err)
	}
	var flags daemon.Config
	for name, dst := range map[string]any{"socket-auth": &flags.SocketAuth, "allowed-host": &flags.AllowedHosts, "allowed-origin": &flags.AllowedOrigins} {
		switch p := dst.(type) {
		case *bool:
			*p, _ = cmd.Flags().GetBool(name)
		case *[]string:
			*p, _ = cmd.Flags().GetStringArray(name)
		}
	}
	cfg := daemon.DefaultConfig()
	overlayFlags(cmd, &cfg, &flags)
	if !cfg.SocketAuth || strings.Join(cfg.AllowedHosts, " ") != "a.example b.example:8443" || strings.Join(cfg.AllowedOrigins, " ") != "https://a.example" {
		t.Errorf("flags not applied: socket_auth %v, allowed_hosts %v, allowed_origins %v", cfg.SocketAuth, cfg.AllowedHosts, cfg.AllowedOrigins)
	}
}
