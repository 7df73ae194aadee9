package search

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// snipDefaultChars is the snippet length Snippet uses for maxChars <= 0.
const snipDefaultChars = 300

const (
	snipEllipsis  = "…"   // marks text cut at either end; one rune
	snipSeparator = " … " // joins two windows; three runes
	snipSepRunes  = 3
)

// Snippet returns at most maxChars characters (runes) of text showing the
// matches: windows around the byte spans (sorted or not, possibly
// overlapping, relative to text), merged when they overlap or touch, widened
// evenly around each match, cut at word boundaries where possible, joined
// with " … " and with "…" at either end where text was cut. With no spans it
// returns the start of text. Whitespace runs (including newlines) collapse to
// one space. maxChars <= 0 means 300. Never splits a UTF-8 sequence; spans out
// of range are clipped and invalid ones (start >= end) ignored.
//
// When not every match fits, clusters of nearby matches are chosen by the
// number of matches they hold, then by position (earliest first). A match is
// shown whole or not at all, except when no match fits on its own: then the
// first match of the best cluster is cut to the budget. Invalid UTF-8 bytes
// in text come out as U+FFFD. With maxChars below 3 the ellipses may be
// dropped to leave room for text.
func Snippet(text string, spans [][2]int, maxChars int) string {
	if maxChars <= 0 {
		maxChars = snipDefaultChars
	}
	t := newSnipText(text)
	n := len(t.rs)
	if n <= maxChars {
		return string(t.rs)
	}
	matches := t.matches(spans)
	var sel []snipWindow
	if len(matches) == 0 {
		sel = []snipWindow{{}} // no spans: grow an empty window at the start
	} else if sel = snipSelect(matches, maxChars); len(sel) == 0 {
		return t.cutMatch(snipBestCluster(matches, maxChars), maxChars)
	}
	l := snipLayout{rs: t.rs, matches: matches, ws: sel, max: maxChars}
	l.grow()
	return l.render()
}

// snipSpan is a half-open range [s, e) of rune indices in the normalised text.
type snipSpan struct{ s, e int }

// snipText is text with whitespace runs collapsed to one space and trimmed
// at both ends, with the byte range in the original text of every rune.
type snipText struct {
	rs    []rune
	start []int // byte offset in text where rune i starts
	end   []int // byte offset in text where rune i ends (a space: its whole run)
}

func newSnipText(text string) snipText {
	var t snipText
	t.rs = make([]rune, 0, len(text))
	t.start = make([]int, 0, len(text))
	t.end = make([]int, 0, len(text))
	inSpace := false
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:]) // invalid bytes: U+FFFD, width 1
		if unicode.IsSpace(r) {
			if inSpace {
				t.end[len(t.end)-1] = i + w
				i += w
				continue
			}
			inSpace = true
			r = ' '
		} else {
			inSpace = false
		}
		t.rs = append(t.rs, r)
		t.start = append(t.start, i)
		t.end = append(t.end, i+w)
		i += w
	}
	if len(t.rs) > 0 && t.rs[0] == ' ' {
		t.rs, t.start, t.end = t.rs[1:], t.start[1:], t.end[1:]
	}
	if k := len(t.rs); k > 0 && t.rs[k-1] == ' ' {
		t.rs, t.start, t.end = t.rs[:k-1], t.start[:k-1], t.end[:k-1]
	}
	return t
}

// matches maps byte spans to rune spans, clipped and trimmed of spaces,
// with invalid and blank ones dropped, sorted and merged where they overlap
// or touch.
func (t snipText) matches(spans [][2]int) []snipSpan {
	n := len(t.rs)
	var out []snipSpan
	for _, sp := range spans {
		sb, eb := sp[0], sp[1]
		if sb < 0 {
			sb = 0
		}
		if sb >= eb {
			continue
		}
		// s: the rune holding byte sb (or the next one); e: the first rune
		// starting at or after eb.
		j := sort.Search(n, func(i int) bool { return t.start[i] > sb }) - 1
		s := 0
		if j >= 0 {
			s = j
			if sb >= t.end[j] {
				s = j + 1
			}
		}
		e := sort.Search(n, func(i int) bool { return t.start[i] >= eb })
		for s < e && t.rs[s] == ' ' {
			s++
		}
		for e > s && t.rs[e-1] == ' ' {
			e--
		}
		if s < e { // a span of whitespace only shows nothing
			out = append(out, snipSpan{s, e})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].s != out[j].s {
			return out[i].s < out[j].s
		}
		return out[i].e < out[j].e
	})
	merged := out[:0]
	for _, m := range out {
		if k := len(merged); k > 0 && m.s <= merged[k-1].e {
			merged[k-1].e = max(merged[k-1].e, m.e)
			continue
		}
		merged = append(merged, m)
	}
	return merged
}

