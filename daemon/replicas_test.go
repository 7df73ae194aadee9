package daemon

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/pgtest"
)

// These tests run replicas, real daemons on real sockets, over one real
// PostgreSQL (internal/pgtest): a server of each test's own, so that a test
// may stop and start it.

// pgPassword goes into every store URL: the test server trusts its clients
// and ignores it, and no log, status or error may show it.
const pgPassword = "pw-4f1d9c"

// pgStore starts a PostgreSQL of the test's own and returns it with the URL
// of a fresh database on it (carrying pgPassword).
func pgStore(t testing.TB) (*pgtest.Server, string) {
	t.Helper()
	srv := pgtest.StartServer(t)
	return srv, srv.NewDatabase(t) + "&password=" + pgPassword
}

// replica is an in-process daemon serving a shared store, with a client
// connection and the log it wrote.
type replica struct {
	*testDaemon
	conn *grpc.ClientConn
	vfs  ctxdv1.VfsServiceClient
	log  *syncBuffer
	stop func()
}

// syncBuffer is a log destination several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startReplica starts a daemon with cfg on its store; stop (also run at
// cleanup) stops it gracefully. At cleanup its log must not hold the
// store's password.
func startReplica(t *testing.T, cfg Config) *replica {
	t.Helper()
	buf := &syncBuffer{}
	d, err := Start(context.Background(), cfg, slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := d.Stop(ctx); err != nil {
				t.Errorf("Stop: %v", err)
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if strings.Contains(buf.String(), pgPassword) {
			t.Errorf("the log of the replica on %s shows the store's password", cfg.Socket)
		}
	})
	conn := dial(t, "unix://"+cfg.Socket)
	return &replica{testDaemon: &testDaemon{Daemon: d, cfg: cfg}, conn: conn, vfs: ctxdv1.NewVfsServiceClient(conn), log: buf, stop: stop}
}

// replicaConfig is a test config (its own data dir and socket) on the
// shared store at url.
func replicaConfig(t *testing.T, url string) Config {
	cfg := testConfig(t)
	cfg.Store = url
	return cfg
}

func (r *replica) status(t *testing.T) *ctxdv1.StatusResponse {
	t.Helper()
	st, err := ctxdv1.NewAdminServiceClient(r.conn).Status(context.Background(), &ctxdv1.StatusRequest{})
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	return st
}

// bm25 searches r in BM25 mode for text and returns the refs found.
func (r *replica) bm25(t *testing.T, text string) []string {
	t.Helper()
	return resultRefs(doSearch(t, r.conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Limit: 10,
		Queries: []*ctxdv1.SearchQuery{{Text: text}}}))
}

