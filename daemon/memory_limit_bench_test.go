package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/benchenv"
)

// BenchmarkServing_MemoryLimit measures what serving needs of the machine's
// memory, page cache included (make bench-memory; issue 31): the resident
// set counts only the store pages a process has mapped, and the kernel
// drops those under pressure, so the question a user sizing systemd's
// MemoryMax or a container asks is how search latency holds up when the
// daemon's anonymous memory and every page it reads must fit one budget.
//
// It ingests CTXD_BENCH_MEMORY_CHUNKS wikipedia chunks (default 100000,
// vectors supplied) into a daemon with the model of CTXD_MODEL_DIR, then,
// with no limit and with each limit in CTXD_BENCH_MEMORY_LIMITS (MiB,
// default 450,350,250), restarts it in a new memory cgroup with the store,
// the binary, the model and ONNX Runtime evicted from the page cache (so
// every page it reads is charged to it), runs the queries once per mode to
// warm up and once measured, and reports p50/p99 per mode, the cgroup's peak
// (anonymous memory and page cache) and the peak RSS. The last line is
// "memory within_mib=<the smallest limit whose p99 of every mode is within
// 1.25x of the unlimited run's, or none> unlimited_peak_mib=<the unlimited
// run's cgroup peak>". It needs write access to a cgroup hierarchy with
// the memory controller (root).
func BenchmarkServing_MemoryLimit(b *testing.B) {
	n := benchenv.Int(b, "CTXD_BENCH_MEMORY_CHUNKS", compareDefaultChunks)
	limits := memoryLimits(b)
	cg := findMemoryCgroups(b)
	w := loadWikiBench(b)
	items, chunks := w.items(n)
	queries := w.queries(b, items)

	tmp := shortTempDir(b)
	dataDir, socket := filepath.Join(tmp, "data"), filepath.Join(tmp, "s.sock")
	args := modelArgs(b, ortLib(b))
	p := startProcess(b, dataDir, socket, args...)
	conn := dial(b, "unix://"+socket)
	admin := ctxdv1.NewAdminServiceClient(conn)
	st := waitModel(b, admin, 2*time.Minute)
	w.ingest(b, conn, items, st.Embedding.ModelId)
	waitCompacted(b, admin)
	conn.Close()
	p.stop(b)

	read := []string{dataDir, ctxdBinary(b), modelDir(b), ortLib(b)}
	var rows []limitFigures
	for _, limit := range append([]int{0}, limits...) {
		fmt.Fprintf(os.Stderr, "%s serving within %s\n", time.Now().Format("15:04:05"), limitName(limit))
		rows = append(rows, serveWithin(b, cg, limit, read, dataDir, socket, args, queries))
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- serving within a memory limit: %d chunks (%d items) of wikipedia-passages, model %s, vectors supplied\n", chunks, len(items), filepath.Base(modelDir(b)))
	fmt.Fprintf(&sb, "per limit: the daemon restarted in a new memory cgroup (%s) with its store, binary, model and ONNX Runtime evicted from the page cache; %d queries one at a time per mode (query vector supplied, limit %d) once to warm up, then once measured; cgroup peak = anonymous memory + the page cache it read\n", cg.kind, len(queries), wikiLimit)
	fmt.Fprintf(&sb, "  %-10s %-18s %-18s %-18s %-16s %s\n", "limit MiB", "bm25 p50/p99 ms", "vector p50/p99 ms", "hybrid p50/p99 ms", "cgroup peak MiB", "RSS peak MiB")
	within := "none"
	for i, r := range rows {
		fmt.Fprintf(&sb, "  %-10s", limitName(r.limit))
		for _, l := range r.latency {
			fmt.Fprintf(&sb, " %-18s", fmt.Sprintf("%.2f / %.2f", l[0], l[1]))
		}
		fmt.Fprintf(&sb, " %-16d %d\n", r.cgroupPeak>>20, r.peakRSS>>20)
		if i > 0 && r.holds(rows[0]) {
			within = strconv.Itoa(r.limit)
		}
	}
	fmt.Fprintf(&sb, "memory within_mib=%s unlimited_peak_mib=%d\n", within, rows[0].cgroupPeak>>20)
	fmt.Print(sb.String())
}

// limitTolerance is how much slower at p99 than unlimited a limit may serve
// and still count as holding it.
const limitTolerance = 1.25

// limitFigures is one run of BenchmarkServing_MemoryLimit.
type limitFigures struct {
	limit               int           // MiB, 0 for none
	latency             [3][2]float64 // bm25, vector, hybrid: p50, p99 ms
	cgroupPeak, peakRSS int64         // bytes
}

// holds reports whether every mode's p99 is within limitTolerance of base's.
func (f limitFigures) holds(base limitFigures) bool {
	for i, l := range f.latency {
		if l[1] > limitTolerance*base.latency[i][1] {
			return false
		}
	}
	return true
}

func limitName(mib int) string {
	if mib == 0 {
		return "none"
	}
	return strconv.Itoa(mib)
}

// memoryLimits reads CTXD_BENCH_MEMORY_LIMITS, MiB, largest first.
func memoryLimits(b *testing.B) []int {
	raw := os.Getenv("CTXD_BENCH_MEMORY_LIMITS")
	if raw == "" {
		raw = "450,350,250"
	}
	var out []int
	for _, s := range strings.Split(raw, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 64 {
			b.Fatalf("CTXD_BENCH_MEMORY_LIMITS=%q: want limits in MiB of at least 64, comma-separated", raw)
		}
		out = append(out, v)
	}
	return out
}

// serveWithin restarts the daemon on dataDir inside a new memory cgroup
// limited to limit MiB (0: unlimited), after evicting the files in read
// from the page cache, and measures it.
func serveWithin(b *testing.B, cg memoryCgroups, limit int, read []string, dataDir, socket string, args []string, queries []wikiQuery) limitFigures {
	dir := cg.create(b, int64(limit)<<20)
	for _, p := range read {
		evictPageCache(b, p)
	}
	// The shell joins the cgroup and then becomes the daemon, so every page
	// the daemon touches is charged to the cgroup from its first.
	launch := []string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(dir, "cgroup.procs")}
	p := startProcessVia(b, launch, nil, dataDir, socket, args...)
	defer p.stop(b)
	waitSearchServed(b, socket, queries[0].text)
	conn := dial(b, "unix://"+socket)
	defer conn.Close()
	search := ctxdv1.NewSearchServiceClient(conn)
	modes := []struct {
		name string
		mode ctxdv1.SearchMode
	}{{"bm25", ctxdv1.SearchMode_SEARCH_MODE_BM25}, {"vector", ctxdv1.SearchMode_SEARCH_MODE_VECTOR}, {"hybrid", ctxdv1.SearchMode_SEARCH_MODE_HYBRID}}
	for _, m := range modes {
		searchLatency(b, search, queries, m.name, m.mode, m.name != "bm25")
	}
	f := limitFigures{limit: limit}
	for i, m := range modes {
		l := searchLatency(b, search, queries, m.name, m.mode, m.name != "bm25")
		f.latency[i] = [2]float64{l.p[0], l.p[2]}
	}
	f.peakRSS = procStatusBytes(b, p.cmd.Process.Pid, "VmHWM")
	f.cgroupPeak = cg.peak(b, dir)
	return f
}

