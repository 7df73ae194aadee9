package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestStore_Backup takes a backup while writers go on and checks that the
// copy opens as a store that passes Verify, holds every write acknowledged
// before the backup started with its content, and agrees with what Backup
// and InspectBackup report.
func TestStore_Backup(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "notes:/a.md", "---\ntitle: A\ntags: [x]\n---\n# A\nalpha\n")
	bin := bytes.Repeat([]byte{0, 1, 2, 0xff}, 4096)
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "files:/blob.bin"), Content: bin, Tags: []string{"b"}, Importance: 0.5}); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, s, "notes:/empty")
	mustWrite(t, s, "notes:/gone.md", "deleted before the backup")
	if _, err := s.Delete(ctx, mustRef(t, "notes:/gone.md"), false); err != nil {
		t.Fatal(err)
	}

	// Writers go on during the backup; every write they finished before it
	// started must be in the copy.
	var acked sync.Map // ref -> content
	var stop atomic.Bool
	var wg sync.WaitGroup
	var warm sync.WaitGroup // each writer's first 10 writes
	started := make(chan struct{})
	for w := range 2 {
		warm.Add(1)
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				ref := fmt.Sprintf("load:/w%d/%d.txt", w, i)
				content := fmt.Sprintf("writer %d item %d", w, i)
				if _, err := s.Write(context.Background(), WriteParams{Ref: mustRef(t, ref), Content: []byte(content), IsText: true}); err != nil {
					t.Errorf("Write(%s): %v", ref, err)
					if i < 10 {
						warm.Done()
					}
					return
				}
				select {
				case <-started:
				default:
					acked.Store(ref, content)
				}
				if i == 9 {
					warm.Done()
				}
			}
		})
	}
	warm.Wait()
	before0 := map[string]string{}
	close(started)
	acked.Range(func(k, v any) bool { before0[k.(string)] = v.(string); return true })

	var buf bytes.Buffer
	info, err := s.Backup(ctx, &buf, BackupOptions{TempDir: t.TempDir()})
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if info.Size != int64(buf.Len()) || info.SHA256 != sha256.Sum256(buf.Bytes()) {
		t.Errorf("Backup reported size %d sha %x; wrote %d bytes, sha %x", info.Size, info.SHA256, buf.Len(), sha256.Sum256(buf.Bytes()))
	}
	if want := map[string]string{"bolt": "bolt", "postgres": "postgres"}[testBackend]; info.Source != want || info.TakenAt.IsZero() {
		t.Errorf("Backup source %q taken at %v, want %q and a time", info.Source, info.TakenAt, want)
	}

	path := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ins, err := InspectBackup(ctx, path)
	if err != nil {
		t.Fatalf("InspectBackup: %v", err)
	}
	if ins.OutboxSeq != info.OutboxSeq || ins.Items != info.Items || ins.Size != info.Size {
		t.Errorf("InspectBackup = seq %d, %d items, %d bytes; Backup said seq %d, %d items, %d bytes", ins.OutboxSeq, ins.Items, ins.Size, info.OutboxSeq, info.Items, info.Size)
	}

	cp, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("open the copy: %v", err)
	}
	defer cp.Close()
	if err := cp.check(); err != nil {
		t.Errorf("the copy fails its checks: %v", err)
	}
	st, err := cp.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.ItemCount != info.Items {
		t.Errorf("the copy holds %d items, Backup said %d", st.ItemCount, info.Items)
	}
	if seq, _ := cp.OutboxSeq(ctx); seq != info.OutboxSeq {
		t.Errorf("the copy's outbox sequence is %d, Backup said %d", seq, info.OutboxSeq)
	}
	for ref, content := range before0 {
		if got := mustReadAll(t, cp, ref); got != content {
			t.Errorf("%s in the copy = %q, want %q", ref, got, content)
		}
	}
	if got := mustReadAll(t, cp, "notes:/a.md"); got != "---\ntitle: A\ntags: [x]\n---\n# A\nalpha\n" {
		t.Errorf("notes:/a.md in the copy = %q", got)
	}
	bi, err := cp.Info(ctx, mustRef(t, "files:/blob.bin"))
	if err != nil || bi.Item.Size != int64(len(bin)) || bi.Item.Importance != 0.5 || len(bi.Item.Tags) != 1 {
		t.Errorf("files:/blob.bin in the copy = %+v, %v", bi, err)
	}
	if di, err := cp.Info(ctx, mustRef(t, "notes:/empty")); err != nil || !di.Item.IsDir {
		t.Errorf("notes:/empty in the copy = %+v, %v; want the directory placeholder", di, err)
	}
	if _, err := cp.Info(ctx, mustRef(t, "notes:/gone.md")); !errors.Is(err, ErrNotFound) {
		t.Errorf("notes:/gone.md in the copy: %v, want not found", err)
	}
}

// TestStore_BackupCancelled checks that a backup whose context ends stops
// with the context's error and leaves no temporary file.
func TestStore_BackupCancelled(t *testing.T) {
	s := mustOpenStore(t)
	for i := range 50 {
		mustWrite(t, s, fmt.Sprintf("notes:/%d.md", i), fmt.Sprintf("# Note %d\n%s", i, bytes.Repeat([]byte("words "), 2000)))
	}
	cctx, cancel := context.WithCancel(ctx)
	tmp := t.TempDir()
	w := &cancelAfter{n: 64 << 10, cancel: cancel}
	_, err := s.Backup(cctx, w, BackupOptions{TempDir: tmp})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Backup after cancel: %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the cancelled backup left %d files in its temp dir (%s)", len(left), left[0].Name())
	}
	// The store goes on: a write commits, and a new backup completes.
	mustWrite(t, s, "notes:/after.md", "after")
	var buf bytes.Buffer
	if _, err := s.Backup(ctx, &buf, BackupOptions{TempDir: tmp}); err != nil {
		t.Fatalf("Backup after a cancelled one: %v", err)
	}
}

// cancelAfter accepts n bytes, then cancels its context.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	if c.n -= len(p); c.n <= 0 {
		c.cancel()
	}
	return len(p), nil
}

// TestInspectBackup refuses files that are no ctxd store.
func TestInspectBackup(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a store"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := InspectBackup(ctx, text); err == nil {
		t.Error("InspectBackup accepted a text file")
	}
	if _, err := InspectBackup(ctx, dir); err == nil {
		t.Error("InspectBackup accepted a directory")
	}
	if _, err := InspectBackup(ctx, filepath.Join(dir, "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("InspectBackup of a missing file: %v", err)
	}
}

func mustReadAll(t *testing.T, s *Store, ref string) string {
	t.Helper()
	r, err := s.Read(ctx, mustRef(t, ref), 0, 0)
	if err != nil {
		t.Fatalf("Read(%s): %v", ref, err)
	}
	return string(r.Content)
}
