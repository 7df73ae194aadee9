package vfs

import (
	"bytes"
	"errors"
	"testing"
)

func TestRecords(t *testing.T) {
	s := mustOpenStore(t)
	if v, err := s.GetRecord(ctx, "watch", "a"); err != nil || v != nil {
		t.Fatalf("GetRecord of nothing = %q, %v; want nil, nil", v, err)
	}
	for _, name := range []string{"b", "a"} {
		if err := s.PutRecord(ctx, "watch", name, []byte("v-"+name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutRecord(ctx, "sub", "a", []byte("other kind")); err != nil {
		t.Fatal(err)
	}
	recs, err := s.ListRecords(ctx, "watch")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Name != "a" || string(recs[0].Value) != "v-a" || recs[1].Name != "b" {
		t.Fatalf("ListRecords = %+v; want a, b of kind watch only", recs)
	}
	err = s.UpdateRecord(ctx, "watch", "a", func(old []byte) ([]byte, error) {
		return append(old, '!'), nil
	})
	if v, _ := s.GetRecord(ctx, "watch", "a"); err != nil || !bytes.Equal(v, []byte("v-a!")) {
		t.Fatalf("after UpdateRecord: %q, %v", v, err)
	}
	if existed, err := s.DeleteRecord(ctx, "watch", "a"); err != nil || !existed {
		t.Fatalf("DeleteRecord = %v, %v; want true", existed, err)
	}
	if existed, err := s.DeleteRecord(ctx, "watch", "a"); err != nil || existed {
		t.Fatalf("second DeleteRecord = %v, %v; want false", existed, err)
	}
	if err := s.PutRecord(ctx, "watch", "big", make([]byte, MaxRecordBytes+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("PutRecord over the limit: %v; want ErrTooLarge", err)
	}
	if err := s.PutRecord(ctx, "", "x", nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("PutRecord without a kind: %v; want ErrInvalid", err)
	}
}
