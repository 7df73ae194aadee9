package daemon

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// These tests run the real ctxd binary as a separate process, so that it can
// be killed with SIGKILL mid-write.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// ctxdBinary builds cmd/ctxd once per test run, unless CTXD_TEST_BINARY
// names a build to run instead: benchmarks then compare two builds side by
// side, each run by its own bench process at the same time.
func ctxdBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if b := os.Getenv("CTXD_TEST_BINARY"); b != "" {
			binPath = b
			return
		}
		if binDir, buildErr = os.MkdirTemp("", "ctxdbin"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "ctxd")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/ctxd/ctxd/cmd/ctxd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// daemonProcess is a ctxd serve child process.
type daemonProcess struct {
	cmd    *exec.Cmd
	socket string
	exited chan struct{}
	err    error // the exit status, once exited is closed
}

// startProcess runs `ctxd serve` on dataDir with extra flags and waits until
// health is SERVING.
func startProcess(t testing.TB, dataDir, socket string, args ...string) *daemonProcess {
	return startProcessEnv(t, nil, dataDir, socket, args...)
}

// startProcessEnv is startProcess with extra KEY=VALUE environment.
func startProcessEnv(t testing.TB, env []string, dataDir, socket string, args ...string) *daemonProcess {
	t.Helper()
	return startProcessVia(t, nil, env, dataDir, socket, args...)
}

// startProcessVia is startProcessEnv run through the command launch (nil:
// none), which is given the binary and its arguments to exec.
func startProcessVia(t testing.TB, launch, env []string, dataDir, socket string, args ...string) *daemonProcess {
	t.Helper()
	args = append([]string{ctxdBinary(t), "serve", "--data-dir", dataDir, "--socket", socket, "--http", "", "--model-dir", "", "--log-level", "warn"}, args...)
	args = append(slices.Clone(launch), args...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dataDir, "..", "config"))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &daemonProcess{cmd: cmd, socket: socket, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	health := healthpb.NewHealthClient(dial(t, "unix://"+socket))
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.Status == healthpb.HealthCheckResponse_SERVING {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not serving after 30s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops the process with SIGKILL: no chance to flush or clean up.
func (p *daemonProcess) kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// stop sends SIGTERM and requires a clean exit within 15s.
func (p *daemonProcess) stop(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		if p.err != nil {
			t.Fatalf("exit after SIGTERM: %v", p.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("daemon did not stop within 15s of SIGTERM")
	}
}

// loadThenKill runs writers concurrently, each calling write(w, i) for
// i = 0, 1, … until a call fails, kills p with SIGKILL without warning once
// n writes were acknowledged, and returns the keys write returned for every
// acknowledged write.
func loadThenKill(t testing.TB, p *daemonProcess, writers, n int, write func(w, i int) (string, error)) []string {
	t.Helper()
	return loadUntilKill(t, p, writers, func(acked int) bool { return acked >= n }, write)
}

// loadUntilKill is loadThenKill that kills once ready(number acknowledged)
// is true; ready is polled every 20 ms while the writers run.
func loadUntilKill(t testing.TB, p *daemonProcess, writers int, ready func(int) bool, write func(w, i int) (string, error)) []string {
	t.Helper()
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				key, err := write(w, i)
				if err != nil {
					return // the daemon died
				}
				mu.Lock()
				acked = append(acked, key)
				mu.Unlock()
			}
		}()
	}
	for {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if ready(n) {
			break
		}
	}
	p.kill(t)
	wg.Wait()
	return acked
}

func TestProcess_KillDuringWritesLosesNothing(t *testing.T) {
	dir := shortTempDir(t)
	dataDir, socket := filepath.Join(dir, "data"), filepath.Join(dir, "s.sock")
	p := startProcess(t, dataDir, socket)
	c := ctxdv1.NewVfsServiceClient(dial(t, "unix://"+socket))

	body := func(ref string) string { return "item " + ref + "\n" }
	acked := loadThenKill(t, p, 8, 400, func(w, i int) (string, error) {
		ref := fmt.Sprintf("agent:/w%d/item-%05d.md", w, i)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: body(ref)}})
		return ref, err
	})

	startProcess(t, dataDir, socket)
	c = ctxdv1.NewVfsServiceClient(dial(t, "unix://"+socket))
	ctx := context.Background()
	for _, ref := range acked {
		r, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: ref})
		if err != nil {
			t.Fatalf("acknowledged write %s lost after kill -9: %v", ref, err)
		}
		if r.Content != body(ref) {
			t.Fatalf("%s = %q after restart, want %q", ref, r.Content, body(ref))
		}
	}
	drives, err := c.ListDrives(ctx, &ctxdv1.ListDrivesRequest{})
	if err != nil || len(drives.Drives) != 1 || drives.Drives[0].ItemCount < int64(len(acked)) {
		t.Errorf("drives after restart = %v, %v; want >= %d items", drives, err, len(acked))
	}
	t.Logf("%d acknowledged writes survived kill -9", len(acked))
}

