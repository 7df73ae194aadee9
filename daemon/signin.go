package daemon

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// Sign-in to the web inspector: `ctxd ui` asks for a one-time code
// (CreateSignInLink), the browser trades it for a session token (the
// inspector's POST /ui/signin), and uses that token like any other. Codes
// and sessions live in memory only: a restart signs every browser out.
const (
	// signInCodeTTL is how long a sign-in code works.
	signInCodeTTL = 60 * time.Second
	// maxSignInCodes bounds the codes outstanding at once.
	maxSignInCodes = 16
	// sessionTTL is how long a session token works.
	sessionTTL = 12 * time.Hour
	// maxSessions bounds the live session tokens; a new one past it ends
	// the session that expires first.
	maxSessions = 64
)

// signIns holds the outstanding sign-in codes and the session tokens they
// were traded for, each by its SHA-256 digest, as the authenticator keeps
// tokens.
type signIns struct {
	now      func() time.Time // time.Now; tests move it
	mu       sync.Mutex
	codes    map[[sha256.Size]byte]pending
	sessions map[[sha256.Size]byte]pending
}

// pending is a grant that works until expires.
type pending struct {
	g       grant
	expires time.Time
}

func newSignIns() *signIns {
	return &signIns{now: time.Now, codes: map[[sha256.Size]byte]pending{}, sessions: map[[sha256.Size]byte]pending{}}
}

// newCode makes a one-time code for g, valid for signInCodeTTL.
func (s *signIns) newCode(g grant) (code string, expires time.Time, err error) {
	code, err = randomHex(16)
	if err != nil {
		return "", time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	dropExpired(s.codes, now)
	if len(s.codes) >= maxSignInCodes {
		return "", time.Time{}, apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE,
			fmt.Sprintf("%d sign-in codes are outstanding, the most the daemon keeps", maxSignInCodes),
			fmt.Sprintf("Use one of the links already printed, or wait: a code expires %s after `ctxd ui` made it.", signInCodeTTL))
	}
	expires = now.Add(signInCodeTTL)
	s.codes[sha256.Sum256([]byte(code))] = pending{g: g, expires: expires}
	return code, expires, nil
}

// exchange consumes code and returns a session token of its grant, valid
// for sessionTTL. A code works once, and only before it expires.
func (s *signIns) exchange(code string) (token string, expires time.Time, err error) {
	sum := sha256.Sum256([]byte(code))
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	p, ok := s.codes[sum]
	delete(s.codes, sum)
	if !ok || !now.Before(p.expires) {
		return "", time.Time{}, apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAUTHENTICATED,
			"the sign-in code is not valid: it was used already, it expired, or it was never issued",
			fmt.Sprintf("Run `ctxd ui` for a new link and open it within %s, or sign in with a token.", signInCodeTTL))
	}
	if token, err = randomHex(32); err != nil {
		return "", time.Time{}, err
	}
	token = "ctxds_" + token
	dropExpired(s.sessions, now)
	if len(s.sessions) >= maxSessions {
		var first [sha256.Size]byte
		var at time.Time
		for k, v := range s.sessions {
			if at.IsZero() || v.expires.Before(at) {
				first, at = k, v.expires
			}
		}
		delete(s.sessions, first)
	}
	expires = now.Add(sessionTTL)
	s.sessions[sha256.Sum256([]byte(token))] = pending{g: p.g, expires: expires}
	return token, expires, nil
}

// session returns the grant of the live session token with digest sum; a
// nil s holds none.
func (s *signIns) session(sum [sha256.Size]byte) (grant, bool) {
	if s == nil {
		return grant{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.sessions[sum]
	if !ok {
		return grant{}, false
	}
	if !s.now().Before(p.expires) {
		delete(s.sessions, sum)
		return grant{}, false
	}
	return p.g, true
}

func dropExpired(m map[[sha256.Size]byte]pending, now time.Time) {
	for k, p := range m {
		if !now.Before(p.expires) {
			delete(m, k)
		}
	}
}

func randomHex(n int) (string, error) {
	raw := make([]byte, n)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return hex.EncodeToString(raw), nil
}
