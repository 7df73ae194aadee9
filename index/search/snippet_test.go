package search

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// greek is a line of words; the tests repeat it.
const greek = "Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega. "

// spanOf returns the byte span of the n-th (0-based) occurrence of sub.
func spanOf(t testing.TB, text, sub string, n int) [2]int {
	t.Helper()
	off := 0
	for i := 0; ; i++ {
		j := strings.Index(text[off:], sub)
		if j < 0 {
			t.Fatalf("occurrence %d of %q not found", n, sub)
		}
		if i == n {
			return [2]int{off + j, off + j + len(sub)}
		}
		off += j + len(sub)
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat(greek, 4)
	cjk := strings.Repeat("日本語のテキストです。", 10) + "検索" + strings.Repeat("絵文字😀テスト。", 10)
	emoji := strings.Repeat("🙂 ", 30) + "needle" + strings.Repeat(" 🎉", 30)

	tests := []struct {
		name  string
		text  string
		spans [][2]int
		max   int
		want  string
	}{
		{
			name: "short text whole",
			text: "  hello \n\n  world\t\tfoo  ",
			want: "hello world foo",
		},
		{
			name: "no spans: start of text cut at a word boundary",
			text: long, max: 40,
			want: "Alpha beta gamma delta epsilon zeta eta…",
		},
		{
			name: "whitespace and newlines collapse",
			text: "Alpha\n\n\tbeta   gamma\r\ndelta " + long, max: 25,
			want: "Alpha beta gamma delta…",
		},
		{
			name:  "one span in the middle",
			text:  long,
			spans: [][2]int{spanOf(t, long, "sigma", 1)},
			max:   40,
			want:  "…omicron pi rho sigma tau upsilon phi…",
		},
		{
			name:  "span at start",
			text:  long,
			spans: [][2]int{{0, 5}},
			max:   40,
			want:  "Alpha beta gamma delta epsilon zeta eta…",
		},
		{
			name:  "span at end",
			text:  long,
			spans: [][2]int{spanOf(t, long, "omega.", 3)},
			max:   40,
			want:  "…sigma tau upsilon phi chi psi omega.",
		},
		{
			name:  "two far spans joined",
			text:  long,
			spans: [][2]int{spanOf(t, long, "kappa", 3), spanOf(t, long, "sigma", 0)},
			max:   50,
			want:  "…pi rho sigma tau upsilon … iota kappa lambda…",
		},
		{
			name:  "far spans that do not both fit: the earliest",
			text:  long,
			spans: [][2]int{spanOf(t, long, "kappa", 3), spanOf(t, long, "sigma", 0)},
			max:   12,
			want:  "…rho sigma…",
		},
		{
			name: "densest cluster first",
			text: long,
			spans: [][2]int{
				spanOf(t, long, "beta", 0),
				spanOf(t, long, "pi", 2), spanOf(t, long, "rho", 2),
				spanOf(t, long, "sigma", 2), spanOf(t, long, "tau", 2),
			},
			max:  20,
			want: "…pi rho sigma tau…",
		},
		{
			name:  "overlapping spans merged",
			text:  long,
			spans: [][2]int{{spanOf(t, long, "sigma", 1)[0] + 2, spanOf(t, long, "tau", 1)[1]}, spanOf(t, long, "sigma", 1)},
			max:   30,
			want:  "…pi rho sigma tau upsilon…",
		},
		{
			name:  "nearby windows merge into one",
			text:  long,
			spans: [][2]int{spanOf(t, long, "sigma", 1), spanOf(t, long, "phi", 1)},
			max:   40,
			want:  "…pi rho sigma tau upsilon phi chi psi…",
		},
		{
			name:  "CJK cut between ideographs",
			text:  cjk,
			spans: [][2]int{spanOf(t, cjk, "検索", 0)},
			max:   20,
			want:  "…のテキストです。検索絵文字😀テスト。…",
		},
		{
			name:  "span inside a multi-byte rune widens to the rune",
			text:  cjk,
			spans: [][2]int{{spanOf(t, cjk, "検索", 0)[0] + 1, spanOf(t, cjk, "検索", 0)[0] + 2}},
			max:   20,
			want:  "…語のテキストです。検索絵文字😀テスト…",
		},
		{
			name:  "emoji",
			text:  emoji,
			spans: [][2]int{spanOf(t, emoji, "needle", 0)},
			max:   16,
			want:  "…🙂 🙂 needle 🎉 🎉…",
		},
		{
			name:  "out of range spans clipped, invalid ignored",
			text:  long,
			spans: [][2]int{{-10, 5}, {len(long) - 7, len(long) + 100}, {50, 40}, {60, 60}},
			max:   30,
			want:  "Alpha beta … chi psi omega.",
		},
		{
			name:  "only invalid spans: start of text",
			text:  long,
			spans: [][2]int{{50, 40}, {len(long) + 5, len(long) + 9}},
			max:   20,
			want:  "Alpha beta gamma…",
		},
		{
			name:  "match longer than the budget is cut",
			text:  long,
			spans: [][2]int{{spanOf(t, long, "sigma", 0)[0], len(long)}},
			max:   15,
			want:  "…sigma tau ups…",
		},
		{
			name:  "unselected match is never cut",
			text:  long,
			spans: [][2]int{spanOf(t, long, "sigma", 0), spanOf(t, long, "tau upsilon phi chi", 0)},
			max:   16,
			want:  "…pi rho sigma…",
		},
		{
			name: "default budget",
			text: long, max: 0,
			want: strings.TrimSpace(strings.Repeat(greek, 2)) + " Alpha beta gamma delta epsilon zeta eta theta…",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Snippet(tt.text, tt.spans, tt.max)
			if got != tt.want {
				t.Errorf("Snippet = %q, want %q", got, tt.want)
			}
			checkSnippet(t, tt.text, tt.spans, tt.max, got)
		})
	}
}

