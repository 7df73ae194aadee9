package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/exporttree"
	"github.com/ctxd/ctxd/vfs"
)

// maxManifestLine bounds one manifest line: an item's metadata, never its
// content.
const maxManifestLine = 4 << 20

// manifestJSON writes an entry's item with the proto field names, as the
// CLI's --json does.
var manifestJSON = protojson.MarshalOptions{UseProtoNames: true}

func (c *cli) exportCommand() *cobra.Command {
	var drive, under string
	var force bool
	cmd := &cobra.Command{
		Use:   "export DIR",
		Short: "Write items as a plain file tree with a manifest",
		Long: `Write every item the token may read (or those of --drive, or below --under)
into DIR as files: DIR/<drive>/<path>, text exactly as stored (frontmatter
included), binary content byte for byte, explicit empty directories as
directories, and DIR/` + exporttree.ManifestName + `: one JSON line per item with
its file and its metadata (id, ref, MIME type, title, description, tags,
importance, source URL, origin, times, content hash). ctxd import DIR reads it
back. Path segments a file name cannot hold are percent-escaped; a url drive
item is one file named by its escaped URL. DIR must be empty or new, unless
--force. Items are read one at a time; each call has the --timeout deadline.

  ctxd export ~/ctxd-export --drive notes`,
		Args: exactArgs(1),
		PreRunE: func(*cobra.Command, []string) error {
			if drive != "" && under != "" {
				return usageError{errors.New("give --drive or --under, not both")}
			}
			if drive != "" {
				if err := vfs.ValidateDrive(drive); err != nil {
					return usageError{fmt.Errorf("--drive: %w", err)}
				}
			}
			if c.json {
				return usageError{errors.New("export prints text only; --json is not supported")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := c.untilInterrupted(cmd)
			defer stop()
			return c.export(ctx, args[0], drive, under, force)
		},
	}
	cmd.Flags().StringVar(&drive, "drive", "", "export only this drive")
	cmd.Flags().StringVar(&under, "under", "", "export only the items below this directory (drive:/path)")
	cmd.Flags().BoolVar(&force, "force", false, "write into DIR although it is not empty")
	return cmd
}

// export writes the items below the roots into dir, the manifest last.
func (c *cli) export(ctx context.Context, dir, drive, under string, force bool) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 && !force {
		return fmt.Errorf("%s is not empty: export into a new or empty directory, or pass --force to write into it", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	cl, err := c.dial()
	if err != nil {
		return err
	}
	defer cl.conn.Close()
	roots, err := c.exportRoots(ctx, cl, drive, under)
	if err != nil {
		return err
	}
	manifest := filepath.Join(dir, exporttree.ManifestName)
	mf, err := os.OpenFile(manifest+".partial", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if mf != nil {
			mf.Close()
			os.Remove(manifest + ".partial")
		}
	}()
	mw := bufio.NewWriter(mf)
	enc := json.NewEncoder(mw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(exporttree.Header{Format: exporttree.Format, Version: exporttree.Version, ExportedAt: time.Now().UTC(), Roots: roots}); err != nil {
		return err
	}
	var items, dirs int
	var bytes int64
	for _, root := range roots {
		token := ""
		for {
			lctx, cancel := context.WithTimeout(ctx, c.timeout)
			page, err := cl.vfs.List(lctx, &ctxdv1.ListRequest{Ref: root, Recursive: true, Limit: 1000, PageToken: token})
			cancel()
			if err != nil {
				return err
			}
			for _, e := range page.Entries {
				if e.Item == nil {
					continue // an implicit directory
				}
				entry, n, err := c.exportItem(ctx, cl, dir, e.Item)
				if err != nil {
					return err
				}
				if entry.Dir {
					dirs++
				} else {
					items++
					bytes += n
				}
				if err := enc.Encode(entry); err != nil {
					return err
				}
			}
			if token = page.NextPageToken; token == "" {
				break
			}
		}
	}
	if err := mw.Flush(); err != nil {
		return err
	}
	if err := mf.Sync(); err != nil {
		return err
	}
	if err := mf.Close(); err != nil {
		return err
	}
	mf = nil
	if err := os.Rename(manifest+".partial", manifest); err != nil {
		return err
	}
	fmt.Fprint(c.stdout, grouped.Sprintf("exported %d items (%s) and %d empty directories to %s; manifest %s\n", items, humanBytes(bytes), dirs, dir, manifest))
	return nil
}

// exportRoots lists what to export: --under, --drive, or every drive.
func (c *cli) exportRoots(ctx context.Context, cl *clients, drive, under string) ([]string, error) {
	switch {
	case under != "":
		return []string{under}, nil
	case drive != "":
		return []string{drive + ":"}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := cl.vfs.ListDrives(ctx, &ctxdv1.ListDrivesRequest{})
	if err != nil {
		return nil, err
	}
	var roots []string
	for _, d := range resp.Drives {
		roots = append(roots, d.Name+":")
	}
	slices.Sort(roots)
	return roots, nil
}

// exportItem writes one item's file (a directory for a placeholder) and
// returns its manifest entry and content bytes. Metadata and content come
// from one read, so they belong together.
func (c *cli) exportItem(ctx context.Context, cl *clients, dir string, it *ctxdv1.Item) (exporttree.Entry, int64, error) {
	rel := exporttree.FilePath(it.Drive, it.Path)
	file := filepath.Join(dir, filepath.FromSlash(rel))
	if it.IsDir {
		raw, err := manifestJSON.Marshal(it)
		if err != nil {
			return exporttree.Entry{}, 0, err
		}
		return exporttree.Entry{File: rel, Dir: true, Item: raw}, 0, os.MkdirAll(file, 0o700)
	}
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	r, err := cl.vfs.Read(rctx, &ctxdv1.ReadRequest{Ref: it.Id, Raw: true})
	if err != nil {
		return exporttree.Entry{}, 0, fmt.Errorf("read %s: %w", it.Ref, err)
	}
	sum := sha256.Sum256(r.Data)
	if got := hex.EncodeToString(sum[:]); got != r.Item.ContentHash {
		return exporttree.Entry{}, 0, fmt.Errorf("read %s: its content hashes to %s, not the %s the daemon reports", it.Ref, got, r.Item.ContentHash)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return exporttree.Entry{}, 0, err
	}
	if err := os.WriteFile(file, r.Data, 0o600); err != nil {
		return exporttree.Entry{}, 0, err
	}
	raw, err := manifestJSON.Marshal(r.Item)
	if err != nil {
		return exporttree.Entry{}, 0, err
	}
	return exporttree.Entry{File: rel, Item: raw}, int64(len(r.Data)), nil
}

// importTree writes the items of an export directory: each file checked
// against the manifest's content hash, its metadata and id with it (the id
// is kept where no item has it), placeholders made again. The batches
// written before a failure stay written.
func (c *cli) importTree(ctx context.Context, dir string, batch int, oc ctxdv1.OnConflict) error {
	mf, err := os.Open(filepath.Join(dir, exporttree.ManifestName))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s holds no %s: import reads a directory ctxd export wrote, or JSON lines from a file or stdin", dir, exporttree.ManifestName)
		}
		return err
	}
	defer mf.Close()
	sc := bufio.NewScanner(mf)
	sc.Buffer(make([]byte, 0, 64<<10), maxManifestLine)
	var h exporttree.Header
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &h) != nil || h.Format != exporttree.Format {
		return fmt.Errorf("%s does not start with a %s header line", exporttree.ManifestName, exporttree.Format)
	}
	if h.Version != exporttree.Version {
		return fmt.Errorf("%s is version %d of the export format; this ctxd reads version %d", exporttree.ManifestName, h.Version, exporttree.Version)
	}
	cl, err := c.dial()
	if err != nil {
		return err
	}
	defer cl.conn.Close()
	b := newWriteBatcher(c, cl, batch)
	var kept, renewed, dirs int
	b.result = func(w *ctxdv1.WriteRequest, r *ctxdv1.WriteResponse) {
		switch {
		case !r.Created:
		case r.Item.Id == w.Id:
			kept++
		default:
			renewed++
		}
	}
	b.failed = func() {
		fmt.Fprintf(c.stderr, "ctxd import: the last batch (%d items) was not written; %d items before it were\n", b.pending(), b.written())
	}
	line := 1
	for sc.Scan() {
		line++
		var e exporttree.Entry
		it := &ctxdv1.Item{}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("%s line %d: %v", exporttree.ManifestName, line, err)
		}
		if err := protojson.Unmarshal(e.Item, it); err != nil {
			return fmt.Errorf("%s line %d: item: %v", exporttree.ManifestName, line, err)
		}
		if !filepath.IsLocal(filepath.FromSlash(e.File)) || path.Clean(e.File) != e.File {
			return fmt.Errorf("%s line %d: file %q is not a clean path inside %s", exporttree.ManifestName, line, e.File, dir)
		}
		if e.Dir {
			// Items before it first, so the tree is made in order.
			if err := b.send(ctx); err != nil {
				return err
			}
			mctx, cancel := context.WithTimeout(ctx, c.timeout)
			md, err := cl.vfs.MakeDir(mctx, &ctxdv1.MakeDirRequest{Ref: it.Ref, Id: it.Id})
			cancel()
			if err != nil {
				return fmt.Errorf("make directory %s: %w", it.Ref, err)
			}
			if md.Created {
				dirs++
			}
			continue
		}
		w, size, err := importRequest(filepath.Join(dir, filepath.FromSlash(e.File)), it, oc)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", exporttree.ManifestName, line, err)
		}
		if err := b.makeRoom(ctx, size); err != nil {
			return err
		}
		if err := b.push(ctx, w, size); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s line %d: %w", exporttree.ManifestName, line+1, err)
	}
	if err := b.send(ctx); err != nil {
		return err
	}
	if !c.json {
		fmt.Fprintf(c.stdout, "imported %d items from %s: %d created (%d kept their ids, %d got new ids as theirs were taken), %d updated, %d skipped; %d empty directories created; WriteBatch calls: %d\n",
			b.written(), dir, b.created, kept, renewed, b.updated, b.skipped, dirs, b.batches)
	}
	return nil
}

