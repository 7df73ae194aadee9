package vfs

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/ctxd/ctxd/vfs/backend"
)

const defaultListLimit = 1000

// resolveItem resolves ref to a stored item or placeholder, turning missing
// refs into ErrNotFound and implicit directories into ErrIsDir.
func (t *txn) resolveItem(ref Ref) (node, error) {
	n, err := t.lookup(ref)
	if err != nil {
		return n, err
	}
	if n.val == nil {
		if n.children {
			r := n.ref()
			return n, newError(ErrIsDir, r, "call tree "+r+" or list it to see its items",
				"%s is a directory, not an item.", r)
		}
		return n, t.notFound(n)
	}
	return n, nil
}

// resolveText resolves ref to a text item; binary items and placeholders are ErrNoText.
func (t *txn) resolveText(ref Ref) (node, pathVal, error) {
	n, err := t.resolveItem(ref)
	if err != nil {
		return n, pathVal{}, err
	}
	pv := n.pv()
	r := n.ref()
	if pv.dir() {
		return n, pv, newError(ErrNoText, r, "call tree "+r+" to see its items, or info for its metadata",
			"%s is an empty directory placeholder and has no text.", r)
	}
	if !pv.text() {
		return n, pv, newError(ErrNoText, r, "use a raw read to get its bytes, or info for its metadata",
			"%s is binary (%s, %d bytes) and has no text content.", r, pv.mime, pv.size)
	}
	return n, pv, nil
}

// Read returns lines [lineOffset, lineOffset+lineLimit) of a text item;
// lineLimit 0 means to the end.
func (s *Store) Read(ctx context.Context, ref Ref, lineOffset, lineLimit int64) (ReadResult, error) {
	if lineOffset < 0 || lineLimit < 0 {
		return ReadResult{}, newError(ErrInvalid, ref.String(), "pass offset >= 0 and limit >= 0 (0 reads to the end)",
			"Line offset %d and limit %d must not be negative.", lineOffset, lineLimit)
	}
	var res ReadResult
	err := s.view(ctx, func(t *txn) error {
		n, pv, err := t.resolveText(ref)
		if err != nil {
			return err
		}
		it, err := t.item(pv.id)
		if err != nil {
			return err
		}
		if lineOffset > it.LineCount {
			r := n.ref()
			return newError(ErrOutOfRange, r, "pass an offset from 0 to the line count",
				"Line offset %d is past the end of %s, which has %d lines.", lineOffset, r, it.LineCount)
		}
		content := t.content.Get(pv.id)
		start := lineStart(content, lineOffset)
		end := len(content)
		got := it.LineCount - lineOffset
		if lineLimit > 0 && lineLimit < got {
			got = lineLimit
			end = start + lineStart(content[start:], lineLimit)
		}
		res = ReadResult{Item: it, Content: readableText(content[start:end]), TotalLines: it.LineCount}
		if res.Content == nil {
			res.Content = []byte{}
		}
		if got > 0 {
			res.StartLine, res.EndLine = lineOffset+1, lineOffset+got
		}
		res.HasMore = lineOffset+got < it.LineCount
		return nil
	})
	return res, err
}

// lineStart returns the byte offset where line n (0-based) begins, or len(b).
func lineStart(b []byte, n int64) int {
	pos := 0
	for ; n > 0; n-- {
		i := bytes.IndexByte(b[pos:], '\n')
		if i < 0 {
			return len(b)
		}
		pos += i + 1
	}
	return pos
}

// ReadRaw returns any item's metadata and bytes.
func (s *Store) ReadRaw(ctx context.Context, ref Ref) (Item, []byte, error) {
	var (
		it      Item
		content []byte
	)
	err := s.view(ctx, func(t *txn) error {
		n, err := t.resolveItem(ref)
		if err != nil {
			return err
		}
		pv := n.pv()
		if pv.dir() {
			r := n.ref()
			return newError(ErrIsDir, r, "call tree "+r+" to see what is there", "%s is a directory and has no content.", r)
		}
		if it, err = t.item(pv.id); err != nil {
			return err
		}
		content = bytes.Clone(t.content.Get(pv.id))
		if content == nil {
			content = []byte{}
		}
		return nil
	})
	if err != nil {
		return Item{}, nil, err
	}
	return it, content, nil
}

// Items reads the items with these ids in one transaction; an entry is the
// zero Item where the id names no item or one outside the context's Access.
// It stops when ctx ends.
func (s *Store) Items(ctx context.Context, ids []string) ([]Item, error) {
	out := make([]Item, len(ids))
	err := s.view(ctx, func(t *txn) error {
		keys := make([][]byte, 0, len(ids))
		for _, id := range ids {
			if k, err := parseID(id); err == nil {
				keys = append(keys, k)
			}
		}
		backend.Prefetch(t.items, keys)
		for i, id := range ids {
			if i%256 == 255 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			_, it, ok, err := t.itemByID(id)
			if err != nil {
				return err
			}
			if ok && t.access.Allows(it.Drive, it.Path) {
				out[i] = it
			}
		}
		return nil
	})
	return out, err
}

