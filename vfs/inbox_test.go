package vfs

import (
	"testing"

	"github.com/google/uuid"
)

// An inbox keeps entries in (sequence, item) order, adds an entry once
// however often it is appended (replicas each append what they match),
// drops the oldest past its bound and counts them until an ack.
func TestInbox(t *testing.T) {
	s := mustOpenStore(t)
	a, b := uuid.NewString(), uuid.NewString()
	e := func(seq uint64, id, v string) InboxEntry { return InboxEntry{Seq: seq, ItemID: id, Value: []byte(v)} }
	if got, st, err := s.ReadInbox(ctx, "sub", 10); err != nil || len(got) != 0 || st != (InboxState{}) {
		t.Fatalf("empty inbox: %v %+v %v", got, st, err)
	}
	st, err := s.AppendInbox(ctx, "sub", []InboxEntry{e(5, a, "a5"), e(3, b, "b3")}, 3)
	if err != nil || st != (InboxState{Pending: 2}) {
		t.Fatalf("append: %+v %v", st, err)
	}
	if st, err = s.AppendInbox(ctx, "sub", []InboxEntry{e(5, a, "a5 again"), e(7, b, "b7"), e(9, a, "a9")}, 3); err != nil || st != (InboxState{Pending: 3, Dropped: 1}) {
		t.Fatalf("append past the bound: %+v %v; want 3 held, 1 dropped", st, err)
	}
	got, st, err := s.ReadInbox(ctx, "sub", 2)
	if err != nil || len(got) != 2 || string(got[0].Value) != "a5" || got[0].Seq != 5 || got[0].ItemID != a || string(got[1].Value) != "b7" || st.Dropped != 1 || st.Pending != 3 {
		t.Fatalf("read: %+v %+v %v; want a5 (kept from the first append), b7", got, st, err)
	}
	if err := s.AckInbox(ctx, "sub", got[1]); err != nil {
		t.Fatal(err)
	}
	if st, err := s.InboxState(ctx, "sub"); err != nil || st != (InboxState{Pending: 1}) {
		t.Fatalf("after ack: %+v %v", st, err)
	}
	if _, err := s.AppendInbox(ctx, "other", []InboxEntry{e(1, a, "x")}, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteInbox(ctx, "sub"); err != nil {
		t.Fatal(err)
	}
	if st, err := s.InboxState(ctx, "sub"); err != nil || st != (InboxState{}) {
		t.Fatalf("after delete: %+v %v", st, err)
	}
	if st, err := s.InboxState(ctx, "other"); err != nil || st.Pending != 1 {
		t.Fatalf("another inbox: %+v %v", st, err)
	}
}

// The zero entry acknowledges only the dropped count.
func TestInbox_AckDropped(t *testing.T) {
	s := mustOpenStore(t)
	a := uuid.NewString()
	if _, err := s.AppendInbox(ctx, "sub", []InboxEntry{{Seq: 1, ItemID: a}, {Seq: 2, ItemID: a}}, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.AckInbox(ctx, "sub", InboxEntry{}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.InboxState(ctx, "sub"); err != nil || st != (InboxState{Pending: 1}) {
		t.Fatalf("after acking the count: %+v %v; want 1 held, none dropped", st, err)
	}
}
