package tokenize

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalizer holds the BertNormalizer flags.
type normalizer struct {
	cleanText    bool // drop NUL, U+FFFD and control chars; whitespace becomes ' '
	handleCJK    bool // put spaces around CJK ideographs
	stripAccents bool // NFD, then drop nonspacing marks (Mn)
	lowercase    bool // full per-character lowercase mapping
}

// normalize appends the normalized form of text to dst and returns it. tmp
// and dec are scratch space; the grown tmp is returned too so the caller can
// reuse it. The steps run in the reference's order: clean_text,
// handle_chinese_chars, strip_accents (NFD, then drop Mn), lowercase.
func (n *normalizer) normalize(dst, tmp []byte, dec *[]decomposed, text string) (out, tmpOut []byte) {
	if isASCII(text) {
		return n.normalizeASCII(dst, text), tmp
	}
	// Step 1: clean_text and handle_chinese_chars, into tmp.
	tmp = tmp[:0]
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		// Invalid UTF-8 decodes as U+FFFD, which clean_text drops.
		if n.cleanText {
			if r == 0 || r == utf8.RuneError || isControl(r) {
				continue
			}
			if isWhitespace(r) {
				tmp = append(tmp, ' ')
				continue
			}
		}
		if n.handleCJK && isChinese(r) {
			tmp = append(tmp, ' ')
			tmp = appendRune(tmp, r)
			tmp = append(tmp, ' ')
			continue
		}
		tmp = appendRune(tmp, r)
	}
	// Steps 2 and 3: NFD, drop Mn, lowercase. ASCII characters are starters
	// that NFD never changes or reorders across, so NFD runs only over the
	// runs of non-ASCII characters.
	for i := 0; i < len(tmp); {
		c := tmp[i]
		if c < utf8.RuneSelf {
			if n.lowercase && 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		j := i + 1
		for j < len(tmp) && tmp[j] >= utf8.RuneSelf {
			j++
		}
		dst = n.appendRun(dst, tmp[i:j], dec)
		i = j
	}
	return dst, tmp
}

// appendRun appends the normalized form of a run of non-ASCII characters.
// With strip_accents the run is first brought to NFD (see decompose).
func (n *normalizer) appendRun(dst, run []byte, dec *[]decomposed) []byte {
	if !n.stripAccents {
		return n.appendMapped(dst, run)
	}
	if k := norm.NFD.QuickSpan(run); k == len(run) {
		return n.appendMapped(dst, run) // already NFD, the common case
	}
	*dec = decompose((*dec)[:0], run)
	for _, d := range *dec {
		if isNonspacingMark(d.r) {
			continue
		}
		if n.lowercase {
			dst = appendLower(dst, d.r)
		} else {
			dst = appendRune(dst, d.r)
		}
	}
	return dst
}

// decomposed is one character of an NFD form with its canonical combining
// class.
type decomposed struct {
	r   rune
	ccc uint8
}

// decompose appends the NFD form of src (full canonical decomposition, then
// canonical ordering of each run of non-starters) to dst. It is written out
// here rather than left to norm.NFD.Append, which allocates on every call,
// and norm.Iter, which crashes on some inputs (x/text v0.42.0). Like the
// reference it inserts no U+034F for long runs of marks, and it leaves whole
// the characters in refNoDecompose.
func decompose(dst []decomposed, src []byte) []decomposed {
	for i := 0; i < len(src); {
		p := norm.NFD.Properties(src[i:])
		size := p.Size()
		if size == 0 { // invalid UTF-8 cannot reach here; be safe
			size = 1
		}
		r, _ := utf8.DecodeRune(src[i:])
		i += size
		switch {
		case r >= hangulBase && r < hangulBase+hangulCount:
			s := r - hangulBase
			dst = append(dst, decomposed{r: hangulL + s/hangulNCount}, decomposed{r: hangulV + s%hangulNCount/hangulTCount})
			if t := s % hangulTCount; t != 0 {
				dst = append(dst, decomposed{r: hangulT + t})
			}
		case p.Decomposition() != nil && !noDecompose(r):
			for d := p.Decomposition(); len(d) > 0; {
				dp := norm.NFD.Properties(d)
				dr, n := utf8.DecodeRune(d)
				dst = append(dst, decomposed{r: dr, ccc: dp.CCC()})
				d = d[n:]
			}
		default:
			dst = append(dst, decomposed{r: r, ccc: p.CCC()})
		}
	}
	// Canonical ordering: a stable sort by class of each run of non-starters.
	for i := 1; i < len(dst); i++ {
		c := dst[i]
		if c.ccc == 0 {
			continue
		}
		j := i
		for j > 0 && dst[j-1].ccc > c.ccc {
			dst[j] = dst[j-1]
			j--
		}
		dst[j] = c
	}
	return dst
}

// Hangul syllable decomposition constants (Unicode chapter 3.12).
const (
	hangulBase   = 0xAC00
	hangulL      = 0x1100
	hangulV      = 0x1161
	hangulT      = 0x11A7
	hangulTCount = 28
	hangulNCount = 21 * hangulTCount
	hangulCount  = 19 * hangulNCount
)

// noDecompose reports whether r is in refNoDecompose.
func noDecompose(r rune) bool {
	for _, x := range refNoDecompose {
		if r == x {
			return true
		}
	}
	return false
}

// appendMapped appends src with nonspacing marks dropped (strip_accents)
// and lowercased (lowercase), as the flags say.
func (n *normalizer) appendMapped(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		r, size := rune(src[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(src[i:])
		}
		i += size
		if n.stripAccents && isNonspacingMark(r) {
			continue
		}
		if n.lowercase {
			dst = appendLower(dst, r)
		} else {
			dst = appendRune(dst, r)
		}
	}
	return dst
}

// normalizeASCII is normalize for ASCII-only text, where NFD is the
// identity and there are no CJK characters or marks.
func (n *normalizer) normalizeASCII(dst []byte, text string) []byte {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if n.cleanText {
			cl := asciiClass[c]
			if cl&classControl != 0 {
				continue
			}
			if cl&classSpace != 0 {
				dst = append(dst, ' ')
				continue
			}
		}
		if n.lowercase && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// isASCII reports whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendRune appends the UTF-8 encoding of r.
func appendRune(dst []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		return append(dst, byte(r))
	}
	return utf8.AppendRune(dst, r)
}
