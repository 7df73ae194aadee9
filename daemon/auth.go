package daemon

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// Scope is a set of permissions a token grants.
type Scope uint8

const (
	// ScopeRead allows every call that does not change the store.
	ScopeRead Scope = 1 << iota
	// ScopeWrite allows calls that change items.
	ScopeWrite
	// ScopeIngest allows reading the daemon host's files and fetching URLs
	// (Add, Refresh), together with ScopeWrite: an agent that may write items
	// may not thereby reach beyond the store.
	ScopeIngest
	// ScopeAdmin allows administrative calls.
	ScopeAdmin
	// ScopeMetrics allows scraping /metrics on the HTTP listener: counts,
	// sizes and latencies of the whole daemon, no item content or names.
	ScopeMetrics
	scopeAll = ScopeRead | ScopeWrite | ScopeIngest | ScopeAdmin | ScopeMetrics
)

var scopeNames = map[string]Scope{"read": ScopeRead, "write": ScopeWrite, "ingest": ScopeIngest, "admin": ScopeAdmin, "metrics": ScopeMetrics}

// names lists the scopes in s as the config spells them.
func (s Scope) names() []string {
	var names []string
	for _, n := range []string{"read", "write", "ingest", "admin", "metrics"} {
		if s&scopeNames[n] != 0 {
			names = append(names, n)
		}
	}
	return names
}

func (s Scope) String() string { return strings.Join(s.names(), "+") }

// quoted lists the scopes in s for a hint: "write" and "ingest".
func (s Scope) quoted() string {
	q := s.names()
	for i, n := range q {
		q[i] = strconv.Quote(n)
	}
	if len(q) > 1 {
		return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
	}
	return strings.Join(q, "")
}

func parseScopes(names []string) (Scope, error) {
	if len(names) == 0 {
		return 0, errors.New("scopes must list at least one of read, write, ingest, admin, metrics")
	}
	var s Scope
	for _, n := range names {
		v, ok := scopeNames[n]
		if !ok {
			return 0, fmt.Errorf("unknown scope %q; use read, write, ingest, admin or metrics", n)
		}
		s |= v
	}
	return s, nil
}

// scopeToken marks methods any valid token may call: health checks.
const scopeToken Scope = 0