// TestReplicas_ShareOneStore runs two replicas on one PostgreSQL: what one
// writes the other finds at its next search, deletes and history included;
// doctor on either is clean while the other writes; and each lists the other
// in its status.
func TestReplicas_ShareOneStore(t *testing.T) {
	_, url := pgStore(t)
	a := startReplica(t, replicaConfig(t, url))
	b := startReplica(t, replicaConfig(t, url))

	// Written on A, found by B's next search (its read-your-writes wait
	// covers the other replica's writes too).
	writeText(t, a.vfs, "team:/notes/alpha.md", "# Alpha\n\nThe zebraquokka migrates at dawn.\n")
	if got := b.bm25(t, "zebraquokka"); !slices.Equal(got, []string{"team:/notes/alpha.md"}) {
		t.Fatalf("B's search for A's write = %v", got)
	}
	// B's own write, found by B at once; and by A.
	writeText(t, b.vfs, "team:/notes/beta.md", "# Beta\n\nThe okapilynx sleeps at noon.\n")
	if got := b.bm25(t, "okapilynx"); !slices.Equal(got, []string{"team:/notes/beta.md"}) {
		t.Fatalf("B's search for its own write = %v", got)
	}
	if got := a.bm25(t, "okapilynx"); !slices.Equal(got, []string{"team:/notes/beta.md"}) {
		t.Fatalf("A's search for B's write = %v", got)
	}

	// Deleted on B: gone from A's results and reads.
	if _, err := b.vfs.Delete(context.Background(), &ctxdv1.DeleteRequest{Ref: "team:/notes/alpha.md"}); err != nil {
		t.Fatal(err)
	}
	if got := a.bm25(t, "zebraquokka"); len(got) != 0 {
		t.Fatalf("A still finds what B deleted: %v", got)
	}
	if _, err := a.vfs.Read(context.Background(), &ctxdv1.ReadRequest{Ref: "team:/notes/alpha.md"}); err == nil {
		t.Fatal("A reads what B deleted")
	}

	// History written on A, read on B.
	writeText(t, a.vfs, "team:/plan.md", "version one\n")
	writeText(t, a.vfs, "team:/plan.md", "version two\n")
	h, err := b.vfs.History(context.Background(), &ctxdv1.HistoryRequest{Ref: "team:/plan.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Revisions) != 2 || h.Revisions[0].Rev != 2 || h.Revisions[1].Op != "write" || h.Revisions[1].Actor != "owner" {
		t.Fatalf("B's history of A's item = %v", h.Revisions)
	}
	rev, err := b.vfs.ReadRevision(context.Background(), &ctxdv1.ReadRevisionRequest{Ref: "team:/plan.md", Rev: 1})
	if err != nil || rev.Content != "version one\n" {
		t.Fatalf("B reads revision 1 written on A: %v, %v", rev, err)
	}

	// Replica lag A -> B: how long after A acknowledged a write B's next
	// search returns it.
	var lags []time.Duration
	for i := range 40 {
		word := fmt.Sprintf("lagword%03dx", i)
		writeText(t, a.vfs, fmt.Sprintf("team:/lag/%03d.md", i), "about "+word+"\n")
		start := time.Now()
		if got := b.bm25(t, word); len(got) != 1 {
			t.Fatalf("B's first search after A acknowledged %s = %v", word, got)
		}
		lags = append(lags, time.Since(start))
	}
	slices.Sort(lags)
	t.Logf("A -> B, write acknowledged to found by a search: p50 %s, p99 %s, max %s (sequential writes, %d samples)",
		lags[len(lags)/2], lags[len(lags)*99/100], lags[len(lags)-1], len(lags))

	// Doctor on either replica checks its indexes against the shared store
	// while the other replica writes.
	stopW := make(chan struct{})
	var during atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stopW:
				return
			default:
			}
			if _, err := a.vfs.Write(context.Background(), &ctxdv1.WriteRequest{Ref: fmt.Sprintf("team:/during-doctor/%04d.md", during.Load()),
				Body: &ctxdv1.WriteRequest_Content{Content: "written while a doctor runs\n"}}); err != nil {
				t.Errorf("write on A during doctor: %v", err)
				return
			}
			during.Add(1)
		}
	})
	stopWriter := sync.OnceFunc(func() {
		close(stopW)
		wg.Wait()
	})
	defer stopWriter()
	for _, r := range []*replica{b, a} {
		doc, err := ctxdv1.NewAdminServiceClient(r.conn).Doctor(context.Background(), &ctxdv1.DoctorRequest{})
		if err != nil || !doc.Ok || doc.StoreChunks == 0 || doc.LexicalChunks != doc.StoreChunks {
			t.Fatalf("doctor on %s while A writes: %v, %v", r.cfg.Socket, doc, err)
		}
	}
	stopWriter()
	t.Logf("doctor clean on both replicas while A wrote %d items", during.Load())

	// Each lists both replicas, itself marked, and names the store
	// without its password.
	for _, r := range []*replica{a, b} {
		st := waitStatus(t, ctxdv1.NewAdminServiceClient(r.conn), 30*time.Second, "both replicas to report", func(st *ctxdv1.StatusResponse) bool {
			return len(st.Store.GetReplicas()) == 2
		}).Store
		if !st.Shared || !st.Reachable || strings.Contains(st.Location, pgPassword) || !strings.Contains(st.Location, "password=xxxxx") {
			t.Errorf("store status = %v", st)
		}
		for _, row := range st.Replicas {
			if row.Self != (row.Id == st.ReplicaId) || row.Gone || row.Host == "" {
				t.Errorf("replica row %v (this daemon is %s)", row, st.ReplicaId)
			}
		}
	}
	if ida, idb := a.status(t).Store.ReplicaId, b.status(t).Store.ReplicaId; ida == idb {
		t.Errorf("both replicas have the id %s", ida)
	}
}