// importRequest reads an exported item's file, checks it against the
// manifest, and builds its write. Metadata the content's frontmatter
// declares is left to the frontmatter, so that it stays the frontmatter's.
func importRequest(file string, it *ctxdv1.Item, oc ctxdv1.OnConflict) (*ctxdv1.WriteRequest, int, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, it.SizeBytes+1))
	if err != nil {
		return nil, 0, err
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != it.ContentHash {
		return nil, 0, fmt.Errorf("%s does not match the manifest (SHA-256 %s, the export recorded %s): it changed since the export", file, got, it.ContentHash)
	}
	w := &ctxdv1.WriteRequest{Ref: it.Ref, Id: it.Id, MimeType: it.MimeType, Title: it.Title, Description: it.Description,
		Tags: it.Tags, Importance: it.Importance, SourceUrl: it.SourceUrl, OnConflict: oc}
	if it.IsText {
		w.Body = &ctxdv1.WriteRequest_Content{Content: string(data)}
		fm, _ := vfs.ParseFrontmatter(data)
		if fm.Title != "" && fm.Title == w.Title {
			w.Title = ""
		}
		if fm.Description != "" && fm.Description == w.Description {
			w.Description = ""
		}
		if fm.Tags != nil && slices.Equal(fm.Tags, w.Tags) {
			w.Tags = nil
		}
		if fm.Importance != nil && *fm.Importance == w.Importance {
			w.Importance = 0
		}
	} else {
		w.Body = &ctxdv1.WriteRequest_Data{Data: data}
	}
	return w, len(data), nil
}