func TestProcess_SIGTERMStopsGracefully(t *testing.T) {
	dir := shortTempDir(t)
	p := startProcess(t, filepath.Join(dir, "data"), filepath.Join(dir, "s.sock"))
	p.stop(t)
	if _, err := os.Stat(p.socket); !os.IsNotExist(err) {
		t.Errorf("socket still present after stop: %v", err)
	}
}

// TestProcess_NotifiesSystemd stands in for systemd: it listens on a
// NOTIFY_SOCKET and expects READY=1 once the daemon serves.
func TestProcess_NotifiesSystemd(t *testing.T) {
	dir := shortTempDir(t)
	notify := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notify, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	startProcessEnv(t, []string{"NOTIFY_SOCKET=" + notify}, filepath.Join(dir, "data"), filepath.Join(dir, "s.sock"))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 256)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	if got := string(buf[:n]); !strings.Contains(got, "READY=1") {
		t.Errorf("notification = %q, want READY=1", got)
	}
}

// TestProcess_KillDuringEmbeddingAndSnapshotSave crashes the real daemon, with
// the real model, at the two moments the vector index is most exposed, and
// after each requires doctor to be clean and vector search to find sampled
// acknowledged items:
//
//  1. kill -9 while writers stream notes and the background worker is part-way
//     through embedding them;
//  2. kill -9 in the middle of saving the vector snapshot. SIGTERM makes
//     Close save it; vectors.snap.tmp is made a one-page named pipe first,
//     so the daemon blocks inside that write, with the pipe full, until the
//     test has seen the snapshot's header and killed it. The bytes it wrote
//     are then left as the torn temp file a crash leaves.
//
// Before both, a clean stop leaves a snapshot, so restarts load it and replay
// the outbox after it.
func TestProcess_KillDuringEmbeddingAndSnapshotSave(t *testing.T) {
	dir := shortTempDir(t)
	dataDir, socket := filepath.Join(dir, "data"), filepath.Join(dir, "s.sock")
	snap := filepath.Join(dataDir, "index", "vectors.snap")
	args := modelArgs(t, ortLib(t))
	start := func() (*daemonProcess, *grpc.ClientConn) {
		p := startProcess(t, dataDir, socket, args...)
		return p, dial(t, "unix://"+socket)
	}
	var notes []string // the refs of every acknowledged note; the content is noteText(ref)
	writeNote := func(c ctxdv1.VfsServiceClient, ref string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: noteText(ref)}})
		return err
	}

	p, conn := start()
	for i := range 40 {
		ref := fmt.Sprintf("notes:/first/n%03d.txt", i)
		if err := writeNote(ctxdv1.NewVfsServiceClient(conn), ref); err != nil {
			t.Fatal(err)
		}
		notes = append(notes, ref)
	}
	requireVectorIndexSound(t, conn, notes)
	p.stop(t)
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("no vector snapshot after a clean stop: %v", err)
	}

	// 1. Kill while the worker embeds a backlog that writers keep growing.
	p, conn = start()
	admin := ctxdv1.NewAdminServiceClient(conn)
	base := waitEmbedded(t, conn, 2*time.Minute).Embedding.EmbeddedChunks
	var atKill *ctxdv1.EmbeddingStatus
	c := ctxdv1.NewVfsServiceClient(conn)
	deadline := time.Now().Add(time.Minute)
	acked := loadUntilKill(t, p, 4, func(n int) bool {
		st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
		if err == nil {
			atKill = st.Embedding
		}
		if err != nil || time.Now().After(deadline) {
			t.Errorf("no backlog part-way embedded within a minute: status %v, %v", atKill, err)
			return true
		}
		return n >= 150 && atKill.EmbeddedChunks >= base+20 && atKill.PendingChunks > 0
	}, func(w, i int) (string, error) {
		ref := fmt.Sprintf("notes:/load/w%d-%04d.txt", w, i)
		return ref, writeNote(c, ref)
	})
	if t.Failed() {
		t.FailNow()
	}
	notes = append(notes, acked...)
	t.Logf("killed during embedding: %d notes acknowledged, %d chunks embedded since start, %d pending", len(acked), atKill.EmbeddedChunks-base, atKill.PendingChunks)

	p, conn = start()
	requireVectorIndexSound(t, conn, notes)

	// 2. Kill while Close saves the snapshot; more notes make it have
	// something to save.
	for i := range 20 {
		ref := fmt.Sprintf("notes:/last/n%03d.txt", i)
		if err := writeNote(ctxdv1.NewVfsServiceClient(conn), ref); err != nil {
			t.Fatal(err)
		}
		notes = append(notes, ref)
	}
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 2*time.Minute)
	before, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	torn := killDuringSnapshotSave(t, p, snap+".tmp")
	if after, err := os.ReadFile(snap); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the previous snapshot changed under a killed save (%d bytes before, %d after, %v)", len(before), len(after), err)
	}
	t.Logf("killed while saving the snapshot: %d bytes written to the temp file, previous snapshot %d bytes", torn, len(before))

	p, conn = start()
	requireVectorIndexSound(t, conn, notes)
	p.stop(t)
	if _, err := os.Stat(snap + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the torn temp snapshot is still there after a clean stop: %v", err)
	}
}

