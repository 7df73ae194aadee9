package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ctxd/ctxd/daemon"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/pgtest"
)

// TestBackup_UnderWriteLoad takes `ctxd backup` from a daemon that four
// clients write to meanwhile, on bbolt and on PostgreSQL, restores it into
// a new data dir, checks it with `ctxd doctor --data-dir`, then starts a
// daemon on it: every write acknowledged before the backup started reads
// back whole, every item of the copy reads back as one of the writes made to
// it (nothing torn), and the indexes it rebuilt agree with the store.
func TestBackup_UnderWriteLoad(t *testing.T) {
	for _, backend := range []string{"bolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			cfg, dir := tempConfig(t)
			if backend == "postgres" {
				cfg.Store = pgtest.NewDatabase(t)
			}
			runDaemon(t, cfg)
			vc := vfsClient(t, cfg.Socket)
			bin := bytes.Repeat([]byte{0, 0xfe, 7, 0xff}, 50_000)
			if _, err := vc.Write(context.Background(), &ctxdv1.WriteRequest{Ref: "files:/blob.bin", Body: &ctxdv1.WriteRequest_Data{Data: bin}}); err != nil {
				t.Fatal(err)
			}

			// Four writers overwrite and create items; each write's content
			// names its ref and round. acked[ref] holds every content
			// written to ref; before holds the last one acknowledged before
			// the backup was asked for.
			var mu sync.Mutex
			acked := map[string][]string{}
			var before map[string]string
			backupAsked := false
			stop := make(chan struct{})
			var wg, warm sync.WaitGroup
			for w := range 4 {
				warm.Add(1)
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						ref := fmt.Sprintf("load:/w%d/%d.md", w, i%15)
						content := fmt.Sprintf("# %s\n\nround %d of writer %d\n", ref, i, w)
						_, err := vc.Write(context.Background(), &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: content},
							OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
						if err != nil {
							t.Errorf("write %s: %v", ref, err)
							if i < 21 {
								warm.Done()
							}
							return
						}
						mu.Lock()
						acked[ref] = append(acked[ref], content)
						if !backupAsked {
							if before == nil {
								before = map[string]string{}
							}
							before[ref] = content
						}
						mu.Unlock()
						if i == 20 {
							warm.Done()
						}
					}
				})
			}
			warm.Wait()
			mu.Lock()
			backupAsked = true
			mu.Unlock()
			file := filepath.Join(dir, "ctxd.backup")
			code, out, errOut := ctxd(t, cfg.Socket, "", "backup", file)
			close(stop)
			wg.Wait()
			if code != 0 {
				t.Fatalf("ctxd backup = %d\n%s%s", code, out, errOut)
			}
			m := regexp.MustCompile(`backup of the (\w+) store: .*, (\d+) items through change (\d+)`).FindStringSubmatch(out)
			if m == nil || m[1] != backend {
				t.Fatalf("ctxd backup printed %q", out)
			}
			if _, err := os.Stat(file + ".partial"); !os.IsNotExist(err) {
				t.Errorf("the .partial file is left: %v", err)
			}
			if code, _, errOut := ctxd(t, cfg.Socket, "", "backup", file); code != 1 || !strings.Contains(errOut, "--force") {
				t.Errorf("backup over an existing file = %d, %s; want it refused, naming --force", code, errOut)
			}

			restored := filepath.Join(dir, "restored")
			code, out, errOut = ctxd(t, cfg.Socket, "", "restore", file, "--data-dir", restored)
			if code != 0 || !strings.Contains(out, "restored "+file) || !strings.Contains(out, m[2]+" items through change "+m[3]) {
				t.Fatalf("ctxd restore = %d\n%s%s", code, out, errOut)
			}
			if code, out, errOut := ctxd(t, cfg.Socket, "", "doctor", "--data-dir", restored); code != 0 || !strings.HasSuffix(out, "ok\n") {
				t.Fatalf("ctxd doctor --data-dir = %d\n%s%s", code, out, errOut)
			}

			cfg2, _ := tempConfig(t)
			cfg2.DataDir = restored
			runDaemon(t, cfg2)
			vc2 := vfsClient(t, cfg2.Socket)
			for ref, content := range before {
				r, err := vc2.Read(context.Background(), &ctxdv1.ReadRequest{Ref: ref})
				if err != nil {
					t.Errorf("read %s, acknowledged before the backup: %v", ref, err)
					continue
				}
				// A later write to ref may have made the snapshot too.
				if got := r.Content; got != content && !slicesContainsAfter(acked[ref], content, got) {
					t.Errorf("%s = %q; want %q or a later write", ref, got, content)
				}
			}
			list, err := vc2.List(context.Background(), &ctxdv1.ListRequest{Ref: "load:/", Recursive: true, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range list.Entries {
				r, err := vc2.Read(context.Background(), &ctxdv1.ReadRequest{Ref: e.Ref})
				if err != nil || !slicesContainsAfter(acked[e.Ref], "", r.GetContent()) {
					t.Errorf("%s in the restored store = %q, %v: not one of the writes made to it", e.Ref, r.GetContent(), err)
				}
			}
			if got, err := vc2.Read(context.Background(), &ctxdv1.ReadRequest{Ref: "files:/blob.bin", Raw: true}); err != nil || !bytes.Equal(got.Data, bin) {
				t.Errorf("files:/blob.bin in the restored store: %d bytes, %v; want the %d written", len(got.GetData()), err, len(bin))
			}

			// The daemon rebuilt the indexes the restore removed, from the
			// store; once caught up, doctor finds them in agreement.
			seq, _ := strconv.ParseUint(m[3], 10, 64)
			admin := ctxdv1.NewAdminServiceClient(dialSocket(t, cfg2.Socket))
			deadline := time.Now().Add(time.Minute)
			for {
				st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
				if err == nil && st.Index.AppliedSequence >= seq {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the restored daemon's indexes did not reach change %d: %v, %v", seq, st, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if code, out, errOut := ctxd(t, cfg2.Socket, "", "doctor"); code != 0 {
				t.Errorf("ctxd doctor on the restored daemon = %d\n%s%s", code, out, errOut)
			}
		})
	}
}

