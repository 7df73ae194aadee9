package hook_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ctxd/ctxd/daemon/hook"
)

// decodeOutput checks that out is exactly the JSON the hooks reference
// documents, one object with one key, and returns its two fields.
func decodeOutput(t testing.TB, out []byte) (event, context string) {
	t.Helper()
	var v map[string]map[string]string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || dec.More() {
		t.Fatalf("output is not one JSON object: %v: %q", err, out)
	}
	spec := v["hookSpecificOutput"]
	if len(v) != 1 || len(spec) != 2 || spec["hookEventName"] == "" {
		t.Fatalf("output is not {\"hookSpecificOutput\":{\"hookEventName\",\"additionalContext\"}}: %q", out)
	}
	return spec["hookEventName"], spec["additionalContext"]
}

func TestOutput(t *testing.T) {
	got := string(hook.Output(hook.SessionStart, "## Goals\n- [ ] ship <the hook> & test it"))
	want := `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"## Goals\n- [ ] ship <the hook> & test it"}}` + "\n"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, empty := range []string{"", " \n\t", "\x1b[31m\x1b[0m"} {
		if out := hook.Output(hook.UserPromptSubmit, empty); out != nil {
			t.Errorf("Output(%q) = %q, want nothing", empty, out)
		}
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\x1b[1;31mred\x1b[0m text", "red text"},
		{"title\x1b]0;window title\x07 after", "title after"},
		{"link \x1b]8;;https://x\x1b\\here\x1b]8;;\x1b\\", "link here"},
		{"a\r\nb\rc", "a\nb\nc"},
		{"bell\x07 nul\x00 del\x7f c1\u009b tab\t", "bell nul del c1 tab\t"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"ünïcode 日本 🙂", "ünïcode 日本 🙂"},
	}
	for _, tt := range tests {
		if got := hook.Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestOutput_Cap: context over the host's 10,000 characters (UTF-16 code
// units, as the host counts) is cut at a line break, never mid-rune, and
// says so.
func TestOutput_Cap(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 40_000; i++ {
		b.WriteString("- a line of memory with an emoji 🙂 and 日本語 text\n")
	}
	_, ctx := decodeOutput(t, hook.Output(hook.SessionStart, b.String()))
	if n := len(utf16.Encode([]rune(ctx))); n > hook.MaxContextChars {
		t.Errorf("context is %d UTF-16 units", n)
	}
	body, marker, ok := strings.Cut(ctx, "\n[… cut by ctxd")
	if !ok || !strings.HasSuffix(body, "text") || !strings.Contains(marker, "--budget") {
		t.Errorf("not cut at a line with the marker: …%q", ctx[len(ctx)-200:])
	}
	// One long line: cut at a rune boundary.
	_, ctx = decodeOutput(t, hook.Output(hook.SessionStart, strings.Repeat("🙂", 20_000)))
	if n := len(utf16.Encode([]rune(ctx))); n > hook.MaxContextChars || !utf8.ValidString(ctx) || !strings.HasPrefix(ctx, "🙂🙂") {
		t.Errorf("long line: %d units, valid %v", n, utf8.ValidString(ctx))
	}
}

func FuzzOutput(f *testing.F) {
	for _, s := range []string{"", "hello", "\x1b[31mred", strings.Repeat("🙂\n", 6000), "a\r\n\x00\u2028b", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := hook.Output(hook.UserPromptSubmit, s)
		if out == nil {
			if strings.TrimSpace(hook.Sanitize(s)) != "" {
				t.Errorf("nothing printed for %q", s)
			}
			return
		}
		event, ctx := decodeOutput(t, out)
		if event != hook.UserPromptSubmit {
			t.Errorf("event %q", event)
		}
		if n := len(utf16.Encode([]rune(ctx))); n > hook.MaxContextChars {
			t.Errorf("context is %d UTF-16 units", n)
		}
		if !utf8.ValidString(ctx) || strings.ContainsFunc(ctx, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x1b || r == 0x7f }) {
			t.Errorf("control characters in %q", ctx)
		}
	})
}
