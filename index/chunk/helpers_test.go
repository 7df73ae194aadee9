package chunk

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/ctxd/ctxd/index/tokenize"
)

// wordCounter is a simple deterministic Counter for unit tests. Like
// WordPiece it splits on whitespace and punctuation, every punctuation or
// symbol rune and every CJK rune being one token, but it charges a run of
// letters and digits 1 + (runes-1)/4 tokens, over-counting relative to
// WordPiece. It is not additive across a cut inside such a run, which
// exercises Split's re-splitting; it is across whitespace (a SumCounter).
type wordCounter struct{}

func (wordCounter) SumsAtWhitespace() {}

func (wordCounter) Count(text string) int {
	n, run := 0, 0
	flush := func() {
		if run > 0 {
			n += 1 + (run-1)/4
			run = 0
		}
	}
	for _, r := range text {
		switch {
		case unicode.IsSpace(r):
			flush()
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
			flush()
			n++
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			run++
		default:
			flush()
			n++
		}
	}
	flush()
	return n
}

// modelDir is the installed embedding model: $CTXD_MODEL_DIR, or the one
// `make setup` installs.
func modelDir() string {
	if d := os.Getenv("CTXD_MODEL_DIR"); d != "" {
		return d
	}
	return "../../.cache/models/all-MiniLM-L6-v2"
}

// realWindow is all-MiniLM-L6-v2's window.
const realWindow = 256

// mustLoadTokenizer loads the real model's tokenizer, failing (not
// skipping) when it is not installed.
func mustLoadTokenizer(tb testing.TB) *tokenize.Tokenizer {
	tb.Helper()
	dir := modelDir()
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		tb.Fatalf("model tokenizer missing (%v): run `make setup` to install it (or set CTXD_MODEL_DIR)", err)
	}
	tk, err := tokenize.Load(dir)
	if err != nil {
		tb.Fatalf("tokenize.Load(%s): %v", dir, err)
	}
	return tk
}

// corpusPath is the docs corpus shipped with the shared evaluation data:
// $CTXD_DOCS_CORPUS, or its place next to the project.
func corpusPath() string {
	if p := os.Getenv("CTXD_DOCS_CORPUS"); p != "" {
		return p
	}
	return "../../../shared/data/docs-corpus/corpus.jsonl.gz"
}

// corpusDoc is one record of the docs corpus.
type corpusDoc struct {
	ID     string `json:"_id"`
	Text   string `json:"text"`
	Source string `json:"source"`
	Format string `json:"format"`
}

// path returns a path whose extension selects the chunker the daemon would
// use for the document (markdown for .md, text otherwise).
func (d corpusDoc) path() string {
	_, p, _ := strings.Cut(d.ID, ":")
	return "/" + p
}

// readCorpusSample returns every every-th record of the docs corpus (a
// sample spread over all its sources, which the file holds in order),
// failing when the corpus is missing.
func readCorpusSample(tb testing.TB, every int) []corpusDoc {
	tb.Helper()
	f, err := os.Open(corpusPath())
	if err != nil {
		tb.Fatalf("docs corpus missing (%v): set CTXD_DOCS_CORPUS to shared/data/docs-corpus/corpus.jsonl.gz", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("gunzip %s: %v", corpusPath(), err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var docs []corpusDoc
	for i := 0; sc.Scan(); i++ {
		if i%every != 0 {
			continue
		}
		var d corpusDoc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			tb.Fatalf("corpus line %d: %v", i+1, err)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("read %s: %v", corpusPath(), err)
	}
	return docs
}

// checkChunks verifies Split's invariants: spans in order, not overlapping,
// trimmed, on rune boundaries (for valid UTF-8 input), covering every
// non-whitespace byte; Tokens within the window and equal to a fresh count
// of EmbedText.
func checkChunks(tb testing.TB, content []byte, chunks []Chunk, c Counter, maxTokens int) {
	tb.Helper()
	checkChunksPrefix(tb, content, chunks, c, maxTokens, "")
}

// checkChunksPrefix is checkChunks for SplitWithPrefix: Tokens count the
// prefix too.
func checkChunksPrefix(tb testing.TB, content []byte, chunks []Chunk, c Counter, maxTokens int, prefix string) {
	tb.Helper()
	validUTF8 := utf8.Valid(content)
	isGap := func(b []byte) bool { return isBlank(string(b)) }
	prev := 0
	for i, ch := range chunks {
		if ch.Start < prev || ch.End <= ch.Start || ch.End > len(content) {
			tb.Fatalf("chunk %d: span [%d,%d) out of order or empty (previous end %d, len %d)", i, ch.Start, ch.End, prev, len(content))
		}
		if !isGap(content[prev:ch.Start]) {
			tb.Fatalf("chunk %d: gap [%d,%d) before it holds non-whitespace %q", i, prev, ch.Start, clip(string(content[prev:ch.Start])))
		}
		text := content[ch.Start:ch.End]
		if validUTF8 {
			if !utf8.Valid(text) {
				tb.Fatalf("chunk %d: span [%d,%d) splits a rune", i, ch.Start, ch.End)
			}
			if r, _ := utf8.DecodeRune(text); unicode.IsSpace(r) {
				tb.Fatalf("chunk %d: starts with whitespace", i)
			}
			if r, _ := utf8.DecodeLastRune(text); unicode.IsSpace(r) {
				tb.Fatalf("chunk %d: ends with whitespace", i)
			}
		}
		if ch.Tokens > maxTokens {
			tb.Fatalf("chunk %d [%d,%d) heading %q: %d tokens > window %d", i, ch.Start, ch.End, ch.Heading, ch.Tokens, maxTokens)
		}
		if got := c.Count(string(AppendEmbedText(nil, prefix, ch.Heading, text))) + 2; got != ch.Tokens {
			tb.Fatalf("chunk %d: Tokens %d, fresh count %d", i, ch.Tokens, got)
		}
		prev = ch.End
	}
	if !isGap(content[prev:]) {
		tb.Fatalf("tail [%d,%d) after the last chunk holds non-whitespace %q", prev, len(content), clip(string(content[prev:])))
	}
}

// clip shortens s for messages.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// texts returns the chunk texts, for compact table-test expectations.
func texts(content string, chunks []Chunk) []string {
	out := make([]string, len(chunks))
	for i, ch := range chunks {
		out[i] = content[ch.Start:ch.End]
	}
	return out
}

// headings returns the chunk headings.
func headings(chunks []Chunk) []string {
	out := make([]string, len(chunks))
	for i, ch := range chunks {
		out[i] = ch.Heading
	}
	return out
}
