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
)

// Parameters of BenchmarkIngestCompare.
const (
	compareDefaultChunks = 100000
	compareRounds        = 3
)

// BenchmarkIngestCompare measures ctxd against SQLite FTS5 + sqlite-vec on
// the same wikipedia chunks, vectors and queries (make
// bench-ingest-compare; issue 14). ctxd runs as the real daemon process and
// is written through WriteBatch with the chunk vectors supplied, as in
// BenchmarkSearchWikipedia; the peer is scripts/bench/sqlite_peer.py run by
// CTXD_BENCH_PYTHON on a dump of the same data (in .cache/bench). Rounds
// alternate ctxd and the peer, compareRounds each, and the table gives the
// median of each figure with its range. CTXD_BENCH_COMPARE_CHUNKS sets the
// size (default 100000).
//
// Per round and system: index-only ingest from the first write until
// everything is searchable (ctxd: the indexes applied the outbox; SQLite:
// the last commit, with synchronous=FULL as ctxd acknowledges durably),
// disk bytes per chunk after the ingest, search latency p50/p99 of bm25,
// vector and hybrid with the query vector supplied (500 queries one at a
// time after 50 warm-up) and peak RSS. The last line of the output is
// "ingest ctxd=<chunks/s> sqlite=<chunks/s> bytes_per_chunk=<ctxd's>".
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
	defer func() {
		if w.model != nil {
			w.model.Close()
		}
	}()
	items, chunks := w.items(n)
	queries := w.queries(b, items)
	dump := filepath.Join(benchCacheDir, fmt.Sprintf("compare-%s-%d", w.spec.ID, chunks))
	w.dump(b, dump, items, queries)

	var ctxd, peer []compareFigures
	for r := range compareRounds {
		fmt.Fprintf(os.Stderr, "%s round %d/%d: ctxd\n", time.Now().Format("15:04:05"), r+1, compareRounds)
		ctxd = append(ctxd, w.compareCtxd(b, items, queries))
		fmt.Fprintf(os.Stderr, "%s round %d/%d: sqlite\n", time.Now().Format("15:04:05"), r+1, compareRounds)
		peer = append(peer, comparePeer(b, python, dump))
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- ingest compare: %d chunks (%d items) of wikipedia-passages, vectors supplied, %d interleaved rounds; median [min-max]\n", chunks, len(items), compareRounds)
	fmt.Fprintf(&sb, "%s\n", fmt.Sprintf(wikiConstruction, wikiSample, wikiSample, wikiNoise))
	fmt.Fprintf(&sb, "ctxd: the daemon process over its unix socket, WriteBatch of %d items, %d in flight, ingest until the indexes applied everything\n", wikiBatch, wikiWriters)
	fmt.Fprintf(&sb, "sqlite: %s, one connection, transactions of %d chunks, WAL, synchronous=FULL\n", peer[0].version, wikiBatch)
	fmt.Fprintf(&sb, "search: %d queries one at a time after %d warm-up, limit %d, query vector supplied; hybrid fuses both legs\n", wikiQueries, wikiWarmup, wikiLimit)
	fmt.Fprintf(&sb, "  %-22s %-26s %-26s %s\n", "", "ctxd", "sqlite fts5 + sqlite-vec", "ctxd/sqlite")
	row := func(name string, get func(compareFigures) float64, format string) float64 {
		c, p := summarize(ctxd, get), summarize(peer, get)
		fmt.Fprintf(&sb, "  %-22s %-26s %-26s %.2f\n", name, c.format(format), p.format(format), c.median/p.median)
		return c.median
	}
	ingest := row("ingest chunks/s", func(f compareFigures) float64 { return f.ingest }, "%.0f")
	perChunk := row("disk B/chunk", func(f compareFigures) float64 { return f.bytesPerChunk }, "%.0f")
	for _, m := range []string{"bm25", "vector", "hybrid"} {
		row(m+" p50 ms", func(f compareFigures) float64 { return f.latency[m][0] }, "%.2f")
		row(m+" p99 ms", func(f compareFigures) float64 { return f.latency[m][1] }, "%.2f")
	}
	row("peak RSS MiB", func(f compareFigures) float64 { return f.peakRSS / (1 << 20) }, "%.0f")
	sqliteIngest := summarize(peer, func(f compareFigures) float64 { return f.ingest }).median
	fmt.Fprintf(&sb, "goals: ingest >= 5,000 chunks/s: %.0f; >= half of SQLite's %.0f: %v; <= 3 KB/chunk: %.0f B\n",
		ingest, sqliteIngest, ingest >= sqliteIngest/2, perChunk)
	fmt.Fprintf(&sb, "ingest ctxd=%.0f sqlite=%.0f bytes_per_chunk=%.0f\n", ingest, sqliteIngest, perChunk)
	fmt.Print(sb.String())
}

