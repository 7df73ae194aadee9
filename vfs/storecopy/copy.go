package storecopy

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
)

// ProgressBucket is the destination's top-level bucket while a copy into it
// is unfinished: where the copy stopped, what it copied, from where.
const ProgressBucket = "migrate_progress"

// Keys of ProgressBucket.
const (
	keyPosition = "position" // the path of the last entry copied (encodePath)
	keyCounts   = "counts"   // buckets, keys, bytes copied so far (3 × 8 bytes)
	keySource   = "source"   // Options.Source of the copy that started it
)

// Batch bounds: a destination transaction holds at most BatchKeys keys
// (nested buckets count as keys) and BatchBytes bytes of keys and values,
// whichever comes first; a single larger entry goes alone.
const (
	DefaultBatchKeys  = 2000
	MaxBatchKeys      = 100_000
	DefaultBatchBytes = 32 << 20
	MaxBatchBytes     = 1 << 30
)

// ErrUsedDestination is returned by Copy for a destination that already
// holds buckets and no unfinished copy.
var ErrUsedDestination = errors.New("migrating into a used store is refused")

// Options configures Copy.
type Options struct {
	// BatchKeys bounds the keys of one destination transaction, 1 to
	// MaxBatchKeys; 0 means DefaultBatchKeys.
	BatchKeys int
	// BatchBytes bounds the key and value bytes of one destination
	// transaction, 1 to MaxBatchBytes; 0 means DefaultBatchBytes.
	BatchBytes int64
	// Source names the source (a file path, a URL without its password). It
	// is recorded in the destination, and a copy from another source does
	// not resume it.
	Source string
	// Progress, if set, is called after every committed batch with the
	// report so far. It runs on Copy's goroutine.
	Progress func(Report)
}

// Counts is an amount of a key space. Keys are key-value pairs; Buckets are
// buckets, top-level and nested; Bytes are the bytes of keys, values and
// bucket names.
type Counts struct {
	Buckets, Keys, Bytes int64
}

func (c *Counts) add(o Counts) {
	c.Buckets += o.Buckets
	c.Keys += o.Keys
	c.Bytes += o.Bytes
}

// Report is what a Copy did.
type Report struct {
	Copied Counts // by this call
	// Earlier is what the interrupted copies this call resumed had copied;
	// zero when it started afresh. Earlier plus Copied is the whole store.
	Earlier Counts
	// SourceKeys is the source's key count as its backend estimates it
	// (nested buckets' names included): a total for a progress display.
	SourceKeys int64
	Batches    int // destination transactions committed by this call
	Duration   time.Duration
}

// Done is everything copied into the destination so far.
func (r Report) Done() Counts {
	d := r.Earlier
	d.add(r.Copied)
	return d
}

// Copy copies every bucket, nested bucket, key, value and bucket sequence of
// src into dst, resuming an unfinished copy recorded in dst (see the package
// comment). On an error or a cancelled ctx it returns what it copied so far;
// calling it again resumes. src must not change meanwhile.
func Copy(ctx context.Context, src, dst backend.DB, opts Options) (rep Report, err error) {
	start := time.Now()
	defer func() { rep.Duration = time.Since(start) }()
	if opts.BatchKeys == 0 {
		opts.BatchKeys = DefaultBatchKeys
	}
	if opts.BatchBytes == 0 {
		opts.BatchBytes = DefaultBatchBytes
	}
	if opts.BatchKeys < 1 || opts.BatchKeys > MaxBatchKeys {
		return rep, fmt.Errorf("batch keys %d out of range: give 1 to %d", opts.BatchKeys, MaxBatchKeys)
	}
	if opts.BatchBytes < 1 || opts.BatchBytes > MaxBatchBytes {
		return rep, fmt.Errorf("batch bytes %d out of range: give 1 to %d", opts.BatchBytes, int64(MaxBatchBytes))
	}
	if rep.SourceKeys, err = inspectSource(ctx, src); err != nil {
		return rep, err
	}
	pos, earlier, err := resumePoint(ctx, dst, opts.Source)
	if err != nil {
		return rep, err
	}
	rep.Earlier = earlier
	for {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		var b *batch
		err := src.View(ctx, func(tx backend.Tx) error {
			var err error
			b, err = readBatch(tx, pos, opts.BatchKeys, opts.BatchBytes)
			return err
		})
		if err != nil {
			return rep, fmt.Errorf("read the source: %w", err)
		}
		done := rep.Done()
		done.add(b.counts)
		if err := dst.Update(ctx, func(tx backend.Tx) error { return b.write(tx, pos, done, opts.Source) }); err != nil {
			return rep, fmt.Errorf("write the destination: %w", err)
		}
		rep.Copied.add(b.counts)
		rep.Batches++
		pos = b.next
		if opts.Progress != nil {
			opts.Progress(rep)
		}
		if b.done {
			return rep, nil
		}
	}
}

