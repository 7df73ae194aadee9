package daemon

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/search"
)

// Parameters of BenchmarkIngestCompare.
const (
	compareDefaultChunks = 100000
	compareRounds        = 3
)

// BenchmarkIngestCompare measures ctxd against SQLite FTS5 + sqlite-vec and
// LanceDB on the same wikipedia chunks, vectors and queries (make
// bench-ingest-compare; issues 14 and 31). ctxd runs as the real daemon
// process and is written through WriteBatch with the chunk vectors
// supplied, as in BenchmarkSearchWikipedia; the peers are
// scripts/bench/sqlite_peer.py and lancedb_peer.py run by CTXD_BENCH_PYTHON
// on a dump of the same data (in .cache/bench). Rounds run ctxd and the
// peers in turn, compareRounds each, and the table gives the median of each
// figure with its range. CTXD_BENCH_COMPARE_CHUNKS sets the size (default
// 100000).
//
// Per round and system: index-only ingest from the first write until
// everything is searchable (ctxd: the indexes applied the outbox; SQLite:
// the last commit, with synchronous=FULL as ctxd acknowledges durably;
// LanceDB: its full-text indexes built) and disk bytes per chunk after it.
// Then serving, in a process that did not ingest (ctxd restarted on its
// data dir until a hybrid search answers; a peer run again with --serve):
// search latency p50/p99 of bm25, vector and hybrid with the query vector
// supplied (500 queries one at a time after 50 warm-up), the process's peak
// RSS (VmHWM, start-up included), and its RSS at the end split into
// anonymous memory and mapped file pages (reclaimable, like the page cache
// the peers read through). The last line of the output is "ingest
// ctxd=<chunks/s> sqlite=<chunks/s> lancedb=<chunks/s>
// bytes_per_chunk=<ctxd's> serving_peak_mib=<ctxd's>".
func BenchmarkIngestCompare(b *testing.B) {
	python := os.Getenv("CTXD_BENCH_PYTHON")
	if python == "" {
		b.Fatal("CTXD_BENCH_PYTHON names the python with scripts/bench/requirements.txt installed (make bench-ingest-compare sets it)")
	}
	n := compareDefaultChunks
	if s := os.Getenv("CTXD_BENCH_COMPARE_CHUNKS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("CTXD_BENCH_COMPARE_CHUNKS=%q is not a positive chunk count", s)
		}
		n = v
	}
	w := loadWikiBench(b)
	items, chunks := w.items(n)
	queries := w.queries(b, items)
	dump := filepath.Join(benchCacheDir, fmt.Sprintf("compare-%s-%d", w.spec.ID, chunks))
	w.dump(b, dump, items, queries)

	var ctxd, sqlite, lance []compareFigures
	for r := range compareRounds {
		fmt.Fprintf(os.Stderr, "%s round %d/%d: ctxd\n", time.Now().Format("15:04:05"), r+1, compareRounds)
		ctxd = append(ctxd, w.compareCtxd(b, items, queries))
		fmt.Fprintf(os.Stderr, "%s round %d/%d: sqlite\n", time.Now().Format("15:04:05"), r+1, compareRounds)
		sqlite = append(sqlite, comparePeer(b, python, "sqlite_peer.py", dump))
		fmt.Fprintf(os.Stderr, "%s round %d/%d: lancedb\n", time.Now().Format("15:04:05"), r+1, compareRounds)
		lance = append(lance, comparePeer(b, python, "lancedb_peer.py", dump))
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- ingest compare: %d chunks (%d items) of wikipedia-passages, vectors supplied, %d rounds (ctxd, sqlite, lancedb in turn); median [min-max]\n", chunks, len(items), compareRounds)
	fmt.Fprintf(&sb, "%s\n", fmt.Sprintf(wikiConstruction, wikiSample, wikiSample, wikiNoise))
	fmt.Fprintf(&sb, "ctxd: the daemon process over its unix socket, WriteBatch of %d items, %d in flight, ingest until the indexes applied everything; its lexical index compacted into one segment %.1f s later (after %v without writes); served after a restart\n",
		wikiBatch, wikiWriters, summarize(ctxd, func(f compareFigures) float64 { return f.compacted }).median, search.DefaultCompactIdle)
	fmt.Fprintf(&sb, "sqlite: %s, one connection, transactions of %d chunks, WAL, synchronous=FULL\n", sqlite[0].version, wikiBatch)
	fmt.Fprintf(&sb, "lancedb: %s, a commit per %d chunks, then its native full-text indexes (title, text; English stemming and stop words); exact vector search\n", lance[0].version, wikiBatch)
	fmt.Fprintf(&sb, "search: %d queries one at a time after %d warm-up, limit %d, query vector supplied; hybrid fuses both legs; in a process that only serves\n", wikiQueries, wikiWarmup, wikiLimit)
	fmt.Fprintf(&sb, "  %-22s %-26s %-26s %-26s %-8s %s\n", "", "ctxd", "sqlite fts5 + sqlite-vec", "lancedb", "/sqlite", "/lancedb")
	row := func(name string, get func(compareFigures) float64, format string) (c, p, l spread) {
		c, p, l = summarize(ctxd, get), summarize(sqlite, get), summarize(lance, get)
		fmt.Fprintf(&sb, "  %-22s %-26s %-26s %-26s %-8.2f %.2f\n", name, c.format(format), p.format(format), l.format(format), c.median/p.median, c.median/l.median)
		return c, p, l
	}
	mib := func(get func(compareFigures) float64) func(compareFigures) float64 {
		return func(f compareFigures) float64 { return get(f) / (1 << 20) }
	}
	ingest, sqliteIngest, lanceIngest := row("ingest chunks/s", func(f compareFigures) float64 { return f.ingest }, "%.0f")
	perChunk, _, _ := row("disk B/chunk", func(f compareFigures) float64 { return f.bytesPerChunk }, "%.0f")
	var bm25P99, lanceBM25P99 spread
	for _, m := range []string{"bm25", "vector", "hybrid"} {
		row(m+" p50 ms", func(f compareFigures) float64 { return f.latency[m][0] }, "%.2f")
		c, _, l := row(m+" p99 ms", func(f compareFigures) float64 { return f.latency[m][1] }, "%.2f")
		if m == "bm25" {
			bm25P99, lanceBM25P99 = c, l
		}
	}
	peak, _, _ := row("serving peak RSS MiB", mib(func(f compareFigures) float64 { return f.peakRSS }), "%.0f")
	row("  anonymous MiB", mib(func(f compareFigures) float64 { return f.rssAnon }), "%.0f")
	row("  file pages MiB", mib(func(f compareFigures) float64 { return f.rssFile }), "%.0f")
	fmt.Fprintf(&sb, "goals: ingest >= 0.30 of SQLite's (same run): %.2f; <= 3 KB/chunk: %.0f B; serving peak RSS <= 250 MiB: %.0f; bm25 p99 <= LanceDB's: %.2f against %.2f ms\n",
		ingest.median/sqliteIngest.median, perChunk.median, peak.median, bm25P99.median, lanceBM25P99.median)
	fmt.Fprintf(&sb, "ingest ctxd=%.0f sqlite=%.0f lancedb=%.0f bytes_per_chunk=%.0f serving_peak_mib=%.0f\n", ingest.median, sqliteIngest.median, lanceIngest.median, perChunk.median, peak.median)
	fmt.Print(sb.String())
}

