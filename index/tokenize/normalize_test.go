package tokenize

import (
	"bufio"
	"flag"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var refDump = flag.String("refdump", "", "per-code-point dump of the reference (testdata/refdump.py) to check the character classes against")

// bert is the normalizer of uncased BERT models.
var bert = normalizer{cleanText: true, handleCJK: true, stripAccents: true, lowercase: true}

func TestNormalizer_Normalize(t *testing.T) {
	tests := []struct {
		name string
		n    normalizer
		in   string
		want string
	}{
		{"ascii lowercase", bert, "Hello WORLD", "hello world"},
		{"tab newline cr become spaces", bert, "a\tb\nc\r\nd", "a b c  d"},
		{"controls dropped", bert, "a\x00b\x01c\x7fd\ufffde", "abcde"},
		{"vertical tab and form feed dropped", bert, "a\vb\fc", "abc"},
		{"invalid utf-8 dropped", bert, "a\xffb\xc3", "ab"},
		{"nbsp and unicode spaces", bert, "a\u00a0b\u2009c\u3000d\u2028e", "a b c d e"},
		{"zero width space and bom dropped", bert, "a\u200bb\ufeffc", "abc"},
		{"soft hyphen dropped", bert, "soft\u00adhyphen", "softhyphen"},
		{"nel dropped", bert, "a\u0085b", "ab"},
		{"accents stripped", bert, "Naïve CAFÉ résumé", "naive cafe resume"},
		{"combining marks stripped", bert, "e\u0301a\u0308\u0323", "ea"},
		{"spacing marks kept", bert, "हिन्दी", "हिनदी"},
		{"cjk spaced", bert, "日本語", " 日  本  語 "},
		{"kana not spaced", bert, "カタカナ", "カタカナ"},
		{"hangul decomposed", bert, "한", "\u1112\u1161\u11ab"},
		{"compatibility ideograph decomposed", bert, "\uf900", " \u8c48 "},
		{"cjk gap of the reference", bert, "\U0002B820\U0002B920", "\U0002B820 \U0002B920 "},
		{"dotted capital i", bert, "İ", "i"},
		{"dotted capital i without stripping", normalizer{lowercase: true}, "İ", "i\u0307"},
		{"sigma lowercases per character", bert, "ΣΟΦΟΣ", "σοφοσ"},
		{"sharp s kept", bert, "Straße", "straße"},
		{"ligature kept", bert, "ﬁ", "ﬁ"},
		{"fullwidth lowercased", bert, "ＡＢ", "ａｂ"},
		{"emoji kept", bert, "😀👍🏽", "😀👍🏽"},
		{"unicode 16 lowercase of the reference", bert, "\U00010D50", "\U00010D70"},
		{"newer mark kept by the reference", bert, "a\u1ac0", "a\u1ac0"},
		{"reference nfd leaves U+11938 whole", bert, "\U00011938", "\U00011938"},
		{"no flags", normalizer{}, "A\x00 é 日", "A\x00 é 日"},
		{"clean only", normalizer{cleanText: true}, "A\x00\té", "A é"},
		{"cased keeps accents", normalizer{cleanText: true, handleCJK: true}, "Café", "Café"},
		{"strip without lowercase", normalizer{stripAccents: true}, "Café", "Cafe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := tt.n.normalize([]byte("prefix:"), nil, new([]decomposed), tt.in)
			if !strings.HasPrefix(string(got), "prefix:") {
				t.Fatalf("normalize overwrote dst: %q", got)
			}
			if got := string(got[len("prefix:"):]); got != tt.want {
				t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPreTokenize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"spaces only", "   ", nil},
		{"words", " hello  world ", []string{"hello", "world"}},
		{"ascii punctuation", "a,b.c!", []string{"a", ",", "b", ".", "c", "!"}},
		{"ascii symbols are punctuation", "$5+x=<y>^`|~", []string{"$", "5", "+", "x", "=", "<", "y", ">", "^", "`", "|", "~"}},
		{"repeated punctuation isolated", "...", []string{".", ".", "."}},
		{"apostrophe", "don't", []string{"don", "'", "t"}},
		{"unicode punctuation", "«a»—b…", []string{"«", "a", "»", "—", "b", "…"}},
		{"unicode symbols are not punctuation", "a€b±c😀", []string{"a€b±c😀"}},
		{"unicode whitespace", "a\u00a0b\u3000c\u2029d", []string{"a", "b", "c", "d"}},
		{"zero width joiner is not a split", "👨\u200d👩", []string{"👨\u200d👩"}},
		{"punctuation of the reference only", "a\u166db", []string{"a", "\u166d", "b"}},
		{"newer punctuation not split", "a\u2e43b", []string{"a\u2e43b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			preTokenize([]byte(tt.in), func(w []byte) bool {
				got = append(got, string(w))
				return true
			})
			if !slices.Equal(got, tt.want) {
				t.Errorf("preTokenize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	t.Run("stops when yield returns false", func(t *testing.T) {
		n := 0
		preTokenize([]byte("a b, c"), func([]byte) bool { n++; return n < 2 })
		if n != 2 {
			t.Errorf("yield called %d times, want 2", n)
		}
	})
}

// TestUnicodeClasses_Reference checks every code point against a dump of
// the reference made by testdata/refdump.py, when -refdump names one:
//
//	python testdata/refdump.py /tmp/ref.tsv   # needs `pip install tokenizers`
//	go test ./index/tokenize -run Reference -args -refdump=/tmp/ref.tsv
//
// Without the flag it checks a few code points of each exception table.
func TestUnicodeClasses_Reference(t *testing.T) {
	if *refDump == "" {
		spot := []struct {
			r                        rune
			control, punct, mark, ws bool
		}{
			{0x00AD, true, false, false, false},   // soft hyphen, Cf
			{0x0890, false, false, false, false},  // Cf since Unicode 14, unknown to the reference
			{0x166D, false, true, false, false},   // So now, Po for the reference
			{0x2E43, false, false, false, false},  // Po since Unicode 11
			{0x0301, false, false, true, false},   // combining acute
			{0x1734, false, false, true, false},   // Mc now, Mn for the reference
			{0x1AC0, false, false, false, false},  // Mn since Unicode 13
			{0x00A0, false, false, false, true},   // NBSP
			{0x200B, true, false, false, false},   // zero width space, Cf
			{0x1F600, false, false, false, false}, // emoji
		}
		for _, s := range spot {
			if got := [4]bool{isControl(s.r), isPunct(s.r), isNonspacingMark(s.r), isWhitespace(s.r)}; got != [4]bool{s.control, s.punct, s.mark, s.ws} {
				t.Errorf("U+%04X: control, punct, mark, whitespace = %v, want %v", s.r, got, [4]bool{s.control, s.punct, s.mark, s.ws})
			}
		}
		return
	}
	f, err := os.Open(*refDump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hexes := func(b []byte) string {
		var parts []string
		for _, r := range string(b) {
			parts = append(parts, strconv.FormatInt(int64(r), 16))
		}
		if len(parts) == 0 {
			return "-"
		}
		return strings.Join(parts, " ")
	}
	clean := normalizer{cleanText: true}
	strip := normalizer{stripAccents: true}
	lower := normalizer{lowercase: true}
	sc := bufio.NewScanner(f)
	n, bad := 0, 0
	for sc.Scan() {
		// code point, clean_text, cjk, strip_accents, lowercase, pre-tokenizer class
		want := strings.Split(sc.Text(), "\t")
		v, err := strconv.ParseUint(want[0], 16, 32)
		if err != nil || len(want) != 6 {
			t.Fatalf("bad line %q", sc.Text())
		}
		r := rune(v)
		s := string(r)
		a, _ := clean.normalize(nil, nil, new([]decomposed), s)
		st, _ := strip.normalize(nil, nil, new([]decomposed), s)
		lo, _ := lower.normalize(nil, nil, new([]decomposed), s)
		cjk, class := "-", "N"
		if isChinese(r) {
			cjk = "C"
		}
		if isWhitespace(r) {
			class = "W"
		} else if isPunct(r) {
			class = "P"
		}
		got := []string{want[0], hexes(a), cjk, hexes(st), hexes(lo), class}
		n++
		if !slices.Equal(got, want) {
			bad++
			if bad <= 20 {
				t.Errorf("U+%04X: got %q, want %q", r, got[1:], want[1:])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d code points checked, %d differ", n, bad)
	if n < 0x10F000 {
		t.Errorf("dump has %d code points: incomplete", n)
	}
}
