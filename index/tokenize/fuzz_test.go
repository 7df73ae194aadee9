package tokenize

import (
	"strings"
	"testing"
)

func FuzzTokenizer_Encode(f *testing.F) {
	for _, s := range []string{
		"", " ", "Hello, world!", "naïve café", "a\u00a0b", "日本語", "한국어", "😀👍🏽",
		"[CLS] x [SEP][MASK]", "[[CLS]", "İstanbul", "e\u0301\u0323", "\x00\xff\xfe", "\U00011938",
		strings.Repeat("a", 101), strings.Repeat("hello ", 300),
	} {
		f.Add(s, 256)
	}
	tk := mustLoadModel(f)
	f.Fuzz(func(t *testing.T, text string, maxLen int) {
		maxLen = 2 + abs(maxLen)%600
		ids := tk.Encode(text, maxLen)
		if len(ids) < 2 || len(ids) > maxLen {
			t.Fatalf("Encode(%q, %d) has %d ids", text, maxLen, len(ids))
		}
		if ids[0] != int64(tk.clsID) || ids[len(ids)-1] != int64(tk.sepID) {
			t.Fatalf("Encode(%q, %d) = %v: not [CLS] … [SEP]", text, maxLen, ids)
		}
		n := tk.Count(text)
		if n < len(ids)-2 {
			t.Fatalf("Count(%q) = %d < %d encoded tokens", text, n, len(ids)-2)
		}
		if n+2 <= maxLen && n != len(ids)-2 {
			t.Fatalf("Count(%q) = %d but Encode(_, %d) kept %d tokens", text, n, maxLen, len(ids)-2)
		}
		if toks := tk.Tokens(text); len(toks) != n {
			t.Fatalf("Tokens(%q) has %d tokens, Count %d", text, len(toks), n)
		}
		// Two texts joined by whitespace count as the sum of their counts
		// (SumsAtWhitespace): cut the text anywhere, join the halves.
		cut := abs(maxLen*7919) % (len(text) + 1)
		a, b := text[:cut], text[cut:]
		if joined := tk.Count(a + "\n\n" + b); joined != tk.Count(a)+tk.Count(b) {
			t.Fatalf("Count(%q + \"\\n\\n\" + %q) = %d, want %d + %d", a, b, joined, tk.Count(a), tk.Count(b))
		}
	})
}

// abs returns |x|, mapping the minimum int to 0.
func abs(x int) int {
	if x < 0 {
		x = -x
	}
	return max(x, 0)
}
