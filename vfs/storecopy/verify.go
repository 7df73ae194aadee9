package storecopy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxd/ctxd/vfs/backend"
)

// summary is what Verify compares of one bucket.
type summary struct {
	path [][]byte
	keys int64 // key-value pairs, not nested buckets
	seq  uint64
	sum  [sha256.Size]byte // of every key and value, in order
}

// Verify compares src and dst bucket by bucket: the same buckets at the same
// paths, and in each the same number of keys, the same sequence and the same
// SHA-256 of all its keys and values in order (a nested bucket is compared
// as a bucket of its own, not as a part of its parent). Each
// difference found is one error naming the bucket, all joined. It reads
// both stores whole, in one read transaction each, side by side, and
// returns the source's counts.
func Verify(ctx context.Context, src, dst backend.DB) (Counts, error) {
	type result struct {
		sums   []summary
		counts Counts
		err    error
	}
	dstDone := make(chan result, 1)
	go func() {
		var r result
		r.sums, r.counts, r.err = summarize(ctx, dst)
		dstDone <- r
	}()
	srcSums, counts, err := summarize(ctx, src)
	d := <-dstDone
	if err != nil {
		return Counts{}, fmt.Errorf("read the source: %w", err)
	}
	if d.err != nil {
		return Counts{}, fmt.Errorf("read the destination: %w", d.err)
	}
	return counts, compare(srcSums, d.sums)
}

// compare reports the differences of two bucket lists sorted by path.
func compare(src, dst []summary) error {
	var errs []error
	i, j := 0, 0
	for i < len(src) || j < len(dst) {
		var c int
		switch {
		case i == len(src):
			c = 1
		case j == len(dst):
			c = -1
		default:
			c = comparePaths(src[i].path, dst[j].path)
		}
		switch {
		case c < 0:
			errs = append(errs, fmt.Errorf("bucket %s: in the source, missing from the destination", formatPath(src[i].path)))
			i++
		case c > 0:
			if len(dst[j].path) == 1 && string(dst[j].path[0]) == ProgressBucket {
				errs = append(errs, errors.New("the destination holds an unfinished migration ("+ProgressBucket+"): run ctxd migrate again to finish it"))
			} else {
				errs = append(errs, fmt.Errorf("bucket %s: in the destination, not in the source", formatPath(dst[j].path)))
			}
			j++
		default:
			s, d := src[i], dst[j]
			name := formatPath(s.path)
			switch {
			case s.keys != d.keys:
				errs = append(errs, fmt.Errorf("bucket %s: %d keys in the source, %d in the destination", name, s.keys, d.keys))
			case s.sum != d.sum:
				errs = append(errs, fmt.Errorf("bucket %s: keys or values differ (same count, different SHA-256)", name))
			}
			if s.seq != d.seq {
				errs = append(errs, fmt.Errorf("bucket %s: sequence %d in the source, %d in the destination", name, s.seq, d.seq))
			}
			i, j = i+1, j+1
		}
	}
	return errors.Join(errs...)
}

// comparePaths orders paths as the walk meets them: element by element, a
// bucket before the buckets nested in it.
func comparePaths(a, b [][]byte) int {
	return slices.CompareFunc(a, b, bytes.Compare)
}

// summarize walks db in one read transaction and returns every bucket's
// summary sorted by path, and the totals.
func summarize(ctx context.Context, db backend.DB) (sums []summary, counts Counts, err error) {
	err = db.View(ctx, func(tx backend.Tx) error {
		var n int
		var walk func(path [][]byte, b backend.Bucket) error
		walk = func(path [][]byte, b backend.Bucket) error {
			counts.Buckets++
			counts.Bytes += int64(len(path[len(path)-1]))
			at := len(sums)
			sums = append(sums, summary{path: path, seq: b.Sequence()})
			h := sha256.New()
			var nested [][]byte
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if n++; n%4096 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				if v == nil && b.Bucket(k) != nil {
					nested = append(nested, bytes.Clone(k))
					continue
				}
				hashEntry(h, k, v)
				sums[at].keys++
				counts.Keys++
				counts.Bytes += int64(len(k) + len(v))
			}
			h.Sum(sums[at].sum[:0])
			for _, k := range nested {
				if err := walk(slices.Concat(path, [][]byte{k}), b.Bucket(k)); err != nil {
					return err
				}
			}
			return nil
		}
		return tx.ForEach(func(name []byte, b backend.Bucket) error {
			return walk([][]byte{bytes.Clone(name)}, b)
		})
	})
	return sums, counts, err
}

// hashEntry feeds a key and its value to h, each length-prefixed so that
// no two lists of entries hash alike.
func hashEntry(h hash.Hash, k, v []byte) {
	var buf [binary.MaxVarintLen64]byte
	h.Write(binary.AppendUvarint(buf[:0], uint64(len(k))))
	h.Write(k)
	h.Write(binary.AppendUvarint(buf[:0], uint64(len(v))))
	h.Write(v)
}

// formatPath shows a bucket path as its names joined with "/", each quoted
// unless it is printable text without "/" or quotes (vfs's names are).
func formatPath(path [][]byte) string {
	parts := make([]string, len(path))
	for i, p := range path {
		s := string(p)
		if s == "" || !utf8.ValidString(s) || strings.ContainsAny(s, `/"`) || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) {
			s = strconv.Quote(s)
		}
		parts[i] = s
	}
	return strings.Join(parts, "/")
}
