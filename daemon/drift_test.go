package daemon

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// startStop starts a daemon with cfg and returns a function that stops it
// (also called at cleanup).
func startStop(t *testing.T, cfg Config) (*testDaemon, func()) {
	t.Helper()
	d, err := Start(context.Background(), cfg, slogDiscard())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	t.Cleanup(stop)
	return &testDaemon{Daemon: d, cfg: cfg}, stop
}

// TestDaemon_ModelArrivesAfterBinaryItemsNoDrift stores two binary items of
// the same name (so the same searchable text) while no model is configured,
// with a few hundred chunks between them in the embedding queue, then
// restarts with the model. The vector computed for the first item's chunk
// is the second's too; Doctor, run throughout the embedding and after it,
// must never find the vector index without a vector the store has.
func TestDaemon_ModelArrivesAfterBinaryItemsNoDrift(t *testing.T) {
	cfg := testConfig(t)
	d, stop := startStop(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")
	writeBin := func(ref string) {
		if _, err := c.Write(context.Background(), &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Data{Data: png}}); err != nil {
			t.Fatalf("Write %s: %v", ref, err)
		}
	}
	// Queue order is item id order, which is creation order.
	writeBin("site:/a/logo.png")
	for i := range 30 {
		var b strings.Builder
		for s := range 10 {
			fmt.Fprintf(&b, "## Section %d of note %d\n\n", s, i)
			for w := range 40 {
				fmt.Fprintf(&b, "word%d_%d_%d ", i, s, w)
			}
			b.WriteString("\n\n")
		}
		writeText(t, c, fmt.Sprintf("site:/notes/n%02d.md", i), b.String())
	}
	writeBin("site:/b/logo.png")
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), time.Minute)
	stop()

	d, _ = startStop(t, withModel(t, cfg))
	conn = dial(t, "unix://"+d.cfg.Socket)
	admin := ctxdv1.NewAdminServiceClient(conn)
	runs := 0
	for {
		st, err := admin.Status(context.Background(), &ctxdv1.StatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		done := st.Embedding.Available && st.Embedding.PendingChunks == 0 && st.Embedding.PendingItems == 0
		doc, err := admin.Doctor(context.Background(), &ctxdv1.DoctorRequest{})
		if err != nil {
			t.Fatal(err)
		}
		runs++
		if !doc.Ok || doc.VectorChunks != doc.StoreVectors {
			t.Fatalf("doctor run %d while the model embeds what was stored without it: %v", runs, doc)
		}
		if done {
			if doc.StoreVectors == 0 || doc.StoreVectors != doc.StoreChunks {
				t.Fatalf("embedded: doctor %v, want a vector for every chunk", doc)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d doctor runs during embedding, no drift", runs)
}