// inspectSource refuses a source that is an unfinished destination and
// estimates its keys.
func inspectSource(ctx context.Context, src backend.DB) (keys int64, err error) {
	err = src.View(ctx, func(tx backend.Tx) error {
		return tx.ForEach(func(name []byte, b backend.Bucket) error {
			if string(name) == ProgressBucket {
				return errors.New("the source holds an unfinished migration (bucket " + ProgressBucket + "): finish that migration into it first")
			}
			keys += b.Stats().Keys
			return ctx.Err()
		})
	})
	if err != nil {
		return 0, fmt.Errorf("read the source: %w", err)
	}
	return keys, nil
}

// resumePoint reads the unfinished copy recorded in dst: the position to
// continue after (nil: from the start) and what it copied. A destination
// with buckets and no record is refused.
func resumePoint(ctx context.Context, dst backend.DB, source string) (pos []byte, done Counts, err error) {
	err = dst.View(ctx, func(tx backend.Tx) error {
		pb := tx.Bucket([]byte(ProgressBucket))
		if pb == nil {
			return checkEmpty(tx)
		}
		if from := string(pb.Get([]byte(keySource))); from != source {
			return fmt.Errorf("the destination holds an unfinished migration from %q, not from %q: resume it with that source, or start over with an empty destination", from, source)
		}
		pos = bytes.Clone(pb.Get([]byte(keyPosition)))
		if _, err := decodePath(pos); err != nil || len(pos) == 0 {
			return fmt.Errorf("the destination's migration record is damaged (position %x): start over with an empty destination", pos)
		}
		c := pb.Get([]byte(keyCounts))
		if len(c) != 24 {
			return fmt.Errorf("the destination's migration record is damaged (counts %x): start over with an empty destination", c)
		}
		done = Counts{Buckets: int64(binary.BigEndian.Uint64(c)), Keys: int64(binary.BigEndian.Uint64(c[8:])), Bytes: int64(binary.BigEndian.Uint64(c[16:]))}
		return nil
	})
	if err != nil {
		return nil, Counts{}, fmt.Errorf("read the destination: %w", err)
	}
	return pos, done, nil
}

// checkEmpty returns ErrUsedDestination, saying what is there, if tx holds
// any bucket.
func checkEmpty(tx backend.Tx) error {
	var buckets, keys, items int64
	err := tx.ForEach(func(name []byte, b backend.Bucket) error {
		buckets++
		n := b.Stats().Keys
		keys += n
		if string(name) == "items" {
			items = n
		}
		return nil
	})
	if err != nil || buckets == 0 {
		return err
	}
	return fmt.Errorf("the destination already holds a store (%d buckets, %d keys, %d items); %w: give an empty database or a new file",
		buckets, keys, items, ErrUsedDestination)
}

// op is one entry to write: a key and its value, or a bucket.
type op struct {
	parent [][]byte // the path of the bucket holding it; nil: a top-level bucket
	key    []byte
	value  []byte // nil: a bucket
	seq    uint64 // a bucket's sequence
}

// batch is what one source snapshot yields for one destination transaction.
type batch struct {
	ops    []op
	counts Counts
	next   []byte // the encoded position after ops
	done   bool   // ops end the walk
}

// frame is a bucket being walked: its cursor stands at k, the next entry.
type frame struct {
	path [][]byte // the bucket's path, owned
	b    backend.Bucket
	c    backend.Cursor
	k, v []byte // nil k: the bucket is done
}

