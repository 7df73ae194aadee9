package tokenize

import (
	"fmt"
	"strings"
	"testing"
)

// benchParagraph is the kind of text the chunker counts: prose with
// punctuation, numbers, code identifiers and a little non-ASCII.
const benchParagraph = `The daemon keeps a local memory for AI agents: every item is split into
chunks of at most 256 tokens, embedded with a small sentence model, and indexed
for BM25 and vector search. Chunks overlap by 32 tokens so that a sentence cut at
a boundary is still found. On a 2-core machine, re-indexing 10,000 notes (≈12 MB)
takes a few minutes; the tokenizer's share of that should stay well under 5%.
See config.toml → [index] max_chunk_tokens, or run "ctxd reindex --dry-run".
Café owners in São Paulo wrote naïve résumés — e.g. "über-cool" — in 2024.
`

func BenchmarkTokenizer_Count(b *testing.B) {
	tk := mustLoadModel(b)
	for _, n := range []int{1, 16, 256} {
		text := strings.Repeat(benchParagraph, n)
		b.Run(fmt.Sprintf("bytes=%d", len(text)), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tk.Count(text)
			}
		})
	}
	b.Run("ascii", func(b *testing.B) {
		text := strings.Repeat("The quick brown fox jumps over the lazy dog, again and again. ", 64)
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			tk.Count(text)
		}
	})
}

func BenchmarkTokenizer_Encode(b *testing.B) {
	tk := mustLoadModel(b)
	text := strings.Repeat(benchParagraph, 4)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		tk.Encode(text, 256)
	}
}
