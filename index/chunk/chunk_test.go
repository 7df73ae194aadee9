package chunk

import (
	"reflect"
	"strings"
	"testing"
)

// words returns n one-token words (for wordCounter), space-separated.
func words(n int) string {
	return strings.TrimSpace(strings.Repeat("word ", n))
}

func TestEmbedText(t *testing.T) {
	tests := []struct {
		heading, text, want string
	}{
		{"", "body", "body"},
		{"A > B", "body", "A > B\n\nbody"},
		{"spec.containers[0]", `"name": "x"`, "spec.containers[0]\n\n\"name\": \"x\""},
	}
	for _, tt := range tests {
		if got := EmbedText(tt.heading, []byte(tt.text)); got != tt.want {
			t.Errorf("EmbedText(%q, %q) = %q, want %q", tt.heading, tt.text, got, tt.want)
		}
		if got := AppendEmbedText([]byte("x"), "", tt.heading, []byte(tt.text)); string(got) != "x"+tt.want {
			t.Errorf("AppendEmbedText(x, \"\", %q, %q) = %q, want x%q", tt.heading, tt.text, got, tt.want)
		}
		if got := AppendEmbedText(nil, "Title", tt.heading, []byte(tt.text)); string(got) != "Title\n\n"+tt.want {
			t.Errorf("AppendEmbedText(nil, Title, %q, %q) = %q, want Title + blank line + %q", tt.heading, tt.text, got, tt.want)
		}
	}
}

func TestPrefix(t *testing.T) {
	long := words(200)
	tests := []struct {
		name, title, desc, want string
	}{
		{"none", "", "", ""},
		{"title", "Invoicing", "", "Invoicing"},
		{"description", "", "How invoices are sent", "How invoices are sent"},
		{"both", "Invoicing", "How invoices are sent", "Invoicing\nHow invoices are sent"},
		// (64-2)*25% = 15 tokens; like a heading, the cut backs off to the
		// last whitespace before the ellipsis.
		{"cut to the heading budget", "Title", long, "Title\n" + words(12) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Prefix(tt.title, tt.desc, wordCounter{}, 64)
			if got != tt.want {
				t.Errorf("Prefix(%q, %q) = %q, want %q", tt.title, clip(tt.desc), got, tt.want)
			}
			if n := (wordCounter{}).Count(got); n > (64-2)*HeadingPercent/100 {
				t.Errorf("Prefix has %d tokens, over the heading budget", n)
			}
		})
	}
}

func TestSplitWithPrefix(t *testing.T) {
	const window = 64
	prefix := Prefix("Invoicing", words(30), wordCounter{}, window)
	pTok := (wordCounter{}).Count(prefix)
	// 50 words fit the window alone but not beside a 15-token prefix.
	body := "# Invoices\n\n" + words(50) + "\n\n" + words(50) + "\n"
	plain := Split([]byte(body), "text/markdown", "/a.md", wordCounter{}, window)
	withPrefix := SplitWithPrefix([]byte(body), "text/markdown", "/a.md", prefix, wordCounter{}, window)
	checkChunks(t, []byte(body), plain, wordCounter{}, window)
	checkChunksPrefix(t, []byte(body), withPrefix, wordCounter{}, window, prefix)
	if len(withPrefix) <= len(plain) {
		t.Errorf("with a %d-token prefix: %d chunks, want more than the %d without", pTok, len(withPrefix), len(plain))
	}
	for i, ch := range withPrefix {
		if ch.Tokens <= pTok {
			t.Errorf("chunk %d: %d tokens do not include the %d-token prefix", i, ch.Tokens, pTok)
		}
	}
	// An over-long prefix is cut the same way as Prefix cuts it.
	again := SplitWithPrefix([]byte(body), "text/markdown", "/a.md", "Invoicing\n"+words(30), wordCounter{}, window)
	if !reflect.DeepEqual(again, withPrefix) {
		t.Errorf("SplitWithPrefix with the uncut prefix = %+v, want %+v", again, withPrefix)
	}
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		mime, path string
		want       kind
	}{
		{"text/markdown", "/notes", kindMarkdown},
		{"text/markdown; charset=utf-8", "/notes.txt", kindMarkdown},
		{"text/x-markdown", "", kindMarkdown},
		{"", "/docs/README.md", kindMarkdown},
		{"text/plain", "/docs/README.MD", kindMarkdown},
		{"", "/a/b.markdown", kindMarkdown},
		{"", "/a/page.mdx", kindMarkdown},
		{"", "https://example.com/raw/readme.md?plain=1#top", kindMarkdown},
		{"application/json", "/x", kindJSON},
		{"application/ld+json", "/x", kindJSON},
		{"application/json", "/x.md", kindJSON},
		{"", "/package.json", kindJSON},
		{"", "/main.go", kindText},
		{"text/plain", "/notes.txt", kindText},
		{"", "", kindText},
		{"not a mime", "/x.jsonl", kindText},
	}
	for _, tt := range tests {
		if got := kindOf(tt.mime, tt.path); got != tt.want {
			t.Errorf("kindOf(%q, %q) = %v, want %v", tt.mime, tt.path, got, tt.want)
		}
	}
}