// methodScopes is the scope each RPC needs. Every method the gRPC server
// registers has an entry (TestScopes_EveryMethodHasOne walks the server); a
// method without one is refused, so a new RPC cannot slip out unscoped.
var methodScopes = map[string]Scope{
	ctxdv1.VfsService_ListDrives_FullMethodName:                            ScopeRead,
	ctxdv1.VfsService_Tree_FullMethodName:                                  ScopeRead,
	ctxdv1.VfsService_List_FullMethodName:                                  ScopeRead,
	ctxdv1.VfsService_Read_FullMethodName:                                  ScopeRead,
	ctxdv1.VfsService_Info_FullMethodName:                                  ScopeRead,
	ctxdv1.VfsService_Exists_FullMethodName:                                ScopeRead,
	ctxdv1.VfsService_DirSize_FullMethodName:                               ScopeRead,
	ctxdv1.VfsService_CountLines_FullMethodName:                            ScopeRead,
	ctxdv1.VfsService_History_FullMethodName:                               ScopeRead,
	ctxdv1.VfsService_ReadRevision_FullMethodName:                          ScopeRead,
	ctxdv1.VfsService_ListDeleted_FullMethodName:                           ScopeRead,
	ctxdv1.VfsService_Log_FullMethodName:                                   ScopeRead,
	ctxdv1.VfsService_Diff_FullMethodName:                                  ScopeRead,
	ctxdv1.VfsService_Chunks_FullMethodName:                                ScopeRead,
	ctxdv1.SearchService_Search_FullMethodName:                             ScopeRead,
	ctxdv1.SearchService_FindSimilar_FullMethodName:                        ScopeRead,
	ctxdv1.ContextService_BuildContext_FullMethodName:                      ScopeRead,
	ctxdv1.SessionService_GetSession_FullMethodName:                        ScopeRead,
	ctxdv1.SessionService_ListSessions_FullMethodName:                      ScopeRead,
	ctxdv1.SessionService_SearchEvents_FullMethodName:                      ScopeRead,
	ctxdv1.SessionService_Recall_FullMethodName:                            ScopeRead,
	ctxdv1.AdminService_Status_FullMethodName:                              ScopeRead,
	ctxdv1.SubscriptionService_Subscribe_FullMethodName:                    ScopeRead,
	ctxdv1.SubscriptionService_CreateSubscription_FullMethodName:           ScopeRead,
	ctxdv1.SubscriptionService_ListSubscriptions_FullMethodName:            ScopeRead,
	ctxdv1.SubscriptionService_DeleteSubscription_FullMethodName:           ScopeRead,
	ctxdv1.SubscriptionService_ReadSubscription_FullMethodName:             ScopeRead,
	ctxdv1.ToolService_ListTools_FullMethodName:                            ScopeRead,
	ctxdv1.ToolService_CallTool_FullMethodName:                             ScopeRead, // a tool's own calls need write, ingest
	ctxdv1.VfsService_Write_FullMethodName:                                 ScopeWrite,
	ctxdv1.VfsService_WriteBatch_FullMethodName:                            ScopeWrite,
	ctxdv1.VfsService_Edit_FullMethodName:                                  ScopeWrite,
	ctxdv1.VfsService_Delete_FullMethodName:                                ScopeWrite,
	ctxdv1.VfsService_Copy_FullMethodName:                                  ScopeWrite,
	ctxdv1.VfsService_Move_FullMethodName:                                  ScopeWrite,
	ctxdv1.VfsService_MakeDir_FullMethodName:                               ScopeWrite,
	ctxdv1.VfsService_Revert_FullMethodName:                                ScopeWrite,
	ctxdv1.ContextService_Init_FullMethodName:                              ScopeWrite,
	ctxdv1.ContextService_Update_FullMethodName:                            ScopeWrite,
	ctxdv1.ContextService_Compact_FullMethodName:                           ScopeWrite,
	ctxdv1.SessionService_StartSession_FullMethodName:                      ScopeWrite,
	ctxdv1.SessionService_AppendEvents_FullMethodName:                      ScopeWrite,
	ctxdv1.SessionService_EndSession_FullMethodName:                        ScopeWrite,
	ctxdv1.SessionService_DigestSession_FullMethodName:                     ScopeWrite,
	ctxdv1.IngestService_Add_FullMethodName:                                ScopeWrite | ScopeIngest,
	ctxdv1.IngestService_Refresh_FullMethodName:                            ScopeWrite | ScopeIngest,
	ctxdv1.IngestService_Reembed_FullMethodName:                            ScopeAdmin,
	ctxdv1.WatchService_AddWatch_FullMethodName:                            ScopeWrite | ScopeIngest,
	ctxdv1.WatchService_ListWatches_FullMethodName:                         ScopeWrite | ScopeIngest,
	ctxdv1.WatchService_RemoveWatch_FullMethodName:                         ScopeWrite | ScopeIngest,
	ctxdv1.AdminService_Reindex_FullMethodName:                             ScopeAdmin,
	ctxdv1.AdminService_Doctor_FullMethodName:                              ScopeAdmin,
	ctxdv1.AdminService_Prune_FullMethodName:                               ScopeAdmin,
	ctxdv1.AdminService_Backup_FullMethodName:                              ScopeAdmin,
	ctxdv1.AdminService_WhoAmI_FullMethodName:                              scopeToken,
	ctxdv1.AdminService_CreateSignInLink_FullMethodName:                    ScopeAdmin,
	healthpb.Health_Check_FullMethodName:                                   scopeToken,
	healthpb.Health_List_FullMethodName:                                    scopeToken,
	healthpb.Health_Watch_FullMethodName:                                   scopeToken,
	reflectionv1.ServerReflection_ServerReflectionInfo_FullMethodName:      ScopeRead,
	reflectionv1alpha.ServerReflection_ServerReflectionInfo_FullMethodName: ScopeRead,
}

