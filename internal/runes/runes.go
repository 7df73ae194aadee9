// Package runes cuts UTF-8 text without splitting a character: by bytes
// (Cut), or by runes with an ellipsis (Ellipsize).
package runes

import "unicode/utf8"

// Cut returns at most n bytes of s, cut at a rune boundary.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Ellipsize returns s cut to at most n runes, the last of them "…" when it
// was cut: for one-line summaries people read.
func Ellipsize(s string, n int) string {
	switch {
	case utf8.RuneCountInString(s) <= n:
		return s
	case n <= 0:
		return ""
	}
	return string([]rune(s)[:n-1]) + "…"
}