// TestReplicas_KillDuringWritesLosesNothing kills replica A's process with
// SIGKILL while 8 writers write through it: every write A acknowledged is
// read back through replica B, which serves on throughout.
func TestReplicas_KillDuringWritesLosesNothing(t *testing.T) {
	_, url := pgStore(t)
	b := startReplica(t, replicaConfig(t, url))
	dir := shortTempDir(t)
	dataDir, socket := filepath.Join(dir, "data"), filepath.Join(dir, "s.sock")
	p := startProcess(t, dataDir, socket, "--store", url)
	c := ctxdv1.NewVfsServiceClient(dial(t, "unix://"+socket))

	body := func(ref string) string { return "item " + ref + " marmosetfig\n" }
	acked := loadThenKill(t, p, 8, 400, func(w, i int) (string, error) {
		ref := fmt.Sprintf("agent:/w%d/item-%05d.md", w, i)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: body(ref)}})
		return ref, err
	})
	for _, ref := range acked {
		r, err := b.vfs.Read(context.Background(), &ctxdv1.ReadRequest{Ref: ref})
		if err != nil {
			t.Fatalf("write %s acknowledged by A is lost after kill -9: %v", ref, err)
		}
		if r.Content != body(ref) {
			t.Fatalf("%s = %q through B, want %q", ref, r.Content, body(ref))
		}
	}
	// B serves on: its health, a write of its own, and search over A's
	// writes.
	resp, err := healthpb.NewHealthClient(b.conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("B's health after A was killed: %v, %v", resp, err)
	}
	writeText(t, b.vfs, "agent:/after-kill.md", "written on B after A died\n")
	res := doSearch(t, b.conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Limit: 1,
		Queries: []*ctxdv1.SearchQuery{{Text: "marmosetfig"}}})
	if len(res.Results) == 0 || res.Stale {
		t.Fatalf("B's search over A's writes: %v (stale %v: %s)", resultRefs(res), res.Stale, res.StaleReason)
	}
	drives, err := b.vfs.ListDrives(context.Background(), &ctxdv1.ListDrivesRequest{})
	if err != nil || len(drives.Drives) != 1 || drives.Drives[0].ItemCount < int64(len(acked)+1) {
		t.Errorf("drives through B = %v, %v; want >= %d items", drives, err, len(acked)+1)
	}
	t.Logf("%d writes acknowledged by A before kill -9, all read back through B", len(acked))
}

// TestReplicas_PostgresStopsAndStartsUnderLoad stops PostgreSQL while
// writers write through two replicas: both answer UNAVAILABLE with a hint
// and report NOT_SERVING, then serve again by themselves once it is back;
// no write acknowledged at any time is lost.
func TestReplicas_PostgresStopsAndStartsUnderLoad(t *testing.T) {
	srv, url := pgStore(t)
	reps := []*replica{startReplica(t, replicaConfig(t, url)), startReplica(t, replicaConfig(t, url))}

	var mu sync.Mutex
	acked := map[string]string{} // ref -> content of every acknowledged write
	var unavailable []error      // UNAVAILABLE answers to writes
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := reps[w%2]
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ref, content := fmt.Sprintf("load:/w%d/%05d.md", w, i), fmt.Sprintf("note %d of writer %d pangolinbay\n", i, w)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := r.vfs.Write(ctx, &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: content}})
				cancel()
				mu.Lock()
				if err == nil {
					acked[ref] = content
				} else if status.Code(err) == codes.Unavailable {
					unavailable = append(unavailable, err)
				}
				mu.Unlock()
				if err != nil { // PostgreSQL is down: back off rather than spin
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		}()
	}
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()
	waitFor(t, 30*time.Second, "100 writes acknowledged before the stop", func() bool { return ackedCount() >= 100 })

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	for _, r := range reps {
		waitHealth(t, r.conn, healthpb.HealthCheckResponse_NOT_SERVING)
		_, err := r.vfs.Write(context.Background(), &ctxdv1.WriteRequest{Ref: "probe:/while-down.md", Body: &ctxdv1.WriteRequest_Content{Content: "x"}})
		code, d := errorDetail(t, err)
		if code != codes.Unavailable || d.Type != ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE ||
			!strings.Contains(d.NextActionHint, "PostgreSQL at") || !strings.Contains(d.NextActionHint, "retries by itself") ||
			strings.Contains(err.Error(), pgPassword) {
			t.Fatalf("write while PostgreSQL is down: %v (hint %q)", err, d.NextActionHint)
		}
		st := r.status(t).Store
		if st.Reachable || st.UnreachableReason == "" || st.UnreachableSince == nil || strings.Contains(st.UnreachableReason, pgPassword) {
			t.Fatalf("status while PostgreSQL is down: %v", st)
		}
		if out := ctxdStatus(t, r.cfg.Socket); !strings.Contains(out, "store reachable:  NO since") || strings.Contains(out, pgPassword) {
			t.Fatalf("`ctxd status` while PostgreSQL is down:\n%s", out)
		}
	}
	t.Logf("both replicas NOT_SERVING %s after PostgreSQL stopped", time.Since(down).Round(time.Millisecond))
	atStop := ackedCount()

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	for _, r := range reps {
		waitHealth(t, r.conn, healthpb.HealthCheckResponse_SERVING)
	}
	t.Logf("both replicas SERVING again %s after PostgreSQL started", time.Since(up).Round(time.Millisecond))
	waitFor(t, 60*time.Second, "100 more writes acknowledged after the restart", func() bool { return ackedCount() >= atStop+100 })
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if len(unavailable) == 0 {
		t.Error("no writer saw UNAVAILABLE while PostgreSQL was down")
	}
	for _, r := range reps {
		for ref, content := range acked {
			got, err := r.vfs.Read(context.Background(), &ctxdv1.ReadRequest{Ref: ref})
			if err != nil || got.Content != content {
				t.Fatalf("acknowledged write %s through %s after the restart: %v, %v", ref, r.cfg.Socket, got, err)
			}
		}
		st := waitStatus(t, ctxdv1.NewAdminServiceClient(r.conn), time.Minute, "the indexes to catch up", func(st *ctxdv1.StatusResponse) bool {
			return st.Store.Reachable && st.Index.AppliedSequence >= st.Index.OutboxSequence
		})
		if st.ItemCount < int64(len(acked)) {
			t.Errorf("%d items after the restart, %d writes acknowledged", st.ItemCount, len(acked))
		}
	}
	t.Logf("%d writes acknowledged (%d UNAVAILABLE answers while down), all read back through both replicas", len(acked), len(unavailable))
}