// authenticator checks bearer tokens. It keeps only their SHA-256 digests and
// looks presented tokens up by digest, so timing reveals nothing about a secret.
type authenticator struct {
	tokens map[[sha256.Size]byte]grant
	// owner is the owner token itself, which the daemon presents on its own
	// internal calls made for a unix-socket caller (toolBackend).
	owner string
	// sessions are the web inspector's sign-in codes and session tokens
	// (signin.go), checked here like every other token.
	sessions *signIns
}

// grant is what a token stands for: who calls (history records the name)
// and what it may do.
type grant struct {
	name   string
	scopes Scope
	agent  bool       // agent tokens may not change items their frontmatter protects
	access vfs.Access // the drives and paths the token may touch (zero: all)
}

// ownerGrant is what the owner holds: the owner token, or the unix socket.
var ownerGrant = grant{name: vfs.OwnerActor, scopes: scopeAll}

// isOwner reports whether g is the owner's, not as an agent.
func (g grant) isOwner() bool { return g.name == vfs.OwnerActor && !g.agent }

// actor is the vfs actor of calls made with the grant.
func (g grant) actor() vfs.Actor { return vfs.Actor{Name: g.name, Agent: g.agent} }

type callerKey struct{}

// withCaller records the grant a call was admitted with, for handlers that
// act on the caller's behalf.
func withCaller(ctx context.Context, g grant) context.Context {
	return context.WithValue(ctx, callerKey{}, g)
}

// callerFrom returns the grant the call was admitted with.
func callerFrom(ctx context.Context) grant {
	g, _ := ctx.Value(callerKey{}).(grant)
	return g
}

// newAuthenticator loads the owner token file and adds the scoped tokens of
// the config. When the file does not exist it generates a token, which save
// writes; the daemon calls it once it serves, so a failed start leaves no
// token file behind. save is nil when the file exists. An empty tokenFile
// means an owner token kept in memory only, for the daemon's own calls.
func newAuthenticator(tokenFile string, extra []TokenConfig) (a *authenticator, save func() error, err error) {
	var owner string
	created := false
	if tokenFile == "" {
		owner, err = generateToken()
	} else {
		owner, created, err = loadOrGenerateToken(tokenFile)
	}
	if err != nil {
		return nil, nil, err
	}
	if created {
		save = func() error { return saveToken(tokenFile, owner) }
	}
	a = &authenticator{tokens: map[[sha256.Size]byte]grant{}, owner: owner, sessions: newSignIns()}
	a.tokens[sha256.Sum256([]byte(owner))] = ownerGrant
	for _, t := range extra {
		scopes, err := parseScopes(t.Scopes)
		if err != nil {
			return nil, nil, err
		}
		var sum [sha256.Size]byte
		if _, err := hex.Decode(sum[:], []byte(t.SHA256)); err != nil {
			return nil, nil, fmt.Errorf("token %s: %w", t.Name, err)
		}
		access, err := tokenAccess(t, scopes)
		if err != nil {
			return nil, nil, fmt.Errorf("token %s: %w", t.Name, err)
		}
		a.tokens[sum] = grant{name: t.Name, scopes: scopes, agent: t.Agent, access: access}
	}
	return a, save, nil
}

// tokenAccess parses a token's drives and paths. A limited token may not
// hold admin, whose calls (reindex, doctor, reembed) act on the whole store.
func tokenAccess(t TokenConfig, scopes Scope) (vfs.Access, error) {
	a, err := vfs.NewAccess(t.Drives, t.Paths)
	if err != nil {
		return vfs.Access{}, fmt.Errorf("drives and paths: %w", err)
	}
	if a.Limited() && scopes&ScopeAdmin != 0 {
		return vfs.Access{}, errors.New(`a token limited by drives or paths cannot hold the admin scope, whose calls act on the whole store; drop "admin" from its scopes, or its drives and paths`)
	}
	if a.Limited() && scopes&ScopeMetrics != 0 {
		return vfs.Access{}, errors.New(`a token limited by drives or paths cannot hold the metrics scope, whose figures cover the whole store; drop "metrics" from its scopes, or its drives and paths`)
	}
	return a, nil
}

