package openaiapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ctxd/ctxd/internal/runes"
)

// StatusError is an answer with a status other than 200.
type StatusError struct {
	// What names the endpoint in the message, e.g. "chat endpoint".
	What string
	// Code is the HTTP status.
	Code int
	// Msg is the error body's message, at most 200 characters; may be empty.
	Msg string
	// RetryAfter is what the answer asked to wait before the next call; 0 if
	// it did not say.
	RetryAfter time.Duration
}

// NewStatusError reads the failed answer res, whose body (as much as was
// read) is raw.
func NewStatusError(what string, res *http.Response, raw []byte) *StatusError {
	return &StatusError{What: what, Code: res.StatusCode, Msg: ErrorMessage(raw), RetryAfter: RetryAfter(res.Header)}
}

func (e *StatusError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("%s answered %d %s", e.What, e.Code, http.StatusText(e.Code))
	}
	return fmt.Sprintf("%s answered %d %s: %s", e.What, e.Code, http.StatusText(e.Code), e.Msg)
}

// Retryable is true for statuses that a later call may not get: rate
// limits, timeouts and server errors.
func (e *StatusError) Retryable() bool {
	return e.Code == http.StatusTooManyRequests || e.Code == http.StatusRequestTimeout || e.Code == http.StatusConflict || e.Code >= 500
}

// ProtocolError is a 200 answer of the wrong shape: calling again would get
// the same.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return e.Msg }

// RetryWait says whether a call that failed with err may be retried, and
// after how long: the endpoint's Retry-After, else base doubled per earlier
// attempt, both at most max. Jitter, when set, spreads the backoff over
// [wait/2, wait] so that many clients failing together do not retry
// together; a Retry-After is honoured as it is.
func RetryWait(err error, attempt int, base, max time.Duration, jitter bool) (time.Duration, bool) {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return 0, false
	}
	var se *StatusError
	if errors.As(err, &se) {
		if !se.Retryable() {
			return 0, false
		}
		if se.RetryAfter > 0 {
			return min(se.RetryAfter, max), true
		}
	}
	wait := min(base<<min(attempt, 16), max)
	if jitter && wait > 1 {
		wait = wait/2 + rand.N(wait/2+1)
	}
	return wait, true
}

// ErrorMessage is the message of an OpenAI-style error body
// ({"error": {"message": ...}} or {"error": "..."}), else its start.
func ErrorMessage(raw []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(body.Error, &obj) == nil && obj.Message != "":
			return runes.Cut(obj.Message, 200)
		case json.Unmarshal(body.Error, &s) == nil:
			return runes.Cut(s, 200)
		}
	}
	return runes.Cut(strings.TrimSpace(string(raw)), 200)
}

// RetryAfter reads Retry-After (seconds or an HTTP date), or the
// retry-after-ms header OpenAI also sends; 0 when absent.
func RetryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := h.Get("Retry-After")
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// CheckBaseURL reports whether base is an absolute http or https URL
// without a query, as an API base URL (the part before /embeddings or
// /chat/completions) must be; what names it in the error.
func CheckBaseURL(what, base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s %q is not a base URL such as http://127.0.0.1:11434/v1", what, base)
	}
	return nil
}
