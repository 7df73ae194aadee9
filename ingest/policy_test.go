package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretReason(t *testing.T) {
	tests := []struct {
		path   string
		secret bool
	}{
		{"/home/u/.ssh/id_rsa", true},
		{"/home/u/.ssh/known_hosts", true},
		{"/home/u/.gnupg/pubring.kbx", true},
		{"/home/u/.aws/credentials", true},
		{"/home/u/.kube/config", true},
		{"/home/u/.docker/config.json", true},
		{"/proj/.env", true},
		{"/proj/.env.local", true},
		{"/proj/.env.production", true},
		{"/home/u/.netrc", true},
		{"/home/u/.git-credentials", true},
		{"/proj/keys/id_ed25519", true},
		{"/proj/server.pem", true},
		{"/proj/SERVER.KEY", true},
		{"/proj/cert.p12", true},
		{"/proj/vault.kdbx", true},
		{"/proj/credentials.json", true},
		{"/proj/infra/terraform.tfstate", true},
		{"/proj/infra/terraform.tfstate.backup", true},
		{"/proj/.env.example", false},
		{"/proj/.env.sample", false},
		{"/proj/.env.template", false},
		{"/proj/keys/id_rsa.pub", false},
		{"/proj/config.json", false},
		{"/proj/environment.md", false},
		{"/proj/main.go", false},
		{"/proj/keynotes/readme.md", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			reason, secret := SecretReason(tt.path)
			if secret != tt.secret {
				t.Fatalf("SecretReason(%q) = %q, %v; want secret %v", tt.path, reason, secret, tt.secret)
			}
			if secret && reason == "" {
				t.Errorf("SecretReason(%q) gave no reason", tt.path)
			}
		})
	}
}

func TestPolicy_Check(t *testing.T) {
	allowed := t.TempDir()
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "secret-notes.txt"), "x")
	mustWrite(t, filepath.Join(allowed, "notes.txt"), "x")
	mustSymlink(t, filepath.Join(outside, "secret-notes.txt"), filepath.Join(allowed, "link.txt"))
	mustSymlink(t, filepath.Join(allowed, "notes.txt"), filepath.Join(allowed, "inner-link.txt"))
	mustSymlink(t, outside, filepath.Join(allowed, "outdir"))

	p := Policy{AllowedRoots: []string{allowed}}
	tests := []struct {
		name      string
		path      string
		policy    Policy
		wantKind  error // nil: allowed
		inMessage string
	}{
		{"inside", filepath.Join(allowed, "notes.txt"), p, nil, ""},
		{"the root itself", allowed, p, nil, ""},
		{"missing file inside", filepath.Join(allowed, "new", "file.md"), p, nil, ""},
		{"link inside to inside", filepath.Join(allowed, "inner-link.txt"), p, nil, ""},
		{"outside", filepath.Join(outside, "secret-notes.txt"), p, ErrRefused, allowed},
		{"no roots", filepath.Join(allowed, "notes.txt"), Policy{}, ErrRefused, "none are configured"},
		{"dotdot escape", filepath.Join(allowed, "..", filepath.Base(outside), "secret-notes.txt"), p, ErrRefused, "outside the allowed roots"},
		{"link inside to outside", filepath.Join(allowed, "link.txt"), p, ErrRefused, "resolves to"},
		{"missing file under a link to outside", filepath.Join(allowed, "outdir", "new.md"), p, ErrRefused, "outside the allowed roots"},
		{"relative", "notes.txt", p, ErrInvalid, "not an absolute path"},
		{"ssh key", filepath.Join(allowed, ".ssh", "id_rsa"), p, ErrRefused, ".ssh"},
		{".env", filepath.Join(allowed, ".env"), p, ErrRefused, "secret"},
		{".env.local", filepath.Join(allowed, ".env.local"), p, ErrRefused, "secret"},
		{"pem", filepath.Join(allowed, "server.pem"), p, ErrRefused, ".pem"},
		{".env.example", filepath.Join(allowed, ".env.example"), p, nil, ""},
		{"public key", filepath.Join(allowed, "id_rsa.pub"), p, nil, ""},
		{"secret allowed", filepath.Join(allowed, ".ssh", "id_rsa"), Policy{AllowedRoots: []string{allowed}, AllowSecrets: true}, nil, ""},
		{"pem allowed", filepath.Join(allowed, "server.pem"), Policy{AllowedRoots: []string{allowed}, AllowSecrets: true}, nil, ""},
		{"secret allowed but outside", filepath.Join(outside, "server.pem"), Policy{AllowedRoots: []string{allowed}, AllowSecrets: true}, ErrRefused, "outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.Check(tt.path)
			if tt.wantKind == nil {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want nil", tt.path, err)
				}
				return
			}
			var ie *Error
			if !errors.As(err, &ie) || !errors.Is(err, tt.wantKind) {
				t.Fatalf("Check(%q) = %v, want an *Error of kind %v", tt.path, err, tt.wantKind)
			}
			if !strings.Contains(ie.Message, tt.inMessage) {
				t.Errorf("message %q does not mention %q", ie.Message, tt.inMessage)
			}
			if ie.Hint == "" {
				t.Errorf("no hint in %+v", ie)
			}
		})
	}
}

func TestPolicy_Check_hints(t *testing.T) {
	root := t.TempDir()
	p := Policy{AllowedRoots: []string{root}}
	var ie *Error
	// The hint names the config key and the flag with the directory to allow:
	// the file's directory, or a directory itself.
	outside := t.TempDir()
	for path, dir := range map[string]string{"/elsewhere/file.txt": "/elsewhere", outside: outside} {
		if err := p.Check(path); !errors.As(err, &ie) || !strings.Contains(ie.Hint, "allowed_roots") || !strings.Contains(ie.Hint, "--allowed-root "+dir) {
			t.Errorf("outside root: hint of %v should name allowed_roots and --allowed-root %s, got %q", err, dir, ie.Hint)
		}
	}
	if err := p.Check(filepath.Join(root, ".env")); !errors.As(err, &ie) || !strings.Contains(ie.Hint, "allow_secrets") {
		t.Errorf("secret: hint of %v should name allow_secrets", err)
	}
}

// TestPolicy_Check_symlinkedRoot allows a root given through a symlink (macOS
// /tmp, a symlinked home) for paths given either way.
func TestPolicy_Check_symlinkedRoot(t *testing.T) {
	target := t.TempDir()
	mustWrite(t, filepath.Join(target, "a.txt"), "x")
	link := filepath.Join(t.TempDir(), "link")
	mustSymlink(t, target, link)
	p := Policy{AllowedRoots: []string{link}}
	for _, path := range []string{filepath.Join(target, "a.txt"), filepath.Join(link, "a.txt")} {
		if err := p.Check(path); err != nil {
			t.Errorf("Check(%q) = %v, want nil", path, err)
		}
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
