package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// text chunks source code and plain text: the whole content when it fits the
// window, else blank-line-separated blocks packed greedily up to the target.
func (s *splitter) text() {
	bd := s.budgetFor("", 0)
	a, b := s.trim(0, len(s.src))
	tok := s.countFit(a, b)
	if s.fits(a, b, tok, bd.window) {
		s.emitCounted(a, b, bd, tok)
		return
	}
	s.pack(s.textUnits(nil, a, b, bd, tok), bd)
}

// hasBlankLine reports whether [a,b) holds a whitespace-only line between
// two others.
func (s *splitter) hasBlankLine(a, b int) bool {
	for pos := a; pos < b; {
		end := s.lineEnd(pos, b)
		if isBlank(s.src[pos:end]) {
			return true
		}
		pos = end + 1
	}
	return false
}

// lineEnd returns the index of the next '\n' in src[pos:b], or b.
func (s *splitter) lineEnd(pos, b int) int {
	if i := strings.IndexByte(s.src[pos:b], '\n'); i >= 0 {
		return pos + i
	}
	return b
}

// textUnits appends the units of [a,b): its blank-line-separated blocks, each
// as given by lineUnits. tok is the token count of [a,b), or -1.
func (s *splitter) textUnits(dst []unit, a, b int, bd budget, tok int) []unit {
	a, b = s.trim(a, b)
	if tok >= 0 && !s.hasBlankLine(a, b) {
		return s.lineUnits(dst, a, b, bd, tok)
	}
	block := -1
	for pos := a; pos < b; {
		end := s.lineEnd(pos, b)
		if isBlank(s.src[pos:end]) {
			if block >= 0 {
				dst = s.lineUnits(dst, block, pos, bd, -1)
				block = -1
			}
		} else if block < 0 {
			block = pos
		}
		pos = end + 1
	}
	if block >= 0 {
		dst = s.lineUnits(dst, block, b, bd, -1)
	}
	return dst
}

// lineUnits appends [a,b) as one unit if it fits the window (tok is its
// token count, or -1 if not counted yet), else its lines, each line that
// does not fit the window being sliced by sliceUnits.
func (s *splitter) lineUnits(dst []unit, a, b int, bd budget, tok int) []unit {
	a, b = s.trim(a, b)
	if a >= b {
		return dst
	}
	if tok < 0 {
		tok = s.countFit(a, b)
	}
	if s.fits(a, b, tok, bd.window) {
		return append(dst, unit{a: a, b: b, tok: tok})
	}
	if strings.IndexByte(s.src[a:b], '\n') < 0 {
		return s.sliceUnits(dst, a, b, bd, tok)
	}
	for pos := a; pos < b; {
		end := s.lineEnd(pos, b)
		if la, lb := s.trim(pos, end); la < lb {
			if t := s.countFit(la, lb); s.fits(la, lb, t, bd.window) {
				dst = append(dst, unit{a: la, b: lb, tok: t})
			} else {
				dst = s.sliceUnits(dst, la, lb, bd, t)
			}
		}
		pos = end + 1
	}
	return dst
}

// sliceUnits appends an over-long line [a,b) (of tok tokens) as slices of at
// most the target size, cut between words; a single word over the target is
// cut by wordUnits.
func (s *splitter) sliceUnits(dst []unit, a, b int, bd budget, tok int) []unit {
	cur := unit{a: -1}
	for pos := a; pos < b; {
		ws, we := s.nextWord(pos, b)
		if ws >= we {
			break
		}
		pos = we
		t := tok
		if ws != a || we != b {
			t = s.count(ws, we)
		}
		if !s.fits(ws, we, t, bd.target) {
			if cur.a >= 0 {
				dst = append(dst, cur)
				cur.a = -1
			}
			dst = s.wordUnits(dst, ws, we, bd.target)
			continue
		}
		if cur.a >= 0 && s.fits(cur.a, we, cur.tok+t, bd.target) {
			cur.b, cur.tok = we, cur.tok+t
			continue
		}
		if cur.a >= 0 {
			dst = append(dst, cur)
		}
		cur = unit{a: ws, b: we, tok: t}
	}
	if cur.a >= 0 {
		dst = append(dst, cur)
	}
	return dst
}