// snipWindow is a shown range of runes and the state of its growth.
type snipWindow struct {
	a, b         int  // shown runes [a, b)
	gl, gr       int  // runes gained on the left and on the right
	stopL, stopR bool // the side's next unit does not fit
}

// snipCluster is a run of matches [i, j) whose gaps are at most snipClusterGap.
type snipCluster struct{ i, j int }

// snipClusterGap is the widest gap, in runes, between two matches of one
// cluster: an eighth of the budget, so a cluster's matches share context.
func snipClusterGap(maxChars int) int { return max(3, maxChars/8) }

// snipClusters groups consecutive matches and orders the groups by match count
// (densest first), then position (earliest first).
func snipClusters(matches []snipSpan, maxChars int) []snipCluster {
	g := snipClusterGap(maxChars)
	var cs []snipCluster
	for i := 0; i < len(matches); {
		j := i + 1
		for j < len(matches) && matches[j].s-matches[j-1].e <= g {
			j++
		}
		cs = append(cs, snipCluster{i, j})
		i = j
	}
	sort.SliceStable(cs, func(x, y int) bool { return cs[x].j-cs[x].i > cs[y].j-cs[y].i })
	return cs
}

// snipBestCluster returns the first match of the highest-priority cluster.
func snipBestCluster(matches []snipSpan, maxChars int) snipSpan {
	return matches[snipClusters(matches, maxChars)[0].i]
}

// snipSelect picks, cluster by cluster in priority order, the longest
// leading run of each cluster's matches that still fits the budget, and
// returns them as windows sorted by position. Both ellipses are reserved.
func snipSelect(matches []snipSpan, maxChars int) []snipWindow {
	used := 2
	var ws []snipWindow
	for _, c := range snipClusters(matches, maxChars) {
		sep := 0
		if len(ws) > 0 {
			sep = snipSepRunes
		}
		for j := c.j - 1; j >= c.i; j-- {
			ext := matches[j].e - matches[c.i].s
			if used+sep+ext <= maxChars {
				used += sep + ext
				ws = append(ws, snipWindow{a: matches[c.i].s, b: matches[j].e})
				break
			}
		}
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].a < ws[j].a })
	return ws
}

// cutMatch renders match m, too long to fit whole, cut to the budget.
func (t snipText) cutMatch(m snipSpan, maxChars int) string {
	lead, trail := 0, 1
	if m.s > 0 {
		lead = 1
	}
	k := maxChars - lead - trail
	if k < 1 {
		lead, k = 0, maxChars-trail
	}
	if k < 1 {
		trail, k = 0, maxChars
	}
	var sb strings.Builder
	if lead == 1 {
		sb.WriteString(snipEllipsis)
	}
	sb.WriteString(strings.TrimRight(string(t.rs[m.s:m.s+k]), " "))
	if trail == 1 {
		sb.WriteString(snipEllipsis)
	}
	return sb.String()
}

// snipLayout widens, merges and renders the chosen windows.
type snipLayout struct {
	rs      []rune
	matches []snipSpan // all matches; those outside the windows are obstacles
	ws      []snipWindow
	max     int
	tmp     []snipWindow
}

// cost is the rune length of the rendering of ws (an upper bound once
// edge spaces are trimmed).
func (l *snipLayout) cost(ws []snipWindow) int {
	c := 0
	for _, w := range ws {
		c += w.b - w.a
	}
	c += snipSepRunes * (len(ws) - 1)
	if ws[0].a > 0 {
		c++
	}
	if ws[len(ws)-1].b < len(l.rs) {
		c++
	}
	return c
}

// matchAt returns the match holding rune i.
func (l *snipLayout) matchAt(i int) (snipSpan, bool) {
	k := sort.Search(len(l.matches), func(k int) bool { return l.matches[k].e > i })
	if k < len(l.matches) && l.matches[k].s <= i {
		return l.matches[k], true
	}
	return snipSpan{}, false
}

