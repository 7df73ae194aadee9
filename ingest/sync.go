package ingest

import (
	"context"
	"os"
	"path/filepath"

	"github.com/ctxd/ctxd/vfs"
)

// FileSync is one file SyncFiles brings up to date.
type FileSync struct {
	Path string // absolute file path; the item is at the same path on the drive
	// Existing is the item stored there when the caller knows it (it
	// listed it), so that SyncFiles need not look it up; nil: looked up.
	Existing *vfs.Item
}

// SyncFiles brings the items of files up to date with them, in parallel,
// as Refresh does for one item: a file whose size and mtime match what its
// item recorded is not read; one that reads the same is not rewritten; a new
// file is added; a vanished one is reported Missing. drive "" is the disk
// drive; tags are added to the items written. Results are in files' order.
func (in *Ingester) SyncFiles(ctx context.Context, drive string, tags []string, files []FileSync) []ItemResult {
	out := make([]ItemResult, len(files))
	in.parallel(ctx, len(files), func(i int) {
		f := files[i]
		src, err := classify(f.Path, drive)
		if err != nil {
			out[i] = ItemResult{Source: f.Path, Action: Failed, Err: err}
			return
		}
		if f.Existing == nil {
			out[i] = in.addOne(ctx, job{src: src}, AddOptions{OnConflict: vfs.ConflictOverwrite, Tags: tags})
			return
		}
		if err := vfs.AccessFrom(ctx).CheckChange(src.drive, src.path); err != nil {
			out[i] = ItemResult{Ref: src.ref(), Source: f.Path, Action: Failed, Err: err}
			return
		}
		out[i] = in.sync(ctx, src, f.Existing, syncArgs{tags: tags, onConflict: vfs.ConflictOverwrite})
	})
	for i := range out {
		if out[i].Action == 0 { // not run: ctx ended first
			out[i] = ItemResult{Source: files[i].Path, Action: Failed, Err: ctx.Err()}
		}
	}
	return out
}

// FileHash returns the content hash an item of the file at path would have
// (vfs.Item.ContentHash) and the bytes read, so that a file found under a new
// name can be matched with the item of a vanished one before anything is
// written.
func (in *Ingester) FileHash(path string) (string, int64, error) {
	if err := in.cfg.Policy.Check(path); err != nil {
		return "", 0, err
	}
	data, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return "", 0, fileUnreadable(path, err)
	}
	return vfs.HashContent(Detect(data).Data), int64(len(data)), nil
}
