package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/beir"
)

// docsCorpus is the real-documents corpus in ../shared/data (BEIR layout).
const docsCorpus = "../../shared/data/docs-corpus/corpus.jsonl.gz"

// BenchmarkEndToEnd_DocsCorpus writes the docs corpus (20,629 files) through
// the real daemon process with 16 concurrent clients, then waits until every
// chunk is embedded. It runs once per installed model regardless of b.N; run
// it with -benchtime=1x. CTXD_BENCH_DOCS limits the number of documents.
func BenchmarkEndToEnd_DocsCorpus(b *testing.B) {
	limit, _ := strconv.Atoi(os.Getenv("CTXD_BENCH_DOCS"))
	docs, err := beir.LoadCorpus(docsCorpus, limit)
	if err != nil {
		b.Fatalf("%v (the shared data sits beside the repo)", err)
	}
	var bytes int
	for _, d := range docs {
		bytes += len(d.Text)
	}
	models, _ := filepath.Glob(filepath.Join(filepath.Dir(modelDir(b)), "*", "ctxd-model.json"))
	for _, spec := range models {
		dir := filepath.Dir(spec)
		b.Run("model="+filepath.Base(dir), func(b *testing.B) {
			tmp := shortTempDir(b)
			dataDir, socket := filepath.Join(tmp, "data"), filepath.Join(tmp, "s.sock")
			p := startProcess(b, dataDir, socket, "--model-dir", dir, "--onnxruntime-lib", ortLib(b))
			conn := dial(b, "unix://"+socket)
			c := ctxdv1.NewVfsServiceClient(conn)
			start := time.Now()
			var wg sync.WaitGroup
			work := make(chan beir.Doc)
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for d := range work {
						ref := "docs:/" + strings.Replace(d.ID, ":", "/", 1)
						if _, err := c.Write(context.Background(), &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: d.Text}}); err != nil {
							b.Error(err)
						}
					}
				}()
			}
			for _, d := range docs {
				work <- d
			}
			close(work)
			wg.Wait()
			written := time.Since(start)
			st := waitEmbedded(b, conn, 2*time.Hour)
			total := time.Since(start)
			peak := procStatusBytes(b, p.cmd.Process.Pid, "VmHWM")
			p.stop(b)
			chunks := float64(st.Index.ChunkCount)
			b.ReportMetric(float64(len(docs))/written.Seconds(), "docs/s-written")
			b.ReportMetric(chunks, "chunks")
			b.ReportMetric(float64(st.Embedding.EmbeddedChunks), "vectors")
			b.ReportMetric(chunks/total.Seconds(), "chunks/s")
			b.ReportMetric(total.Seconds(), "s-until-embedded")
			b.ReportMetric(float64(peak>>20), "peak-RSS-MiB")
			b.Logf("%d docs (%.1f MB): written in %s, embedded after %s", len(docs), float64(bytes)/1e6, written.Round(time.Millisecond), total.Round(time.Millisecond))
		})
	}
}