// TestReplicas_EmbedOnce runs two replicas with the real model on one store:
// each chunk is embedded by one of them, so the model runs the two counted
// add up to the vectors the store holds, and each finds by meaning what the
// other embedded.
func TestReplicas_EmbedOnce(t *testing.T) {
	_, url := pgStore(t)
	a := startReplica(t, withModel(t, replicaConfig(t, url)))
	b := startReplica(t, withModel(t, replicaConfig(t, url)))
	const notes = 400
	var refs []string
	for i := range notes {
		r := a
		if i%2 == 1 {
			r = b
		}
		ref := fmt.Sprintf("notes:/n%04d.txt", i)
		writeText(t, r.vfs, ref, noteText(ref)+fmt.Sprintf(" Note %d.", i))
		refs = append(refs, ref)
	}
	var sts []*ctxdv1.StatusResponse
	for _, r := range []*replica{a, b} {
		sts = append(sts, waitEmbedded(t, r.conn, 5*time.Minute))
	}
	// Counted once both are done: neither embeds anything more.
	ea, eb := a.status(t).Embedding, b.status(t).Embedding
	vectors := sts[1].Embedding.EmbeddedChunks
	if vectors != notes || sts[0].Index.ChunkCount != notes {
		t.Fatalf("store holds %d vectors of %d chunks, want one per note (%d)", vectors, sts[0].Index.ChunkCount, notes)
	}
	if ea.EmbeddedHere+eb.EmbeddedHere != vectors {
		t.Fatalf("replicas embedded %d + %d chunk texts for %d vectors: some chunk was embedded twice (or not counted)",
			ea.EmbeddedHere, eb.EmbeddedHere, vectors)
	}
	t.Logf("%d chunks embedded once: %d by A, %d by B", vectors, ea.EmbeddedHere, eb.EmbeddedHere)
	for i := 0; i < notes; i += 97 {
		for _, r := range []*replica{a, b} {
			res := doSearch(t, r.conn, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_VECTOR, Limit: 1,
				Queries: []*ctxdv1.SearchQuery{{Text: noteText(refs[i]) + fmt.Sprintf(" Note %d.", i)}}})
			if len(res.Results) == 0 || res.Results[0].Ref != refs[i] {
				t.Errorf("vector search on %s for %s: %v", r.cfg.Socket, refs[i], resultRefs(res))
			}
		}
	}
}

