package chunk

import (
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Counter counts model tokens (without special tokens). *tokenize.Tokenizer
// satisfies it.
type Counter interface {
	// Count returns the number of model tokens of text, without [CLS]/[SEP]
	// and without truncation.
	Count(text string) int
}

// SumCounter is a Counter whose count of texts joined by whitespace is the
// sum of their counts, as WordPiece's is: it splits at whitespace before
// anything else. A chunk counted whole (a text or JSON document, a group of
// markdown sections) then takes the sum of its prefix's, heading's and
// text's counts instead of tokenizing its embedded text a second time.
type SumCounter interface {
	Counter
	// SumsAtWhitespace marks the property; it is never called.
	SumsAtWhitespace()
}

// ByteCounter estimates four bytes a token. It is the Counter of last resort,
// for chunking text when no model tokenizer exists, so that lexical search
// still works; chunks then change when a model arrives.
type ByteCounter struct{}

// Count returns len(s)/4, rounded up.
func (ByteCounter) Count(s string) int { return (len(s) + 3) / 4 }

// Chunk is one piece of an item's content.
type Chunk struct {
	// Start and End are the byte span [Start, End) of the chunk in the
	// content: content[Start:End] is the chunk text. Both are on UTF-8 rune
	// boundaries and the text neither starts nor ends with whitespace.
	Start, End int
	// Heading is the breadcrumb of the chunk, e.g. "Install > Linux >
	// Debian" (markdown H1–H4) or "spec.containers[0]" (JSON key path);
	// "" if none. It may be truncated (see the package comment).
	Heading string
	// Tokens is the token count of the embedded text (EmbedText(Heading,
	// text), or with SplitWithPrefix AppendEmbedText(nil, prefix, Heading,
	// text)) plus 2 for [CLS]/[SEP]; always <= the maxTokens given.
	Tokens int
}

// MinWindow is the smallest maxTokens Split accepts: below it there is no
// room for a heading and text next to [CLS] and [SEP].
const MinWindow = 16

// TargetPercent is the packing target as a percentage of the window: small
// blocks and small markdown sections are merged only while the chunk stays
// within this share of maxTokens, while one block or section that alone fits
// the whole window is never split.
const TargetPercent = 75

// HeadingPercent is the largest share of the window, in percent, a heading
// may take; longer headings are truncated.
const HeadingPercent = 25

// maxBytesPerToken bounds a chunk's size in bytes to maxTokens times this,
// so that text a WordPiece tokenizer collapses into a single [UNK] (a word
// longer than 100 characters without punctuation, such as a hex blob)
// cannot make one chunk arbitrarily large.
const maxBytesPerToken = 64

// maxJSONDepth is how deep Split descends into nested JSON before treating
// a value as plain text.
const maxJSONDepth = 32

// ellipsis marks a truncated heading.
const ellipsis = "…"

// EmbedText is the exact text that gets embedded for a chunk Split made:
// the heading breadcrumb, a blank line, then the chunk text (just the text
// when heading is "").
func EmbedText(heading string, text []byte) string {
	return embedText(heading, string(text))
}

// AppendEmbedText appends the exact text embedded for a chunk
// SplitWithPrefix made to dst: the prefix, the heading breadcrumb and the
// chunk text, separated by blank lines (empty parts left out). With prefix
// "" it is EmbedText(heading, text).
func AppendEmbedText(dst []byte, prefix, heading string, text []byte) []byte {
	if prefix != "" {
		dst = append(append(dst, prefix...), headingSep...)
	}
	if heading != "" {
		dst = append(append(dst, heading...), headingSep...)
	}
	return append(dst, text...)
}

// headingSep separates the prefix, the heading and the text in the embedded text.
const headingSep = "\n\n"

func embedText(heading, text string) string {
	if heading == "" {
		return text
	}
	return heading + headingSep + text
}

// Prefix returns the item context every chunk of an item embeds before its
// heading: the title and the description, on lines of their own (either may
// be ""), cut like a heading to at most HeadingPercent of the window, so
// that the chunk text keeps at least half of it. It is deterministic: the
// embedding side recomputes it from the same title and description.
func Prefix(title, description string, c Counter, maxTokens int) string {
	s := newSplitter("", c, maxTokens, "")
	// Far more bytes than can fit: a long description costs nothing more.
	bound := s.maxHead*maxBytesPerToken + utf8.UTFMax
	title = title[:runeStart(title, min(len(title), bound))]
	description = description[:runeStart(description, min(len(description), bound))]
	full := strings.TrimSpace(title + "\n" + description)
	if full == "" {
		return ""
	}
	return strings.Clone(s.truncateHeading(full, []string{full}, "").h)
}

// Split chunks content deterministically by structure, chosen from mimeType
// and path (extension): markdown by headings; JSON by key paths; source code
// and plain text by blank lines, then lines, then (for a single over-long
// line) by token-bounded slices cut on UTF-8 rune boundaries (preferring
// whitespace). maxTokens is the model window including [CLS]/[SEP]. Empty or
// whitespace-only content yields no chunks.
//
// Split panics if maxTokens < MinWindow or c is nil (programming errors: the
// window is a property of the model).
func Split(content []byte, mimeType, path string, c Counter, maxTokens int) []Chunk {
	return SplitWithPrefix(content, mimeType, path, "", c, maxTokens)
}

// SplitWithPrefix is Split for chunks whose embedded text starts with
// prefix, the result of Prefix (a longer prefix is cut the same way): every
// chunk's budget leaves room for it, and Tokens counts it (see
// AppendEmbedText).
func SplitWithPrefix(content []byte, mimeType, path, prefix string, c Counter, maxTokens int) []Chunk {
	if maxTokens < MinWindow {
		panic(fmt.Sprintf("chunk: maxTokens %d below MinWindow %d", maxTokens, MinWindow))
	}
	if c == nil {
		panic("chunk: nil Counter")
	}
	// The splitter reads content in place, without the copy a string
	// conversion makes (60 MB for a 60 MB item): it never writes to it, and
	// nothing it returns aliases it (headings are copied as they are cached).
	s := newSplitter(unsafe.String(unsafe.SliceData(content), len(content)), c, maxTokens, prefix)
	a, b := s.trim(0, len(s.src))
	if a >= b {
		return nil
	}
	switch kindOf(mimeType, path) {
	case kindMarkdown:
		s.markdown()
	case kindJSON:
		if json.Valid(content) {
			s.json()
		} else {
			s.text()
		}
	default:
		s.text()
	}
	return s.out
}

// kind is the structure Split uses for a content.
type kind int

const (
	kindText kind = iota
	kindMarkdown
	kindJSON
)

// kindOf picks the structure: a markdown or JSON mime type wins, then the
// path's extension, then plain text.
func kindOf(mimeType, p string) kind {
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(mimeType))
	}
	switch {
	case mt == "text/markdown" || mt == "text/x-markdown":
		return kindMarkdown
	case mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json"):
		return kindJSON
	}
	if i := strings.IndexAny(p, "?#"); i >= 0 && strings.Contains(p, "://") {
		p = p[:i] // a URL path: drop the query and fragment
	}
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown", ".mdx":
		return kindMarkdown
	case ".json":
		return kindJSON
	}
	return kindText
}

