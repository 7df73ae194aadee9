package daemon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestDoctor_ExactUnderWriteLoad runs Doctor 50 times while 16 writers
// create, overwrite and delete items through the API (some with precomputed
// vectors, some left to the real model, so both indexes trail the store and
// vectors keep arriving), and requires every run to report no drift:
// doctor's exit code is a health check.
func TestDoctor_ExactUnderWriteLoad(t *testing.T) {
	d := mustStart(t, withModel(t, testConfig(t)))
	conn := dial(t, "unix://"+d.cfg.Socket)
	admin := ctxdv1.NewAdminServiceClient(conn)
	st := waitEmbedded(t, conn, time.Minute)
	model, dims := st.Embedding.ModelId, int(st.Embedding.Dimensions)
	c := ctxdv1.NewVfsServiceClient(conn)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	var writes atomic.Int64
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; ctx.Err() == nil && i < 100_000; i++ {
				ref := fmt.Sprintf("load:/w%d/n%d.md", w, r.IntN(40))
				var err error
				switch k := r.IntN(8); {
				case k == 0:
					_, err = c.Delete(ctx, &ctxdv1.DeleteRequest{Ref: ref})
				case k <= 2:
					// Several chunks, left to the embedder: items grow and
					// shrink by chunks, and vectors arrive later.
					body := strings.Repeat(fmt.Sprintf("## Part %d\n\n%s\n\n", i, sampleMarkdown), 1+r.IntN(3))
					_, err = c.Write(ctx, &ctxdv1.WriteRequest{
						Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: body},
						OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE,
					})
				default:
					_, err = c.Write(ctx, &ctxdv1.WriteRequest{
						Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: fmt.Sprintf("unique token w%di%d", w, i)},
						OnConflict:     ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE,
						EmbeddingModel: model, ChunkEmbeddings: []*ctxdv1.Embedding{{Values: randomVector(r, dims)}},
					})
				}
				if err != nil && ctx.Err() == nil && status.Code(err) != codes.NotFound {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				writes.Add(1)
			}
		}()
	}
	// Doctor starts once the writers are in full flow.
	for writes.Load() < 500 && !t.Failed() {
		time.Sleep(10 * time.Millisecond)
	}
	before := writes.Load()
	var drift []string
	for run := range 50 {
		doc, err := admin.Doctor(context.Background(), &ctxdv1.DoctorRequest{})
		if err != nil {
			t.Fatalf("doctor run %d: %v", run, err)
		}
		if !doc.Ok {
			drift = append(drift, fmt.Sprintf("run %d: %v", run, doc.Problems))
		}
	}
	during := writes.Load() - before
	t.Logf("50 doctor runs during %d writes: %d reported drift", during, len(drift))
	if len(drift) > 0 || during == 0 {
		t.Fatalf("doctor reported drift under load in %d of 50 runs, the first: %.2000s", len(drift), drift)
	}
}

// TestAdmin_CancelledReindexAndDoctorStop cancels Reindex and Doctor while
// they run: each must answer Canceled, the rebuild must stop rather than
// finish in the background and replace the live indexes, and those must
// stay intact and usable.
func TestAdmin_CancelledReindexAndDoctorStop(t *testing.T) {
	d := mustStart(t, testConfig(t))
	conn := dial(t, "unix://"+d.cfg.Socket)
	admin := ctxdv1.NewAdminServiceClient(conn)
	c := ctxdv1.NewVfsServiceClient(conn)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 250 {
				var b strings.Builder
				for p := range 12 {
					fmt.Fprintf(&b, "Paragraph %d of note %d by writer %d: %s\n\n", p, i, w, strings.Repeat("storage engines and search indexes ", 8))
				}
				if _, err := c.Write(context.Background(), &ctxdv1.WriteRequest{
					Ref: fmt.Sprintf("bulk:/w%d/n%03d.md", w, i), Body: &ctxdv1.WriteRequest_Content{Content: b.String()},
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	waitIndexed(t, admin, 2*time.Minute)
	lexDir := filepath.Join(d.cfg.DataDir, "index", "lexical")
	before := inode(t, lexDir)

	// cancelWhile calls rpc and cancels it once running reports it has started.
	cancelWhile := func(name string, running func() bool, rpc func(context.Context) error) {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- rpc(ctx) }()
		for !running() {
			select {
			case err := <-errc:
				t.Fatalf("%s finished before it could be cancelled (%v); the store is too small for this test", name, err)
			case <-time.After(time.Millisecond):
			}
		}
		cancel()
		cancelled := time.Now()
		if err := <-errc; status.Code(err) != codes.Canceled {
			t.Fatalf("cancelled %s: %v, want Canceled", name, err)
		}
		for running() {
			time.Sleep(time.Millisecond)
		}
		t.Logf("%s stopped %s after the caller cancelled", name, time.Since(cancelled))
	}
	cancelWhile("Reindex", func() bool { return d.b.engine.State().Rebuilding }, func(ctx context.Context) error {
		_, err := admin.Reindex(ctx, &ctxdv1.ReindexRequest{})
		return err
	})
	if after := inode(t, lexDir); after != before {
		t.Errorf("a cancelled Reindex replaced the lexical index (inode %d -> %d)", before, after)
	}
	if _, err := os.Stat(lexDir + ".new"); !os.IsNotExist(err) {
		t.Errorf("a cancelled Reindex left %s.new behind (%v)", lexDir, err)
	}

	cancelWhile("Doctor", func() bool { return d.b.engine.State().Checking }, func(ctx context.Context) error {
		_, err := admin.Doctor(ctx, &ctxdv1.DoctorRequest{})
		return err
	})

	// The live indexes still answer and agree with the store.
	writeText(t, c, "bulk:/after.md", "written after the cancelled calls: zanzibar")
	waitIndexed(t, admin, time.Minute)
	res := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Queries: []*ctxdv1.SearchQuery{{Text: "zanzibar"}}})
	if len(res.Results) == 0 || res.Results[0].Ref != "bulk:/after.md" {
		t.Fatalf("search after cancelled calls: %v", resultRefs(res))
	}
	res = doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Queries: []*ctxdv1.SearchQuery{{Text: "note 137"}}})
	if len(res.Results) == 0 || !strings.HasSuffix(res.Results[0].Ref, "/n137.md") {
		t.Fatalf("search for items written before the cancelled calls: %v", resultRefs(res))
	}
	doc, err := admin.Doctor(context.Background(), &ctxdv1.DoctorRequest{})
	if err != nil || !doc.Ok || doc.LexicalChunks != doc.StoreChunks {
		t.Fatalf("doctor after cancelled calls: %v, %v", doc, err)
	}
}

// inode returns the inode number of path.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}