func TestSplit_Empty(t *testing.T) {
	for _, in := range []string{"", " ", "\n\n\t \r\n", "\u00a0\u3000\n"} {
		for _, p := range []string{"x.md", "x.json", "x.txt"} {
			if got := Split([]byte(in), "", p, wordCounter{}, 64); len(got) != 0 {
				t.Errorf("Split(%q, %s) = %v, want no chunks", in, p, got)
			}
		}
	}
}

func TestSplit_PanicsOnTinyWindow(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Split with maxTokens < MinWindow did not panic")
		}
	}()
	Split([]byte("x"), "", "", wordCounter{}, MinWindow-1)
}

// splitCase is one table-test case: Split(in, "", path, wordCounter, max)
// must give these headings, and these texts when wantTexts is set.
type splitCase struct {
	name         string
	path         string
	in           string
	max          int
	wantHeadings []string
	wantTexts    []string
	check        func(t *testing.T, in string, chunks []Chunk)
}

func runSplitCases(t *testing.T, tests []splitCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split([]byte(tt.in), "", tt.path, wordCounter{}, tt.max)
			checkChunks(t, []byte(tt.in), got, wordCounter{}, tt.max)
			if tt.wantHeadings != nil && !reflect.DeepEqual(headings(got), tt.wantHeadings) {
				t.Errorf("headings = %q, want %q", headings(got), tt.wantHeadings)
			}
			if tt.wantTexts != nil && !reflect.DeepEqual(texts(tt.in, got), tt.wantTexts) {
				t.Errorf("texts = %q, want %q", texts(tt.in, got), tt.wantTexts)
			}
			if tt.check != nil {
				tt.check(t, tt.in, got)
			}
		})
	}
}

