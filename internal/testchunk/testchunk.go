// Package testchunk is a chunker for the tests and benchmarks of packages
// that read chunks back from a store (search, assembly, enrichment): one
// chunk per paragraph, so a test knows its chunks. The real chunker is in
// index/chunk and runs end to end in the daemon's tests.
package testchunk

import (
	"bytes"
	"crypto/sha256"
	"strings"

	"github.com/ctxd/ctxd/vfs"
)

// Paragraphs chunks content at blank lines.
type Paragraphs struct {
	// Name is the chunker's ID; "paragraphs" when empty.
	Name string
	// Headings gives a paragraph that opens with "# " that line as its heading.
	Headings bool
	// Count counts a paragraph's tokens; nil estimates 4 bytes a token.
	Count func(string) int
}

// ID implements vfs.Chunker.
func (p Paragraphs) ID() string {
	if p.Name == "" {
		return "paragraphs"
	}
	return p.Name
}

// Chunk implements vfs.Chunker.
func (p Paragraphs) Chunk(content []byte, _ vfs.ChunkDoc) []vfs.ChunkSpan {
	var out []vfs.ChunkSpan
	for start := 0; start < len(content); {
		end := bytes.Index(content[start:], []byte("\n\n"))
		if end < 0 {
			end = len(content)
		} else {
			end += start
		}
		if end > start {
			text := content[start:end]
			span := vfs.ChunkSpan{Start: start, End: end, Tokens: len(text) / 4, Hash: sha256.Sum256(text)}
			if p.Count != nil {
				span.Tokens = p.Count(string(text))
			}
			if h, ok := bytes.CutPrefix(text, []byte("# ")); ok && p.Headings {
				span.Heading, _, _ = strings.Cut(string(h), "\n")
			}
			out = append(out, span)
		}
		start = end + 2
	}
	return out
}
