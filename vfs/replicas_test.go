package vfs

import (
	"context"
	"testing"
	"time"
)

// TestStore_Replicas plays two replicas on one store, one after the
// other: a trim waits for the live replica that trails, reports say how far
// each trails (Replicas, Lag), and a replica silent past ReplicaRetention
// counts as gone and stops holding the trim back.
func TestStore_Replicas(t *testing.T) {
	ctx := context.Background()
	path := newLocation(t)
	open := func(id string) *Store {
		s, err := Open(path, Options{ReplicaID: id, ReplicaHost: "host-" + id})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := open("a")
	for _, r := range []string{"n:/1", "n:/2", "n:/3"} {
		mustWrite(t, a, r, "x")
	}
	if err := a.TrimOutbox(ctx, 1); err != nil {
		t.Fatal(err)
	}
	a.Close()

	b := open("b")
	defer b.Close()
	if err := b.TrimOutbox(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, retained, err := b.Changes(ctx, 0, 10); err != nil || retained != 2 {
		t.Fatalf("after b's trim to 3: retained %d, %v; want 2 (a applied only 1)", retained, err)
	}
	head, reps, err := b.Replicas(ctx)
	if err != nil || head != 3 || len(reps) != 2 {
		t.Fatalf("Replicas = %d, %+v, %v", head, reps, err)
	}
	ra, rb := reps[0], reps[1]
	if ra.ID != "a" || ra.Host != "host-a" || ra.Applied != 1 || ra.Lag != 2 || ra.LagTime <= 0 || ra.Gone {
		t.Errorf("replica a = %+v, want applied 1, 2 changes behind for some time, live", ra)
	}
	if rb.ID != "b" || rb.Applied != 3 || rb.Lag != 0 || rb.LagTime != 0 || rb.Reported.IsZero() {
		t.Errorf("replica b = %+v, want caught up", rb)
	}
	if head, lag, wait, err := b.Lag(ctx, 1); err != nil || head != 3 || lag != 2 || wait <= 0 {
		t.Errorf("Lag(1) = %d, %d, %s, %v; want head 3, 2 changes, waiting", head, lag, wait, err)
	}
	if _, lag, wait, err := b.Lag(ctx, 3); err != nil || lag != 0 || wait != 0 {
		t.Errorf("Lag(3) = %d, %s, %v; want caught up", lag, wait, err)
	}

	later := time.Now().Add(ReplicaRetention + time.Minute)
	b.now = func() time.Time { return later }
	if _, reps, _ := b.Replicas(ctx); !reps[0].Gone {
		t.Errorf("a silent past the retention: %+v, want gone", reps[0])
	}
	if err := b.TrimOutbox(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, retained, err := b.Changes(ctx, 0, 10); err != nil || retained != 4 {
		t.Errorf("after a is gone: retained %d, %v; want 4 (everything b applied trimmed)", retained, err)
	}
}