// compareFigures is one round of one system.
type compareFigures struct {
	version       string
	ingest        float64 // chunks/s
	bytesPerChunk float64
	compacted     float64               // s from the indexes applying the ingest to the lexical index compacted (ctxd)
	latency       map[string][2]float64 // mode -> p50, p99 ms, while serving
	// Serving memory in bytes: peak RSS, and RSS at the end as anonymous
	// memory and mapped file pages.
	peakRSS, rssAnon, rssFile float64
}

// spread is a figure over the rounds.
type spread struct{ median, lo, hi float64 }

func summarize(rounds []compareFigures, get func(compareFigures) float64) spread {
	v := make([]float64, len(rounds))
	for i, r := range rounds {
		v[i] = get(r)
	}
	slices.Sort(v)
	return spread{median: v[len(v)/2], lo: v[0], hi: v[len(v)-1]}
}

func (s spread) format(f string) string {
	return fmt.Sprintf(f+" ["+f+"-"+f+"]", s.median, s.lo, s.hi)
}

// compareCtxd ingests items into a new daemon, restarts it on the same
// data dir and measures its serving.
func (w *wikiBench) compareCtxd(b *testing.B, items []wikiItem, queries []wikiQuery) compareFigures {
	tmp := shortTempDir(b)
	dataDir, socket := filepath.Join(tmp, "data"), filepath.Join(tmp, "s.sock")
	args := modelArgs(b, ortLib(b))
	p := startProcess(b, dataDir, socket, args...)
	conn := dial(b, "unix://"+socket)
	admin := ctxdv1.NewAdminServiceClient(conn)
	st := waitModel(b, admin, 2*time.Minute)
	_, ingested, chunks := w.ingest(b, conn, items, st.Embedding.ModelId)
	f := compareFigures{
		ingest:        float64(chunks) / ingested.Seconds(),
		bytesPerChunk: float64(dirBytes(b, dataDir)) / float64(chunks),
		latency:       map[string][2]float64{},
	}
	f.compacted = waitCompacted(b, admin).Seconds()
	conn.Close()
	p.stop(b)

	p = startProcess(b, dataDir, socket, args...)
	defer p.stop(b)
	waitSearchServed(b, socket, queries[0].text)
	conn = dial(b, "unix://"+socket)
	search := ctxdv1.NewSearchServiceClient(conn)
	for _, m := range []struct {
		name string
		mode ctxdv1.SearchMode
	}{{"bm25", ctxdv1.SearchMode_SEARCH_MODE_BM25}, {"vector", ctxdv1.SearchMode_SEARCH_MODE_VECTOR}, {"hybrid", ctxdv1.SearchMode_SEARCH_MODE_HYBRID}} {
		l := searchLatency(b, search, queries, m.name, m.mode, m.name != "bm25")
		f.latency[m.name] = [2]float64{l.p[0], l.p[2]}
	}
	pid := p.cmd.Process.Pid
	f.peakRSS = float64(procStatusBytes(b, pid, "VmHWM"))
	f.rssAnon, f.rssFile = float64(procStatusBytes(b, pid, "RssAnon")), float64(procStatusBytes(b, pid, "RssFile"))
	return f
}