// splitter holds the state of one Split call.
type splitter struct {
	src      string
	c        Counter
	max      int // window including [CLS]/[SEP]
	target   int // packing target including [CLS]/[SEP]
	maxHead  int // most tokens a heading may have
	maxBytes int // most bytes a chunk may have
	heads    map[string]headEntry
	depth    int    // re-split depth (see emit)
	prefix   string // embedded before every chunk's heading (see Prefix)
	pTok     int    // tokens of prefix
	sums     bool   // c is a SumCounter
	out      []Chunk
}

// headEntry is a heading after truncation and its token count.
type headEntry struct {
	h   string
	tok int
}

func newSplitter(src string, c Counter, maxTokens int, prefix string) *splitter {
	s := &splitter{
		src:      src,
		c:        c,
		max:      maxTokens,
		target:   maxTokens * TargetPercent / 100,
		maxHead:  (maxTokens - 2) * HeadingPercent / 100,
		maxBytes: maxTokens * maxBytesPerToken,
		heads:    make(map[string]headEntry),
	}
	_, s.sums = c.(SumCounter)
	if prefix != "" {
		e := s.truncateHeading(prefix, []string{prefix}, "")
		s.prefix, s.pTok = strings.Clone(e.h), e.tok
	}
	return s
}

// embedText is the text embedded for a chunk: prefix, heading and text.
func (s *splitter) embedText(heading, text string) string {
	if s.prefix == "" {
		return embedText(heading, text)
	}
	return s.prefix + headingSep + embedText(heading, text)
}

