package assemble

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/ctxd/ctxd/vfs"
)

// Update replaces the body of the text item at ref and keeps its
// frontmatter block byte-for-byte, malformed or not (the block
// vfs.SplitFrontmatter finds; with none the whole content is replaced).
// Update never changes frontmatter: a body that starts with the item's own
// block (a caller that echoes the whole file) has it dropped, one that
// starts with a different block is refused; the owner changes frontmatter
// with a write or an edit. With expectedHash set Update fails with
// vfs.ErrChanged unless the stored content has that hash; either way the
// write expects the content Update read, so a change that lands in between
// is refused, never overwritten. The write is made as the context's actor
// with the operation vfs.OpContextUpdate, so history records who made it
// and the store's guard decides whether an agent may (vfs.ErrReadOnly);
// the item's other metadata is kept.
func Update(ctx context.Context, store *vfs.Store, ref vfs.Ref, body []byte, expectedHash string) (vfs.WriteResult, error) {
	it, content, err := store.ReadRaw(ctx, ref)
	if err != nil {
		return vfs.WriteResult{}, err
	}
	at := it.Ref()
	if !it.IsText {
		return vfs.WriteResult{}, &vfs.Error{Kind: vfs.ErrNoText, Ref: at,
			Message: fmt.Sprintf("%s is not text, so it has no body to update.", at),
			Hint:    "update a text context file such as self:/beliefs.md"}
	}
	if expectedHash != "" && expectedHash != it.ContentHash {
		return vfs.WriteResult{}, &vfs.Error{Kind: vfs.ErrChanged, Ref: at,
			Message: fmt.Sprintf("%s changed: its content hash is %s, not the expected %s.", at, it.ContentHash, expectedHash),
			Hint:    "read it again and redo the update against the current content"}
	}
	block, _ := vfs.SplitFrontmatter(content)
	if block != nil {
		if given, rest := vfs.SplitFrontmatter(body); given != nil {
			if !bytes.Equal(given, block) {
				return vfs.WriteResult{}, &vfs.Error{Kind: vfs.ErrInvalid, Ref: at,
					Message: fmt.Sprintf("The new body of %s starts with a frontmatter block that differs from the file's; Update keeps the frontmatter as it is.", at),
					Hint:    "send only the body (everything after the closing --- line); the owner changes frontmatter with a write or edit"}
			}
			body = rest
		}
	}
	res, err := replaceBody(ctx, store, it, block, body, vfs.OpContextUpdate)
	if err != nil {
		return vfs.WriteResult{}, fmt.Errorf("update %s: %w", at, err)
	}
	return res, nil
}

// replaceBody writes block and body as the content of it, expecting the
// content it was read with, as the context's actor with operation op, and
// keeps its metadata: the fields its kept frontmatter fills come from it
// again, the others are passed as they are.
func replaceBody(ctx context.Context, store *vfs.Store, it vfs.Item, block, body []byte, op string) (vfs.WriteResult, error) {
	a := vfs.ActorFrom(ctx)
	a.Op = op
	newContent := make([]byte, 0, len(block)+len(body))
	newContent = append(append(newContent, block...), body...)
	p := vfs.WriteParams{
		Ref: vfs.Ref{Drive: it.Drive, Path: it.Path}, Content: newContent, IsText: true,
		MimeType: it.MimeType, SourceURL: it.SourceURL, Origin: it.Origin,
		OnConflict: vfs.ConflictOverwrite, ExpectedHash: it.ContentHash,
	}
	fromFM := func(f string) bool { return slices.Contains(it.FrontmatterFields, f) }
	if !fromFM("title") {
		p.Title = it.Title
	}
	if !fromFM("description") {
		p.Description = it.Description
	}
	if !fromFM("tags") {
		p.Tags = it.Tags
	}
	if !fromFM("importance") {
		p.Importance = it.Importance
	}
	return store.Write(vfs.WithActor(ctx, a), p)
}
