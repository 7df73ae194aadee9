package vfs

import (
	"errors"
	"testing"
)

// TestStore_WriteID checks WriteParams.ID: a new item gets it when free,
// and a fresh id when a live item or a deleted one in history has it; a
// write that replaces an item keeps that item's id; a malformed id is
// refused.
func TestStore_WriteID(t *testing.T) {
	s := mustOpenStore(t)
	const want = "0190f3c2-7b1a-7c3d-9e4f-5a6b7c8d9e0f"
	write := func(ref, id string, oc OnConflict) (Item, error) {
		res, err := s.Write(ctx, WriteParams{Ref: mustRef(t, ref), Content: []byte("x"), IsText: true, ID: id, OnConflict: oc})
		return res.Item, err
	}
	it, err := write("notes:/a.md", want, ConflictError)
	if err != nil || it.ID != want {
		t.Fatalf("write with a free id = %q, %v; want %s", it.ID, err, want)
	}
	if got, err := s.Info(ctx, mustRef(t, want)); err != nil || got.Item.Ref() != "notes:/a.md" {
		t.Errorf("Info by the id = %v, %v", got.Item.Ref(), err)
	}
	if it, err := write("notes:/b.md", want, ConflictError); err != nil || it.ID == want || it.ID == "" {
		t.Errorf("write with a live item's id = %q, %v; want a fresh id", it.ID, err)
	}
	if it, err := write("notes:/a.md", "0190f3c2-7b1a-7c3d-9e4f-000000000001", ConflictOverwrite); err != nil || it.ID != want {
		t.Errorf("overwrite with another id = %q, %v; want the item's own %s", it.ID, err, want)
	}
	if _, err := s.Delete(ctx, mustRef(t, "notes:/a.md"), false); err != nil {
		t.Fatal(err)
	}
	if it, err := write("notes:/c.md", want, ConflictError); err != nil || it.ID == want {
		t.Errorf("write with a deleted item's id (its history keeps it) = %q, %v; want a fresh id", it.ID, err)
	}
	var e *Error
	if _, err := write("notes:/d.md", "not-a-uuid", ConflictError); !errors.As(err, &e) || e.Kind != ErrInvalid || e.Hint == "" {
		t.Errorf("write with a malformed id: %v; want INVALID with a hint", err)
	}
	// In one batch, the first of two items asking for one free id gets it.
	const free = "0190f3c2-7b1a-7c3d-9e4f-5a6b7c8d9e10"
	res, err := s.WriteBatch(ctx, []WriteParams{
		{Ref: mustRef(t, "notes:/e.md"), Content: []byte("e"), IsText: true, ID: free},
		{Ref: mustRef(t, "notes:/f.md"), Content: []byte("f"), IsText: true, ID: free},
	})
	if err != nil || res[0].Item.ID != free || res[1].Item.ID == free {
		t.Errorf("batch asking twice for %s: %v, %v", free, res, err)
	}
	// A directory placeholder likewise.
	const dir = "0190f3c2-7b1a-7c3d-9e4f-5a6b7c8d9e11"
	if _, err := s.MakeDirID(ctx, mustRef(t, "notes:/empty"), dir); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Info(ctx, mustRef(t, "notes:/empty")); err != nil || got.Item.ID != dir {
		t.Errorf("placeholder made with a free id = %q, %v; want %s", got.Item.ID, err, dir)
	}
	if _, err := s.MakeDirID(ctx, mustRef(t, "notes:/empty2"), dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Info(ctx, mustRef(t, "notes:/empty2")); got.Item.ID == dir {
		t.Errorf("a second placeholder got the taken id %s", dir)
	}
	if _, err := s.MakeDirID(ctx, mustRef(t, "notes:/empty3"), "nope"); !errors.As(err, &e) || e.Kind != ErrInvalid {
		t.Errorf("MakeDirID with a malformed id: %v; want INVALID", err)
	}
}
