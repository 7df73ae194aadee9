package daemon

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/beir"
	"github.com/ctxd/ctxd/internal/benchenv"
	"github.com/ctxd/ctxd/vfs"
)

// BenchmarkBackup_UnderLoad measures what a hot backup costs the clients of
// a daemon serving a store of CTXD_BENCH_BACKUP_GB gigabytes (default 2): 4
// writers (overwriting docs-corpus documents) and 4 BM25 searchers run
// throughout; their latencies are recorded for CTXD_BENCH_BACKUP_WINDOW
// seconds (default 20) without a backup, then while `AdminService.Backup`
// streams the whole store into a file (synced) and then for the same window
// again without. It reports p50/p99 per op kind without (both windows) and
// with the backup, the p99 ratio, the backup's seconds and MB/s, and how
// much the store file grew during it (pages a long read keeps from reuse).
// It runs the real daemon process without the model, once regardless of
// b.N (-benchtime=1x).
//
// The store is built once, directly through vfs in large batches, and kept
// for later runs in CTXD_BENCH_BACKUP_DIR (default $TMPDIR/ctxd-bench-backup):
// 10,000 docs-corpus documents (searchable text) and 1 MiB binary items
// (incompressible, as scans and archives are) up to the size.
func BenchmarkBackup_UnderLoad(b *testing.B) {
	gb := benchenv.Int(b, "CTXD_BENCH_BACKUP_GB", 2)
	window := time.Duration(benchenv.Int(b, "CTXD_BENCH_BACKUP_WINDOW", 20)) * time.Second
	dir := os.Getenv("CTXD_BENCH_BACKUP_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ctxd-bench-backup")
	}
	docs, err := beir.LoadCorpus(docsCorpus, 12_000)
	if err != nil {
		b.Fatalf("%v (the shared data sits beside the repo)", err)
	}
	dataDir := filepath.Join(dir, "data")
	storeFile := filepath.Join(dataDir, "ctxd.db")
	buildBackupStore(b, storeFile, docs[:10_000], int64(gb)<<30)

	socket := filepath.Join(shortTempDir(b), "s.sock")
	p := startProcess(b, dataDir, socket)
	defer p.stop(b)
	conn := dial(b, "unix://"+socket)
	vfsc, search, admin := ctxdv1.NewVfsServiceClient(conn), ctxdv1.NewSearchServiceClient(conn), ctxdv1.NewAdminServiceClient(conn)
	waitIndexed(b, admin, 2*time.Hour)
	queries := benchQueries(docs[:10_000], 1000)
	writes := docs[10_000:]

	// phase is where the clients record their latencies now.
	type phase struct{ write, search latencies }
	var current atomic.Pointer[phase]
	base1, during, base2 := &phase{}, &phase{}, &phase{}
	current.Store(base1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				d := writes[(w*500+i)%len(writes)]
				t0 := time.Now()
				_, err := vfsc.Write(context.Background(), &ctxdv1.WriteRequest{Ref: fmt.Sprintf("bench:/w%d/%d.md", w, i%200),
					Body: &ctxdv1.WriteRequest_Content{Content: d.Text}, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
				if err != nil {
					errs <- err
					return
				}
				current.Load().write.add(time.Since(t0))
			}
		})
		wg.Go(func() {
			for i := w; ; i += 4 {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				_, err := search.Search(context.Background(), &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: queries[i%len(queries)]}},
					Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25})
				if err != nil {
					errs <- err
					return
				}
				current.Load().search.add(time.Since(t0))
			}
		})
	}
	time.Sleep(window) // a measuring window, not a wait for a condition
	before, _ := os.Stat(storeFile)
	current.Store(during)
	file := filepath.Join(dir, "bench.backup")
	took, size := timedBackup(b, admin, file)
	after, _ := os.Stat(storeFile)
	current.Store(base2)
	time.Sleep(window)
	close(stop)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	os.Remove(file)

	without := &phase{write: latencies{d: slices.Concat(base1.write.d, base2.write.d)}, search: latencies{d: slices.Concat(base1.search.d, base2.search.d)}}
	fmt.Printf("store %.2f GB (file), backup %.2f GB in %.1f s = %.0f MB/s; store file grew %.1f MB during it\n",
		float64(before.Size())/(1<<30), float64(size)/(1<<30), took.Seconds(), float64(size)/1e6/took.Seconds(), float64(after.Size()-before.Size())/1e6)
	b.ReportMetric(took.Seconds(), "backup-s")
	b.ReportMetric(float64(size)/1e6/took.Seconds(), "backup-MB/s")
	for _, op := range []struct {
		name      string
		off, with *latencies
	}{{"write", &without.write, &during.write}, {"search", &without.search, &during.search}} {
		slices.Sort(op.off.d)
		slices.Sort(op.with.d)
		if len(op.off.d) == 0 || len(op.with.d) == 0 {
			b.Fatalf("no %s completed in a window", op.name)
		}
		ratio := op.with.ms(0.99) / op.off.ms(0.99)
		fmt.Printf("%-6s without backup: n=%6d p50 %7.2f ms p99 %7.2f ms | during backup: n=%6d p50 %7.2f ms p99 %7.2f ms | p99 ratio %.2f\n",
			op.name, len(op.off.d), op.off.ms(0.50), op.off.ms(0.99), len(op.with.d), op.with.ms(0.50), op.with.ms(0.99), ratio)
		b.ReportMetric(op.off.ms(0.50), op.name+"-p50-ms")
		b.ReportMetric(op.off.ms(0.99), op.name+"-p99-ms")
		b.ReportMetric(op.with.ms(0.50), op.name+"-backup-p50-ms")
		b.ReportMetric(op.with.ms(0.99), op.name+"-backup-p99-ms")
		b.ReportMetric(ratio, op.name+"-p99-ratio")
	}
}

