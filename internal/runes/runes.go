// Package runes cuts UTF-8 text by bytes without splitting a character.
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
