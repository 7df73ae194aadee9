package daemon

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDaemon_InsecureSocketDirRefused refuses a socket directory that other
// users could write to (they could replace the socket with their own), and
// names the directory and the fix.
func TestDaemon_InsecureSocketDirRefused(t *testing.T) {
	tests := []struct {
		name string
		mode fs.FileMode // of dir/open
		sub  string      // the socket's dir below dir/open
	}{
		{"world-writable", 0o777, ""},
		{"group-writable", 0o770, ""},
		{"sticky world-writable", 0o1777, ""},
		{"world-writable parent", 0o777, "private"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			open := filepath.Join(filepath.Dir(cfg.Socket), "open")
			sockDir := filepath.Join(open, tt.sub)
			if err := os.MkdirAll(sockDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(open, tt.mode); err != nil { // umask does not apply to chmod
				t.Fatal(err)
			}
			cfg.Socket = filepath.Join(sockDir, "s.sock")
			_, err := Start(context.Background(), cfg, slogDiscard())
			if err == nil || !strings.Contains(err.Error(), open) || !strings.Contains(err.Error(), "chmod go-w "+open) || !strings.Contains(err.Error(), "--socket") {
				t.Fatalf("Start with socket dir mode %o: %v; want a refusal naming %s, the chmod and --socket", tt.mode, err, open)
			}
			if _, err := os.Stat(cfg.Socket); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("socket created in the insecure dir: %v", err)
			}
		})
	}
	// A sticky world-writable ancestor (/tmp) is fine; so is a dir we create.
	cfg := testConfig(t)
	cfg.Socket = filepath.Join(filepath.Dir(cfg.Socket), "new", "dir", "s.sock")
	mustStart(t, cfg)
	fi, err := os.Stat(filepath.Dir(cfg.Socket))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("created socket dir: %v, %v; want mode 700", fi.Mode(), err)
	}
}

// TestSecureDir_Owner refuses a directory owned by another user: as root,
// one chowned away; otherwise our own, checked on behalf of another uid.
func TestSecureDir_Owner(t *testing.T) {
	dir := t.TempDir()
	if err := secureDir(dir, os.Getuid()); err != nil {
		t.Fatalf("own dir: %v", err)
	}
	checkAs := os.Getuid() + 1
	if os.Getuid() == 0 {
		if err := os.Chown(dir, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		checkAs = 0
	}
	err := secureDir(dir, checkAs)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "owned by uid") {
		t.Fatalf("dir of another user: %v", err)
	}
}

// TestDaemon_FailedStartLeavesNoTokenFile: a start that fails (here: the
// HTTP port is taken) must not leave a token behind that no daemon serves.
func TestDaemon_FailedStartLeavesNoTokenFile(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := testConfig(t)
	cfg.GRPCTCP, cfg.HTTP = "127.0.0.1:0", taken.Addr().String()
	cfg.TokenFile = filepath.Join(filepath.Dir(cfg.TokenFile), "conf", "token")
	if _, err := Start(context.Background(), cfg, slogDiscard()); err == nil {
		t.Fatal("Start on a taken HTTP port succeeded")
	}
	if _, err := os.Stat(cfg.TokenFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed start left the token file: %v", err)
	}
	// The same config starts, and creates the token, once the port is free.
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	if d.token == "" {
		t.Error("no token after a successful start")
	}
}