// slicesContainsAfter reports whether got is in writes at or after the
// position of from ("" means anywhere).
func slicesContainsAfter(writes []string, from, got string) bool {
	i := 0
	if from != "" {
		for i < len(writes) && writes[i] != from {
			i++
		}
	}
	for ; i < len(writes); i++ {
		if writes[i] == got {
			return true
		}
	}
	return false
}

// TestRestore_Refusals checks what restore refuses, and that a refused
// restore leaves the data dir as it was.
func TestRestore_Refusals(t *testing.T) {
	cfg, dir := tempConfig(t)
	runDaemon(t, cfg)
	if code, _, errOut := ctxd(t, cfg.Socket, "hello", "write", "/a.md"); code != 0 {
		t.Fatal(errOut)
	}
	file := filepath.Join(dir, "b.db")
	if code, out, errOut := ctxd(t, cfg.Socket, "", "backup", file); code != 0 {
		t.Fatalf("backup: %s%s", out, errOut)
	}

	// A daemon runs on the data dir.
	if code, _, errOut := ctxd(t, cfg.Socket, "", "restore", file, "--data-dir", cfg.DataDir, "--force"); code != 1 || !strings.Contains(errOut, "in use by another ctxd") {
		t.Errorf("restore into a served data dir = %d, %s; want it refused", code, errOut)
	}

	other := filepath.Join(dir, "other")
	if code, out, errOut := ctxd(t, cfg.Socket, "", "restore", file, "--data-dir", other); code != 0 {
		t.Fatalf("restore into a new data dir: %s%s", out, errOut)
	}
	store := filepath.Join(other, "ctxd.db")
	was, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	// An existing store, without --force.
	if code, _, errOut := ctxd(t, cfg.Socket, "", "restore", file, "--data-dir", other); code != 1 || !strings.Contains(errOut, "--force") {
		t.Errorf("restore over a store without --force = %d, %s; want it refused, naming --force", code, errOut)
	}
	// A file that is no ctxd store, even with --force.
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("not a store "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := ctxd(t, cfg.Socket, "", "restore", junk, "--data-dir", other, "--force"); code != 1 || !strings.Contains(errOut, "not a ctxd store file") {
		t.Errorf("restore of a junk file = %d, %s; want it refused", code, errOut)
	}
	if now, err := os.ReadFile(store); err != nil || !bytes.Equal(now, was) {
		t.Errorf("a refused restore changed the store (%v)", err)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 2 { // ctxd.db and ctxd.lock
		t.Errorf("a refused restore left files in the data dir: %v", entries)
	}
	// With --force, over the store, and a stale index dir is removed.
	if err := os.MkdirAll(filepath.Join(other, "index", "lexical"), 0o700); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := ctxd(t, cfg.Socket, "", "restore", file, "--data-dir", other, "--force")
	if code != 0 || !strings.Contains(out, "removed the search indexes") {
		t.Errorf("restore --force = %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(other, "index")); !os.IsNotExist(err) {
		t.Errorf("the index dir survived the restore: %v", err)
	}
}

// TestBackup_DataDir backs up a stopped data dir without a daemon, and
// refuses a served one.
func TestBackup_DataDir(t *testing.T) {
	cfg, dir := tempConfig(t)
	d, err := daemon.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			d.Stop(context.Background())
		}
	})
	if code, _, errOut := ctxd(t, cfg.Socket, "hello", "write", "/a.md"); code != 0 {
		t.Fatal(errOut)
	}
	file := filepath.Join(dir, "b.db")
	if code, _, errOut := ctxd(t, cfg.Socket, "", "backup", file, "--data-dir", cfg.DataDir); code != 1 || !strings.Contains(errOut, "in use by another ctxd") {
		t.Errorf("backup --data-dir of a served data dir = %d, %s; want it refused", code, errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stopped = true
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := ctxd(t, cfg.Socket, "", "backup", file); code != 1 || !strings.Contains(errOut, "cannot reach the daemon") || !strings.Contains(errOut, "--data-dir") {
		t.Errorf("backup with no daemon = %d, %s; want an error naming --data-dir", code, errOut)
	}
	code, out, errOut := ctxd(t, cfg.Socket, "", "backup", file, "--data-dir", cfg.DataDir)
	if code != 0 || !strings.Contains(out, "1 items") {
		t.Fatalf("backup --data-dir = %d\n%s%s", code, out, errOut)
	}
	// To stdout, the report on stderr.
	code, out, errOut = ctxd(t, cfg.Socket, "", "backup", "-", "--data-dir", cfg.DataDir)
	st, err := os.Stat(file)
	if code != 0 || err != nil || int64(len(out)) != st.Size() || !strings.Contains(errOut, "sha256") {
		t.Errorf("backup - = %d, %d bytes on stdout (file: %d), stderr %q", code, len(out), st.Size(), errOut)
	}
}

// vfsClient dials a daemon's socket for a VfsService client.
func vfsClient(t *testing.T, socket string) ctxdv1.VfsServiceClient {
	return ctxdv1.NewVfsServiceClient(dialSocket(t, socket))
}

func dialSocket(t *testing.T, socket string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