// timedBackup streams a backup into file, synced, and returns how long it
// took and its size.
func timedBackup(b *testing.B, admin ctxdv1.AdminServiceClient, file string) (time.Duration, int64) {
	b.Helper()
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	stream, err := admin.Backup(context.Background(), &ctxdv1.BackupRequest{})
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(msg.Data); err != nil {
			b.Fatal(err)
		}
		n += int64(len(msg.Data))
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start), n
}

// buildBackupStore writes docs and then 1 MiB binary items into the store
// at path until its file holds size bytes, unless an earlier run did.
func buildBackupStore(b *testing.B, path string, docs []beir.Doc, size int64) {
	b.Helper()
	if st, err := os.Stat(path); err == nil && st.Size() >= size {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		b.Fatal(err)
	}
	s, err := vfs.Open(path, vfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	start := time.Now()
	var batch []vfs.WriteParams
	flush := func() {
		if _, err := s.WriteBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	for _, d := range docs {
		batch = append(batch, vfs.WriteParams{Ref: mustParseRef(b, "docs:/"+strings.Replace(d.ID, ":", "/", 1)), Content: []byte(d.Text), IsText: true,
			OnConflict: vfs.ConflictOverwrite})
		if len(batch) == 500 {
			flush()
		}
	}
	flush()
	rng := rand.NewChaCha8([32]byte{1})
	for i := 0; ; i++ {
		st, err := s.Stats(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if st.FileSize >= size {
			break
		}
		for j := range 64 {
			data := make([]byte, 1<<20)
			rng.Read(data)
			batch = append(batch, vfs.WriteParams{Ref: mustParseRef(b, fmt.Sprintf("scans:/%04d/%02d.bin", i, j)), Content: data,
				OnConflict: vfs.ConflictOverwrite})
		}
		flush()
	}
	fmt.Printf("built the store in %.0f s\n", time.Since(start).Seconds())
}

func mustParseRef(b *testing.B, s string) vfs.Ref {
	r, err := vfs.ParseRef(s)
	if err != nil {
		b.Fatal(err)
	}
	return r
}