// memoryCgroups is a cgroup hierarchy with the memory controller that the
// bench may create cgroups in: version 1's memory hierarchy or version 2's
// unified one.
type memoryCgroups struct {
	root string
	kind string // "cgroup v1" or "cgroup v2"
	// Files of a cgroup: its hard limit and its peak usage.
	limitFile, peakFile string
}

func findMemoryCgroups(b *testing.B) memoryCgroups {
	const v2, v1 = "/sys/fs/cgroup", "/sys/fs/cgroup/memory"
	if ctl, err := os.ReadFile(filepath.Join(v2, "cgroup.controllers")); err == nil && strings.Contains(" "+string(ctl)+" ", " memory ") {
		// Children get the controller only when the parent hands it down.
		if err := os.WriteFile(filepath.Join(v2, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
			b.Fatalf("enable the memory controller for new cgroups under %s: %v (run as root)", v2, err)
		}
		return memoryCgroups{root: v2, kind: "cgroup v2", limitFile: "memory.max", peakFile: "memory.peak"}
	}
	if _, err := os.Stat(filepath.Join(v1, "memory.limit_in_bytes")); err == nil {
		return memoryCgroups{root: v1, kind: "cgroup v1", limitFile: "memory.limit_in_bytes", peakFile: "memory.max_usage_in_bytes"}
	}
	b.Fatal("no cgroup hierarchy with the memory controller under /sys/fs/cgroup: this measurement needs one, writable (root)")
	return memoryCgroups{}
}

// create makes a new cgroup limited to limit bytes (0: unlimited), removed
// when b ends (after the processes started later are gone).
func (c memoryCgroups) create(b *testing.B, limit int64) string {
	dir := filepath.Join(c.root, fmt.Sprintf("ctxd-bench-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatalf("create a memory cgroup: %v (this measurement needs root)", err)
	}
	b.Cleanup(func() {
		// The daemon's exit is reaped before cleanups run, but the kernel
		// may take a moment to let the cgroup go.
		for i := 0; ; i++ {
			err := os.Remove(dir)
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				return
			}
			if i == 100 {
				b.Errorf("remove cgroup %s: %v", dir, err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	if limit > 0 {
		if err := os.WriteFile(filepath.Join(dir, c.limitFile), []byte(strconv.FormatInt(limit, 10)), 0); err != nil {
			b.Fatalf("limit cgroup %s: %v", dir, err)
		}
	}
	return dir
}

// peak is the highest memory use cgroup dir has seen, in bytes.
func (c memoryCgroups) peak(b *testing.B, dir string) int64 {
	raw, err := os.ReadFile(filepath.Join(dir, c.peakFile))
	if err != nil {
		b.Fatalf("read the peak of cgroup %s: %v (memory.peak needs Linux 5.19)", dir, err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		b.Fatalf("%s/%s: %q: %v", dir, c.peakFile, raw, err)
	}
	return v
}

// evictPageCache drops the cached pages of path (a file, or every file
// under a directory, following links to files), so that the next process to
// read them is charged for them.
func evictPageCache(b *testing.B, path string) {
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(p) // follows a link
		if err != nil {
			return err
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return err
		}
		// Dirty pages cannot be dropped: write them first.
		if err := f.Sync(); err != nil {
			return err
		}
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
	if err != nil {
		b.Fatalf("evict %s from the page cache: %v", path, err)
	}
}
