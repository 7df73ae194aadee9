package chunk

import "strings"

// crumbSep joins markdown heading texts into a breadcrumb.
const crumbSep = " > "

// span is a byte range [a,b).
type span struct{ a, b int }

// mdSection is a markdown section: a heading and the body up to the next
// H1–H4 heading, or the preamble before the first heading.
type mdSection struct {
	start, end int      // the whole section, heading line(s) included
	headEnd    int      // end of the heading line(s); start for the preamble
	level      int      // 1–4; 0 for the preamble
	parts      []string // breadcrumb: texts of the enclosing headings and its own
	blocks     []span   // body blocks: paragraphs, fenced code and front matter whole
}

// markdown chunks markdown: sections that fit the window are merged with
// their neighbours up to the target size, under the breadcrumb of their
// common parent; larger sections are split into blocks, lines and slices.
func (s *splitter) markdown() {
	secs := chainHeadings(s.parseMarkdown())
	var (
		gParts       []string
		gA, gB, gTok int
		have         bool
	)
	flush := func() {
		if have {
			s.emitCounted(gA, gB, s.budget(gParts, crumbSep), gTok)
			have = false
		}
	}
	for i := range secs {
		sec := &secs[i]
		a, b := s.trim(sec.start, sec.end)
		if a >= b {
			continue
		}
		bd := s.budget(sec.parts, crumbSep)
		tok := s.countFit(a, b)
		if !s.fits(a, b, tok, bd.window) {
			flush()
			s.splitSection(sec, bd)
			continue
		}
		if have {
			common := commonPrefix(gParts, sec.parts)
			_, hTok := s.heading(common, crumbSep)
			if s.fits(gA, b, gTok+tok+hTok+s.pTok+2, s.target) {
				gParts, gB, gTok = common, b, gTok+tok
				continue
			}
			flush()
		}
		gParts, gA, gB, gTok, have = sec.parts, a, b, tok, true
	}
	flush()
}

// splitSection chunks a section too large for the window: its heading line(s)
// (kept with what follows when the window allows) and body blocks, packed.
func (s *splitter) splitSection(sec *mdSection, bd budget) {
	var us []unit
	if sec.headEnd > sec.start {
		us = s.lineUnits(us, sec.start, sec.headEnd, bd, -1)
		if len(us) == 1 {
			us[0].sticky = true
		}
	}
	for _, bl := range sec.blocks {
		us = s.lineUnits(us, bl.a, bl.b, bd, -1)
	}
	s.pack(us, bd)
}

// commonPrefix returns the longest common prefix of a and b (a slice of a).
func commonPrefix(a, b []string) []string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n]
}

// chainHeadings joins a section that is only a heading to the next section
// when that one is its subsection ("# A" directly followed by "## B"), so a
// bare heading never becomes a chunk of its own.
func chainHeadings(secs []mdSection) []mdSection {
	out := secs[:0]
	carry := -1
	for i := range secs {
		sec := secs[i]
		if carry >= 0 {
			sec.start, carry = carry, -1
		}
		if sec.level > 0 && len(sec.blocks) == 0 && i+1 < len(secs) && secs[i+1].level > sec.level {
			carry = sec.start
			continue
		}
		out = append(out, sec)
	}
	return out
}

// mdHead is an open heading on the breadcrumb stack.
type mdHead struct {
	level int
	text  string
}

// parseMarkdown splits the content into sections and their body blocks.
func (s *splitter) parseMarkdown() []mdSection {
	src := s.src
	var (
		secs      []mdSection
		stack     []mdHead
		cur       mdSection
		para      = -1 // start of the open paragraph block
		paraLines int
		fence     = -1 // start of the open fenced code block
		fenceCh   byte
		fenceLen  int
	)
	closePara := func(end int) {
		if para >= 0 {
			cur.blocks = append(cur.blocks, span{para, end})
			para, paraLines = -1, 0
		}
	}
	startSection := func(start, headEnd, level int, text string) {
		cur.end = start
		if cur.level > 0 || len(cur.blocks) > 0 {
			secs = append(secs, cur)
		}
		for len(stack) > 0 && stack[len(stack)-1].level >= level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, mdHead{level, text})
		parts := make([]string, 0, len(stack))
		for _, h := range stack {
			if h.text != "" {
				parts = append(parts, h.text)
			}
		}
		cur = mdSection{start: start, headEnd: headEnd, level: level, parts: parts}
	}

	pos := 0
	if fm := frontMatterEnd(src); fm > 0 {
		cur.blocks = append(cur.blocks, span{0, fm})
		pos = fm
	}
	for pos < len(src) {
		end := s.lineEnd(pos, len(src))
		line := strings.TrimSuffix(src[pos:end], "\r")
		next := min(end+1, len(src))
		if fence >= 0 {
			if isFenceClose(line, fenceCh, fenceLen) {
				cur.blocks = append(cur.blocks, span{fence, end})
				fence = -1
			}
			pos = next
			continue
		}
		if isBlank(line) {
			closePara(pos)
		} else if ch, n, ok := fenceOpen(line); ok {
			closePara(pos)
			fence, fenceCh, fenceLen = pos, ch, n
		} else if level, text, ok := atxHeading(line); ok && level <= 4 {
			closePara(pos)
			startSection(pos, end, level, text)
		} else if level := setextUnderline(line); level > 0 && paraLines == 1 && setextText(src[para:pos]) != "" {
			start, text := para, setextText(src[para:pos])
			para, paraLines = -1, 0
			startSection(start, end, level, text)
		} else {
			if para < 0 {
				para = pos
			}
			paraLines++
		}
		pos = next
	}
	if fence >= 0 {
		cur.blocks = append(cur.blocks, span{fence, len(src)})
	}
	closePara(len(src))
	cur.end = len(src)
	if cur.level > 0 || len(cur.blocks) > 0 {
		secs = append(secs, cur)
	}
	return secs
}

