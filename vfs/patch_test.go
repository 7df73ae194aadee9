package vfs

import (
	"strings"
	"testing"
)

func TestApplyPatches(t *testing.T) {
	const orig = "1\n2\n3\n4\n5\n"
	tests := []struct {
		name    string
		content string
		patches []Patch
		want    string
	}{
		{"replace one", orig, []Patch{{2, 2, "two"}}, "1\ntwo\n3\n4\n5\n"},
		{"replace range with more", orig, []Patch{{2, 3, "a\nb\nc\n"}}, "1\na\nb\nc\n4\n5\n"},
		{"delete range", orig, []Patch{{2, 4, ""}}, "1\n5\n"},
		{"delete all", orig, []Patch{{1, 5, ""}}, ""},
		{"insert at top", orig, []Patch{{1, 0, "0"}}, "0\n1\n2\n3\n4\n5\n"},
		{"append", orig, []Patch{{6, 0, "6\n"}}, orig + "6\n"},
		{"several, numbered against original", orig, []Patch{{5, 5, "five"}, {1, 1, "one"}, {3, 0, "2.5"}}, "one\n2\n2.5\n3\n4\nfive\n"},
		{"insert after replaced range", orig, []Patch{{2, 3, "x"}, {4, 0, "y"}}, "1\nx\ny\n4\n5\n"},
		{"no final newline kept", "a\nb", []Patch{{2, 2, "B"}}, "a\nB"},
		{"append to unterminated", "a", []Patch{{2, 0, "b"}}, "a\nb"},
		{"insert into empty", "", []Patch{{1, 0, "x"}}, "x\n"},
		{"multi-byte", "héllo\n世界\n", []Patch{{2, 2, "🙂"}}, "héllo\n🙂\n"},
		{"crlf content kept", "a\r\nb\r\n", []Patch{{1, 0, "z\r\n"}}, "z\r\na\r\nb\r\n"},
		{"empty last line survives", "a\n\nb", []Patch{{3, 3, ""}}, "a\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyPatches([]byte(tt.content), tt.patches)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("ApplyPatches = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestApplyPatches_invalid(t *testing.T) {
	const orig = "1\n2\n3\n4\n5\n"
	tests := []struct {
		name    string
		patches []Patch
		wantMsg string
	}{
		{"none", nil, "No patches"},
		{"negative", []Patch{{-1, 2, "x"}}, "patches[0]"},
		{"zero start", []Patch{{0, 2, "x"}}, "patches[0]"},
		{"end past", []Patch{{1, 2, "x"}, {4, 6, "x"}}, "patches[1]"},
		{"reversed", []Patch{{3, 2, "x"}}, "reversed"},
		{"insert past", []Patch{{7, 0, "x"}}, "insert position 7"},
		{"insert empty", []Patch{{1, 0, ""}}, "needs content"},
		{"overlap", []Patch{{1, 3, "x"}, {3, 4, "y"}}, "overlaps"},
		{"same range twice", []Patch{{2, 2, "x"}, {2, 2, "y"}}, "overlaps"},
		{"two inserts same line", []Patch{{2, 0, "x"}, {2, 0, "y"}}, "both insert"},
		{"insert inside range", []Patch{{2, 4, "x"}, {3, 0, "y"}}, "inside lines 2-4"},
		{"insert at range start", []Patch{{3, 0, "y"}, {3, 4, "x"}}, "patches[0] inserts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ApplyPatches([]byte(orig), tt.patches)
			e := wantErr(t, err, ErrInvalidPatch)
			if !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("message %q lacks %q", e.Message, tt.wantMsg)
			}
		})
	}
}

func TestStore_Edit(t *testing.T) {
	s := mustOpenStore(t, Options{MaxContentBytes: 100})
	a := mustWrite(t, s, "/a.md", "1\n2\n3\n")
	res, err := s.Edit(ctx, mustRef(t, "/a.md"), []Patch{{2, 2, "two"}, {4, 0, "4"}}, a.ContentHash)
	if err != nil {
		t.Fatal(err)
	}
	if res.LinesBefore != 3 || res.LinesAfter != 4 || res.Item.ID != a.ID || res.Item.ContentHash == a.ContentHash {
		t.Errorf("Edit = %+v", res)
	}
	if got := mustRead(t, s, "/a.md"); got != "1\ntwo\n3\n4\n" {
		t.Errorf("content = %q", got)
	}

	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/bin"), Content: []byte{1, 2}}); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, s, "/d")
	tests := []struct {
		name    string
		ref     string
		patches []Patch
		hash    string
		want    error
	}{
		{"stale hash", "/a.md", []Patch{{1, 1, "x"}}, a.ContentHash, ErrChanged},
		{"overlap", "/a.md", []Patch{{1, 2, "x"}, {2, 3, "y"}}, "", ErrInvalidPatch},
		{"out of range", "/a.md", []Patch{{5, 5, "x"}}, "", ErrInvalidPatch},
		{"empty list", "/a.md", nil, "", ErrInvalidPatch},
		{"too large", "/a.md", []Patch{{1, 0, strings.Repeat("x", 100)}}, "", ErrTooLarge},
		{"binary", "/bin", []Patch{{1, 1, "x"}}, "", ErrNoText},
		{"placeholder", "/d", []Patch{{1, 0, "x"}}, "", ErrNoText},
		{"implicit dir", "agent:/", []Patch{{1, 0, "x"}}, "", ErrIsDir},
		{"missing", "/zz", []Patch{{1, 0, "x"}}, "", ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, s)
			_, err := s.Edit(ctx, mustRef(t, tt.ref), tt.patches, tt.hash)
			e := wantErr(t, err, tt.want)
			if tt.want == ErrInvalidPatch && e.Ref != "agent:/a.md" {
				t.Errorf("Ref = %q", e.Ref)
			}
			if snapshot(t, s) != before {
				t.Error("store changed")
			}
		})
	}
}