// comparePeer runs a peer script on the dump: once to ingest (its ingest
// and disk figures), then with --serve on the database it made (latency
// and memory while serving).
func comparePeer(b *testing.B, python, script, dump string) compareFigures {
	db := filepath.Join(b.TempDir(), "peer.db")
	run := func(extra ...string) []byte {
		cmd := exec.Command(python, append([]string{"../scripts/bench/" + script, "--data", dump, "--db", db}, extra...)...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%s %v: %v", script, extra, err)
		}
		lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
		return lines[len(lines)-1]
	}
	var in struct {
		SQLiteVersion    string  `json:"sqlite_version"`
		SQLiteVecVersion string  `json:"sqlite_vec_version"`
		LanceDBVersion   string  `json:"lancedb_version"`
		IngestChunksPerS float64 `json:"ingest_chunks_per_s"`
		BytesPerChunk    float64 `json:"bytes_per_chunk"`
	}
	if line := run(); json.Unmarshal(line, &in) != nil {
		b.Fatalf("%s's last line %q is not its figures", script, line)
	}
	var served struct {
		BM25, Vector, Hybrid peerLatency
		PeakRSSBytes         float64 `json:"peak_rss_bytes"`
		RSSAnonBytes         float64 `json:"rss_anon_bytes"`
		RSSFileBytes         float64 `json:"rss_file_bytes"`
	}
	if line := run("--serve"); json.Unmarshal(line, &served) != nil {
		b.Fatalf("%s --serve's last line %q is not its figures", script, line)
	}
	version := "LanceDB " + in.LanceDBVersion
	if in.SQLiteVersion != "" {
		version = fmt.Sprintf("SQLite %s, sqlite-vec %s", in.SQLiteVersion, in.SQLiteVecVersion)
	}
	return compareFigures{
		version:       version,
		ingest:        in.IngestChunksPerS,
		bytesPerChunk: in.BytesPerChunk,
		latency:       map[string][2]float64{"bm25": served.BM25.pair(), "vector": served.Vector.pair(), "hybrid": served.Hybrid.pair()},
		peakRSS:       served.PeakRSSBytes,
		rssAnon:       served.RSSAnonBytes,
		rssFile:       served.RSSFileBytes,
	}
}

type peerLatency struct {
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
}

func (l peerLatency) pair() [2]float64 { return [2]float64{l.P50, l.P99} }

// dump writes the items' chunks, their vectors and the queries in the
// peer's format (see scripts/bench/sqlite_peer.py), unless dir has them.
func (w *wikiBench) dump(b *testing.B, dir string, items []wikiItem, queries []wikiQuery) {
	b.Helper()
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); err == nil {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	create := func(name string) (*os.File, *bufio.Writer) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		return f, bufio.NewWriterSize(f, 1<<20)
	}
	closeFile := func(f *os.File, bw *bufio.Writer) {
		if err := errors.Join(bw.Flush(), f.Close()); err != nil {
			b.Fatal(err)
		}
	}
	cf, cw := create("chunks.jsonl")
	vf, vw := create("vectors.f32")
	enc := json.NewEncoder(cw)
	rows := 0
	var le [4]byte
	for _, it := range items {
		for j, c := range it.p.chunks {
			if err := enc.Encode(map[string]string{"ref": it.ref(), "title": it.p.title, "text": it.p.text[c.Start:c.End]}); err != nil {
				b.Fatal(err)
			}
			for _, x := range w.vector(it.p.rows[j]) {
				binary.LittleEndian.PutUint32(le[:], math.Float32bits(x))
				vw.Write(le[:])
			}
			rows++
		}
	}
	closeFile(cf, cw)
	closeFile(vf, vw)
	qf, qw := create("queries.jsonl")
	enc = json.NewEncoder(qw)
	for _, q := range queries {
		if err := enc.Encode(map[string]any{"text": q.text, "vector": q.vector}); err != nil {
			b.Fatal(err)
		}
	}
	closeFile(qf, qw)
	meta, err := json.Marshal(map[string]int{"dims": w.spec.Dimensions, "chunks": rows, "warmup": wikiWarmup, "limit": wikiLimit, "batch": wikiBatch})
	if err != nil {
		b.Fatal(err)
	}
	// meta.json last: its presence says the dump is complete.
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), meta, 0o644); err != nil {
		b.Fatal(err)
	}
}