// budget is the room for chunk text under one heading.
type budget struct {
	heading string
	hTok    int
	window  int // most text tokens a chunk may have
	target  int // text tokens units are packed up to
}

// budget returns the budget for the breadcrumb parts joined by sep.
func (s *splitter) budget(parts []string, sep string) budget {
	h, tok := s.heading(parts, sep)
	return s.budgetFor(h, tok)
}

func (s *splitter) budgetFor(h string, tok int) budget {
	bd := budget{heading: h, hTok: tok, window: s.max - 2 - s.pTok - tok, target: s.target - 2 - s.pTok - tok}
	bd.target = max(1, min(bd.target, bd.window))
	return bd
}

// count counts the tokens of src[a:b].
func (s *splitter) count(a, b int) int { return s.c.Count(s.src[a:b]) }

// countFit is count where the result only decides fits: a span over the byte
// bound fits nowhere, and counting all 60 MB of an item just to learn that
// cost twice its size in memory. It then returns a count over any limit.
func (s *splitter) countFit(a, b int) int {
	if b-a > s.maxBytes {
		return s.max + 1
	}
	return s.count(a, b)
}

// fits reports whether src[a:b] with tok tokens fits in limit tokens and the
// byte bound.
func (s *splitter) fits(a, b, tok, limit int) bool {
	return tok <= limit && b-a <= s.maxBytes
}

// trim narrows [a,b) to exclude leading and trailing whitespace.
func (s *splitter) trim(a, b int) (int, int) {
	for a < b {
		c := s.src[a]
		if c < utf8.RuneSelf {
			if !isASCIISpace(c) {
				break
			}
			a++
			continue
		}
		r, n := utf8.DecodeRuneInString(s.src[a:b])
		if !unicode.IsSpace(r) {
			break
		}
		a += n
	}
	for b > a {
		c := s.src[b-1]
		if c < utf8.RuneSelf {
			if !isASCIISpace(c) {
				break
			}
			b--
			continue
		}
		r, n := utf8.DecodeLastRuneInString(s.src[a:b])
		if !unicode.IsSpace(r) {
			break
		}
		b -= n
	}
	return a, b
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// isBlank reports whether s holds only whitespace.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf {
			if !isASCIISpace(c) {
				return false
			}
			continue
		}
		for _, r := range s[i:] {
			if !unicode.IsSpace(r) {
				return false
			}
		}
		return true
	}
	return true
}

// heading joins parts with sep and truncates the result to maxHead tokens:
// leading parts are dropped first (replaced by "…"), then the last part is
// cut at a rune boundary (at whitespace if there is some in its second
// half) and "…" appended. Results are cached per joined heading.
func (s *splitter) heading(parts []string, sep string) (string, int) {
	full := strings.Join(parts, sep)
	if full == "" {
		return "", 0
	}
	if e, ok := s.heads[full]; ok {
		return e.h, e.tok
	}
	e := s.truncateHeading(full, parts, sep)
	e.h = strings.Clone(e.h)
	s.heads[full] = e
	return e.h, e.tok
}

