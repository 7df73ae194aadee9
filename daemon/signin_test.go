package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestSignIn_Codes: a sign-in code works once and only within a minute, at
// most maxSignInCodes wait at once, and the session token it gives is
// accepted by the authenticator with the code's grant until it expires.
func TestSignIn_Codes(t *testing.T) {
	auth, _, err := newAuthenticator("", nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	auth.sessions.now = clock.Now
	s := auth.sessions

	code, expires, err := s.newCode(ownerGrant)
	if err != nil || !expires.Equal(clock.Now().Add(signInCodeTTL)) || len(code) != 32 {
		t.Fatalf("newCode = %q, %v, %v", code, expires, err)
	}
	tok, sessionEnds, err := s.exchange(code)
	if err != nil || !strings.HasPrefix(tok, "ctxds_") || !sessionEnds.Equal(clock.Now().Add(sessionTTL)) {
		t.Fatalf("exchange = %q, %v, %v", tok, sessionEnds, err)
	}
	if _, _, err := s.exchange(code); err == nil {
		t.Error("a code worked twice")
	} else if code, _ := errorDetail(t, err); code != codes.Unauthenticated {
		t.Errorf("second use: %v", err)
	}
	g, err := auth.authenticate("Bearer " + tok)
	if err != nil || !g.isOwner() {
		t.Errorf("the session token authenticates as %+v, %v; want the owner", g, err)
	}

	late, _, err := s.newCode(ownerGrant)
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(signInCodeTTL)
	if _, _, err := s.exchange(late); err == nil {
		t.Error("a code worked after its minute")
	}

	for i := range maxSignInCodes {
		if _, _, err := s.newCode(ownerGrant); err != nil {
			t.Fatalf("code %d: %v", i, err)
		}
	}
	if _, _, err := s.newCode(ownerGrant); err == nil {
		t.Errorf("code %d was made; at most %d wait", maxSignInCodes+1, maxSignInCodes)
	}
	clock.Add(signInCodeTTL)
	if _, _, err := s.newCode(ownerGrant); err != nil {
		t.Errorf("expired codes still count: %v", err)
	}

	clock.Add(sessionTTL - 2*signInCodeTTL - time.Second)
	if _, err := auth.authenticate("Bearer " + tok); err != nil {
		t.Errorf("the session ended early: %v", err)
	}
	clock.Add(time.Second)
	if _, err := auth.authenticate("Bearer " + tok); err == nil {
		t.Error("the session token works after 12 hours")
	}
}

// TestSignIn_SessionCap: past maxSessions, a new session ends the one that
// would expire first, never refusing the sign-in.
func TestSignIn_SessionCap(t *testing.T) {
	s := newSignIns()
	clock := &fakeClock{now: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	s.now = clock.Now
	var tokens []string
	for range maxSessions + 1 {
		code, _, err := s.newCode(ownerGrant)
		if err != nil {
			t.Fatal(err)
		}
		tok, _, err := s.exchange(code)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok)
		clock.Add(time.Second)
	}
	live := func(tok string) bool {
		_, ok := s.session(sha256Sum(tok))
		return ok
	}
	if live(tokens[0]) || !live(tokens[1]) || !live(tokens[maxSessions]) {
		t.Errorf("after %d sign-ins: first live %v, second %v, last %v; want only the first ended", maxSessions+1, live(tokens[0]), live(tokens[1]), live(tokens[maxSessions]))
	}
}

// TestWhoAmI_SignInLink: WhoAmI describes the owner and limited tokens;
// only the owner gets a sign-in link, whose URL names the HTTP listener
// and whose code signs a browser in through POST /ui/signin.
func TestWhoAmI_SignInLink(t *testing.T) {
	cfg := testConfig(t)
	cfg.GRPCTCP, cfg.HTTP = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{
		{Name: "bot", SHA256: sha256Hex("bot-token"), Scopes: []string{"read", "write"}, Drives: []string{"agent"}, Paths: []string{"notes:/shared"}, Agent: true},
	}
	d := mustStart(t, cfg)
	sock := ctxdv1.NewAdminServiceClient(dial(t, "unix://"+cfg.Socket))
	tcp := ctxdv1.NewAdminServiceClient(dial(t, "passthrough:///"+d.GRPCAddr().String()))

	who, err := sock.WhoAmI(context.Background(), &ctxdv1.WhoAmIRequest{})
	if err != nil || who.Name != "owner" || !who.Owner || who.Agent || !slices.Equal(who.Scopes, []string{"read", "write", "ingest", "admin", "metrics"}) || len(who.Drives)+len(who.Paths) != 0 {
		t.Errorf("WhoAmI on the socket = %v, %v", who, err)
	}
	who, err = tcp.WhoAmI(bearer("bot-token"), &ctxdv1.WhoAmIRequest{})
	if err != nil || who.Name != "bot" || who.Owner || !who.Agent || !slices.Equal(who.Scopes, []string{"read", "write"}) ||
		!slices.Equal(who.Drives, []string{"agent"}) || !slices.Equal(who.Paths, []string{"notes:/shared"}) {
		t.Errorf("WhoAmI of bot = %v, %v", who, err)
	}
	asAgent := metadata.AppendToOutgoingContext(context.Background(), AgentMetadata, "helper")
	if who, err = sock.WhoAmI(asAgent, &ctxdv1.WhoAmIRequest{}); err != nil || who.Owner || who.Name != "helper" || !who.Agent {
		t.Errorf("WhoAmI of the owner as an agent = %v, %v", who, err)
	}

	for name, ctx := range map[string]context.Context{"bot": bearer("bot-token"), "owner as agent": asAgent} {
		c := tcp
		if name != "bot" {
			c = sock
		}
		_, err := c.CreateSignInLink(ctx, &ctxdv1.CreateSignInLinkRequest{})
		if code, ed := errorDetail(t, err); code != codes.PermissionDenied || ed.GetNextActionHint() == "" {
			t.Errorf("CreateSignInLink by %s: %v", name, err)
		}
	}
	link, err := tcp.CreateSignInLink(bearer(d.token), &ctxdv1.CreateSignInLinkRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := "http://" + d.HTTPAddr().String() + "/ui/#signin=" + link.Code
	if link.Url != want || link.ExpiresAt.AsTime().Before(time.Now()) {
		t.Errorf("link = %v, want URL %s", link, want)
	}
	resp, body := uiRequest(t, d, "POST", "/ui/signin", "", `{"code":"`+link.Code+`"}`)
	var session struct {
		Token string `json:"token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &session) != nil || session.Token == "" {
		t.Fatalf("sign in: %d %s", resp.StatusCode, body)
	}
	if who, err := tcp.WhoAmI(bearer(session.Token), &ctxdv1.WhoAmIRequest{}); err != nil || !who.Owner {
		t.Errorf("the session token is %v, %v; want the owner", who, err)
	}
	if resp, body := uiRequest(t, d, "POST", "/ui/signin", "", `{"code":"`+link.Code+`"}`); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "ctxd ui") {
		t.Errorf("the code worked twice: %d %s", resp.StatusCode, body)
	}
}
