package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// ErrUnavailable marks EmbedText while no embedding model can run; its
// message says why.
var ErrUnavailable = errors.New("embedding is unavailable")

// EmbedText returns the vectors the store would hold for content written as
// a text item with mime type mt, path and a chosen title ("" for none): it
// is chunked with the store's chunker, a frontmatter block's title (unless
// title is set) and description go with every chunk of the body after it,
// and the chunks are embedded at Prompt priority, ahead of the background
// backlog. Content of more than maxChunks chunks is refused with
// search.ErrTooManyChunks before anything is embedded. FindSimilar compares
// a text this way.
func (ix *Indexer) EmbedText(ctx context.Context, content []byte, mt, path, title string, maxChunks int) ([][]float32, error) {
	ix.mu.Lock()
	c, w, reason := ix.chunker, ix.worker, ix.reason
	ix.mu.Unlock()
	if c == nil || w == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, reason)
	}
	doc := vfs.ChunkDoc{MimeType: mt, Path: path, Title: title}
	// Malformed frontmatter (Len 0) is text, as the store keeps it.
	if fm, _ := vfs.ParseFrontmatter(content); fm.Len > 0 {
		doc.Title, doc.Description = cmp.Or(title, fm.Title), fm.Description
		content = content[fm.Len:]
	}
	spans := c.Chunk(content, doc)
	if len(spans) > maxChunks {
		return nil, fmt.Errorf("%w: the text makes %d", search.ErrTooManyChunks, len(spans))
	}
	texts := make([]string, len(spans))
	for i, s := range spans {
		texts[i] = string(c.embedText(nil, doc.Title, doc.Description, s.Heading, content[s.Start:s.End]))
	}
	return w.EmbedAt(ctx, texts, embed.Prompt)
}