func TestSplit_Markdown(t *testing.T) {
	w30 := words(30)
	fence40 := "```go\n" + strings.Repeat("x := y\n", 10) + "```" // 6 + 10×3 + 3 tokens
	runSplitCases(t, []splitCase{
		{
			name:         "small sections merge under their common parent",
			path:         "a.md",
			in:           "# Install\n\nintro\n\n## Linux\n\nlinux text\n\n## Mac\n\nmac text\n",
			max:          64,
			wantHeadings: []string{"Install"},
			wantTexts:    []string{"# Install\n\nintro\n\n## Linux\n\nlinux text\n\n## Mac\n\nmac text"},
		},
		{
			name: "breadcrumbs of H1-H4",
			path: "a.md",
			in: "# Install\n\n" + w30 + "\n\n## Linux\n\n" + w30 + "\n\n### Debian\n\n" + w30 +
				"\n\n#### Bookworm\n\n" + w30 + "\n\n## Mac\n\n" + w30 + "\n",
			max: 64,
			wantHeadings: []string{"Install", "Install > Linux", "Install > Linux > Debian",
				"Install > Linux > Debian > Bookworm", "Install > Mac"},
		},
		{
			name:         "H5 and H6 are body text",
			path:         "a.md",
			in:           "# A\n\n" + w30 + "\n\n##### E\n\nfive\n\n###### F\n\nsix\n",
			max:          64,
			wantHeadings: []string{"A"},
		},
		{
			name:         "hash lines in fenced code are not headings",
			path:         "a.md",
			in:           "# A\n\n" + words(20) + "\n\n```sh\n# not a heading\nls\n```\n\n~~~\n## nor this\n~~~\n\n# B\n\n" + w30 + "\n",
			max:          64,
			wantHeadings: []string{"A", "B"},
		},
		{
			name:         "unclosed fence runs to the end",
			path:         "a.md",
			in:           "# A\n\n" + w30 + "\n\n```\n# still code\n" + w30 + "\n",
			max:          64,
			wantHeadings: []string{"A", "A"},
			check: func(t *testing.T, in string, chunks []Chunk) {
				if !strings.HasPrefix(in[chunks[1].Start:], "```\n# still code") {
					t.Errorf("second chunk = %q, want the whole fence", in[chunks[1].Start:chunks[1].End])
				}
			},
		},
		{
			name:         "a fence that fits the window is kept whole",
			path:         "a.md",
			in:           "## A\n\n" + w30 + "\n\n" + fence40 + "\n\n" + words(10) + "\n",
			max:          64,
			wantHeadings: []string{"A", "A", "A"},
			wantTexts:    []string{"## A\n\n" + w30, fence40, words(10)},
		},
		{
			name:         "a heading is kept with a large first block",
			path:         "a.md",
			in:           "## A\n\n" + fence40 + "\n\n" + w30 + "\n",
			max:          64,
			wantHeadings: []string{"A", "A"},
			wantTexts:    []string{"## A\n\n" + fence40, w30},
		},
		{
			name: "a fence over the window is split by lines",
			path: "a.md",
			in:   "# A\n\n```py\n" + strings.Repeat("print(value)\n", 60) + "```\n",
			max:  64,
			check: func(t *testing.T, in string, chunks []Chunk) {
				if len(chunks) < 3 {
					t.Fatalf("%d chunks, want the fence split", len(chunks))
				}
				for _, ch := range chunks {
					if ch.Heading != "A" {
						t.Errorf("heading %q, want A", ch.Heading)
					}
					if text := in[ch.Start:ch.End]; ch.Start > 0 && !strings.HasPrefix(text, "print(value)") && text != "```" {
						t.Errorf("chunk %q does not start at a line", text)
					}
				}
			},
		},
		{
			name: "bare headings chain into their subsection",
			path: "a.md",
			in:   "# A\n## B\n\n" + words(70) + "\n",
			max:  64,
			check: func(t *testing.T, in string, chunks []Chunk) {
				if chunks[0].Start != 0 || chunks[0].Heading != "A > B" {
					t.Errorf("first chunk [%d,%d) heading %q, want it to start at 0 under \"A > B\"", chunks[0].Start, chunks[0].End, chunks[0].Heading)
				}
			},
		},
		{
			name:         "setext headings",
			path:         "a.md",
			in:           "Title\n=====\n\n" + w30 + "\n\nSub\n---\n\n" + w30 + "\n",
			max:          64,
			wantHeadings: []string{"Title", "Title > Sub"},
		},
		{
			name:         "a rule after a blank line or a list item is not a setext underline",
			path:         "a.md",
			in:           "para\n\n---\n\n- item\n---\n\n" + w30 + "\n",
			max:          64,
			wantHeadings: []string{""},
		},
		{
			name: "front matter is one block and its comments are not headings",
			path: "a.md",
			in:   "---\ntitle: T\n# yaml comment\n\ndescription: D\n---\n\n" + w30 + "\n\n## S\n\n" + w30 + "\n",
			max:  64,
			wantTexts: []string{"---\ntitle: T\n# yaml comment\n\ndescription: D\n---\n\n" + w30,
				"## S\n\n" + w30},
			wantHeadings: []string{"", "S"},
		},
		{
			name:         "closing hashes and heading ids are dropped",
			path:         "a.md",
			in:           "# Title ##\n\n" + w30 + "\n\n## Usage {/*usage*/}\n\n" + w30 + "\n\n## Options {#opts}\n\n" + w30 + "\n",
			max:          64,
			wantHeadings: []string{"Title", "Title > Usage", "Title > Options"},
		},
		{
			name:         "a long breadcrumb drops its leading parts",
			path:         "a.md",
			in:           "# " + words(10) + "\n\n" + w30 + "\n\n## " + words(11) + "\n\n" + w30 + "\n",
			max:          64,
			wantHeadings: []string{words(10), "… > " + words(11)},
		},
		{
			name: "a long heading is cut",
			path: "a.md",
			in:   "# " + words(100) + "\n\n" + w30 + "\n",
			max:  64,
			check: func(t *testing.T, in string, chunks []Chunk) {
				for _, ch := range chunks {
					h := ch.Heading
					if !strings.HasPrefix(h, "word word") || !strings.HasSuffix(h, "word…") || wordCounter.Count(wordCounter{}, h) > (64-2)/4 {
						t.Errorf("heading %q not cut to at most %d tokens", h, (64-2)/4)
					}
				}
			},
		},
		{
			name:         "CRLF line endings",
			path:         "a.md",
			in:           "# A\r\n\r\n" + w30 + "\r\n\r\n## B\r\n\r\n" + w30 + "\r\n",
			max:          64,
			wantHeadings: []string{"A", "A > B"},
		},
	})
}

