package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/beir"
	"github.com/ctxd/ctxd/vfs"
)

// Parameters of the watch benchmarks (make bench-watch).
const (
	watchBenchFiles     = 20_000 // files of the watched tree (the docs corpus's first)
	watchBenchEdits     = 200    // saved edits timed one after another
	watchBenchEmbedDocs = 300    // files of the tree whose edits are timed until embedded
	watchBenchEmbedOps  = 20     // edits timed until embedded
	watchBenchChanged   = 100    // files changed while the daemon is down
)

// watchBenchTree unpacks the first n documents of the docs corpus into a
// tree (CTXD_BENCH_WATCH_FILES=N overrides n) and returns its root and the
// files, in corpus order.
func watchBenchTree(b *testing.B, n int) (string, []string) {
	b.Helper()
	if v, _ := strconv.Atoi(os.Getenv("CTXD_BENCH_WATCH_FILES")); v > 0 {
		n = v
	}
	docs, err := beir.LoadCorpus(docsCorpus, n)
	if err != nil {
		b.Fatalf("%v (the shared data sits beside the repo)", err)
	}
	tree := filepath.Join(shortTempDir(b), "tree")
	files := make([]string, 0, len(docs))
	for _, d := range docs {
		name := docFile(tree, d.ID)
		if filepath.Base(name)[0] == '.' {
			continue // hidden: not watched
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(d.Text), 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, name)
	}
	return tree, files
}

// watchBenchDaemon starts an in-process daemon that may read tree.
func watchBenchDaemon(b *testing.B, cfg Config, tree string) (*Daemon, *grpc.ClientConn, func()) {
	b.Helper()
	cfg.AllowedRoots = []string{tree}
	d, err := Start(context.Background(), cfg, slogDiscard())
	if err != nil {
		b.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := d.Stop(ctx); err != nil {
				b.Error(err)
			}
		}
	}
	b.Cleanup(stop)
	return d, dial(b, "unix://"+cfg.Socket), stop
}

// addWatchBench watches tree and returns once it is ingested and searchable.
func addWatchBench(b *testing.B, conn *grpc.ClientConn, tree string) (*ctxdv1.Watch, time.Duration) {
	b.Helper()
	start := time.Now()
	resp, err := ctxdv1.NewWatchServiceClient(conn).AddWatch(context.Background(), &ctxdv1.AddWatchRequest{Path: tree})
	if err != nil {
		b.Fatal(err)
	}
	return resp.GetWatch(), time.Since(start)
}

// uniqueWord is a word no corpus document holds, different for each i.
func uniqueWord(i int) string { return "qzxwatch" + strconv.FormatInt(int64(i)+1_000_000, 36) }

// appendWord saves file with word appended, as an editor's save does
// (write in place).
func appendWord(b *testing.B, file, word string) {
	b.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := fmt.Fprintf(f, "\n\nSaved with the marker %s.\n", word); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// bm25Finds reports whether a BM25 search for word finds file's item among
// its results: other items may come first, since a word the index lacks
// yet is matched loosely to the nearest ones it has (the markers of earlier
// edits).
func bm25Finds(b *testing.B, search ctxdv1.SearchServiceClient, word, file string) bool {
	resp, err := search.Search(context.Background(), &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Limit: 10,
		Queries: []*ctxdv1.SearchQuery{{Text: word}}})
	if err != nil {
		b.Fatal(err)
	}
	ref := "disk:" + filepath.ToSlash(file)
	return slices.ContainsFunc(resp.GetResults(), func(r *ctxdv1.SearchResult) bool { return r.GetRef() == ref })
}