// killDuringSnapshotSave makes tmp (the snapshot's temp file) a named pipe,
// sends SIGTERM so that Close saves the snapshot into it, and kills p with
// SIGKILL once the snapshot's header has come through while the daemon is
// still writing. It then replaces the pipe with a regular file holding every
// byte the daemon wrote, as a crash would leave it, and returns their number.
func killDuringSnapshotSave(t *testing.T, p *daemonProcess, tmp string) int {
	t.Helper()
	if err := syscall.Mkfifo(tmp, 0o600); err != nil {
		t.Fatal(err)
	}
	// Non-blocking, so the open succeeds now and the daemon's open for
	// writing does not wait; reads still wait in the poller.
	pipe, err := os.OpenFile(tmp, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	// One page of pipe buffer: any snapshot larger keeps the daemon blocked
	// in its write until the kill.
	raw, err := pipe.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fcntlErr error
	if err := raw.Control(func(fd uintptr) { _, fcntlErr = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, os.Getpagesize()) }); err != nil || fcntlErr != nil {
		t.Fatalf("shrinking the pipe: %v, %v", err, fcntlErr)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// header: magic | dims u32 | seq u64
	header := make([]byte, len("CTXDVEC5")+4+8)
	deadline := time.Now().Add(30 * time.Second)
	for got := 0; got < len(header); {
		pipe.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := pipe.Read(header[got:])
		got += n
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot written within 30s of SIGTERM (%d bytes, %v)", got, err)
		}
		if n == 0 && err == io.EOF { // no writer yet
			time.Sleep(10 * time.Millisecond)
		}
	}
	if string(header[:8]) != "CTXDVEC5" || binary.LittleEndian.Uint32(header[8:]) != 384 || binary.LittleEndian.Uint64(header[12:]) == 0 {
		t.Fatalf("pipe carries %x, not a snapshot header", header)
	}
	select {
	case <-p.exited:
		t.Fatalf("daemon exited (%v) before the kill: the snapshot fit the pipe", p.err)
	default:
	}
	p.kill(t)
	pipe.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, err := io.ReadAll(pipe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	written := append(header, rest...)
	if err := os.WriteFile(tmp, written, 0o600); err != nil {
		t.Fatal(err)
	}
	return len(written)
}

// requireVectorIndexSound waits for the daemon to load the model and catch
// up, then requires doctor to find no drift, every note to have its vector, and
// vector search for the text of every 25th note to rank that note first.
func requireVectorIndexSound(t *testing.T, conn *grpc.ClientConn, notes []string) {
	t.Helper()
	admin := ctxdv1.NewAdminServiceClient(conn)
	waitEmbedded(t, conn, 2*time.Minute) // the model is loaded, for the queries
	waitIndexed(t, admin, 2*time.Minute)
	doc, err := admin.Doctor(context.Background(), &ctxdv1.DoctorRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Ok || doc.StoreChunks < int64(len(notes)) || doc.StoreVectors != doc.StoreChunks || doc.VectorChunks != doc.StoreVectors {
		t.Fatalf("doctor after kill -9 (%d notes acknowledged): %v", len(notes), doc)
	}
	for i := 0; i < len(notes); i += 25 {
		ref := notes[i]
		r := doSearch(t, conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_VECTOR, Limit: 3,
			Queries: []*ctxdv1.SearchQuery{{Text: noteText(ref)}}})
		if len(r.Results) == 0 || r.Results[0].Ref != ref || r.Results[0].LegRanks[0].Score < 0.99 {
			t.Fatalf("vector search for acknowledged %s after kill -9 (mode used %v, %q): %v", ref, r.ModeUsed, r.ModeReason, r.Results)
		}
	}
}

// noteText is a sentence of its own for each ref, so that searching a note's
// text in vector mode finds that note first (near cosine 1) and no other.
func noteText(ref string) string {
	h := fnv.New64a()
	h.Write([]byte(ref))
	r := rand.New(rand.NewPCG(h.Sum64(), 0))
	pick := func(words string) string {
		f := strings.Fields(words)
		return f[r.IntN(len(f))]
	}
	return fmt.Sprintf("The %s %s %s the %s %s near the %s %s while the %s %s.",
		pick("quiet noisy old young clever tired brave lazy bright gentle"),
		pick("fox otter heron badger lynx beaver falcon moose walrus gecko"),
		pick("chases watches paints builds repairs carries hides sells counts measures"),
		pick("red blue green yellow purple silver golden black white orange"),
		pick("kettle ladder violin bicycle lantern anchor compass teapot rocket piano"),
		pick("frozen sunny misty windy rocky sandy muddy grassy dusty stormy"),
		pick("harbour market bridge tower garden station library quarry orchard castle"),
		pick("baker sailor farmer miner pilot doctor judge poet tailor chemist"),
		pick("sleeps sings argues dances waits laughs cooks reads whistles travels"))
}