// frontMatterEnd returns the end of a YAML ("---" … "---" or "...") or TOML
// ("+++" … "+++") front matter block at the start of src, or 0.
func frontMatterEnd(src string) int {
	var closers []string
	switch {
	case strings.HasPrefix(src, "---\n") || strings.HasPrefix(src, "---\r\n"):
		closers = []string{"---", "..."}
	case strings.HasPrefix(src, "+++\n") || strings.HasPrefix(src, "+++\r\n"):
		closers = []string{"+++"}
	default:
		return 0
	}
	pos := strings.IndexByte(src, '\n') + 1
	for pos < len(src) {
		end := strings.IndexByte(src[pos:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += pos
		}
		line := strings.TrimRight(src[pos:end], " \t\r")
		for _, c := range closers {
			if line == c {
				return end
			}
		}
		pos = end + 1
	}
	return 0
}

// atxHeading parses an ATX heading line: up to three spaces, 1–6 '#', then
// a space, a tab or the end of the line. The text drops an optional closing
// '#' sequence and a trailing "{#id}" or MDX "{/*id*/}" attribute.
func atxHeading(line string) (level int, text string, ok bool) {
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	n := 0
	for i+n < len(line) && line[i+n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return 0, "", false
	}
	rest := line[i+n:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false
	}
	text = strings.TrimSpace(rest)
	if t := strings.TrimRight(text, "#"); t == "" {
		text = ""
	} else if len(t) < len(text) && (t[len(t)-1] == ' ' || t[len(t)-1] == '\t') {
		text = strings.TrimSpace(t)
	}
	return n, stripHeadingID(text), true
}

// stripHeadingID removes a trailing " {#id}" or " {/*id*/}" from a heading.
func stripHeadingID(text string) string {
	if !strings.HasSuffix(text, "}") {
		return text
	}
	i := strings.LastIndex(text, "{")
	if i < 0 {
		return text
	}
	inner := text[i+1 : len(text)-1]
	if strings.HasPrefix(inner, "#") || (strings.HasPrefix(inner, "/*") && strings.HasSuffix(inner, "*/")) {
		return strings.TrimSpace(text[:i])
	}
	return text
}

// setextUnderline returns 1 for a line of three or more '=' and 2 for three
// or more '-' (up to three spaces before, whitespace after), else 0.
func setextUnderline(line string) int {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return 0
	}
	t = strings.TrimRight(t, " \t")
	if len(t) < 3 || (t[0] != '=' && t[0] != '-') || strings.Trim(t, t[:1]) != "" {
		return 0
	}
	if t[0] == '=' {
		return 1
	}
	return 2
}

// setextText returns the heading text of a one-line paragraph followed by a
// setext underline, or "" if the line is not a plain paragraph (indented
// code, a list item, a quote, a table row or HTML).
func setextText(line string) string {
	line = strings.TrimRight(line, " \t\r\n")
	t := strings.TrimLeft(line, " ")
	if t == "" || len(line)-len(t) > 3 {
		return ""
	}
	switch t[0] {
	case '>', '|', '<', '\t':
		return ""
	case '-', '*', '+':
		if len(t) == 1 || t[1] == ' ' || t[1] == '\t' {
			return ""
		}
	}
	if i := strings.IndexAny(t, ".)"); i > 0 && i < 10 && strings.Trim(t[:i], "0123456789") == "" &&
		(i+1 == len(t) || t[i+1] == ' ') {
		return "" // ordered list item
	}
	return strings.TrimSpace(t)
}

// fenceOpen parses an opening code fence: three or more '`' or '~' after any
// indentation (fences nested in list items are indented); a backtick fence's
// info string may not contain a backtick.
func fenceOpen(line string) (ch byte, n int, ok bool) {
	t := strings.TrimLeft(line, " \t")
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0, false
	}
	ch = t[0]
	for n < len(t) && t[n] == ch {
		n++
	}
	if n < 3 || (ch == '`' && strings.IndexByte(t[n:], '`') >= 0) {
		return 0, 0, false
	}
	return ch, n, true
}

// isFenceClose reports whether line closes a fence opened with n ch's: at
// least n ch's and nothing else but whitespace.
func isFenceClose(line string, ch byte, n int) bool {
	t := strings.TrimSpace(line)
	if len(t) < n {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != ch {
			return false
		}
	}
	return true
}
