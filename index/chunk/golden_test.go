package chunk

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// mustReadInput reads testdata/<name>.input.
func mustReadInput(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".input"))
	if err != nil {
		tb.Fatalf("read input: %v", err)
	}
	return b
}

// goldenInputs lists the names of testdata/*.input (without the suffix).
// The name's extension picks the chunker, as a path would.
func goldenInputs(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.input"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no testdata/*.input files (%v)", err)
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.TrimSuffix(filepath.Base(p), ".input")
	}
	return names
}

// renderChunks prints chunks one per line, diff-friendly: index, span,
// tokens, heading, and the first 60 runes of the text.
func renderChunks(name string, content []byte, chunks []Chunk, maxTokens int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s: %d bytes, window %d, %d chunks\n", name, len(content), maxTokens, len(chunks))
	for i, ch := range chunks {
		text := content[ch.Start:ch.End]
		head := text
		for n, j := 0, 0; j < len(text); n++ {
			if n == 60 {
				head = text[:j]
				break
			}
			_, size := utf8.DecodeRune(text[j:])
			j += size
		}
		fmt.Fprintf(&b, "%3d [%d,%d) tokens=%d heading=%s\n    %s\n", i, ch.Start, ch.End, ch.Tokens,
			strconv.Quote(ch.Heading), strconv.Quote(string(head)))
	}
	return b.Bytes()
}

// TestSplit_Golden chunks each testdata/*.input with the real tokenizer and
// window and compares with testdata/*.golden (rewrite with -update).
func TestSplit_Golden(t *testing.T) {
	tk := mustLoadTokenizer(t)
	for _, name := range goldenInputs(t) {
		t.Run(name, func(t *testing.T) {
			content := mustReadInput(t, name)
			chunks := Split(content, "", "/"+name, tk, realWindow)
			checkChunks(t, content, chunks, tk, realWindow)
			got := renderChunks(name, content, chunks, realWindow)
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./index/chunk -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (review, then rerun with -update):\n%s", golden, lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff shows the first differing lines of want and got.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}
