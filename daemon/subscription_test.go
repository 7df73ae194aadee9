package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// subStream is an open Subscribe stream and its Ready.
type subStream struct {
	stream grpc.ServerStreamingClient[ctxdv1.SubscribeResponse]
	ready  *ctxdv1.SubscriptionReady
	cancel context.CancelFunc
}

// subscribe opens a stream of req over conn (with ctx's credentials) and
// waits for Ready.
func subscribe(t *testing.T, ctx context.Context, conn *grpc.ClientConn, req *ctxdv1.SubscribeRequest) *subStream {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	stream, err := ctxdv1.NewSubscriptionServiceClient(conn).Subscribe(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	if first.GetReady() == nil {
		t.Fatalf("first event %v, want Ready", first)
	}
	return &subStream{stream: stream, ready: first.GetReady(), cancel: cancel}
}

// next receives the next event, failing the test on an error.
func (s *subStream) next(t *testing.T) *ctxdv1.SubscribeResponse {
	t.Helper()
	ev, err := s.stream.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return ev
}

// match receives the next event and requires a match of ref.
func (s *subStream) match(t *testing.T, ref string) *ctxdv1.SubscriptionMatch {
	t.Helper()
	ev := s.next(t)
	m := ev.GetMatch()
	if m == nil || m.GetResult().GetRef() != ref {
		t.Fatalf("event %v, want a match of %s", ev, ref)
	}
	return m
}

func bm25Query(texts ...string) *ctxdv1.StandingQuery {
	q := &ctxdv1.StandingQuery{}
	for _, t := range texts {
		q.Queries = append(q.Queries, &ctxdv1.SearchQuery{Text: t})
	}
	return q
}

// A subscription receives a write, an edit and a refresh (of an ingested
// file) with their change kinds, and is not told of a non-match; the push
// has a search result's shape.
func TestSubscribe_WriteEditRefresh(t *testing.T) {
	cfg := testConfig(t)
	root := t.TempDir()
	cfg.AllowedRoots = []string{root}
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(conn)
	s := subscribe(t, context.Background(), conn, &ctxdv1.SubscribeRequest{Query: bm25Query("pelican migration")})
	if !strings.HasPrefix(s.ready.GetResumeToken(), "r1.") || s.ready.GetSubscription() == "" {
		t.Fatalf("ready %v", s.ready)
	}

	writeText(t, vc, "notes:/other.md", "Pelicans are large birds.") // only one term: no push
	writeText(t, vc, "notes:/birds.md", "# Birds\n\nThe pelican migration starts in spring.\n")
	m := s.match(t, "notes:/birds.md")
	if m.GetChange().GetKind() != ctxdv1.ChangeKind_CHANGE_KIND_WRITE || m.GetChange().GetRev() != 1 || m.GetChange().GetActor() != "owner" {
		t.Fatalf("change %v, want a write by the owner at rev 1", m.GetChange())
	}
	r := m.GetResult()
	if r.GetScore() != 1 || !strings.Contains(r.GetSnippet(), "pelican migration") || r.GetStartLine() == 0 || r.GetSpan().GetEnd() == 0 || r.GetHeading() == "" {
		t.Fatalf("result %v: want score 1, a snippet, heading, lines and span", r)
	}
	if m.GetResumeToken() == "" || m.GetChange().GetSequence() == 0 {
		t.Fatalf("match without a resume token or sequence: %v", m)
	}

	if _, err := vc.Edit(context.Background(), &ctxdv1.EditRequest{Ref: "notes:/birds.md", Patches: []*ctxdv1.Patch{{StartLine: 3, EndLine: 3, Content: "The pelican migration starts in April."}}}); err != nil {
		t.Fatal(err)
	}
	m = s.match(t, "notes:/birds.md")
	if m.GetChange().GetKind() != ctxdv1.ChangeKind_CHANGE_KIND_EDIT || m.GetChange().GetRev() != 2 {
		t.Fatalf("change %v, want an edit at rev 2", m.GetChange())
	}

	file := filepath.Join(root, "log.md")
	if err := os.WriteFile(file, []byte("Nothing to see.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := add(t, conn, &ctxdv1.AddRequest{Sources: []string{file}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("Seen today: the pelican migration over the bay.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := refresh(t, conn, &ctxdv1.RefreshRequest{Refs: []string{"disk:" + file}}); err != nil {
		t.Fatal(err)
	}
	m = s.match(t, "disk:"+file)
	if m.GetChange().GetKind() != ctxdv1.ChangeKind_CHANGE_KIND_REFRESH {
		t.Fatalf("change %v, want a refresh", m.GetChange())
	}
	if st, err := ctxdv1.NewAdminServiceClient(conn).Status(context.Background(), &ctxdv1.StatusRequest{}); err != nil || st.GetSubscriptions().GetStreams() != 1 {
		t.Fatalf("status subscriptions %v (%v), want 1 stream", st.GetSubscriptions(), err)
	}
	_ = d
}

// A stream dropped and opened again with the last token received gets
// what matched meanwhile, in order, then live pushes; a token older than
// the retained outbox starts with a gap.
func TestSubscribe_ResumeAndGap(t *testing.T) {
	cfg := testConfig(t)
	cfg.SubscriptionRetain = 2
	mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(conn)
	req := &ctxdv1.SubscribeRequest{Query: bm25Query("invoice")}
	s := subscribe(t, context.Background(), conn, req)
	writeText(t, vc, "notes:/a.md", "invoice A")
	tok := s.match(t, "notes:/a.md").GetResumeToken()
	s.cancel()
	writeText(t, vc, "notes:/b.md", "invoice B")
	writeText(t, vc, "notes:/c.md", "invoice C")
	req.ResumeToken = tok
	r := subscribe(t, context.Background(), conn, req)
	writeText(t, vc, "notes:/d.md", "invoice D")
	r.match(t, "notes:/b.md")
	r.match(t, "notes:/c.md")
	r.match(t, "notes:/d.md")

	// Retain 2: the idle engine trims all but the last entries.
	for i := range 6 {
		writeText(t, vc, fmt.Sprintf("notes:/filler%d.md", i), "filler")
	}
	req.ResumeToken = "r1.1"
	deadline := time.Now().Add(30 * time.Second)
	for {
		g := subscribe(t, context.Background(), conn, req)
		ev := g.next(t)
		if gap := ev.GetGap(); gap != nil {
			if gap.GetFromSequence() != 2 || gap.GetReason() == "" {
				t.Fatalf("gap %v, want one from sequence 2 with a reason", gap)
			}
			break
		}
		g.cancel()
		if time.Now().After(deadline) {
			t.Fatalf("no gap for an old token; first event %v", ev)
		}
		time.Sleep(20 * time.Millisecond) // the engine trims once idle
	}
	req.ResumeToken = "nonsense"
	_, err := ctxdv1.NewSubscriptionServiceClient(conn).Subscribe(context.Background(), req)
	if err == nil {
		stream, _ := ctxdv1.NewSubscriptionServiceClient(conn).Subscribe(context.Background(), req)
		_, err = stream.Recv()
	}
	if code, det := errorDetail(t, err); code != codes.InvalidArgument || det.GetNextActionHint() == "" {
		t.Fatalf("bad token: %v %v", code, det)
	}
}

// A client that never reads is cut off with RESOURCE_EXHAUSTED naming its
// last token, while the ingest that outran it completes.
func TestSubscribe_SlowConsumerCutOff(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.MaxSubscriptionPending = 2
	mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	q := bm25Query("telemetry")
	q.SnippetLength = 2000
	s := subscribe(t, context.Background(), conn, &ctxdv1.SubscribeRequest{Query: q})
	body := strings.Repeat("telemetry sample value ", 100)
	vc := ctxdv1.NewVfsServiceClient(conn)
	for b := range 4 {
		var items []*ctxdv1.WriteRequest
		for i := range 100 {
			items = append(items, &ctxdv1.WriteRequest{Ref: fmt.Sprintf("notes:/t%d-%d.md", b, i), Body: &ctxdv1.WriteRequest_Content{Content: body}})
		}
		if _, err := vc.WriteBatch(context.Background(), &ctxdv1.WriteBatchRequest{Items: items}); err != nil {
			t.Fatalf("ingest while the consumer sleeps: %v", err)
		}
	}
	admin := ctxdv1.NewAdminServiceClient(conn)
	waitStatus(t, admin, 30*time.Second, "the slow consumer cut off", func(st *ctxdv1.StatusResponse) bool {
		return st.GetSubscriptions().GetCutOff() == 1
	})
	for {
		_, err := s.stream.Recv()
		if err == nil {
			continue
		}
		code, det := errorDetail(t, err)
		if code != codes.ResourceExhausted || !strings.Contains(det.GetNextActionHint(), "r1.") {
			t.Fatalf("stream ended with %v %v, want RESOURCE_EXHAUSTED naming a resume token", code, det)
		}
		break
	}
}

// Limits: queries per standing query, streams per token, with the limit's
// name in the hint.
func TestSubscribe_Limits(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.MaxSubscriptionsPerToken = 1
	mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	c := ctxdv1.NewSubscriptionServiceClient(conn)
	recvErr := func(req *ctxdv1.SubscribeRequest) error {
		stream, err := c.Subscribe(context.Background(), req)
		if err != nil {
			return err
		}
		_, err = stream.Recv()
		return err
	}
	err := recvErr(&ctxdv1.SubscribeRequest{Query: bm25Query("a", "b", "c", "d", "e", "f", "g", "h", "i")})
	if code, det := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(det.GetNextActionHint(), "max_subscription_queries") {
		t.Fatalf("nine queries: %v %v", code, det)
	}
	err = recvErr(&ctxdv1.SubscribeRequest{Query: bm25Query(strings.Repeat("word ", 40))})
	if code, det := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(det.GetNextActionHint(), "max_query_terms") {
		t.Fatalf("forty words: %v %v", code, det)
	}
	err = recvErr(&ctxdv1.SubscribeRequest{Query: bm25Query("the of and")})
	if code, _ := errorDetail(t, err); code != codes.InvalidArgument {
		t.Fatalf("stop words only: %v", code)
	}
	subscribe(t, context.Background(), conn, &ctxdv1.SubscribeRequest{Query: bm25Query("one")})
	err = recvErr(&ctxdv1.SubscribeRequest{Query: bm25Query("two")})
	if code, det := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(det.GetNextActionHint(), "max_subscriptions_per_token") {
		t.Fatalf("second stream: %v %v", code, det)
	}
}

// A token limited to a drive is never pushed an item outside it, over
// gRPC and over the HTTP streaming endpoint.
func TestSubscribe_LimitedTokens(t *testing.T) {
	cfg := testConfig(t)
	cfg.GRPCTCP, cfg.HTTP = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{
		{Name: "drive", SHA256: sha256Hex("drive-token"), Scopes: []string{"read"}, Drives: []string{"agent"}},
		{Name: "project", SHA256: sha256Hex("project-token"), Scopes: []string{"read"}, Paths: []string{"agent:/project-x/"}},
	}
	d := mustStart(t, cfg)
	tcp := dial(t, "passthrough:///"+d.GRPCAddr().String())
	vc := ctxdv1.NewVfsServiceClient(dial(t, "unix://"+cfg.Socket))
	req := &ctxdv1.SubscribeRequest{Query: bm25Query("quokka merger")}
	drive := subscribe(t, bearer("drive-token"), tcp, req)
	project := subscribe(t, bearer("project-token"), tcp, req)

	// The HTTP stream: newline-delimited JSON, Ready first.
	body := strings.NewReader(`{"query":{"queries":[{"text":"quokka merger"}]}}`)
	hreq, _ := http.NewRequest("POST", "http://"+d.HTTPAddr().String()+"/v1/subscribe", body)
	hreq.Header.Set("Authorization", "Bearer project-token")
	hctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := http.DefaultClient.Do(hreq.WithContext(hctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	httpEvent := func() *ctxdv1.SubscribeResponse {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("HTTP stream ended: %v", lines.Err())
		}
		var wrap struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(lines.Bytes(), &wrap); err != nil || wrap.Result == nil {
			t.Fatalf("HTTP line %s: %v", lines.Bytes(), err)
		}
		var ev ctxdv1.SubscribeResponse
		if err := protojson.Unmarshal(wrap.Result, &ev); err != nil {
			t.Fatal(err)
		}
		return &ev
	}
	if ev := httpEvent(); ev.GetReady() == nil {
		t.Fatalf("first HTTP event %v, want Ready", ev)
	}

	writeText(t, vc, "vault:/keys.md", "The quokka merger passphrase.")
	writeText(t, vc, "agent:/project-xyz/plan.md", "The quokka merger plan.")
	writeText(t, vc, "agent:/project-x/notes.md", "Quokka merger notes.")
	drive.match(t, "agent:/project-xyz/plan.md")
	drive.match(t, "agent:/project-x/notes.md")
	project.match(t, "agent:/project-x/notes.md")
	if m := httpEvent().GetMatch(); m.GetResult().GetRef() != "agent:/project-x/notes.md" {
		t.Fatalf("HTTP push %v, want only agent:/project-x/notes.md", m)
	}
	// Nothing else was queued for the limited streams: the next push each
	// gets is the next inside write.
	writeText(t, vc, "agent:/project-x/more.md", "More quokka merger notes.")
	project.match(t, "agent:/project-x/more.md")
	drive.match(t, "agent:/project-x/more.md")
	if m := httpEvent().GetMatch(); m.GetResult().GetRef() != "agent:/project-x/more.md" {
		t.Fatalf("HTTP push %v", m)
	}
}

// On a shared PostgreSQL store a stream on replica B is pushed a write
// made on replica A, which the push names as remote.
func TestSubscribe_OtherReplicasWrite(t *testing.T) {
	_, url := pgStore(t)
	a := startReplica(t, replicaConfig(t, url))
	b := startReplica(t, replicaConfig(t, url))
	s := subscribe(t, context.Background(), b.conn, &ctxdv1.SubscribeRequest{Query: bm25Query("zebraquokka dawn")})
	writeText(t, a.vfs, "team:/notes/alpha.md", "The zebraquokka migrates at dawn.")
	m := s.match(t, "team:/notes/alpha.md")
	if c := m.GetChange(); !c.GetRemote() || c.GetReplicaId() != a.status(t).GetStore().GetReplicaId() {
		t.Fatalf("change %v, want remote from A (%s)", c, a.status(t).GetStore().GetReplicaId())
	}
	writeText(t, b.vfs, "team:/notes/beta.md", "Another zebraquokka at dawn.")
	if c := s.match(t, "team:/notes/beta.md").GetChange(); c.GetRemote() || c.GetReplicaId() != b.status(t).GetStore().GetReplicaId() {
		t.Fatalf("B's own write: %v, want not remote", c)
	}
}