// checkSnippet asserts the invariants that hold for every input.
func checkSnippet(t *testing.T, text string, spans [][2]int, maxChars int, got string) {
	t.Helper()
	if maxChars <= 0 {
		maxChars = 300
	}
	if !utf8.ValidString(got) {
		t.Fatalf("Snippet = %q: invalid UTF-8", got)
	}
	if n := utf8.RuneCountInString(got); n > maxChars {
		t.Fatalf("Snippet = %q: %d runes, max %d", got, n, maxChars)
	}
	if strings.Contains(got, "  ") || strings.TrimSpace(got) != got {
		t.Fatalf("Snippet = %q: uncollapsed or edge whitespace", got)
	}
	if strings.ContainsFunc(got, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) {
		t.Fatalf("Snippet = %q: whitespace other than a space", got)
	}
	norm := collapse(text, 0, len(text))
	var valid int
	for _, s := range spans {
		if min(s[1], len(text)) > max(s[0], 0) {
			valid++
		}
	}
	if valid == 0 && maxChars >= 2 {
		if p := strings.TrimSuffix(got, "…"); !strings.HasPrefix(norm, p) {
			t.Fatalf("Snippet = %q without spans: not a prefix of the text %q", got, norm)
		}
	}
	if !strings.Contains(text, "…") {
		// The pieces between ellipses are the text's, in order, disjoint.
		pos := 0
		for _, piece := range strings.Split(got, " … ") {
			piece = strings.TrimSuffix(strings.TrimPrefix(piece, "…"), "…")
			i := strings.Index(norm[pos:], piece)
			if i < 0 {
				t.Fatalf("Snippet = %q: %q is not text after byte %d of %q", got, piece, pos, norm)
			}
			pos += i + len(piece)
		}
	}
	if len(spans) == 1 && valid == 1 {
		if m := collapse(text, spans[0][0], spans[0][1]); utf8.RuneCountInString(m) < maxChars/2 && !strings.Contains(got, m) {
			t.Fatalf("Snippet = %q: lacks the match %q (max %d)", got, m, maxChars)
		}
	}
}

// collapse returns the runes of text overlapping the byte range [sb, eb),
// clipped, with whitespace runs collapsed to one space and trimmed.
func collapse(text string, sb, eb int) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		if i+w > sb && i < eb {
			if unicode.IsSpace(r) {
				if !space {
					b.WriteByte(' ')
				}
				space = true
			} else {
				b.WriteRune(r)
				space = false
			}
		}
		i += w
	}
	return strings.Trim(b.String(), " ")
}

func FuzzSnippet(f *testing.F) {
	long := strings.Repeat(greek, 3)
	f.Add(long, 200, 205, []byte(nil), 40)
	f.Add(long, 0, 5, []byte{1, 44, 1, 54}, 30)
	f.Add("日本語のテキスト 検索 😀 テスト"+long, 25, 31, []byte(nil), 10)
	f.Add("a\n\n b\t c", 1, 4, []byte{0, 3, 0, 2}, 3)
	f.Add("\xff\xfe abc \xc3", 0, 2, []byte{0, 5, 0, 9}, 2)
	f.Add(strings.Repeat("x", 500), 100, 400, []byte{0, 10, 0, 20}, 50)
	f.Add("Supercalifragilisticexpialidocious and more words follow here", 2, 4, []byte{0, 9, 0, 11, 0, 17, 0, 19, 0, 26, 0, 28}, 24)
	f.Fuzz(func(t *testing.T, text string, s1, e1 int, more []byte, maxChars int) {
		maxChars %= 1000 // keep each run fast; <= 0 selects the default
		spans := [][2]int{{s1, e1}}
		for ; len(more) >= 4; more = more[4:] { // more spans, 16-bit offsets
			spans = append(spans, [2]int{int(more[0])<<8 | int(more[1]), int(more[2])<<8 | int(more[3])})
		}
		got := Snippet(text, spans, maxChars)
		checkSnippet(t, text, spans, maxChars, got)
	})
}
