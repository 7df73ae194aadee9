package daemon

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// waitInbox reads (peeking) durable subscription name until it holds n
// matches, and returns them.
func waitInbox(t *testing.T, ctx context.Context, c ctxdv1.SubscriptionServiceClient, name string, n int) []*ctxdv1.SubscriptionMatch {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := c.ReadSubscription(ctx, &ctxdv1.ReadSubscriptionRequest{Name: name, Peek: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetMatches()) >= n {
			return resp.GetMatches()
		}
		if time.Now().After(deadline) {
			t.Fatalf("inbox of %s holds %d matches, want %d", name, len(resp.GetMatches()), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A durable subscription is matched with nobody listening; reading its
// inbox returns and acknowledges the matches; a stream of it starts with
// what is left and goes on live; a token sees and reads only its own.
func TestSubscription_Durable(t *testing.T) {
	cfg := testConfig(t)
	cfg.GRPCTCP = "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{
		{Name: "drive", SHA256: sha256Hex("drive-token"), Scopes: []string{"read"}, Drives: []string{"agent"}},
		{Name: "other", SHA256: sha256Hex("other-token"), Scopes: []string{"read"}},
	}
	d := mustStart(t, cfg)
	tcp := dial(t, "passthrough:///"+d.GRPCAddr().String())
	owner := dial(t, "unix://"+cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(owner)
	c := ctxdv1.NewSubscriptionServiceClient(tcp)
	ctx := bearer("drive-token")
	created, err := c.CreateSubscription(ctx, &ctxdv1.CreateSubscriptionRequest{Name: "quokka", Query: bm25Query("quokka merger")})
	if err != nil {
		t.Fatal(err)
	}
	if s := created.GetSubscription(); s.GetOwner() != "drive" || s.GetResourceUri() != "ctxd-subscription://quokka" {
		t.Fatalf("created %v", s)
	}
	if _, err := c.CreateSubscription(ctx, &ctxdv1.CreateSubscriptionRequest{Name: "quokka", Query: bm25Query("x")}); err == nil {
		t.Fatal("second create of a name succeeded")
	} else if code, _ := errorDetail(t, err); code != codes.AlreadyExists {
		t.Fatalf("second create: %v", code)
	}
	writeText(t, vc, "vault:/q.md", "The quokka merger, secretly.") // outside the token's access
	writeText(t, vc, "agent:/q.md", "The quokka merger plan.")
	ms := waitInbox(t, ctx, c, "quokka", 1)
	if len(ms) != 1 || ms[0].GetResult().GetRef() != "agent:/q.md" {
		t.Fatalf("inbox %v, want only agent:/q.md", ms)
	}
	read, err := c.ReadSubscription(ctx, &ctxdv1.ReadSubscriptionRequest{Name: "quokka"})
	if err != nil || len(read.GetMatches()) != 1 || read.GetRemaining() != 0 {
		t.Fatalf("read %v %v", read, err)
	}
	if again, err := c.ReadSubscription(ctx, &ctxdv1.ReadSubscriptionRequest{Name: "quokka"}); err != nil || len(again.GetMatches()) != 0 {
		t.Fatalf("read after ack %v %v, want nothing", again, err)
	}

	// Others: not listed, not readable, not deletable, not streamable.
	other := bearer("other-token")
	if l, err := c.ListSubscriptions(other, &ctxdv1.ListSubscriptionsRequest{}); err != nil || len(l.GetSubscriptions()) != 0 {
		t.Fatalf("another token lists %v %v", l, err)
	}
	for name, call := range map[string]func() error{
		"read": func() error {
			_, err := c.ReadSubscription(other, &ctxdv1.ReadSubscriptionRequest{Name: "quokka"})
			return err
		},
		"delete": func() error {
			_, err := c.DeleteSubscription(other, &ctxdv1.DeleteSubscriptionRequest{Name: "quokka"})
			return err
		},
		"stream": func() error {
			st, err := c.Subscribe(other, &ctxdv1.SubscribeRequest{Name: "quokka"})
			if err == nil {
				_, err = st.Recv()
			}
			return err
		},
	} {
		if code, _ := errorDetail(t, call()); code != codes.NotFound {
			t.Fatalf("another token's %s: %v, want NOT_FOUND", name, code)
		}
	}
	if l, err := ctxdv1.NewSubscriptionServiceClient(owner).ListSubscriptions(context.Background(), &ctxdv1.ListSubscriptionsRequest{}); err != nil || len(l.GetSubscriptions()) != 1 {
		t.Fatalf("the owner lists %v %v", l, err)
	}

	writeText(t, vc, "agent:/q2.md", "Quokka merger, part two.")
	waitInbox(t, ctx, c, "quokka", 1)
	s := subscribe(t, ctx, tcp, &ctxdv1.SubscribeRequest{Name: "quokka"})
	s.match(t, "agent:/q2.md")
	writeText(t, vc, "agent:/q3.md", "Quokka merger, part three.")
	s.match(t, "agent:/q3.md")
	if st, err := ctxdv1.NewAdminServiceClient(owner).Status(context.Background(), &ctxdv1.StatusRequest{}); err != nil || st.GetSubscriptions().GetDurable() != 1 {
		t.Fatalf("status %v %v, want 1 durable", st.GetSubscriptions(), err)
	}
	if _, err := c.DeleteSubscription(ctx, &ctxdv1.DeleteSubscriptionRequest{Name: "quokka"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.stream.Recv(); err == nil {
		t.Fatal("the stream of a deleted subscription goes on")
	} else if code, _ := errorDetail(t, err); code != codes.NotFound {
		t.Fatalf("stream after delete: %v", code)
	}
}

// A durable subscription survives a restart, and a change made while the
// daemon was down is in its inbox once it is back.
func TestSubscription_DurableSurvivesRestart(t *testing.T) {
	cfg := testConfig(t)
	d, err := Start(context.Background(), cfg, slogDiscard())
	if err != nil {
		t.Fatal(err)
	}
	conn := dial(t, "unix://"+cfg.Socket)
	c := ctxdv1.NewSubscriptionServiceClient(conn)
	if _, err := c.CreateSubscription(context.Background(), &ctxdv1.CreateSubscriptionRequest{Name: "ops", Query: bm25Query("outage postmortem")}); err != nil {
		t.Fatal(err)
	}
	writeText(t, ctxdv1.NewVfsServiceClient(conn), "notes:/first.md", "The outage postmortem is due.")
	waitInbox(t, context.Background(), c, "ops", 1)
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Stop(stop); err != nil {
		t.Fatal(err)
	}

	store, err := vfs.Open(filepath.Join(cfg.DataDir, "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Write(context.Background(), vfs.WriteParams{Ref: vfs.Ref{Drive: "notes", Path: "/down.md"},
		Content: []byte("Written while down: another outage postmortem."), IsText: true}); err != nil {
		t.Fatal(err)
	}
	store.Close()

	mustStart(t, cfg)
	conn = dial(t, "unix://"+cfg.Socket)
	c = ctxdv1.NewSubscriptionServiceClient(conn)
	ms := waitInbox(t, context.Background(), c, "ops", 2)
	if ms[0].GetResult().GetRef() != "notes:/first.md" || ms[1].GetResult().GetRef() != "notes:/down.md" {
		t.Fatalf("inbox after restart: %v", ms)
	}
}

// A durable subscription created on replica A of a shared store is matched
// by replica B too (B reloads the definitions): writes on either land in
// the one inbox both read, in order (that replicas matching the same change
// add it once is vfs's TestInbox).
func TestSubscription_DurableOnReplicas(t *testing.T) {
	_, url := pgStore(t)
	a := startReplica(t, replicaConfig(t, url))
	b := startReplica(t, replicaConfig(t, url))
	ca, cb := ctxdv1.NewSubscriptionServiceClient(a.conn), ctxdv1.NewSubscriptionServiceClient(b.conn)
	if _, err := ca.CreateSubscription(context.Background(), &ctxdv1.CreateSubscriptionRequest{Name: "team", Query: bm25Query("wombat census")}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := cb.ListSubscriptions(context.Background(), &ctxdv1.ListSubscriptionsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.GetSubscriptions()) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replica B never loaded the subscription created on A")
		}
		time.Sleep(100 * time.Millisecond)
	}
	writeText(t, b.vfs, "team:/w1.md", "The wombat census is done.")
	writeText(t, a.vfs, "team:/w2.md", "Another wombat census.")
	ms := waitInbox(t, context.Background(), cb, "team", 2)
	if len(ms) != 2 || ms[0].GetResult().GetRef() != "team:/w1.md" || ms[1].GetResult().GetRef() != "team:/w2.md" {
		t.Fatalf("inbox %v, want w1 then w2, once each", ms)
	}
}