// TestReplicas_LateReplicaCatchesUp starts replica B after A has written:
// B's search finds what was written before it started. `ctxd status` on
// each lists the other; with B stopped, A shows it trailing by what was
// written since, and B catches up when it starts again under the same id.
func TestReplicas_LateReplicaCatchesUp(t *testing.T) {
	_, url := pgStore(t)
	cfgA := replicaConfig(t, url)
	cfgA.SubscriptionRetain = -1 // no outbox kept for resuming subscribers: A trims all it applied
	a := startReplica(t, cfgA)
	for i := range 50 {
		writeText(t, a.vfs, fmt.Sprintf("early:/e%02d.md", i), fmt.Sprintf("early note %d capybaramoss\n", i))
	}
	// Once A has trimmed what it applied, B starts with nothing in the
	// outbox: it rebuilds from the store, and must still report.
	waitFor(t, 30*time.Second, "A to trim the outbox", func() bool {
		_, retained, err := a.b.store.Changes(context.Background(), 0, 0)
		return err == nil && retained == 51
	})
	cfgB := replicaConfig(t, url)
	b := startReplica(t, cfgB)
	if got := b.bm25(t, "capybaramoss"); len(got) != 10 {
		t.Fatalf("late replica B finds %d of the notes written before it started (limit 10): %v", len(got), got)
	}
	idA, idB := a.status(t).Store.ReplicaId, b.status(t).Store.ReplicaId
	waitStatus(t, ctxdv1.NewAdminServiceClient(a.conn), 30*time.Second, "B to report", func(st *ctxdv1.StatusResponse) bool {
		return len(st.Store.Replicas) == 2
	})
	for _, r := range []*replica{a, b} {
		out := ctxdStatus(t, r.cfg.Socket)
		for _, id := range []string{idA, idB} {
			if !strings.Contains(out, id) {
				t.Fatalf("`ctxd status` on %s does not list replica %s:\n%s", r.cfg.Socket, id, out)
			}
		}
		if !strings.Contains(out, "PostgreSQL, shared by replicas") || !strings.Contains(out, "lag (changes)") || strings.Contains(out, pgPassword) {
			t.Errorf("`ctxd status` on %s:\n%s", r.cfg.Socket, out)
		}
	}

	b.stop()
	for i := range 5 {
		writeText(t, a.vfs, fmt.Sprintf("late:/l%d.md", i), fmt.Sprintf("later note %d wombatreef\n", i))
	}
	var row *ctxdv1.ReplicaStatus
	for _, r := range a.status(t).Store.Replicas {
		if r.Id == idB {
			row = r
		}
	}
	if row == nil || row.Self || row.Gone || row.LagChanges < 5 || row.LagSeconds <= 0 || row.ReportedAt == nil {
		t.Fatalf("A's row for stopped B = %v, want it trailing by at least the 5 writes since", row)
	}
	if out := ctxdStatus(t, a.cfg.Socket); !strings.Contains(out, fmt.Sprintf("%d", row.LagChanges)) {
		t.Errorf("`ctxd status` on A does not show B's lag of %d changes:\n%s", row.LagChanges, out)
	}
	t.Logf("A shows stopped B %d changes (%.3fs) behind", row.LagChanges, row.LagSeconds)

	b = startReplica(t, cfgB)
	if got := b.bm25(t, "wombatreef"); len(got) != 5 {
		t.Fatalf("B restarted finds %d of the 5 notes written while it was down: %v", len(got), got)
	}
	if id := b.status(t).Store.ReplicaId; id != idB {
		t.Errorf("B restarted as %s, was %s: the replica id must persist in its data dir", id, idB)
	}
}

// ctxdStatus runs `ctxd status` against the daemon on socket and returns
// what it printed.
func ctxdStatus(t *testing.T, socket string) string {
	t.Helper()
	out, err := exec.Command(ctxdBinary(t), "--socket", socket, "status").CombinedOutput()
	if err != nil {
		t.Fatalf("ctxd status: %v\n%s", err, out)
	}
	return string(out)
}

// waitHealth polls the standard health service until it reports want.
func waitHealth(t *testing.T, conn *grpc.ClientConn, want healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	hc := healthpb.NewHealthClient(conn)
	waitFor(t, time.Minute, "health "+want.String(), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		for _, svc := range []string{"", "ctxd.v1.VfsService"} {
			resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
			if err != nil || resp.Status != want {
				return false
			}
		}
		return true
	})
}

// waitFor polls cond every 20 ms until it holds, failing the test after
// timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReplicas_StartWithoutDatabase: a replica whose PostgreSQL does not
// answer at start fails with an error naming the store, without its
// password (systemd's Restart= starts it again).
func TestReplicas_StartWithoutDatabase(t *testing.T) {
	srv, url := pgStore(t)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	buf := &syncBuffer{}
	d, err := Start(context.Background(), replicaConfig(t, url), slog.New(slog.NewTextHandler(buf, nil)))
	if err == nil {
		d.Stop(context.Background())
		t.Fatal("a replica started without its database")
	}
	if !strings.HasPrefix(err.Error(), "store postgres://") || !strings.Contains(err.Error(), "password=xxxxx") ||
		strings.Contains(err.Error()+buf.String(), pgPassword) {
		t.Errorf("start without the database: %v\nlog:\n%s", err, buf.String())
	}
}
