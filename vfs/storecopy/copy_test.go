package storecopy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/internal/pgtest"
	"github.com/ctxd/ctxd/internal/testchunk"
	"github.com/ctxd/ctxd/vfs"
	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/boltstore"
	"github.com/ctxd/ctxd/vfs/pgstore"
	"github.com/ctxd/ctxd/vfs/storecopy"
)

var ctx = context.Background()

const testModel = "test-model"

// destination opens an empty store of one backend for a test.
type destination struct {
	name string
	open func(t testing.TB) backend.DB
}

// destinations are the backends a store is copied into.
var destinations = []destination{
	{"bolt", func(t testing.TB) backend.DB { return openBolt(t, filepath.Join(t.TempDir(), "dst.db")) }},
	{"postgres", openPostgres},
}

func TestMain(m *testing.M) { pgtest.Run(m) }

// openPostgres opens a fresh database of the test's PostgreSQL and closes
// it when the test ends (unless the test closed it first).
func openPostgres(t testing.TB) backend.DB {
	t.Helper()
	db, err := pgstore.Open(ctx, pgtest.NewDatabase(t), pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openBolt opens the bbolt file at path and closes it when the test ends
// (unless the test closed it first).
func openBolt(t testing.TB, path string) backend.DB {
	t.Helper()
	db, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sourceStore writes a store with items on three drives, chunks and
// vectors (a vectors/<model>/blocks bucket two levels down), a binary item,
// questions, several revisions of items, an edit, a copy, a move, a delete
// and an empty directory, and returns its bbolt file.
func sourceStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	s, err := vfs.Open(path, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SetIndexing(ctx, testchunk.Paragraphs{}, testModel); err != nil {
		t.Fatal(err)
	}
	write := func(ref, content string, oc vfs.OnConflict) {
		t.Helper()
		r, err := vfs.ParseRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		p := vfs.WriteParams{Ref: r, Content: []byte(content), IsText: true, OnConflict: oc, Tags: []string{"t"}}
		if strings.HasSuffix(ref, "q.md") {
			p.Questions = []string{"what does the q note say?", "where is q?"}
		}
		if _, err := s.Write(ctx, p); err != nil {
			t.Fatalf("write %s: %v", ref, err)
		}
	}
	for i := range 40 {
		write(fmt.Sprintf("agent:/notes/n%02d.md", i), fmt.Sprintf("# Note %d\n\nfirst paragraph of %d\n\nsecond paragraph %s\n", i, i, strings.Repeat("x", i*37)), vfs.ConflictError)
	}
	write("work:/docs/q.md", "a note with questions\n\nand two paragraphs\n", vfs.ConflictError)
	write("team-b:/big.txt", strings.Repeat("a long line of text that fills a value\n", 3000), vfs.ConflictError)
	for rev := range 4 {
		write("agent:/notes/n01.md", fmt.Sprintf("revision %d\n\nof note one\n", rev), vfs.ConflictOverwrite)
	}
	ref := func(s string) vfs.Ref {
		r, err := vfs.ParseRef(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if _, err := s.Edit(ctx, ref("agent:/notes/n02.md"), []vfs.Patch{{StartLine: 1, EndLine: 1, Content: "# Note two, edited"}}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, vfs.WriteParams{Ref: ref("work:/bin/blob.pdf"), Content: []byte{'%', 'P', 'D', 'F', 0, 1, 2, 0xff}, Text: []byte("text of the pdf")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Copy(ctx, ref("agent:/notes/n03.md"), ref("work:/copied.md"), false, vfs.ConflictError); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Move(ctx, ref("agent:/notes/n04.md"), ref("work:/moved/n04.md"), vfs.ConflictError); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, ref("agent:/notes/n05.md"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MakeDir(ctx, ref("agent:/empty")); err != nil {
		t.Fatal(err)
	}
	pending, err := s.PendingEmbeddings(ctx, 1000)
	if err != nil || len(pending) == 0 {
		t.Fatalf("pending embeddings: %d, %v", len(pending), err)
	}
	vecs := make([][]float32, len(pending))
	for i, p := range pending {
		vecs[i] = unitVector(p.Hash)
	}
	if err := s.SaveEmbeddings(ctx, testModel, pending, vecs); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	return path
}

// unitVector derives an 8-dimensional unit vector from a chunk hash.
func unitVector(h [32]byte) []float32 {
	v := make([]float32, 8)
	var norm float64
	for i := range v {
		v[i] = float32(h[i]) - 127.5
		norm += float64(v[i] * v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

// buckets lists the paths of db's buckets ("a/b") and how many have a
// sequence above 0.
func buckets(t *testing.T, db backend.DB) (paths []string, sequenced int) {
	t.Helper()
	var walk func(path string, b backend.Bucket) error
	walk = func(path string, b backend.Bucket) error {
		paths = append(paths, path)
		if b.Sequence() > 0 {
			sequenced++
		}
		return b.ForEachBucket(func(name []byte) error { return walk(path+"/"+string(name), b.Bucket(name)) })
	}
	err := db.View(ctx, func(tx backend.Tx) error {
		return tx.ForEach(func(name []byte, b backend.Bucket) error { return walk(string(name), b) })
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths, sequenced
}

// snapshot is what a store shows through its API: every item with its
// content and history, and the deleted ones.
type snapshot struct {
	Items   map[string]vfs.Item
	Content map[string][]byte
	History map[string][]vfs.Revision
	Chunks  map[string][]vfs.ChunkSpan
	Deleted map[string][]vfs.Revision
	Embed   vfs.EmbedStats
}

func takeSnapshot(t *testing.T, s *vfs.Store) snapshot {
	t.Helper()
	snap := snapshot{Items: map[string]vfs.Item{}, Content: map[string][]byte{}, History: map[string][]vfs.Revision{},
		Chunks: map[string][]vfs.ChunkSpan{}, Deleted: map[string][]vfs.Revision{}}
	drives, err := s.ListDrives(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drives {
		root, err := vfs.ParseRef(d.Name + ":/")
		if err != nil {
			t.Fatal(err)
		}
		for page := ""; ; {
			entries, next, err := s.List(ctx, root, true, 0, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Item == nil || e.IsDir {
					continue
				}
				ref, err := vfs.ParseRef(e.Ref())
				if err != nil {
					t.Fatal(err)
				}
				it, content, err := s.ReadRaw(ctx, ref)
				if err != nil {
					t.Fatal(err)
				}
				hist, err := s.History(ctx, ref, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				chunks, err := s.Chunks(ctx, ref)
				if err != nil {
					t.Fatal(err)
				}
				snap.Items[e.Ref()], snap.Content[e.Ref()], snap.History[e.Ref()], snap.Chunks[e.Ref()] = it, content, hist, chunks
			}
			if page = next; page == "" {
				break
			}
		}
		if snap.Deleted[d.Name], err = s.Deleted(ctx, root, 0); err != nil {
			t.Fatal(err)
		}
	}
	if snap.Embed, err = s.EmbedStats(ctx); err != nil {
		t.Fatal(err)
	}
	return snap
}

// storeOf opens the store in db (which it then owns) with the source's
// chunker and model, and checks it.
func storeOf(t *testing.T, db backend.DB) *vfs.Store {
	t.Helper()
	s, err := vfs.New(db, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetIndexing(ctx, testchunk.Paragraphs{}, testModel); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(ctx); err != nil {
		t.Fatalf("vfs Verify: %v", err)
	}
	return s
}

// batchBounds returns a Progress hook that checks every batch against the
// bounds and counts the batches.
func batchBounds(t *testing.T, keys int, bytes int64, batches *int) func(storecopy.Report) {
	var last storecopy.Counts
	return func(r storecopy.Report) {
		*batches++
		d := r.Done()
		n := d.Keys + d.Buckets - last.Keys - last.Buckets
		size := d.Bytes - last.Bytes
		if n < 1 || n > int64(keys) || (size > bytes && n != 1) {
			t.Errorf("batch %d: %d keys, %d bytes; bounds %d keys, %d bytes", *batches, n, size, keys, bytes)
		}
		last = d
	}
}

func TestCopy_StoreWithHistoryAndNestedBuckets(t *testing.T) {
	srcPath := sourceStore(t)
	for _, dest := range destinations {
		t.Run(dest.name, func(t *testing.T) {
			src := openBolt(t, srcPath)
			dst := dest.open(t)
			var batches int
			const maxKeys, maxBytes = 50, 16 << 10
			rep, err := storecopy.Copy(ctx, src, dst, storecopy.Options{BatchKeys: maxKeys, BatchBytes: maxBytes, Source: srcPath,
				Progress: batchBounds(t, maxKeys, maxBytes, &batches)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Earlier != (storecopy.Counts{}) || rep.Batches != batches || rep.Batches < 10 {
				t.Errorf("report %+v after %d progress calls, want a fresh copy in 10 or more batches", rep, batches)
			}
			counts, err := storecopy.Verify(ctx, src, dst)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if counts != rep.Copied {
				t.Errorf("Verify counted %+v, Copy copied %+v", counts, rep.Copied)
			}
			paths, sequenced := buckets(t, dst)
			for _, want := range []string{"paths/agent", "paths/work", "paths/team-b", "meta/drives", "vectors/" + testModel + "/blocks"} {
				if !strings.Contains(strings.Join(paths, " ")+" ", want+" ") {
					t.Errorf("bucket %s not copied; buckets: %v", want, paths)
				}
			}
			srcPaths, srcSequenced := buckets(t, src)
			if !reflect.DeepEqual(paths, srcPaths) || sequenced != srcSequenced || sequenced == 0 {
				t.Errorf("destination buckets %v (%d sequenced), source %v (%d sequenced)", paths, sequenced, srcPaths, srcSequenced)
			}
			want := takeSnapshot(t, storeOf(t, src))
			got := takeSnapshot(t, storeOf(t, dst))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the copy reads differently:\n got %+v\nwant %+v", got, want)
			}
			if len(want.Items) < 40 || len(want.History["agent:/notes/n01.md"]) != 5 || len(want.Deleted["agent"]) != 1 || want.Embed.Vectors == 0 || len(want.Chunks["agent:/notes/n10.md"]) != 3 {
				t.Errorf("source snapshot lacks what the test wrote: %d items, %d revisions of n01, deleted %v, %+v, chunks of n10 %v",
					len(want.Items), len(want.History["agent:/notes/n01.md"]), want.Deleted["agent"], want.Embed, want.Chunks["agent:/notes/n10.md"])
			}
		})
	}
}

func TestCopy_ResumesAfterInterruption(t *testing.T) {
	srcPath := sourceStore(t)
	for _, dest := range destinations {
		t.Run(dest.name, func(t *testing.T) {
			src := openBolt(t, srcPath)
			const maxKeys = 7
			clean, err := storecopy.Copy(ctx, src, dest.open(t), storecopy.Options{BatchKeys: maxKeys, Source: srcPath})
			if err != nil {
				t.Fatal(err)
			}
			dst := dest.open(t)
			// Each run is cancelled after 1, 2, then 3 batches, and so on,
			// so interruptions fall at every depth of the walk.
			var total storecopy.Counts
			var batches, runs int
			for done := false; !done; runs++ {
				runCtx, cancel := context.WithCancel(ctx)
				stopAfter, n := runs%3+1, 0
				rep, err := storecopy.Copy(runCtx, src, dst, storecopy.Options{BatchKeys: maxKeys, Source: srcPath,
					Progress: func(storecopy.Report) {
						if n++; n == stopAfter {
							cancel()
						}
					}})
				cancel()
				switch {
				case err == nil:
					done = true
				case !errors.Is(err, context.Canceled):
					t.Fatalf("run %d: %v", runs, err)
				}
				if rep.Earlier != total {
					t.Fatalf("run %d resumed after %+v, the runs before copied %+v", runs, rep.Earlier, total)
				}
				total.Buckets, total.Keys, total.Bytes = total.Buckets+rep.Copied.Buckets, total.Keys+rep.Copied.Keys, total.Bytes+rep.Copied.Bytes
				batches += rep.Batches
				if !done {
					if _, err := vfs.New(dst, vfs.Options{}); err == nil || !strings.Contains(err.Error(), "unfinished migration") {
						t.Fatalf("vfs opened a half-copied store: %v", err)
					}
					if _, err := storecopy.Verify(ctx, src, dst); err == nil || !strings.Contains(err.Error(), "unfinished migration") {
						t.Fatalf("Verify of a half-copied store: %v", err)
					}
				}
			}
			if runs < 10 || batches != clean.Batches || total != clean.Copied {
				t.Errorf("%d runs copied %+v in %d batches; a clean copy copied %+v in %d", runs, total, batches, clean.Copied, clean.Batches)
			}
			if _, err := storecopy.Verify(ctx, src, dst); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			storeOf(t, dst)
		})
	}
}

func TestCopy_RefusesAUsedDestination(t *testing.T) {
	srcPath := sourceStore(t)
	for _, dest := range destinations {
		t.Run(dest.name, func(t *testing.T) {
			src := openBolt(t, srcPath)
			dst := dest.open(t)
			s, err := vfs.New(dst, vfs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := vfs.ParseRef("agent:/mine.md")
			if _, err := s.Write(ctx, vfs.WriteParams{Ref: r, Content: []byte("keep me"), IsText: true}); err != nil {
				t.Fatal(err)
			}
			before, _ := buckets(t, dst)
			rep, err := storecopy.Copy(ctx, src, dst, storecopy.Options{Source: srcPath})
			if !errors.Is(err, storecopy.ErrUsedDestination) || !strings.Contains(err.Error(), "1 items") || rep.Copied != (storecopy.Counts{}) {
				t.Fatalf("Copy into a used store = %+v, %v", rep, err)
			}
			if after, _ := buckets(t, dst); !reflect.DeepEqual(after, before) {
				t.Errorf("buckets changed from %v to %v", before, after)
			}
			if res, err := s.Read(ctx, r, 0, 0); err != nil || string(res.Content) != "keep me" {
				t.Errorf("the destination's item reads %q, %v", res.Content, err)
			}
		})
	}
}

func TestCopy_RefusesToResumeFromAnotherSource(t *testing.T) {
	srcPath := sourceStore(t)
	src, dst := openBolt(t, srcPath), destinations[0].open(t)
	runCtx, cancel := context.WithCancel(ctx)
	if _, err := storecopy.Copy(runCtx, src, dst, storecopy.Options{BatchKeys: 10, Source: "one", Progress: func(storecopy.Report) { cancel() }}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted copy: %v", err)
	}
	if _, err := storecopy.Copy(ctx, src, dst, storecopy.Options{Source: "two"}); err == nil || !strings.Contains(err.Error(), `unfinished migration from "one"`) {
		t.Fatalf("resume from another source: %v", err)
	}
	// The destination of an unfinished copy is no source either.
	if _, err := storecopy.Copy(ctx, dst, openBolt(t, filepath.Join(t.TempDir(), "x.db")), storecopy.Options{}); err == nil || !strings.Contains(err.Error(), "source holds an unfinished migration") {
		t.Fatalf("copy from a half-copied store: %v", err)
	}
}

func TestCopy_RejectsBadBatchBounds(t *testing.T) {
	src, dst := openBolt(t, filepath.Join(t.TempDir(), "a.db")), openBolt(t, filepath.Join(t.TempDir(), "b.db"))
	for _, o := range []storecopy.Options{{BatchKeys: -1}, {BatchKeys: storecopy.MaxBatchKeys + 1}, {BatchBytes: -5}, {BatchBytes: storecopy.MaxBatchBytes + 1}} {
		if _, err := storecopy.Copy(ctx, src, dst, o); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Copy with %+v: %v", o, err)
		}
	}
}

func TestCopy_EmptySource(t *testing.T) {
	src, dst := openBolt(t, filepath.Join(t.TempDir(), "a.db")), openBolt(t, filepath.Join(t.TempDir(), "b.db"))
	rep, err := storecopy.Copy(ctx, src, dst, storecopy.Options{})
	if err != nil || rep.Copied != (storecopy.Counts{}) || rep.Batches != 1 {
		t.Fatalf("Copy of nothing = %+v, %v", rep, err)
	}
	if paths, _ := buckets(t, dst); len(paths) != 0 {
		t.Errorf("destination holds %v", paths)
	}
}

func TestVerify_NamesTheBucketThatDiffers(t *testing.T) {
	srcPath := sourceStore(t)
	src := openBolt(t, srcPath)
	for _, tc := range []struct {
		name   string
		change func(tx backend.Tx) error
		want   string
	}{
		{"changed value", func(tx backend.Tx) error {
			b := tx.Bucket([]byte("items"))
			k, v := b.Cursor().First()
			return b.Put(bytes.Clone(k), append(bytes.Clone(v), ' '))
		}, "bucket items: keys or values differ"},
		{"deleted key", func(tx backend.Tx) error {
			b := tx.Bucket([]byte("paths")).Bucket([]byte("work"))
			k, _ := b.Cursor().First()
			return b.Delete(bytes.Clone(k))
		}, "bucket paths/work: "},
		{"sequence", func(tx backend.Tx) error {
			b := tx.Bucket([]byte("outbox"))
			return b.SetSequence(b.Sequence() + 1)
		}, "bucket outbox: sequence"},
		{"extra bucket", func(tx backend.Tx) error {
			_, err := tx.Bucket([]byte("vectors")).CreateBucket([]byte("other model"))
			return err
		}, `bucket vectors/"other model": in the destination, not in the source`},
		{"missing bucket", func(tx backend.Tx) error {
			return tx.DeleteBucket([]byte("text"))
		}, "bucket text: in the source, missing from the destination"},
	} {
		for _, dest := range destinations {
			t.Run(tc.name+"/"+dest.name, func(t *testing.T) {
				dst := dest.open(t)
				if _, err := storecopy.Copy(ctx, src, dst, storecopy.Options{}); err != nil {
					t.Fatal(err)
				}
				if err := dst.Update(ctx, tc.change); err != nil {
					t.Fatal(err)
				}
				_, err := storecopy.Verify(ctx, src, dst)
				if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Count(err.Error(), "\n") != 0 {
					t.Fatalf("Verify = %v, want one problem: %s", err, tc.want)
				}
			})
		}
	}
}

// TestCopy_EmptyValuesAndDeepBuckets copies a key space vfs does not make:
// empty values, buckets nested four deep, empty buckets, sequences at every
// depth, keys of every byte, with a batch of one key so every position is a
// resume point.
func TestCopy_EmptyValuesAndDeepBuckets(t *testing.T) {
	src := openBolt(t, filepath.Join(t.TempDir(), "a.db"))
	err := src.Update(ctx, func(tx backend.Tx) error {
		for _, top := range []string{"a", "b", "c"} {
			b, err := tx.CreateBucketIfNotExists([]byte(top))
			if err != nil {
				return err
			}
			for depth := range 4 {
				if err := errors.Join(b.Put([]byte{0}, nil), b.Put([]byte{0xff, 0}, []byte{}), b.Put([]byte("v"), []byte("value")), b.SetSequence(uint64(depth*10+1))); err != nil {
					return err
				}
				if _, err := b.CreateBucket([]byte("empty")); err != nil {
					return err
				}
				if b, err = b.CreateBucket([]byte{'n', byte(depth)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dest := range destinations {
		t.Run(dest.name, func(t *testing.T) { copyOneKeyARun(t, src, dest.open(t)) })
	}
}

// copyOneKeyARun copies src into dst one key a run, then checks the copy.
func copyOneKeyARun(t *testing.T, src, dst backend.DB) {
	var runs int
	for ; ; runs++ {
		runCtx, cancel := context.WithCancel(ctx)
		_, err := storecopy.Copy(runCtx, src, dst, storecopy.Options{BatchKeys: 1, Progress: func(storecopy.Report) { cancel() }})
		cancel()
		if err == nil {
			break
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	}
	counts, err := storecopy.Verify(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	// 3 top buckets, each 4 levels of 3 keys, an empty bucket and a nested one.
	if want := (storecopy.Counts{Buckets: 3 * 9, Keys: 3 * 12}); counts.Buckets != want.Buckets || counts.Keys != want.Keys || int64(runs+1) != counts.Buckets+counts.Keys {
		t.Errorf("copied %+v in %d runs, want %+v in one run per key and bucket", counts, runs+1, want)
	}
	err = dst.View(ctx, func(tx backend.Tx) error {
		b := tx.Bucket([]byte("b")).Bucket([]byte{'n', 0}).Bucket([]byte{'n', 1})
		if v := b.Get([]byte{0xff, 0}); v == nil || len(v) != 0 || b.Sequence() != 21 {
			return fmt.Errorf("b/n0/n1: empty value %v, sequence %d", v, b.Sequence())
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// TestCopy_PostgresToBolt copies a store to PostgreSQL and from there into a
// new bbolt file, which must equal the first.
func TestCopy_PostgresToBolt(t *testing.T) {
	srcPath := sourceStore(t)
	src, pg := openBolt(t, srcPath), openPostgres(t)
	if _, err := storecopy.Copy(ctx, src, pg, storecopy.Options{BatchKeys: 100}); err != nil {
		t.Fatal(err)
	}
	back := openBolt(t, filepath.Join(t.TempDir(), "back.db"))
	rep, err := storecopy.Copy(ctx, pg, back, storecopy.Options{BatchKeys: 100})
	if err != nil {
		t.Fatal(err)
	}
	counts, err := storecopy.Verify(ctx, src, back)
	if err != nil || counts != rep.Copied {
		t.Fatalf("Verify of the round trip = %+v, %v; copied %+v", counts, err, rep.Copied)
	}
	want := takeSnapshot(t, storeOf(t, src))
	if got := takeSnapshot(t, storeOf(t, back)); !reflect.DeepEqual(got, want) {
		t.Errorf("the round trip reads differently:\n got %+v\nwant %+v", got, want)
	}
}