// compareFigures is one round of one system.
type compareFigures struct {
	version       string
	ingest        float64 // chunks/s
	bytesPerChunk float64
	latency       map[string][2]float64 // mode -> p50, p99 ms
	peakRSS       float64               // bytes
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

// compareCtxd ingests items into a new daemon and measures it.
func (w *wikiBench) compareCtxd(b *testing.B, items []wikiItem, queries []wikiQuery) compareFigures {
	tmp := shortTempDir(b)
	dataDir, socket := filepath.Join(tmp, "data"), filepath.Join(tmp, "s.sock")
	p := startProcess(b, dataDir, socket, modelArgs(b, ortLib(b))...)
	defer p.stop(b)
	conn := dial(b, "unix://"+socket)
	st := waitModel(b, ctxdv1.NewAdminServiceClient(conn), 2*time.Minute)
	_, ingested, chunks := w.ingest(b, conn, items, st.Embedding.ModelId)
	f := compareFigures{
		ingest:        float64(chunks) / ingested.Seconds(),
		bytesPerChunk: float64(dirBytes(b, dataDir)) / float64(chunks),
		latency:       map[string][2]float64{},
	}
	search := ctxdv1.NewSearchServiceClient(conn)
	for m, mode := range map[string]ctxdv1.SearchMode{"bm25": ctxdv1.SearchMode_SEARCH_MODE_BM25, "vector": ctxdv1.SearchMode_SEARCH_MODE_VECTOR, "hybrid": ctxdv1.SearchMode_SEARCH_MODE_HYBRID} {
		l := searchLatency(b, search, queries, m, mode, m != "bm25")
		f.latency[m] = [2]float64{l.p[0], l.p[2]}
	}
	f.peakRSS = float64(procStatusBytes(b, p.cmd.Process.Pid, "VmHWM"))
	return f
}

// comparePeer runs the SQLite peer on the dump and reads its figures.
func comparePeer(b *testing.B, python, dump string) compareFigures {
	db := filepath.Join(b.TempDir(), "peer.db")
	cmd := exec.Command(python, "../scripts/bench/sqlite_peer.py", "--data", dump, "--db", db)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("sqlite peer: %v", err)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	var r struct {
		SQLiteVersion    string  `json:"sqlite_version"`
		SQLiteVecVersion string  `json:"sqlite_vec_version"`
		Chunks           int     `json:"chunks"`
		IngestChunksPerS float64 `json:"ingest_chunks_per_s"`
		BytesPerChunk    float64 `json:"bytes_per_chunk"`
		PeakRSSBytes     float64 `json:"peak_rss_bytes"`
		BM25             peerLatency
		Vector           peerLatency
		Hybrid           peerLatency
	}
	if err := json.Unmarshal(lines[len(lines)-1], &r); err != nil {
		b.Fatalf("sqlite peer's last line %q: %v", lines[len(lines)-1], err)
	}
	return compareFigures{
		version:       fmt.Sprintf("SQLite %s, sqlite-vec %s", r.SQLiteVersion, r.SQLiteVecVersion),
		ingest:        r.IngestChunksPerS,
		bytesPerChunk: r.BytesPerChunk,
		latency:       map[string][2]float64{"bm25": r.BM25.pair(), "vector": r.Vector.pair(), "hybrid": r.Hybrid.pair()},
		peakRSS:       r.PeakRSSBytes,
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
