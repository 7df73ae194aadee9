package tokenize

import "unicode"

// The character classes below reproduce the ones the reference (the Rust
// `tokenizers` crate, BertNormalizer and BertPreTokenizer) uses, including
// where they differ from the plain Unicode definitions Go ships. The
// exception tables in tables.go were derived by running every code point
// through the reference and through these functions and diffing.

// isWhitespace reports whether r is whitespace for the normalizer's
// clean_text step and for the pre-tokenizer: the Unicode White_Space
// property (Rust's char::is_whitespace, Go's unicode.IsSpace), which
// includes NBSP, U+2000–U+200A, U+202F, U+205F, U+3000, U+2028 and U+2029,
// but not U+200B ZERO WIDTH SPACE (a format character).
func isWhitespace(r rune) bool {
	if r < 0x80 {
		return asciiClass[r]&classSpace != 0
	}
	return unicode.IsSpace(r)
}

// isControl reports whether clean_text drops r: the "Other" characters
// (Cc, Cf, Co, Cs, but not the unassigned Cn) in the reference's Unicode
// tables, except \t, \n and \r, which become spaces instead.
func isControl(r rune) bool {
	if r < 0x80 {
		return asciiClass[r]&classControl != 0
	}
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
		return !unicode.Is(refNotControl, r)
	}
	return false
}

// isChinese reports whether r is a CJK ideograph in the ranges BERT puts
// spaces around. The ranges are the reference's, which skip U+2B820–U+2B91F
// (the original BERT code includes them).
func isChinese(r rune) bool {
	switch {
	case r < 0x3400:
		return false
	case r <= 0x4DBF:
		return true
	case r >= 0x4E00 && r <= 0x9FFF:
		return true
	case r >= 0xF900 && r <= 0xFAFF:
		return true
	case r >= 0x20000 && r <= 0x2A6DF:
		return true
	case r >= 0x2A700 && r <= 0x2B81F:
		return true
	case r >= 0x2B920 && r <= 0x2CEAF:
		return true
	case r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}

// isPunct reports whether the pre-tokenizer splits r off as a word of its
// own: ASCII punctuation (33–47, 58–64, 91–96, 123–126, which includes
// symbols such as $ + < = > ^ ` | ~) or a Unicode punctuation character
// (P*). Symbols outside ASCII (emoji, currency, math) are not punctuation.
func isPunct(r rune) bool {
	if r < 0x80 {
		return asciiClass[r]&classPunct != 0
	}
	if unicode.IsPunct(r) {
		return !unicode.Is(refNotPunct, r)
	}
	return unicode.Is(refPunct, r)
}

// isNonspacingMark reports whether strip_accents drops r after NFD (Mn).
func isNonspacingMark(r rune) bool {
	if r < 0x300 {
		return false
	}
	if unicode.Is(unicode.Mn, r) {
		return !unicode.Is(refNotMn, r)
	}
	return unicode.Is(refMn, r)
}

// appendLower appends the full lowercase mapping of r, as Rust's
// char::to_lowercase computes it: the simple mapping, except U+0130 (LATIN
// CAPITAL LETTER I WITH DOT ABOVE), which lowercases to "i" U+0307.
// Context-dependent rules (final sigma) do not apply per character.
func appendLower(dst []byte, r rune) []byte {
	if r < 0x80 {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(dst, byte(r))
	}
	if r == 0x130 {
		return append(dst, 'i', 0xCC, 0x87)
	}
	if l, ok := refLower[r]; ok {
		return appendRune(dst, l)
	}
	return appendRune(dst, unicode.ToLower(r))
}

const (
	classSpace = 1 << iota
	classControl
	classPunct
)

// asciiClass classifies the ASCII range for the fast paths above.
var asciiClass = func() (c [0x80]uint8) {
	for r := rune(0); r < 0x80; r++ {
		switch {
		case r == '\t' || r == '\n' || r == '\r' || r == ' ':
			c[r] = classSpace
		case r == 0x0B || r == 0x0C:
			// Vertical tab and form feed are White_Space but also Cc: the
			// normalizer drops them; without clean_text they split words.
			c[r] = classSpace | classControl
		case r < 0x20 || r == 0x7F:
			c[r] = classControl
		case r >= 33 && r <= 47, r >= 58 && r <= 64, r >= 91 && r <= 96, r >= 123 && r <= 126:
			c[r] = classPunct
		}
	}
	return c
}()