func TestSplit_Text(t *testing.T) {
	w30 := words(30)
	runSplitCases(t, []splitCase{
		{
			name:      "whole text when it fits the window",
			path:      "notes.txt",
			in:        "\n\n" + words(20) + "\n\n" + words(20) + "\n\n",
			max:       64,
			wantTexts: []string{words(20) + "\n\n" + words(20)},
		},
		{
			name:      "blocks packed up to the target",
			path:      "notes.txt",
			in:        words(10) + "\n\n" + words(10) + "\n\n" + w30 + "\n\n" + w30 + "\n",
			max:       64,
			wantTexts: []string{words(10) + "\n\n" + words(10), w30, w30},
		},
		{
			name:         "markdown headings mean nothing in plain text",
			path:         "notes.txt",
			in:           "# A\n\n" + w30 + "\n\n# B\n\n" + w30 + "\n",
			max:          64,
			wantHeadings: []string{"", ""},
		},
		{
			name: "a block over the window is split by lines",
			path: "main.go",
			in:   "func f() {\n" + strings.Repeat("\tx = append(x, y)\n", 40) + "}\n",
			max:  64,
			check: func(t *testing.T, in string, chunks []Chunk) {
				for _, ch := range chunks {
					if ch.Start > 0 && in[ch.Start-1] != '\t' && in[ch.Start-1] != '\n' {
						t.Errorf("chunk at %d does not start a line", ch.Start)
					}
				}
			},
		},
		{
			name: "a line over the window is sliced at whitespace",
			path: "notes.txt",
			in:   words(200),
			max:  64,
			check: func(t *testing.T, in string, chunks []Chunk) {
				if len(chunks) < 4 {
					t.Errorf("%d chunks, want at least 4", len(chunks))
				}
				for _, ch := range chunks {
					if in[ch.Start:ch.End] != words((ch.End-ch.Start+1)/5) {
						t.Errorf("chunk [%d,%d) cut inside a word", ch.Start, ch.End)
					}
				}
			},
		},
		{
			name: "a word over the window is sliced",
			path: "blob.txt",
			in:   "head\n" + strings.Repeat("abcdefgh", 500) + "\ntail\n",
			max:  64,
		},
		{
			name: "multibyte runes without whitespace are cut on rune boundaries",
			path: "ja.txt",
			in:   strings.Repeat("日本語のテキスト", 200),
			max:  32,
		},
		{
			name: "unicode whitespace separates blocks and words",
			path: "u.txt",
			in:   strings.Repeat("mot\u00a0", 300) + "\n\u3000\n" + strings.Repeat("é", 400),
			max:  MinWindow,
		},
	})
}

