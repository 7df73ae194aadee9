package vfs

import (
	"bytes"
	"unicode/utf8"
)

const textHint = "text must be valid UTF-8 without NUL bytes: fix the text, or store the bytes as a binary item (data instead of content)"

// checkText is the one check on every way into a text item's content (write,
// edit, copy): it must be valid UTF-8, which JSON and protobuf strings need,
// and hold no NUL byte, which marks binary data (ingest draws the same line).
func checkText(ref string, b []byte) error {
	if !utf8.Valid(b) {
		i := invalidUTF8Offset(b)
		return newError(ErrInvalid, ref, textHint,
			"The text for %s is not valid UTF-8: the first bad byte is at offset %d (line %d).", ref, i, lineOf(b, i))
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return newError(ErrInvalid, ref, textHint,
			"The text for %s holds a NUL byte at offset %d (line %d); text items cannot.", ref, i, lineOf(b, i))
	}
	return nil
}

// lineOf returns the 1-based line holding byte offset i of b.
func lineOf(b []byte, i int) int { return bytes.Count(b[:i], []byte{'\n'}) + 1 }

// readableText copies stored text for a reader as valid UTF-8: bytes that an
// older version stored without checkText become U+FFFD, so the item stays
// readable over JSON (ReadRaw still returns them as stored).
func readableText(b []byte) []byte {
	if utf8.Valid(b) {
		return bytes.Clone(b)
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}
