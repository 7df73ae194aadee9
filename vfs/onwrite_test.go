package vfs

import (
	"context"
	"testing"
)

// Options.OnWrite hears of each committed transaction's changed items: one
// per item, a move included; a failed write tells nothing.
func TestStore_OnWrite(t *testing.T) {
	var told []int
	s := mustOpenStore(t, Options{OnWrite: func(n int) { told = append(told, n) }})
	ctx := context.Background()
	write := func(ref string, oc OnConflict) error {
		_, err := s.Write(ctx, WriteParams{Ref: mustRef(t, ref), Content: []byte("words\n"), IsText: true, OnConflict: oc})
		return err
	}
	step := func(what string, want int, do func() error) {
		t.Helper()
		told = nil
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(told) != 1 || told[0] != want {
			t.Errorf("%s: OnWrite told %v; want [%d]", what, told, want)
		}
	}
	step("create", 1, func() error { return write("w:/a.md", ConflictError) })
	step("overwrite", 1, func() error { return write("w:/a.md", ConflictOverwrite) })
	step("move", 1, func() error {
		_, err := s.Move(ctx, mustRef(t, "w:/a.md"), mustRef(t, "w:/b.md"), ConflictError)
		return err
	})
	step("delete", 1, func() error { _, err := s.Delete(ctx, mustRef(t, "w:/b.md"), false); return err })

	told = nil
	if err := write("w:/c.md", ConflictError); err != nil {
		t.Fatal(err)
	}
	if err := write("w:/c.md", ConflictError); err == nil {
		t.Fatal("a second create of w:/c.md succeeded")
	}
	if len(told) != 1 {
		t.Errorf("a create then a refused create: OnWrite told %v; want only the create", told)
	}
}