func (s *splitter) truncateHeading(full string, parts []string, sep string) headEntry {
	if len(full) <= s.maxHead*maxBytesPerToken {
		if tok := s.c.Count(full); tok <= s.maxHead {
			return headEntry{full, tok}
		}
	}
	prefix := ""
	if len(parts) > 1 {
		prefix = ellipsis + sep
		for i := 1; i < len(parts); i++ {
			h := prefix + strings.Join(parts[i:], sep)
			if len(h) > s.maxHead*maxBytesPerToken {
				continue
			}
			if tok := s.c.Count(h); tok <= s.maxHead {
				return headEntry{h, tok}
			}
		}
	}
	last := parts[len(parts)-1]
	// Cap the candidate before searching: no sane heading needs more bytes.
	last = last[:runeStart(last, min(len(last), s.maxHead*16))]
	fitsHead := func(n int) bool {
		return s.c.Count(prefix+last[:n]+ellipsis) <= s.maxHead
	}
	lo, hi := 0, len(last) // find the largest rune boundary that fits
	for lo < hi {
		mid := runeStart(last, (lo+hi+1)/2)
		if mid <= lo {
			_, size := utf8.DecodeRuneInString(last[lo:])
			if mid = lo + size; mid > hi {
				break
			}
		}
		if fitsHead(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	n := lo
	if i := strings.LastIndexFunc(last[:n], unicode.IsSpace); i > n/2 {
		n = i
	}
	h := strings.TrimRightFunc(prefix+last[:n], unicode.IsSpace) + ellipsis
	if tok := s.c.Count(h); tok <= s.maxHead {
		return headEntry{h, tok}
	}
	if tok := s.c.Count(ellipsis); tok <= s.maxHead {
		return headEntry{ellipsis, tok}
	}
	return headEntry{}
}

// runeStart moves i back to the start of the rune containing s[i].
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// unit is a piece of text the packer treats as indivisible.
type unit struct {
	a, b   int // trimmed span
	tok    int
	alone  bool // a slice of an over-long line: always its own chunk
	sticky bool // heading line(s): kept with the next unit if the window allows
}

// pack emits units as chunks under bd, greedily: a unit joins the current
// chunk while the total stays within bd.target (or within bd.window when the
// current chunk is just a sticky heading).
func (s *splitter) pack(us []unit, bd budget) {
	var cur unit
	have := false
	for _, u := range us {
		if u.alone {
			if have {
				s.emit(cur.a, cur.b, bd)
				have = false
			}
			s.emit(u.a, u.b, bd)
			continue
		}
		if have {
			sum := cur.tok + u.tok
			if s.fits(cur.a, u.b, sum, bd.target) || (cur.sticky && s.fits(cur.a, u.b, sum, bd.window)) {
				cur.b, cur.tok, cur.sticky = u.b, sum, u.sticky
				continue
			}
			s.emit(cur.a, cur.b, bd)
		}
		cur, have = u, true
	}
	if have {
		s.emit(cur.a, cur.b, bd)
	}
}

// emit appends the chunk src[a:b] under bd's heading, counting its tokens
// afresh. Sums of separately counted pieces are exact for WordPiece when the
// pieces meet at whitespace or punctuation; should a Counter disagree, the
// span is split again, finer, so no chunk ever exceeds the window.
func (s *splitter) emit(a, b int, bd budget) {
	a, b = s.trim(a, b)
	if a >= b {
		return
	}
	text := s.src[a:b]
	tok := s.c.Count(s.embedText(bd.heading, text)) + 2
	if tok <= s.max {
		s.out = append(s.out, Chunk{Start: a, End: b, Heading: bd.heading, Tokens: tok})
		return
	}
	if _, n := utf8.DecodeRuneInString(text); n == len(text) {
		// One rune that does not fit beside the heading: drop the heading.
		// (A WordPiece rune is at most a few tokens, far below the room
		// MinWindow and HeadingPercent leave, so this is for odd Counters.)
		s.out = append(s.out, Chunk{Start: a, End: b, Tokens: s.c.Count(s.embedText("", text)) + 2})
		return
	}
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > 3 {
		// Finer splitting did not help: cut in half, preferring whitespace.
		m := s.middle(a, b)
		s.emit(a, m, bd)
		s.emit(m, b, bd)
		return
	}
	nb := bd
	nb.window = max(1, min(bd.window, tok-2-s.pTok-bd.hTok)/2)
	nb.target = nb.window
	s.pack(s.textUnits(nil, a, b, nb, -1), nb)
}

// emitCounted is emit for a trimmed, non-empty span src[a:b] of textTok
// tokens: a SumCounter's count of the embedded text is the sum of its
// parts' counts.
func (s *splitter) emitCounted(a, b int, bd budget, textTok int) {
	if tok := s.pTok + bd.hTok + textTok + 2; s.sums && tok <= s.max {
		s.out = append(s.out, Chunk{Start: a, End: b, Heading: bd.heading, Tokens: tok})
		return
	}
	s.emit(a, b, bd)
}

// middle returns a rune boundary strictly inside [a,b) near its middle,
// moved to whitespace within the middle half if there is some.
func (s *splitter) middle(a, b int) int {
	m := runeStart(s.src, a+(b-a)/2)
	if m <= a {
		_, n := utf8.DecodeRuneInString(s.src[a:b])
		return a + n
	}
	lo, hi := a+(b-a)/4, a+3*(b-a)/4
	for i := m; i > lo; i-- {
		if isASCIISpace(s.src[i]) {
			return i
		}
	}
	for i := m; i < hi; i++ {
		if isASCIISpace(s.src[i]) {
			return i
		}
	}
	return m
}