// nextWord returns the span of the first word in src[pos:b]: a run of
// non-whitespace, or a single CJK ideograph, which BERT's pre-tokenizer
// treats as a word of its own (ws == we == b if there is none). Cuts
// between words are thus additive for WordPiece, and unspaced Chinese text
// is sliced between characters rather than searched for a cut.
func (s *splitter) nextWord(pos, b int) (ws, we int) {
	ws = pos
	for ws < b {
		r, n := rune(s.src[ws]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s.src[ws:b])
		}
		if !unicode.IsSpace(r) {
			if isCJK(r) {
				return ws, ws + n
			}
			break
		}
		ws += n
	}
	we = ws
	for we < b {
		r, n := rune(s.src[we]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s.src[we:b])
		}
		if unicode.IsSpace(r) || isCJK(r) {
			break
		}
		we += n
	}
	return ws, we
}

// isCJK reports whether r is in the CJK ideograph ranges the BERT
// normalizer surrounds with spaces (the HuggingFace reference's ranges, as
// in index/tokenize). Were they to differ, sums would just be inexact and
// emit's fresh count would catch it.
func isCJK(r rune) bool {
	return r >= 0x3400 && (r <= 0x4DBF ||
		(r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B81F) ||
		(r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0x2F800 && r <= 0x2FA1F))
}

// wordUnits appends a word [a,b) too long for limit as slices of at most
// limit tokens, each its own chunk (cutting inside a word is not additive
// for WordPiece, so slices are never packed together).
func (s *splitter) wordUnits(dst []unit, a, b, limit int) []unit {
	for a < b {
		e, tok := s.wordCut(a, b, limit)
		dst = append(dst, unit{a: a, b: e, tok: tok, alone: true})
		a = e
	}
	return dst
}

// wordCut returns the largest rune boundary e in (a,b] such that src[a:e]
// fits limit (at least one rune), moved back to just after an ASCII
// punctuation byte in the last quarter of the slice if there is one, and the
// token count of src[a:e].
func (s *splitter) wordCut(a, b, limit int) (int, int) {
	next := func(i int) int {
		_, n := utf8.DecodeRuneInString(s.src[i:b])
		return i + n
	}
	good := next(a)
	goodTok := s.count(a, good)
	if !s.fits(a, good, goodTok, limit) {
		return good, goodTok
	}
	// Token counts grow about linearly with length: extrapolate from the
	// longest prefix known to fit (growing at least geometrically) until one
	// does not, then close in, alternating interpolation and bisection.
	var bad, badTok int
	for {
		try := a + (good-a)*limit/max(1, goodTok)
		try = min(b, max(try, good+(good-a)/4+1))
		if try = runeStart(s.src, try); try <= good {
			try = next(good)
		}
		t := s.count(a, try)
		if !s.fits(a, try, t, limit) {
			bad, badTok = try, t
			break
		}
		good, goodTok = try, t
		if good == b {
			return good, goodTok
		}
	}
	for i := 0; ; i++ {
		mid := good + (bad-good)/2
		if i%2 == 0 && badTok > limit && goodTok <= limit {
			if m := good + (bad-good)*(limit-goodTok)/(badTok-goodTok); m > good && m < bad {
				mid = m
			}
		}
		if mid = runeStart(s.src, mid); mid <= good {
			mid = next(good)
		}
		if mid >= bad {
			break
		}
		if t := s.count(a, mid); s.fits(a, mid, t, limit) {
			good, goodTok = mid, t
		} else {
			bad, badTok = mid, t
		}
	}
	for i := good - 1; i > good-(good-a)/4; i-- {
		if c := s.src[i]; c < utf8.RuneSelf && isPunct(c) {
			return i + 1, s.count(a, i+1)
		}
	}
	return good, goodTok
}

// isPunct reports whether an ASCII byte is punctuation or a symbol.
func isPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')
}
