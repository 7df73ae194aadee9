package vfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/google/uuid"
)

// mustOpenStore opens a store in a temp dir; at cleanup it checks the store's
// invariants and closes it.
func mustOpenStore(t testing.TB, opts ...Options) *Store {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	s, err := Open(newLocation(t), o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.check(); err != nil {
			t.Errorf("store invariants: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// check verifies that paths, items, content and the drive counters agree.
func (s *Store) check() error {
	if err := s.Verify(context.Background()); err != nil {
		return err
	}
	return s.db.View(ctx, func(tx backend.Tx) error {
		t := s.newTxn(tx)
		type tally struct{ count, size int64 }
		counts := map[string]tally{}
		ids := map[string]bool{}
		err := t.paths.ForEachBucket(func(name []byte) error {
			drive := string(name)
			if err := ValidateDrive(drive); err != nil {
				return fmt.Errorf("drive bucket %q: %v", name, err)
			}
			b := t.paths.Bucket(name)
			return b.ForEach(func(k, v []byte) error {
				p := keyPath(k)
				ref := FormatRef(drive, p)
				if c, err := CleanPath(drive, p); err != nil || c != p || p == "/" {
					return fmt.Errorf("%s: path not clean (%q, %v)", ref, c, err)
				}
				if len(v) < 25 {
					return fmt.Errorf("%s: short paths value", ref)
				}
				pv := decodePathVal(v)
				id := uuid.UUID(pv.id).String()
				if ids[id] {
					return fmt.Errorf("%s: id %s used twice", ref, id)
				}
				ids[id] = true
				it, err := t.item(pv.id)
				if err != nil {
					return fmt.Errorf("%s: %v", ref, err)
				}
				content := t.content.Get(pv.id)
				switch {
				case it.ID != id || it.Drive != drive || it.Path != p:
					return fmt.Errorf("%s: metadata says %s at %s", ref, it.ID, it.Ref())
				case content == nil:
					return fmt.Errorf("%s: content missing", ref)
				case int64(len(content)) != pv.size || it.Size != pv.size:
					return fmt.Errorf("%s: sizes %d/%d/%d disagree", ref, len(content), pv.size, it.Size)
				case HashContent(content) != it.ContentHash:
					return fmt.Errorf("%s: hash mismatch", ref)
				case it.IsDir != pv.dir() || it.IsText != pv.text() || it.MimeType != pv.mime:
					return fmt.Errorf("%s: flags or mime disagree", ref)
				case it.IsText && (it.LineCount != CountLines(content) || !utf8.Valid(content)):
					return fmt.Errorf("%s: bad text or line count", ref)
				case it.IsDir && (it.Size != 0 || it.MimeType != DirMimeType):
					return fmt.Errorf("%s: bad placeholder", ref)
				case !it.IsDir && drive != urlDrive && hasPrefix(b, dirPrefix(p)):
					return fmt.Errorf("%s: an item has items below it", ref)
				case it.CreatedAt.IsZero() || it.UpdatedAt.Before(it.CreatedAt):
					return fmt.Errorf("%s: bad timestamps", ref)
				}
				c := counts[drive]
				c.count++
				c.size += pv.size
				counts[drive] = c
				return nil
			})
		})
		if err != nil {
			return err
		}
		if n := t.items.Stats().Keys; n != int64(len(ids)) {
			return fmt.Errorf("%d item records for %d paths", n, len(ids))
		}
		if n := t.content.Stats().Keys; n != int64(len(ids)) {
			return fmt.Errorf("%d content records for %d paths", n, len(ids))
		}
		seen := 0
		err = t.drives.ForEach(func(k, _ []byte) error {
			seen++
			c, sz := t.counts(string(k))
			if want := counts[string(k)]; c != want.count || sz != want.size {
				return fmt.Errorf("drive %s: counters %d items %d bytes, actual %d items %d bytes", k, c, sz, want.count, want.size)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if seen != len(counts) {
			return fmt.Errorf("%d drive counters for %d drives with items", seen, len(counts))
		}
		if err := checkQuestions(t); err != nil {
			return err
		}
		return checkIndex(t)
	})
}

// checkIndex verifies the derived state: every non-empty text item and every
// binary item is chunked or queued for chunking; only binary items have
// searchable text; every chunk lies inside its item's content (a binary
// item's searchable text) and has a vector or a queue entry with its hash; counters
// match the buckets.
func checkIndex(t *txn) error {
	chunked := map[string]int{}
	err := t.chunks.ForEach(func(k, v []byte) error {
		id := string(k[:16])
		content := t.chunkSource(k[:16])
		c := decodeChunk(v)
		switch {
		case t.items.Get(k[:16]) == nil:
			return fmt.Errorf("chunk %x of a missing item", k)
		case c.Start < 0 || c.End > len(content) || c.Start >= c.End:
			return fmt.Errorf("chunk %x span %d-%d outside %d bytes", k, c.Start, c.End, len(content))
		case int(binary.BigEndian.Uint32(k[16:])) != chunked[id]:
			return fmt.Errorf("chunk %x out of sequence", k)
		}
		chunked[id]++
		q := t.embedq.Get(k)
		if q != nil && !bytes.Equal(q[:32], c.Hash[:]) {
			return fmt.Errorf("chunk %x queued with another hash", k)
		}
		if q == nil && !t.hasVector(c.Hash[:]) {
			return fmt.Errorf("chunk %x has neither a vector nor a queue entry", k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var nChunks, nQueued, nPending int64
	for _, n := range chunked {
		nChunks += int64(n)
	}
	err = t.paths.ForEachBucket(func(name []byte) error {
		return t.paths.Bucket(name).ForEach(func(k, v []byte) error {
			pv := decodePathVal(v)
			_, has := chunked[string(pv.id)]
			queued := t.chunkq.Get(pv.id) != nil
			wants := !pv.dir() && (!pv.text() || pv.size > 0)
			if hasText := t.text.Get(pv.id) != nil; hasText != (!pv.text() && !pv.dir()) {
				return fmt.Errorf("%s: searchable text present %v for a text=%v dir=%v item", keyPath(k), hasText, pv.text(), pv.dir())
			}
			if queued {
				nPending++
			}
			// Chunked and queued at once is fine: a new chunker re-chunks items
			// that keep their old chunks until then.
			switch {
			case !wants && (has || queued):
				return fmt.Errorf("%s: has chunks but nothing to chunk", keyPath(k))
			case wants && !has && !queued && !blankText(t, pv):
				return fmt.Errorf("%s: item neither chunked nor queued", keyPath(k))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	err = t.embedq.ForEach(func(k, _ []byte) error {
		nQueued++
		if t.chunks.Get(k) == nil {
			return fmt.Errorf("queued chunk %x has no record", k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for name, want := range map[string]int64{counterChunks: nChunks, counterEmbedQ: nQueued, counterChunkQ: nPending} {
		if got := t.counter(name); got != want {
			return fmt.Errorf("counter %s = %d, actual %d", name, got, want)
		}
	}
	if n := t.chunkq.Stats().Keys; n != nPending {
		return fmt.Errorf("%d chunking queue entries for %d pending items", n, nPending)
	}
	return t.vectors.ForEachBucket(func(model []byte) error {
		b := t.vectors.Bucket(model)
		var n int64
		err := b.ForEach(func(k, v []byte) error {
			if v == nil {
				return nil // the blocks bucket
			}
			n++
			if openVectors(b).get(k) == nil {
				return fmt.Errorf("vector %x of %s: place %x names no slot", k, model, v)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if got := t.counter(vectorCounter(string(model))); got != n {
			return fmt.Errorf("vector counter of %s = %d, actual %d", model, got, n)
		}
		return nil
	})
}

// blankText reports whether a text item has nothing a chunker would chunk:
// only whitespace after its frontmatter.
func blankText(t *txn, pv pathVal) bool {
	if !pv.text() {
		return false
	}
	it, err := t.item(pv.id)
	return err == nil && len(bytes.TrimSpace(t.content.Get(pv.id)[it.FrontmatterLen:])) == 0
}

// snapshot renders every key and value of the file, to assert that a failed
// call changed nothing.
func snapshot(t testing.TB, s *Store) string {
	t.Helper()
	var sb strings.Builder
	var walk func(prefix string, b backend.Bucket)
	walk = func(prefix string, b backend.Bucket) {
		b.ForEach(func(k, v []byte) error {
			if v == nil {
				walk(prefix+string(k)+"/", b.Bucket(k))
				return nil
			}
			fmt.Fprintf(&sb, "%s%q=%q\n", prefix, k, v)
			return nil
		})
	}
	err := s.db.View(ctx, func(tx backend.Tx) error {
		return tx.ForEach(func(name []byte, b backend.Bucket) error {
			walk(string(name)+"/", b)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

func mustRef(t testing.TB, s string) Ref {
	t.Helper()
	r, err := ParseRef(s)
	if err != nil {
		t.Fatalf("ParseRef(%q): %v", s, err)
	}
	return r
}

func mustWrite(t testing.TB, s *Store, ref, content string) Item {
	t.Helper()
	res, err := s.Write(context.Background(), WriteParams{Ref: mustRef(t, ref), Content: []byte(content), IsText: true})
	if err != nil {
		t.Fatalf("Write(%s): %v", ref, err)
	}
	return res.Item
}

func mustMkdir(t testing.TB, s *Store, ref string) {
	t.Helper()
	if _, err := s.MakeDir(context.Background(), mustRef(t, ref)); err != nil {
		t.Fatalf("MakeDir(%s): %v", ref, err)
	}
}

// wantErr asserts that err is an *Error of the given kind with a message and hint.
func wantErr(t testing.TB, err, kind error) *Error {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v, want %v", err, kind)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error", err)
	}
	if e.Message == "" || e.Hint == "" {
		t.Errorf("error %v lacks message or hint: %+v", err, e)
	}
	if !utf8.ValidString(e.Message) || !utf8.ValidString(e.Hint) {
		t.Errorf("error text is not valid UTF-8: %q / %q", e.Message, e.Hint)
	}
	return e
}

// paths lists every item ref in the store, in key order.
func paths(t testing.TB, s *Store) []string {
	t.Helper()
	var out []string
	err := s.db.View(ctx, func(tx backend.Tx) error {
		t := s.newTxn(tx)
		for _, d := range t.driveNames() {
			subtree(t.driveBucket(d), "/", func(k, v []byte) {
				r := FormatRef(d, keyPath(k))
				if v[0]&flagDir != 0 {
					r += "/"
				}
				out = append(out, r)
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustRead(t testing.TB, s *Store, ref string) string {
	t.Helper()
	res, err := s.Read(context.Background(), mustRef(t, ref), 0, 0)
	if err != nil {
		t.Fatalf("Read(%s): %v", ref, err)
	}
	return string(res.Content)
}