// loadOrGenerateToken reads the owner token, or generates a random one
// (created) when the file does not exist.
func loadOrGenerateToken(name string) (tok string, created bool, err error) {
	b, err := os.ReadFile(name)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", false, fmt.Errorf("token file %s is empty; delete it to generate a new token", name)
		}
		return tok, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", false, fmt.Errorf("read token file: %w", err)
	}
	tok, err = generateToken()
	return tok, err == nil, err
}

// generateToken returns a new random owner token.
func generateToken() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return "ctxd_" + hex.EncodeToString(raw), nil
}

// saveToken writes a generated token atomically with mode 0600.
func saveToken(name, tok string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return fmt.Errorf("create token dir: %w", err)
	}
	if err := writeFileAtomic(name, []byte(tok+"\n"), 0o600); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	return nil
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

// authenticate returns the grant of the token in an "authorization:
// Bearer <token>" value. The scheme is case-insensitive (RFC 9110 §11.1).
func (a *authenticator) authenticate(header string) (grant, error) {
	scheme, tok, _ := strings.Cut(strings.TrimSpace(header), " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return grant{}, apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAUTHENTICATED,
			"this endpoint needs a bearer token",
			"Send the header 'authorization: Bearer <token>'; the owner token is in the daemon's token file (default ~/.config/ctxd/token). The unix socket needs none unless the daemon sets socket_auth.")
	}
	sum := sha256.Sum256([]byte(tok))
	g, ok := a.tokens[sum]
	if !ok {
		g, ok = a.sessions.session(sum)
	}
	if !ok {
		return grant{}, apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAUTHENTICATED,
			"the bearer token is not valid",
			"Check the token against the daemon's token file (default ~/.config/ctxd/token).")
	}
	return g, nil
}

// authorize checks the token in header against the scope method needs and
// returns its grant.
func (a *authenticator) authorize(header, method string) (grant, error) {
	g, err := a.authenticate(header)
	if err != nil {
		return grant{}, err
	}
	need, ok := methodScopes[method]
	if !ok {
		return grant{}, apiError(ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED,
			fmt.Sprintf("%s has no scope defined, so no token may call it", method),
			"Call it over the unix socket; a method without a scope is a daemon bug worth reporting.")
	}
	if err := needScope(g, need, method); err != nil {
		return grant{}, err
	}
	return g, nil
}

// needScope refuses g with PERMISSION_DENIED unless it holds every scope in
// need, which what (a method or path) needs.
func needScope(g grant, need Scope, what string) error {
	if missing := need &^ g.scopes; missing != 0 {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED,
			fmt.Sprintf("the token %s lacks the %s scope that %s needs (it has %s)", g.name, missing, what, g.scopes),
			fmt.Sprintf("Use a token whose scopes include %s (tokens[].scopes in the daemon config), or the owner token from the token file.", missing.quoted()))
	}
	return nil
}

// openOnSocket reports whether method stays open to tokenless unix-socket
// callers under socket_auth: the health checks, so that probes (the check
// `ctxd mcp` makes at start) need no secret.
func openOnSocket(method string) bool {
	need, ok := methodScopes[method]
	return ok && need == scopeToken
}

// socketAuthError explains a missing or wrong token on the unix socket,
// which needs one only with socket_auth.
func socketAuthError(err error) error {
	if status.Code(err) != codes.Unauthenticated {
		return err
	}
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAUTHENTICATED,
		status.Convert(err).Message()+" (the daemon sets socket_auth = true, so the unix socket needs one too)",
		"Pass the token with --token or the CTXD_TOKEN environment variable (the CLI and `ctxd mcp`), or send 'authorization: Bearer <token>' from a client; "+
			"the owner token is in the daemon's token file (default ~/.config/ctxd/token). socket_auth in the daemon config turns this off.")
}

// authorizeContext reads the token from incoming gRPC metadata.
func (a *authenticator) authorizeContext(md metadata.MD, method string) (grant, error) {
	var header string
	if v := md.Get("authorization"); len(v) > 0 {
		header = v[0]
	}
	return a.authorize(header, method)
}
