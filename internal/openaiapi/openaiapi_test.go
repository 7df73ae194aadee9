package openaiapi

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	at := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name     string
		h        http.Header
		min, max time.Duration
	}{
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second, 3 * time.Second},
		{"milliseconds first", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"3"}}, 250 * time.Millisecond, 250 * time.Millisecond},
		{"http date", http.Header{"Retry-After": {at}}, 59 * time.Minute, time.Hour},
		{"absent", http.Header{}, 0, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RetryAfter(tc.h); got < tc.min || got > tc.max {
				t.Errorf("RetryAfter = %v, want within [%v, %v]", got, tc.min, tc.max)
			}
		})
	}
}

func TestRetryWait_Jitter(t *testing.T) {
	const base, ceiling = 100 * time.Millisecond, time.Second
	for attempt := range 6 {
		want := min(base<<attempt, ceiling)
		for range 50 {
			got, ok := RetryWait(io.ErrUnexpectedEOF, attempt, base, ceiling, true)
			if !ok || got < want/2 || got > want {
				t.Fatalf("attempt %d: RetryWait = %v, %v; want within [%v, %v]", attempt, got, ok, want/2, want)
			}
		}
	}
	// A Retry-After is honoured as sent, not jittered.
	if got, ok := RetryWait(&StatusError{Code: 429, RetryAfter: 700 * time.Millisecond}, 3, base, ceiling, true); !ok || got != 700*time.Millisecond {
		t.Errorf("Retry-After 700ms: RetryWait = %v, %v", got, ok)
	}
	if _, ok := RetryWait(errors.Join(&ProtocolError{Msg: "x"}), 0, base, ceiling, true); ok {
		t.Error("a protocol error was retried")
	}
}

func TestErrorMessage(t *testing.T) {
	for raw, want := range map[string]string{
		`{"error": {"message": "model not found"}}`: "model not found",
		`{"error": "busy"}`:                         "busy",
		"  plain text \n":                           "plain text",
	} {
		if got := ErrorMessage([]byte(raw)); got != want {
			t.Errorf("ErrorMessage(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestCheckBaseURL(t *testing.T) {
	for base, ok := range map[string]bool{
		"http://127.0.0.1:11434/v1": true,
		"https://api.openai.com/v1": true,
		"127.0.0.1:11434/v1":        false,
		"ftp://host/v1":             false,
		"http://host/v1?x=1":        false,
		"http:///v1":                false,
	} {
		if err := CheckBaseURL("endpoint", base); (err == nil) != ok {
			t.Errorf("CheckBaseURL(%q) = %v", base, err)
		}
	}
}
