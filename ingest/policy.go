package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Policy decides which local paths the daemon may read. An agent harness may
// pass any path through, so reading is limited to allowed roots and secrets
// are refused unless explicitly allowed.
type Policy struct {
	AllowedRoots []string // absolute directories; a path must be inside one (after resolving symlinks of both)
	AllowSecrets bool
}

const hintAllowSecret = "set allow_secrets in the daemon config to ingest secrets"

// allowRootHint names the flag and the config key that would allow abs: its
// directory, or abs itself when it is one.
func allowRootHint(abs string) string {
	dir := abs
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		dir = filepath.Dir(abs)
	}
	return fmt.Sprintf("restart the daemon with --allowed-root %s, or add %q to allowed_roots in its config", dir, dir)
}

// Check returns nil if abs may be read, or an *Error of kind ErrRefused
// saying why not and how to allow it (ErrInvalid if abs is not absolute).
// Symlinks in abs are resolved first, so a link inside an allowed root that
// points outside is refused; with no allowed roots every path is refused.
func (p Policy) Check(abs string) error {
	if !filepath.IsAbs(abs) {
		return newError(ErrInvalid, abs, "pass an absolute path", "%s is not an absolute path", abs)
	}
	abs = filepath.Clean(abs)
	resolved := resolveExisting(abs)
	if !p.allows(resolved) {
		what := abs
		if resolved != abs {
			what = fmt.Sprintf("%s (resolves to %s)", abs, resolved)
		}
		roots := "none are configured"
		if len(p.AllowedRoots) > 0 {
			roots = strings.Join(p.AllowedRoots, ", ")
		}
		return newError(ErrRefused, abs, allowRootHint(abs), "%s is outside the allowed roots (%s)", what, roots)
	}
	if p.AllowSecrets {
		return nil
	}
	return secretError(abs, resolved)
}

func (p Policy) allows(resolved string) bool {
	for _, root := range p.AllowedRoots {
		if within(resolveExisting(filepath.Clean(root)), resolved) {
			return true
		}
	}
	return false
}

// secretError refuses a file if any of its names (as reached, or its symlink
// target) looks like a secret.
func secretError(paths ...string) error {
	for _, path := range paths {
		if reason, secret := SecretReason(path); secret {
			return newError(ErrRefused, paths[0], hintAllowSecret, "%s looks like a secret (%s)", path, reason)
		}
	}
	return nil
}

// resolveExisting is filepath.EvalSymlinks that also works for a path that
// does not exist (yet): it resolves the deepest existing ancestor, so a
// missing file under a symlinked directory is judged by where it would be.
func resolveExisting(path string) string {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		return resolved
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path
	}
	return filepath.Join(resolveExisting(parent), filepath.Base(path))
}

// within reports whether path is root or below it; both must be clean.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

var (
	// secretDirs are configuration directories that hold credentials.
	secretDirs = map[string]bool{".ssh": true, ".gnupg": true, ".aws": true, ".azure": true, ".kube": true}
	// secretNames are compared lowercased, for case-insensitive file systems.
	secretNames = map[string]bool{
		".env": true, ".netrc": true, ".pgpass": true, ".npmrc": true, ".pypirc": true, ".git-credentials": true,
		"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true, "credentials.json": true,
	}
	// envTemplates document the variables with placeholder values, so they are not secrets.
	envTemplates = map[string]bool{".env.example": true, ".env.sample": true, ".env.template": true}
	secretExts   = map[string]bool{
		".pem": true, ".key": true, ".p12": true, ".pfx": true, ".jks": true, ".keystore": true, ".kdbx": true,
		".tfstate": true,
	}
)

// SecretReason reports whether abs looks like a secret, judging by its name
// only, and which rule matched. Public keys (id_rsa.pub) are not secrets.
func SecretReason(abs string) (reason string, secret bool) {
	segs := strings.Split(strings.ToLower(filepath.ToSlash(filepath.Clean(abs))), "/")
	for _, seg := range segs {
		if secretDirs[seg] {
			return fmt.Sprintf("inside %s, a credentials directory", seg), true
		}
	}
	base := segs[len(segs)-1]
	switch {
	case len(segs) > 1 && segs[len(segs)-2] == ".docker" && base == "config.json":
		return "Docker credentials (.docker/config.json)", true
	case secretNames[base]:
		return fmt.Sprintf("secret file name %s", base), true
	case strings.HasPrefix(base, ".env.") && !envTemplates[base]:
		return "environment file (.env.*)", true
	case strings.HasSuffix(base, ".tfstate.backup"):
		return "Terraform state backup (.tfstate.backup)", true
	}
	if ext := filepath.Ext(base); secretExts[ext] {
		return fmt.Sprintf("secret file extension %s", ext), true
	}
	return "", false
}
