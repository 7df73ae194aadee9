package daemon

import (
	"fmt"
	"time"

	"github.com/ctxd/ctxd/index/session"
)

// SessionsConfig is the [sessions] table: how long session events are kept.
type SessionsConfig struct {
	// EventTTL is how long a session's events are kept; digests and
	// session records stay (CTXD_SESSION_EVENT_TTL, --session-event-ttl).
	EventTTL Duration `toml:"event_ttl"`
	// ProjectEventTTL overrides EventTTL per project:
	// project_event_ttl = { ctxd = "2160h" }.
	ProjectEventTTL map[string]Duration `toml:"project_event_ttl"`
}

// DefaultSessionsConfig keeps events for 30 days.
func DefaultSessionsConfig() SessionsConfig {
	return SessionsConfig{EventTTL: Duration{session.DefaultEventTTL}}
}

func (c *SessionsConfig) applyEnv(lookupEnv func(string) (string, bool)) error {
	if v, ok := lookupEnv("CTXD_SESSION_EVENT_TTL"); ok {
		if err := c.EventTTL.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("CTXD_SESSION_EVENT_TTL: %w", err)
		}
	}
	return nil
}

func (c *SessionsConfig) validate() error {
	if c.EventTTL.Duration <= 0 {
		return fmt.Errorf("config: sessions.event_ttl must be positive, got %s", c.EventTTL)
	}
	for p, d := range c.ProjectEventTTL {
		if d.Duration <= 0 {
			return fmt.Errorf("config: sessions.project_event_ttl.%s must be positive, got %s", p, d)
		}
		if session.ProjectFromDir(p) != p {
			return fmt.Errorf("config: sessions.project_event_ttl: %q is not a project name (1 to 64 characters of a-z0-9._-)", p)
		}
	}
	return nil
}

// projectTTLs is ProjectEventTTL as package session takes it.
func (c *SessionsConfig) projectTTLs() map[string]time.Duration {
	out := make(map[string]time.Duration, len(c.ProjectEventTTL))
	for p, d := range c.ProjectEventTTL {
		out[p] = d.Duration
	}
	return out
}