func TestSplit_JSON(t *testing.T) {
	long := func(n int) string { return `"` + words(n) + `"` }
	runSplitCases(t, []splitCase{
		{
			name:         "whole document when it fits",
			path:         "a.json",
			in:           `{"a": 1, "b": [1, 2, 3]}`,
			max:          64,
			wantHeadings: []string{""},
		},
		{
			name:         "members packed under their container's path",
			path:         "a.json",
			in:           `{"name": "x", "items": [{"id": 1, "text": ` + long(30) + `}, {"id": 2, "text": ` + long(30) + `}]}`,
			max:          64,
			wantHeadings: []string{"", "items", "items"},
			wantTexts: []string{`{"name": "x",`, `"items": [{"id": 1, "text": ` + long(30) + `},`,
				`{"id": 2, "text": ` + long(30) + `}]}`},
		},
		{
			name:         "nested key paths",
			path:         "a.json",
			in:           "{\n  \"spec\": {\n    \"containers\": [\n      {\"name\": \"a\", \"args\": " + long(25) + ", \"env\": " + long(25) + "}\n    ]\n  }\n}\n",
			max:          64,
			wantHeadings: []string{"spec.containers[0]", "spec.containers[0]", "spec.containers[0]"},
		},
		{
			name:         "odd keys are quoted",
			path:         "a.json",
			in:           `{"a b": {"x.y": ` + long(25) + `, "z": ` + long(25) + `}}`,
			max:          64,
			wantHeadings: []string{`["a b"]`, `["a b"]`},
		},
		{
			name: "a long string value is split as text under its path",
			path: "a.json",
			in:   `{"doc": ` + long(200) + `}`,
			max:  64,
			check: func(t *testing.T, in string, chunks []Chunk) {
				if len(chunks) < 4 {
					t.Errorf("%d chunks, want the string split", len(chunks))
				}
				for _, ch := range chunks {
					if ch.Heading != "doc" {
						t.Errorf("heading %q, want doc", ch.Heading)
					}
				}
			},
		},
		{
			name:         "invalid JSON falls back to text",
			path:         "a.json",
			in:           `{"a": ` + long(40) + `,` + "\n\n" + `"b": ` + long(40) + `,}`,
			max:          64,
			wantHeadings: []string{"", ""},
		},
		{
			name: "deep nesting stops descending",
			path: "deep.json",
			in:   strings.Repeat(`{"k": `, 60) + long(200) + strings.Repeat("}", 60),
			max:  64,
			check: func(t *testing.T, in string, chunks []Chunk) {
				for _, ch := range chunks {
					if n := strings.Count(ch.Heading, "k"); n > maxJSONDepth {
						t.Errorf("heading %q deeper than %d", ch.Heading, maxJSONDepth)
					}
				}
			},
		},
		{
			name: "array of records",
			path: "a.json",
			in:   "[" + strings.TrimSuffix(strings.Repeat(`{"id": 1, "v": "`+words(8)+`"},`, 40), ",") + "]",
			max:  64,
			check: func(t *testing.T, in string, chunks []Chunk) {
				if len(chunks) < 5 {
					t.Errorf("%d chunks, want the array split", len(chunks))
				}
			},
		},
	})
	t.Run("mime type application/json", func(t *testing.T) {
		in := `{"a": ` + long(40) + `, "b": ` + long(40) + `}`
		got := Split([]byte(in), "application/json", "x.md", wordCounter{}, 64)
		checkChunks(t, []byte(in), got, wordCounter{}, 64)
		if want := []string{`{"a": ` + long(40) + `,`, `"b": ` + long(40) + `}`}; !reflect.DeepEqual(texts(in, got), want) {
			t.Errorf("texts = %q, want %q", texts(in, got), want)
		}
	})
}

// TestSplit_LargeMarkdown chunks a ~5 MB markdown file (golden inputs and
// pathological lines, repeated) and checks every invariant.
func TestSplit_LargeMarkdown(t *testing.T) {
	content := largeMarkdown(t, 5<<20)
	got := Split(content, "text/markdown", "big.md", wordCounter{}, realWindow)
	checkChunks(t, content, got, wordCounter{}, realWindow)
	t.Logf("%d bytes, %d chunks", len(content), len(got))
}