// pollUntil polls cond every 2 ms until it holds (or a minute passes) and
// returns the time since start.
func pollUntil(b *testing.B, start time.Time, what string, cond func() bool) time.Duration {
	b.Helper()
	for !cond() {
		if time.Since(start) > time.Minute {
			b.Fatalf("not within a minute: %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}

func percentileMS(ds []time.Duration, p float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)-1, int(p*float64(len(s))))
	return float64(s[i].Microseconds()) / 1000
}

// BenchmarkWatch_Edit20k watches a tree of 20,000 docs-corpus files
// (without the embedding model: the daemon chunks without it, and BM25 is
// what the goal names) and times 200 saved edits one after another, each
// from the write of the file until a BM25 search finds the unique word it
// added: p50-ms, p99-ms, max-ms (goal: p99 within 1 s; the debounce, 200 ms
// by default, is part of it). s-add is AddWatch's time for the whole tree
// (the first reconcile, until searchable). It runs once regardless of b.N.
func BenchmarkWatch_Edit20k(b *testing.B) {
	tree, files := watchBenchTree(b, watchBenchFiles)
	cfg := testConfig(b)
	d, conn, _ := watchBenchDaemon(b, cfg, tree)
	w, took := addWatchBench(b, conn, tree)
	if w.GetStatus().GetMode() != ctxdv1.WatchMode_WATCH_MODE_EVENTS {
		b.Fatalf("watch status %v, want events", w.GetStatus())
	}
	b.Logf("watching %d files in %d directories; AddWatch took %s", w.GetStatus().GetFiles(), w.GetStatus().GetWatchedDirs(), took.Round(time.Millisecond))
	files = watchedFiles(b, d, files)
	search := ctxdv1.NewSearchServiceClient(conn)
	b.ResetTimer()
	lat := make([]time.Duration, 0, watchBenchEdits)
	for i := range watchBenchEdits {
		file, word := files[(i*len(files))/watchBenchEdits], uniqueWord(i)
		start := time.Now()
		appendWord(b, file, word)
		lat = append(lat, pollUntil(b, start, "edit "+strconv.Itoa(i)+" of "+file+" searchable ("+word+")", func() bool { return bm25Finds(b, search, word, file) }))
	}
	b.StopTimer()
	st := listWatchesBench(b, conn)[0].GetStatus()
	if st.GetErrorCount() != 0 {
		b.Errorf("the watch had %d errors: %s", st.GetErrorCount(), st.GetLastError())
	}
	b.ReportMetric(float64(len(files)), "files")
	b.ReportMetric(took.Seconds(), "s-add")
	b.ReportMetric(percentileMS(lat, 0.5), "p50-ms")
	b.ReportMetric(percentileMS(lat, 0.99), "p99-ms")
	b.ReportMetric(percentileMS(lat, 1), "max-ms")
}

// BenchmarkWatch_EditEmbedded watches 300 docs-corpus files with the
// embedding model, waits until they are embedded, then times 20 saved edits
// one after another from the write until the edit is BM25-searchable
// (searchable-p50-ms) and until no chunk waits for a vector any more
// (embedded-p50-ms, embedded-p99-ms), beside the daemon's measured
// embedding rate (chunks/s) and the chunks each edit embedded
// (chunks-per-edit): the goal is an edit embedded within the time the
// embedding rate gives its chunks, plus the debounce.
func BenchmarkWatch_EditEmbedded(b *testing.B) {
	tree, files := watchBenchTree(b, watchBenchEmbedDocs)
	cfg := testConfig(b)
	cfg.ModelDir, cfg.OnnxRuntimeLib = modelDir(b), ortLib(b)
	d, conn, _ := watchBenchDaemon(b, cfg, tree)
	admin := ctxdv1.NewAdminServiceClient(conn)
	waitModel(b, admin, 2*time.Minute)
	addWatchBench(b, conn, tree)
	files = watchedFiles(b, d, files)
	before := waitIndexed(b, admin, time.Hour)
	search := ctxdv1.NewSearchServiceClient(conn)
	b.ResetTimer()
	var searchable, embedded []time.Duration
	for i := range watchBenchEmbedOps {
		file, word := files[(i*len(files))/watchBenchEmbedOps], uniqueWord(i)
		start := time.Now()
		appendWord(b, file, word)
		searchable = append(searchable, pollUntil(b, start, "edit searchable", func() bool { return bm25Finds(b, search, word, file) }))
		embedded = append(embedded, pollUntil(b, start, "edit embedded", func() bool {
			st := mustStatus(b, admin)
			return st.GetEmbedding().GetPendingChunks() == 0 && st.GetEmbedding().GetPendingItems() == 0
		}))
	}
	b.StopTimer()
	after := mustStatus(b, admin)
	b.ReportMetric(percentileMS(searchable, 0.5), "searchable-p50-ms")
	b.ReportMetric(percentileMS(embedded, 0.5), "embedded-p50-ms")
	b.ReportMetric(percentileMS(embedded, 0.99), "embedded-p99-ms")
	b.ReportMetric(after.GetEmbedding().GetChunksPerSecond(), "chunks/s")
	b.ReportMetric(float64(after.GetEmbedding().GetEmbeddedHere()-before.GetEmbedding().GetEmbeddedHere())/watchBenchEmbedOps, "chunks-per-edit")
}

// BenchmarkWatch_Restart100 watches a 20,000-file tree, stops the daemon,
// changes 100 files, starts it again and times the reconcile at start:
// s-reconciled (Start until the watch's first reconcile finished),
// s-searchable (until every change is BM25-searchable), and what it read:
// bytes-read (the changed files only, ideally) against changed-bytes (their
// sizes) and tree-bytes. It runs once regardless of b.N.
func BenchmarkWatch_Restart100(b *testing.B) {
	tree, files := watchBenchTree(b, watchBenchFiles)
	cfg := testConfig(b)
	d, conn, stop := watchBenchDaemon(b, cfg, tree)
	addWatchBench(b, conn, tree)
	files = watchedFiles(b, d, files)
	stop()

	var changedBytes, treeBytes int64
	words := map[string]string{} // file -> the word it gained
	for i, file := range files {
		changed := i%(len(files)/watchBenchChanged) == 0 && len(words) < watchBenchChanged
		if changed {
			words[file] = uniqueWord(i)
			appendWord(b, file, words[file])
		}
		fi, err := os.Stat(file)
		if err != nil {
			b.Fatal(err)
		}
		treeBytes += fi.Size()
		if changed {
			changedBytes += fi.Size()
		}
	}
	b.ResetTimer()
	start := time.Now()
	d, conn, _ = watchBenchDaemon(b, cfg, tree)
	var w *ctxdv1.Watch
	reconciled := pollUntil(b, start, "the reconcile at start", func() bool {
		w = listWatchesBench(b, conn)[0]
		return w.GetStatus().GetMode() == ctxdv1.WatchMode_WATCH_MODE_EVENTS
	})
	search := ctxdv1.NewSearchServiceClient(conn)
	searchable := pollUntil(b, start, "every change searchable", func() bool {
		for file, word := range words {
			if !bm25Finds(b, search, word, file) {
				return false
			}
		}
		return true
	})
	b.StopTimer()
	rec := w.GetStatus().GetLastReconcile()
	if rec.GetUpdated() != watchBenchChanged || rec.GetUnchanged() != int64(len(files)-watchBenchChanged) {
		b.Errorf("reconcile %v, want %d updated and the rest unchanged", rec, watchBenchChanged)
	}
	states, err := d.b.watches.List(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(reconciled.Seconds(), "s-reconciled")
	b.ReportMetric(searchable.Seconds(), "s-searchable")
	b.ReportMetric(float64(w.GetStatus().GetLastReconcileMs())/1000, "s-reconcile")
	b.ReportMetric(float64(states[0].Status.LastReconcile.BytesRead), "bytes-read")
	b.ReportMetric(float64(changedBytes), "changed-bytes")
	b.ReportMetric(float64(treeBytes), "tree-bytes")
}

// watchedFiles keeps the files that have an item: those the tree's rules
// (.gitignore files, default excludes) leave out are never searchable.
func watchedFiles(b *testing.B, d *Daemon, files []string) []string {
	b.Helper()
	var out []string
	for _, f := range files {
		ok, _, err := d.b.store.Exists(context.Background(), vfs.Ref{Drive: "disk", Path: filepath.ToSlash(f)})
		if err != nil {
			b.Fatal(err)
		}
		if ok {
			out = append(out, f)
		}
	}
	return out
}

func listWatchesBench(b *testing.B, conn *grpc.ClientConn) []*ctxdv1.Watch {
	b.Helper()
	resp, err := ctxdv1.NewWatchServiceClient(conn).ListWatches(context.Background(), &ctxdv1.ListWatchesRequest{})
	if err != nil || len(resp.GetWatches()) != 1 {
		b.Fatalf("ListWatches = %v, %v; want one watch", resp, err)
	}
	return resp.GetWatches()
}
