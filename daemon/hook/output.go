package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxContextChars is Claude Code's cap on a hook's additionalContext:
// 10,000 characters as it counts them, UTF-16 code units (a character
// outside the Basic Multilingual Plane, an emoji, counts twice). Longer
// context is cut by the host with a note; the hook cuts it first, at a line
// boundary, with cutMarker.
const MaxContextChars = 10_000

// cutMarker ends a context cut to MaxContextChars.
const cutMarker = "\n[… cut by ctxd at the host's 10,000-character limit; a smaller --budget keeps it whole]"

// hookOutput is the JSON a command hook prints to add context, as Claude
// Code's hooks reference documents it.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Output is what the hook prints on stdout to add context to event (a
// SessionStart or UserPromptSubmit):
// {"hookSpecificOutput":{"hookEventName":EVENT,"additionalContext":CONTEXT}}
// and a newline. The context is sanitised (Sanitize) and cut to
// MaxContextChars. Output is nil when nothing is left to add: the hook
// then prints nothing at all.
func Output(event, context string) []byte {
	context = capContext(Sanitize(context))
	if strings.TrimSpace(context) == "" {
		return nil
	}
	var out hookOutput
	out.HookSpecificOutput.HookEventName = event
	out.HookSpecificOutput.AdditionalContext = context
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil { // strings only: cannot fail
		return nil
	}
	return b.Bytes()
}

// Sanitize makes text safe to hand to a host as context: valid UTF-8,
// without terminal escape sequences (ANSI CSI and OSC sequences, other ESC
// sequences) or other control characters but tab and newline; "\r\n" and a
// lone "\r" become "\n".
func Sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b: // ESC: skip the sequence it starts
			i += size + escapeLen(s[i+size:])
			continue
		case r == '\r':
			if !strings.HasPrefix(s[i+size:], "\n") {
				b.WriteByte('\n')
			}
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escapeLen is the length of the rest of an escape sequence after its ESC:
// CSI (ESC [ parameters, final byte 0x40–0x7E), OSC, DCS, SOS, PM and APC
// (ESC ] … ended by BEL or ESC \), or a two-byte ESC x.
func escapeLen(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '[':
		for i := 1; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
		return len(s)
	case ']', 'P', 'X', '^', '_':
		for i := 1; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	_, size := utf8.DecodeRuneInString(s)
	return size
}

// contextLen is the length of s as Claude Code counts it.
func contextLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// capContext cuts s to MaxContextChars with cutMarker: at the last line
// break that leaves room for the marker, or at a rune boundary when no line
// break is near.
func capContext(s string) string {
	if contextLen(s) <= MaxContextChars {
		return s
	}
	room := MaxContextChars - contextLen(cutMarker)
	end, n := 0, 0 // byte offset and length of the longest prefix that fits
	for i, r := range s {
		if n+utf16.RuneLen(r) > room {
			break
		}
		n += utf16.RuneLen(r)
		end = i + utf8.RuneLen(r)
	}
	if nl := strings.LastIndexByte(s[:end], '\n'); nl >= end/2 {
		end = nl
	}
	return strings.TrimRight(s[:end], " \t\n") + cutMarker
}
