package vfs

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxd/ctxd/vfs/backend"
)

// TestStore_TextContentValidated sends text that is not valid UTF-8, or that
// holds a NUL byte, down every path into text content. Each is refused with
// ErrInvalid naming the item and the first bad byte, and nothing changes.
func TestStore_TextContentValidated(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "/a.md", "one\ntwo\n")
	write := func(content string) func() error {
		return func() error {
			_, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/a.md"), Content: []byte(content), IsText: true, OnConflict: ConflictOverwrite})
			return err
		}
	}
	edit := func(p Patch) func() error {
		return func() error {
			_, err := s.Edit(ctx, mustRef(t, "/a.md"), []Patch{p}, "")
			return err
		}
	}
	tests := []struct {
		name   string
		do     func() error
		offset string // the offset the message names
	}{
		{"write invalid UTF-8", write("ok\xff\n"), "offset 2 (line 1)"},
		{"write NUL", write("a\x00b\n"), "offset 1 (line 1)"},
		{"edit invalid UTF-8", edit(Patch{StartLine: 2, EndLine: 2, Content: "\xff"}), "offset 4 (line 2)"},
		{"edit truncated rune", edit(Patch{StartLine: 1, EndLine: 0, Content: "caf\xc3"}), "offset 3 (line 1)"},
		{"edit NUL", edit(Patch{StartLine: 3, EndLine: 0, Content: "x\x00"}), "offset 9 (line 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, s)
			e := wantErr(t, tt.do(), ErrInvalid)
			if e.Ref != "agent:/a.md" || !strings.Contains(e.Message, tt.offset) || !strings.Contains(e.Hint, "binary") {
				t.Errorf("error = %+v, want ref agent:/a.md, %q and a hint naming binary", e, tt.offset)
			}
			if snapshot(t, s) != before {
				t.Error("store changed")
			}
		})
	}
	if got := mustRead(t, s, "/a.md"); got != "one\ntwo\n" {
		t.Errorf("content = %q", got)
	}
	// Binary content may hold any bytes.
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/b.bin"), Content: []byte("a\x00\xff")}); err != nil {
		t.Errorf("binary write: %v", err)
	}
}

// TestStore_LegacyInvalidText covers an item stored before text was
// validated: reading it still works, as valid UTF-8, and copying it is
// refused rather than spreading the bad bytes.
func TestStore_LegacyInvalidText(t *testing.T) {
	// Without history, as in the older versions that could store such bytes:
	// history would keep them under a hash they do not have.
	s := mustOpenStore(t, Options{HistoryOff: true})
	mustWrite(t, s, "/old.md", "one\ntwo\n")
	// Replace the stored bytes in place, as an older version could leave them.
	err := s.db.Update(ctx, func(tx backend.Tx) error {
		tn := s.newTxn(tx)
		n, err := tn.lookup(mustRef(t, "/old.md"))
		if err != nil {
			return err
		}
		return tn.content.Put(n.pv().id, []byte("one\nt\xffo\n"))
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Read(ctx, mustRef(t, "/old.md"), 1, 0)
	if err != nil || string(res.Content) != "t\uFFFDo\n" || !utf8.Valid(res.Content) {
		t.Errorf("Read = %q, %v; want the bad byte as U+FFFD", res.Content, err)
	}
	if _, raw, err := s.ReadRaw(ctx, mustRef(t, "/old.md")); err != nil || string(raw) != "one\nt\xffo\n" {
		t.Errorf("ReadRaw = %q, %v; want the stored bytes", raw, err)
	}
	_, err = s.Copy(ctx, mustRef(t, "/old.md"), mustRef(t, "/copy.md"), false, ConflictError)
	wantErr(t, err, ErrInvalid)
	// Delete it so the invariant check at cleanup sees only valid text.
	if _, err := s.Delete(ctx, mustRef(t, "/old.md"), false); err != nil {
		t.Fatal(err)
	}
}