// snipMerge sorts the windows of ws and merges, in place, those that touch
// or overlap, keeping the state of the outer sides. (A unit may reach past
// more than one window: several matches inside one long word.)
func snipMerge(ws []snipWindow) []snipWindow {
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].a < ws[j].a })
	out := ws[:1]
	for _, w := range ws[1:] {
		p := &out[len(out)-1]
		if w.a <= p.b {
			if w.b >= p.b {
				p.b, p.gr, p.stopR = w.b, w.gr, w.stopR
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// leftUnit returns where the unit left of rune a starts: the previous word
// (or space, punctuation, ideograph), widened to whole matches.
func (l *snipLayout) leftUnit(a int) int {
	p := a - 1
	for {
		for p > 0 && !l.cleanCut(p) {
			p--
		}
		m, ok := l.matchAt(p)
		if !ok || m.s >= p {
			return p
		}
		p = m.s
	}
}

// rightUnit returns where the unit right of rune b ends.
func (l *snipLayout) rightUnit(b int) int {
	q := b + 1
	for {
		for q < len(l.rs) && !l.cleanCut(q) {
			q++
		}
		m, ok := l.matchAt(q - 1)
		if !ok || m.e <= q {
			return q
		}
		q = m.e
	}
}

// try applies f to window k of a copy of the windows and keeps the result
// if it fits the budget.
func (l *snipLayout) try(k int, f func(w *snipWindow)) bool {
	l.tmp = append(l.tmp[:0], l.ws...)
	f(&l.tmp[k])
	merged := snipMerge(l.tmp)
	if l.cost(merged) > l.max {
		return false
	}
	if len(merged) < len(l.ws) {
		for i := range merged { // the budget grew: retry stopped sides
			merged[i].stopL, merged[i].stopR = false, false
		}
	}
	l.ws, l.tmp = merged, l.ws
	return true
}

// pick returns the window side that has gained least so far and may still
// grow, or k < 0.
func (l *snipLayout) pick(fallback bool) (k int, left bool) {
	k, best := -1, 0
	for i, w := range l.ws {
		if w.a > 0 && !w.stopL && (!fallback || w.gl == 0) && (k < 0 || w.gl < best) {
			k, left, best = i, true, w.gl
		}
		if w.b < len(l.rs) && !w.stopR && (!fallback || w.gr == 0) && (k < 0 || w.gr < best) {
			k, left, best = i, false, w.gr
		}
	}
	return k, left
}

// grow spends the budget a unit at a time on the side that has gained
// least, so windows widen evenly and end on word boundaries; a unit that
// would cut an unselected match takes it whole. Windows that meet merge,
// freeing their separator. Sides that could not take a single unit (a word
// longer than the budget left) then grow by runes: the only cuts inside a
// word.
func (l *snipLayout) grow() {
	l.ws = snipMerge(l.ws)
	for fallback := range 2 {
		if fallback == 1 {
			for i := range l.ws {
				l.ws[i].stopL, l.ws[i].stopR = false, false
			}
		}
		for {
			k, left := l.pick(fallback == 1)
			if k < 0 {
				break
			}
			if left {
				a := l.ws[k].a
				p := l.leftUnit(a)
				if fallback == 1 {
					if _, ok := l.matchAt(a - 1); !ok {
						p = a - 1
					}
				}
				if !l.try(k, func(w *snipWindow) { w.a, w.gl = p, w.gl+a-p }) {
					l.ws[k].stopL = true
				}
			} else {
				b := l.ws[k].b
				q := l.rightUnit(b)
				if fallback == 1 {
					if _, ok := l.matchAt(b); !ok {
						q = b + 1
					}
				}
				if !l.try(k, func(w *snipWindow) { w.b, w.gr = q, w.gr+q-b }) {
					l.ws[k].stopR = true
				}
			}
		}
	}
	for i := range l.ws {
		w := &l.ws[i]
		for w.a < w.b && l.rs[w.a] == ' ' {
			w.a++
		}
		for w.b > w.a && l.rs[w.b-1] == ' ' {
			w.b--
		}
	}
}

// snipWordRune reports runes that make up words for cutting purposes.
func snipWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// snipIdeograph reports scripts written without spaces, where every rune may
// end a word.
func snipIdeograph(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// cleanCut reports whether cutting between rune p-1 and rune p splits no
// word.
func (l *snipLayout) cleanCut(p int) bool {
	if p <= 0 || p >= len(l.rs) {
		return true
	}
	x, y := l.rs[p-1], l.rs[p]
	return !snipWordRune(x) || !snipWordRune(y) || snipIdeograph(x) || snipIdeograph(y)
}

// render joins the windows: " … " between windows, a plain space where only
// spaces lie between them, "…" at either end where text was cut.
func (l *snipLayout) render() string {
	var sb strings.Builder
	prev := -1
	for _, w := range l.ws {
		if w.a >= w.b {
			continue
		}
		switch {
		case prev < 0:
			if w.a > 0 {
				sb.WriteString(snipEllipsis)
			}
		case strings.TrimSpace(string(l.rs[prev:w.a])) == "":
			sb.WriteByte(' ')
		default:
			sb.WriteString(snipSeparator)
		}
		sb.WriteString(string(l.rs[w.a:w.b]))
		prev = w.b
	}
	if prev < 0 {
		return ""
	}
	if prev < len(l.rs) {
		sb.WriteString(snipEllipsis)
	}
	return sb.String()
}