// readBatch reads the entries after position pos (nil: from the start) in
// depth-first key order, until the batch is full or the walk ends.
//
// A position is the path of the last entry copied: the names of the
// buckets holding it, then its key. After a bucket was created and none of
// its keys copied, the path ends in the bucket's name and an empty key
// (keys are never empty), so every position resumes with a seek.
func readBatch(tx backend.Tx, pos []byte, maxKeys int, maxBytes int64) (*batch, error) {
	path, err := decodePath(pos)
	if err != nil {
		return nil, err
	}
	var tops [][]byte // top-level buckets still to walk, in name order
	err = tx.ForEach(func(name []byte, _ backend.Bucket) error {
		if len(path) == 0 || bytes.Compare(name, path[0]) > 0 {
			tops = append(tops, bytes.Clone(name))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	stack, err := descend(tx, path)
	if err != nil {
		return nil, err
	}
	b := &batch{}
	fits := func(size int) bool {
		return len(b.ops) < maxKeys && (len(b.ops) == 0 || b.counts.Bytes+int64(size) <= maxBytes)
	}
	for {
		if len(stack) == 0 {
			if len(tops) == 0 {
				b.done = true
				break
			}
			name := tops[0]
			if !fits(len(name)) {
				break
			}
			bk := tx.Bucket(name)
			if bk == nil {
				return nil, fmt.Errorf("top-level bucket %s listed but not found", formatPath([][]byte{name}))
			}
			tops = tops[1:]
			b.add(op{key: name, seq: bk.Sequence()})
			stack = append(stack, open([][]byte{name}, bk, nil))
			continue
		}
		f := stack[len(stack)-1]
		if f.k == nil {
			stack = stack[:len(stack)-1]
			continue
		}
		var child backend.Bucket
		if f.v == nil {
			child = f.b.Bucket(f.k) // else an empty value read as nil
		}
		if !fits(len(f.k) + len(f.v)) {
			break
		}
		k, v := bytes.Clone(f.k), f.v
		f.k, f.v = f.c.Next()
		if child != nil {
			b.add(op{parent: f.path, key: k, seq: child.Sequence()})
			stack = append(stack, open(slices.Concat(f.path, [][]byte{k}), child, nil))
		} else {
			b.add(op{parent: f.path, key: k, value: append(make([]byte, 0, len(v)), v...)})
		}
	}
	if n := len(b.ops); n > 0 {
		last := b.ops[n-1]
		next := slices.Concat(last.parent, [][]byte{last.key})
		if last.value == nil {
			next = append(next, nil) // inside it, before its first key
		}
		b.next = encodePath(next)
	} else {
		b.next = pos
	}
	return b, nil
}

func (b *batch) add(o op) {
	b.ops = append(b.ops, o)
	b.counts.Bytes += int64(len(o.key) + len(o.value))
	if o.value == nil {
		b.counts.Buckets++
	} else {
		b.counts.Keys++
	}
}

// open starts walking bucket bk at path, after key after (nil: from the
// first key).
func open(path [][]byte, bk backend.Bucket, after []byte) *frame {
	f := &frame{path: path, b: bk, c: bk.Cursor()}
	if len(after) == 0 {
		f.k, f.v = f.c.First()
		return f
	}
	f.k, f.v = f.c.Seek(after)
	if bytes.Equal(f.k, after) {
		f.k, f.v = f.c.Next()
	}
	return f
}

// descend rebuilds the walk's stack at position path: every bucket on the
// path, each cursor past the next element of the path.
func descend(tx backend.Tx, path [][]byte) ([]*frame, error) {
	if len(path) == 0 {
		return nil, nil
	}
	if len(path) < 2 {
		return nil, fmt.Errorf("position %s names no key", formatPath(path))
	}
	changed := func(i int) error {
		return fmt.Errorf("bucket %s of the recorded position is not in the source: the source changed since the migration started (it must not: stop its daemon), start over with an empty destination", formatPath(path[:i+1]))
	}
	bk := tx.Bucket(path[0])
	if bk == nil {
		return nil, changed(0)
	}
	var stack []*frame
	for i := 1; ; i++ {
		stack = append(stack, open(path[:i:i], bk, path[i]))
		if i == len(path)-1 {
			return stack, nil
		}
		if bk = bk.Bucket(path[i]); bk == nil {
			return nil, changed(i)
		}
	}
}

// write applies the batch in dst's transaction tx and records the position
// after it with the counts done so far, or deletes the record if the walk
// ended. It first checks that the record still says prev (nil: that tx
// holds nothing), so two copies into one destination cannot interleave.
// write may run more than once (a backend retrying a transaction).
func (b *batch) write(tx backend.Tx, prev []byte, done Counts, source string) error {
	pb := tx.Bucket([]byte(ProgressBucket))
	switch {
	case prev == nil && pb == nil:
		if err := checkEmpty(tx); err != nil {
			return err
		}
	case prev == nil || pb == nil || !bytes.Equal(pb.Get([]byte(keyPosition)), prev):
		return errors.New("the destination's migration record changed under this copy: is another ctxd migrate writing to it?")
	}
	var cur backend.Bucket
	var curPath [][]byte
	for _, o := range b.ops {
		if o.parent == nil {
			if tx.Bucket(o.key) != nil {
				return fmt.Errorf("bucket %s is already in the destination", formatPath([][]byte{o.key}))
			}
			nb, err := tx.CreateBucketIfNotExists(o.key)
			if err != nil {
				return fmt.Errorf("create bucket %s: %w", formatPath([][]byte{o.key}), err)
			}
			if err := setSequence(nb, o.seq); err != nil {
				return fmt.Errorf("bucket %s: %w", formatPath([][]byte{o.key}), err)
			}
			continue
		}
		if cur == nil || !samePath(curPath, o.parent) {
			if cur = bucketAt(tx, o.parent); cur == nil {
				return fmt.Errorf("bucket %s is missing from the destination", formatPath(o.parent))
			}
			// Keys arrive in order, as in bbolt's own compaction: full pages.
			cur.SetFillPercent(1)
			curPath = o.parent
		}
		if o.value != nil {
			if err := cur.Put(o.key, o.value); err != nil {
				return fmt.Errorf("put %x in bucket %s: %w", o.key, formatPath(o.parent), err)
			}
			continue
		}
		nb, err := cur.CreateBucket(o.key)
		if err != nil {
			return fmt.Errorf("create bucket %s: %w", formatPath(slices.Concat(o.parent, [][]byte{o.key})), err)
		}
		if err := setSequence(nb, o.seq); err != nil {
			return fmt.Errorf("bucket %s: %w", formatPath(slices.Concat(o.parent, [][]byte{o.key})), err)
		}
	}
	if b.done {
		if pb == nil {
			return nil
		}
		return tx.DeleteBucket([]byte(ProgressBucket))
	}
	pb, err := tx.CreateBucketIfNotExists([]byte(ProgressBucket))
	if err != nil {
		return err
	}
	counts := binary.BigEndian.AppendUint64(nil, uint64(done.Buckets))
	counts = binary.BigEndian.AppendUint64(counts, uint64(done.Keys))
	counts = binary.BigEndian.AppendUint64(counts, uint64(done.Bytes))
	return errors.Join(
		pb.Put([]byte(keyPosition), b.next),
		pb.Put([]byte(keyCounts), counts),
		pb.Put([]byte(keySource), []byte(source)))
}

func setSequence(b backend.Bucket, seq uint64) error {
	if seq == 0 {
		return nil
	}
	return b.SetSequence(seq)
}

// bucketAt returns the bucket at path in tx, or nil.
func bucketAt(tx backend.Tx, path [][]byte) backend.Bucket {
	b := tx.Bucket(path[0])
	for _, name := range path[1:] {
		if b == nil {
			return nil
		}
		b = b.Bucket(name)
	}
	return b
}

func samePath(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, bytes.Equal)
}

// encodePath encodes a path as its elements, each a uvarint length and the
// bytes.
func encodePath(path [][]byte) []byte {
	var out []byte
	for _, p := range path {
		out = binary.AppendUvarint(out, uint64(len(p)))
		out = append(out, p...)
	}
	return out
}

func decodePath(b []byte) ([][]byte, error) {
	var path [][]byte
	for len(b) > 0 {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return nil, fmt.Errorf("bad position %x", b)
		}
		path = append(path, b[w:w+int(n)])
		b = b[w+int(n):]
	}
	return path, nil
}