// largeMarkdown builds at least size bytes of markdown from the golden
// markdown inputs plus a long line, a long word and a deep breadcrumb.
func largeMarkdown(tb testing.TB, size int) []byte {
	tb.Helper()
	var parts []string
	for _, name := range []string{"rust-book-ch08-02-strings.md", "react-usestate.md", "tldr-tar.md", "react-thinking-in-react.md"} {
		parts = append(parts, string(mustReadInput(tb, name)))
	}
	parts = append(parts,
		"# Long line\n\n"+words(3000)+"\n",
		"## Long word\n\n"+strings.Repeat("0123456789abcdef", 2000)+"\n",
		"### "+words(200)+"\n\n#### Deep\n\ntext\n",
		"```\n"+strings.Repeat("code line\n", 2000)+"```\n")
	var sb strings.Builder
	for sb.Len() < size {
		for _, p := range parts {
			sb.WriteString(p)
			sb.WriteString("\n\n")
		}
	}
	return []byte(sb.String())
}

// longestCounter is wordCounter that records the longest text it counted.
type longestCounter struct{ longest *int }

func (c longestCounter) Count(text string) int {
	*c.longest = max(*c.longest, len(text))
	return wordCounter{}.Count(text)
}

// TestSplit_CountsNoSpanTooLargeToFit checks that Split never counts the
// tokens of a span over the byte bound of a chunk, which cannot fit anyway:
// counting a whole 60 MB item took twice its size in memory.
func TestSplit_CountsNoSpanTooLargeToFit(t *testing.T) {
	for _, tt := range []struct{ name, path, content string }{
		{"text", "a.txt", strings.Repeat(words(100)+"\n\n", 20_000)},
		{"markdown", "a.md", "# One\n\n" + strings.Repeat(words(100)+"\n\n", 20_000)},
		{"json", "a.json", "[" + strings.Repeat(`"`+words(100)+`",`, 20_000) + "0]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var longest int
			got := Split([]byte(tt.content), "", tt.path, longestCounter{&longest}, realWindow)
			checkChunks(t, []byte(tt.content), got, wordCounter{}, realWindow)
			if bound := realWindow * maxBytesPerToken; longest > bound {
				t.Errorf("counted a span of %d bytes of %d; a chunk holds at most %d", longest, len(tt.content), bound)
			}
		})
	}
}

func TestSplit_Deterministic(t *testing.T) {
	content := largeMarkdown(t, 1<<20)
	for _, p := range []string{"a.md", "a.txt"} {
		a := Split(content, "", p, wordCounter{}, 128)
		b := Split(content, "", p, wordCounter{}, 128)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs differ", p)
		}
	}
}

// FuzzSplit checks that Split never panics and keeps its invariants for any
// input, kind and window.
func FuzzSplit(f *testing.F) {
	f.Add([]byte("# A\n\ntext\n\n## B\n\n```\n# x\n```\n"), uint8(0), uint16(0))
	f.Add([]byte(`{"a": {"b": [1, "two", {"c": null}]}, "d": "e f g"}`), uint8(1), uint16(3))
	f.Add([]byte("Title\n===\n\nSub\n---\n\n---\nfm: 1\n---\n"), uint8(0), uint16(10))
	f.Add([]byte(strings.Repeat("日本語 ", 50)+strings.Repeat("x", 300)), uint8(2), uint16(0))
	f.Add([]byte("---\na: b\n---\n# "+words(40)+"\n"), uint8(0), uint16(1))
	for _, name := range []string{"tldr-tar.md", "k8s-deployment.json"} {
		f.Add(mustReadInput(f, name), uint8(0), uint16(40))
	}
	f.Fuzz(func(t *testing.T, data []byte, kindSel uint8, window uint16) {
		paths := []string{"f.md", "f.json", "f.txt"}
		p := paths[int(kindSel)%len(paths)]
		maxTokens := MinWindow + int(window)%300
		got := Split(data, "", p, wordCounter{}, maxTokens)
		checkChunks(t, data, got, wordCounter{}, maxTokens)
		if again := Split(data, "", p, wordCounter{}, maxTokens); !reflect.DeepEqual(got, again) {
			t.Fatalf("nondeterministic: %v vs %v", got, again)
		}
	})
}
