package daemon

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc/metadata"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Scope is a set of permissions a token grants.
type Scope uint8

const (
	// ScopeRead allows every call that does not change the store.
	ScopeRead Scope = 1 << iota
	// ScopeWrite allows calls that change items.
	ScopeWrite
	// ScopeAdmin allows administrative calls.
	ScopeAdmin
	scopeAll = ScopeRead | ScopeWrite | ScopeAdmin
)

var scopeNames = map[string]Scope{"read": ScopeRead, "write": ScopeWrite, "admin": ScopeAdmin}

func parseScopes(names []string) (Scope, error) {
	if len(names) == 0 {
		return 0, errors.New("scopes must list at least one of read, write, admin")
	}
	var s Scope
	for _, n := range names {
		v, ok := scopeNames[n]
		if !ok {
			return 0, fmt.Errorf("unknown scope %q; use read, write or admin", n)
		}
		s |= v
	}
	return s, nil
}

// methodScopes is the scope each RPC needs. Methods missing here (reflection,
// health) need only a valid token.
var methodScopes = map[string]Scope{
	ctxdv1.VfsService_ListDrives_FullMethodName: ScopeRead,
	ctxdv1.VfsService_Tree_FullMethodName:       ScopeRead,
	ctxdv1.VfsService_List_FullMethodName:       ScopeRead,
	ctxdv1.VfsService_Read_FullMethodName:       ScopeRead,
	ctxdv1.VfsService_Info_FullMethodName:       ScopeRead,
	ctxdv1.VfsService_Exists_FullMethodName:     ScopeRead,
	ctxdv1.VfsService_DirSize_FullMethodName:    ScopeRead,
	ctxdv1.VfsService_CountLines_FullMethodName: ScopeRead,
	ctxdv1.SearchService_Search_FullMethodName:  ScopeRead,
	ctxdv1.AdminService_Status_FullMethodName:   ScopeRead,
	ctxdv1.VfsService_Write_FullMethodName:      ScopeWrite,
	ctxdv1.VfsService_Edit_FullMethodName:       ScopeWrite,
	ctxdv1.VfsService_Delete_FullMethodName:     ScopeWrite,
	ctxdv1.VfsService_Copy_FullMethodName:       ScopeWrite,
	ctxdv1.VfsService_Move_FullMethodName:       ScopeWrite,
	ctxdv1.VfsService_MakeDir_FullMethodName:    ScopeWrite,
	ctxdv1.IngestService_Add_FullMethodName:     ScopeWrite,
	ctxdv1.IngestService_Refresh_FullMethodName: ScopeWrite,
	ctxdv1.IngestService_Reembed_FullMethodName: ScopeAdmin,
}

// authenticator checks bearer tokens. It keeps only their SHA-256 digests and
// looks presented tokens up by digest, so timing reveals nothing about a secret.
type authenticator struct {
	tokens map[[sha256.Size]byte]Scope
}

// newAuthenticator loads (or on first start creates) the owner token file and
// adds the scoped tokens of the config.
func newAuthenticator(tokenFile string, extra []TokenConfig) (*authenticator, error) {
	a := &authenticator{tokens: map[[sha256.Size]byte]Scope{}}
	owner, err := loadOrCreateToken(tokenFile)
	if err != nil {
		return nil, err
	}
	a.tokens[sha256.Sum256([]byte(owner))] = scopeAll
	for _, t := range extra {
		scopes, err := parseScopes(t.Scopes)
		if err != nil {
			return nil, err
		}
		var sum [sha256.Size]byte
		if _, err := hex.Decode(sum[:], []byte(t.SHA256)); err != nil {
			return nil, fmt.Errorf("token %s: %w", t.Name, err)
		}
		a.tokens[sum] = scopes
	}
	return a, nil
}

// loadOrCreateToken reads the owner token, generating a random one (written
// atomically with mode 0600) when the file does not exist.
func loadOrCreateToken(name string) (string, error) {
	b, err := os.ReadFile(name)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("token file %s is empty; delete it to generate a new token", name)
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read token file: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	tok := "ctxd_" + hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return "", fmt.Errorf("create token dir: %w", err)
	}
	if err := writeFileAtomic(name, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write token file: %w", err)
	}
	return tok, nil
}

// writeFileAtomic writes via a temp file in the same directory, fsyncs it,
// renames it into place and fsyncs the directory, so a crash leaves either the
// old file or the complete new one.
func writeFileAtomic(name string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after a successful rename
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// authorize checks an "authorization: Bearer <token>" value against the
// scope that method needs.
func (a *authenticator) authorize(header, method string) error {
	tok, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || tok == "" {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAUTHENTICATED,
			"this endpoint needs a bearer token",
			"Send the header 'authorization: Bearer <token>'; the owner token is in the daemon's token file (default ~/.config/ctxd/token). The unix socket needs no token.")
	}
	scopes, ok := a.tokens[sha256.Sum256([]byte(tok))]
	if !ok {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAUTHENTICATED,
			"the bearer token is not valid",
			"Check the token against the daemon's token file (default ~/.config/ctxd/token).")
	}
	if need := methodScopes[method]; scopes&need != need {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED,
			fmt.Sprintf("the token lacks the scope %s needs", method),
			"Use a token with the write (or admin) scope for this call.")
	}
	return nil
}

// authorizeContext reads the token from incoming gRPC metadata.
func (a *authenticator) authorizeContext(md metadata.MD, method string) error {
	var header string
	if v := md.Get("authorization"); len(v) > 0 {
		header = v[0]
	}
	return a.authorize(header, method)
}