// Info describes an item, or synthesizes one for a directory.
func (s *Store) Info(ctx context.Context, ref Ref) (Info, error) {
	var info Info
	err := s.view(ctx, func(t *txn) error {
		info = Info{}
		n, err := t.lookup(ref)
		if err != nil {
			return err
		}
		if !n.exists() {
			return t.notFound(n)
		}
		if n.val != nil {
			if info.Item, err = t.item(n.pv().id); err != nil {
				return err
			}
			if !n.isDir() {
				return nil
			}
		} else {
			title := baseName(n.path)
			if n.path == "/" {
				title = n.drive
			}
			info.Item = Item{Drive: n.drive, Path: n.path, Title: title, IsDir: true, MimeType: DirMimeType}
		}
		info.Item.Size, info.ItemCount = t.dirTotals(n.drive, n.path)
		return nil
	})
	return info, err
}

// dirTotals sums sizes and counts the visible items below dir.
func (t *txn) dirTotals(drive, dir string) (size, count int64) {
	t.walkVisible(t.driveBucket(drive), drive, dir, nil, func(_, v []byte) bool {
		size += sizeOf(v)
		count++
		return true
	})
	return size, count
}

// Exists reports whether ref names an item or a directory.
func (s *Store) Exists(ctx context.Context, ref Ref) (exists, isDir bool, err error) {
	err = s.view(ctx, func(t *txn) error {
		n, err := t.lookup(ref)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		exists, isDir = n.exists(), n.isDir()
		return nil
	})
	return exists, isDir, err
}

// DirSize returns the bytes and number of items below a directory; for an
// item it returns the item's own size and 1.
func (s *Store) DirSize(ctx context.Context, ref Ref) (size, count int64, err error) {
	err = s.view(ctx, func(t *txn) error {
		n, err := t.lookup(ref)
		if err != nil {
			return err
		}
		switch {
		case !n.exists():
			return t.notFound(n)
		case n.isFile():
			size, count = sizeOf(n.val), 1
		default:
			size, count = t.dirTotals(n.drive, n.path)
		}
		return nil
	})
	return size, count, err
}

// CountLines returns the number of lines of a text item.
func (s *Store) CountLines(ctx context.Context, ref Ref) (int64, error) {
	var lines int64
	err := s.view(ctx, func(t *txn) error {
		_, pv, err := t.resolveText(ref)
		if err != nil {
			return err
		}
		it, err := t.item(pv.id)
		lines = it.LineCount
		return err
	})
	return lines, err
}

// ListDrives returns the drives that have (visible) items, by name.
func (s *Store) ListDrives(ctx context.Context) ([]DriveInfo, error) {
	var out []DriveInfo
	err := s.view(ctx, func(t *txn) error {
		out = t.visibleDrives()
		return nil
	})
	return out, err
}

// Stats summarises the store from the per-drive counters. Its file size is
// the whole store's, whatever the context's Access.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.view(ctx, func(t *txn) error {
		st = Stats{Drives: t.visibleDrives(), FileSize: t.tx.Size()}
		for _, d := range st.Drives {
			st.ItemCount += d.ItemCount
			st.Size += d.Size
		}
		return nil
	})
	return st, err
}

// List returns the direct children of dir in name order (Entry.Name is the
// child's name), or with recursive every item below it in path order
// (Entry.Name is the path relative to dir). It returns at most limit entries (0 means
// 1000) and a token to pass back for the next page ("" when done). It stops
// with ctx's error once ctx ends.
func (s *Store) List(ctx context.Context, dir Ref, recursive bool, limit int, pageToken string) ([]Entry, string, error) {
	if limit < 0 {
		return nil, "", newError(ErrInvalid, dir.String(), "pass limit 0 for the default of 1000", "The limit %d is negative.", limit)
	}
	if limit == 0 {
		limit = defaultListLimit
	}
	var after []byte
	if pageToken != "" {
		var err error
		if after, err = base64.RawURLEncoding.DecodeString(pageToken); err != nil || len(after) == 0 {
			return nil, "", badToken(dir)
		}
	}
	var (
		entries []Entry
		next    string
	)
	err := s.view(ctx, func(t *txn) error {
		entries, next = nil, ""
		n, err := t.lookupDir(dir)
		if err != nil {
			return err
		}
		prefix := dirPrefix(n.path)
		if after != nil && !bytes.HasPrefix(after, prefix) {
			return badToken(dir)
		}
		b := t.driveBucket(n.drive)
		var last []byte
		var ferr error
		add := func(k, v []byte, name string) bool {
			if len(entries) == limit {
				next = base64.RawURLEncoding.EncodeToString(last)
				return false
			}
			if len(entries)%checkEvery == checkEvery-1 && ctx.Err() != nil {
				ferr = ctx.Err()
				return false
			}
			e := Entry{Drive: n.drive, Path: keyPath(k), Name: name, IsDir: v == nil || v[0]&flagDir != 0}
			if v != nil {
				it, err := t.item(decodePathVal(v).id)
				if err != nil {
					ferr = err
					return false
				}
				e.Item = &it
			}
			entries = append(entries, e)
			last = bytes.Clone(k)
			return true
		}
		if recursive {
			t.walkVisible(b, n.drive, n.path, after, func(k, v []byte) bool {
				return add(k, v, strings.TrimPrefix(keyPath(k[len(prefix):]), "/"))
			})
		} else {
			t.visibleChildren(b, n.drive, n.path, after, func(k, v []byte) bool {
				return add(k, v, baseName(keyPath(k)))
			})
		}
		return ferr
	})
	if err != nil {
		return nil, "", err
	}
	return entries, next, nil
}

func badToken(dir Ref) *Error {
	return newError(ErrInvalid, dir.String(), "pass the next_page_token from the previous list of the same directory, or none to start over",
		"The page token does not belong to a listing of %s.", dir.String())
}
