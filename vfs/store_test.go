package vfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/google/uuid"
)

var ctx = context.Background()

func TestStore_Write(t *testing.T) {
	longLine := strings.Repeat("x", 1<<20)
	tests := []struct {
		name      string
		params    WriteParams
		wantMime  string
		wantLines int64
		wantTitle string
	}{
		{"markdown", WriteParams{Ref: Ref{Drive: "agent", Path: "/notes/a.md"}, Content: []byte("# A\nbody\n"), IsText: true}, "text/markdown; charset=utf-8", 2, "a.md"},
		{"empty", WriteParams{Ref: Ref{Drive: "agent", Path: "/empty.txt"}, Content: nil, IsText: true}, "text/plain; charset=utf-8", 0, "empty.txt"},
		{"one MB line", WriteParams{Ref: Ref{Drive: "agent", Path: "/long"}, Content: []byte(longLine), IsText: true}, "text/plain; charset=utf-8", 1, "long"},
		{"multi-byte", WriteParams{Ref: Ref{Drive: "agent", Path: "/ü/日本.txt"}, Content: []byte("héllo\n世界\n🙂"), IsText: true}, "text/plain; charset=utf-8", 3, "日本.txt"},
		{"binary png", WriteParams{Ref: Ref{Drive: "disk", Path: "/img"}, Content: []byte("\x89PNG\r\n\x1a\n\x00\x00")}, "image/png", 0, "img"},
		{"explicit mime and title", WriteParams{Ref: Ref{Drive: "agent", Path: "/x"}, Content: []byte("{}"), IsText: true, MimeType: "application/json", Title: "Config"}, "application/json", 1, "Config"},
		{"url drive", WriteParams{Ref: Ref{Drive: "url", Path: "/https://example.com/post"}, Content: []byte("hi"), IsText: true}, "text/plain; charset=utf-8", 1, "post"},
		{"json by extension", WriteParams{Ref: Ref{Drive: "agent", Path: "/d.JSON"}, Content: []byte("[]"), IsText: true}, "application/json", 1, "d.JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustOpenStore(t)
			res, err := s.Write(ctx, tt.params)
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			it := res.Item
			if !res.Created || res.Skipped || it.ID == "" {
				t.Errorf("result = %+v", res)
			}
			if it.MimeType != tt.wantMime || it.LineCount != tt.wantLines || it.Title != tt.wantTitle {
				t.Errorf("mime %q lines %d title %q; want %q %d %q", it.MimeType, it.LineCount, it.Title, tt.wantMime, tt.wantLines, tt.wantTitle)
			}
			if it.Size != int64(len(tt.params.Content)) || it.ContentHash != HashContent(tt.params.Content) {
				t.Errorf("size %d hash %s", it.Size, it.ContentHash)
			}
			gotItem, raw, err := s.ReadRaw(ctx, Ref{ID: it.ID})
			if err != nil || !bytes.Equal(raw, tt.params.Content) || gotItem.Path != tt.params.Ref.Path {
				t.Fatalf("ReadRaw = %v, %d bytes; want %d bytes", err, len(raw), len(tt.params.Content))
			}
		})
	}
}

func TestStore_Write_metadata(t *testing.T) {
	s := mustOpenStore(t)
	res, err := s.Write(ctx, WriteParams{
		Ref: mustRef(t, "/a"), Content: []byte("x"), IsText: true,
		Tags: []string{" b ", "a", "b", "ä"}, Importance: 0.5, Description: "d", SourceURL: "https://e.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Item.Tags, []string{"a", "b", "ä"}) {
		t.Errorf("tags = %q", res.Item.Tags)
	}
	info, err := s.Info(ctx, mustRef(t, "/a"))
	if err != nil || info.Item.Importance != 0.5 || info.Item.Description != "d" || info.Item.SourceURL != "https://e.com" {
		t.Errorf("Info = %+v, %v", info, err)
	}
}

func TestStore_Write_conflict(t *testing.T) {
	tests := []struct {
		name        string
		oc          OnConflict
		hash        func(old Item) string
		wantErr     error
		wantSkipped bool
		wantContent string
	}{
		{"error", ConflictError, nil, ErrConflict, false, "old\n"},
		{"skip", ConflictSkip, nil, nil, true, "old\n"},
		{"overwrite", ConflictOverwrite, nil, nil, false, "new\n"},
		{"overwrite expected hash", ConflictOverwrite, func(old Item) string { return old.ContentHash }, nil, false, "new\n"},
		{"overwrite stale hash", ConflictOverwrite, func(Item) string { return HashContent([]byte("other")) }, ErrChanged, false, "old\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustOpenStore(t)
			old := mustWrite(t, s, "agent:/n.md", "old\n")
			time.Sleep(time.Millisecond)
			p := WriteParams{Ref: mustRef(t, "agent:/n.md"), Content: []byte("new\n"), IsText: true, OnConflict: tt.oc}
			if tt.hash != nil {
				p.ExpectedHash = tt.hash(old)
			}
			before := snapshot(t, s)
			res, err := s.Write(ctx, p)
			if tt.wantErr != nil {
				wantErr(t, err, tt.wantErr)
				if snapshot(t, s) != before {
					t.Error("store changed")
				}
			} else if err != nil {
				t.Fatal(err)
			} else {
				if res.Skipped != tt.wantSkipped || res.Created || res.Item.ID != old.ID || !res.Item.CreatedAt.Equal(old.CreatedAt) {
					t.Errorf("result = %+v, old %+v", res, old)
				}
				if !tt.wantSkipped && !res.Item.UpdatedAt.After(old.UpdatedAt) {
					t.Errorf("UpdatedAt not bumped")
				}
			}
			if got := mustRead(t, s, "agent:/n.md"); got != tt.wantContent {
				t.Errorf("content = %q, want %q", got, tt.wantContent)
			}
		})
	}
}

func TestStore_Write_sameContentTwice(t *testing.T) {
	s := mustOpenStore(t)
	a := mustWrite(t, s, "/a", "same")
	res, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/a"), Content: []byte("same"), IsText: true, OnConflict: ConflictOverwrite})
	if err != nil || res.Item.ID != a.ID || res.Item.ContentHash != a.ContentHash {
		t.Fatalf("rewrite = %+v, %v", res, err)
	}
}

func TestStore_Write_rejects(t *testing.T) {
	tests := []struct {
		name string
		p    WriteParams
		want error
	}{
		{"invalid utf8 text", WriteParams{Ref: Ref{Drive: "agent", Path: "/t"}, Content: []byte("ok\xff"), IsText: true}, ErrInvalid},
		{"invalid utf8 path", WriteParams{Ref: Ref{Drive: "agent", Path: "/a\xff"}, IsText: true}, ErrInvalid},
		{"dotdot path", WriteParams{Ref: Ref{Drive: "agent", Path: "/a/../etc"}, IsText: true}, ErrInvalid},
		{"nul path", WriteParams{Ref: Ref{Drive: "agent", Path: "/a\x00"}, IsText: true}, ErrInvalid},
		{"control path", WriteParams{Ref: Ref{Drive: "agent", Path: "/a\x1b[0m"}, IsText: true}, ErrInvalid},
		{"bad drive", WriteParams{Ref: Ref{Drive: "Disk", Path: "/a"}, IsText: true}, ErrInvalid},
		{"id ref", WriteParams{Ref: Ref{ID: "0190f5a4-8b2c-7d3e-9f10-123456789abc"}, IsText: true}, ErrInvalid},
		{"too large", WriteParams{Ref: Ref{Drive: "agent", Path: "/big"}, Content: make([]byte, 65)}, ErrTooLarge},
		{"empty tag", WriteParams{Ref: Ref{Drive: "agent", Path: "/t"}, Tags: []string{" "}}, ErrInvalid},
		{"long tag", WriteParams{Ref: Ref{Drive: "agent", Path: "/t"}, Tags: []string{strings.Repeat("t", 129)}}, ErrInvalid},
		{"control tag", WriteParams{Ref: Ref{Drive: "agent", Path: "/t"}, Tags: []string{"a\nb"}}, ErrInvalid},
		{"importance", WriteParams{Ref: Ref{Drive: "agent", Path: "/t"}, Importance: 1.5}, ErrInvalid},
		{"bad mime", WriteParams{Ref: Ref{Drive: "agent", Path: "/t"}, MimeType: "not a mime"}, ErrInvalid},
		{"dir mime", WriteParams{Ref: Ref{Drive: "agent", Path: "/t"}, MimeType: DirMimeType}, ErrInvalid},
		{"on conflict", WriteParams{Ref: Ref{Drive: "agent", Path: "/t"}, OnConflict: 7}, ErrInvalid},
		{"drive root", WriteParams{Ref: Ref{Drive: "agent", Path: "/"}}, ErrIsDir},
		{"implicit dir", WriteParams{Ref: Ref{Drive: "agent", Path: "/dir"}}, ErrIsDir},
		{"explicit dir", WriteParams{Ref: Ref{Drive: "agent", Path: "/empty"}}, ErrIsDir},
		{"below a file", WriteParams{Ref: Ref{Drive: "agent", Path: "/file/x"}}, ErrNotDir},
		{"existing", WriteParams{Ref: Ref{Drive: "agent", Path: "/file"}}, ErrConflict},
		{"stale hash on missing", WriteParams{Ref: Ref{Drive: "agent", Path: "/new"}, ExpectedHash: "abc", OnConflict: ConflictOverwrite}, ErrChanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustOpenStore(t, Options{MaxContentBytes: 64})
			mustWrite(t, s, "/dir/x", "x")
			mustWrite(t, s, "/file", "f")
			mustMkdir(t, s, "/empty")
			before := snapshot(t, s)
			_, err := s.Write(ctx, tt.p)
			e := wantErr(t, err, tt.want)
			if strings.ContainsAny(e.Message, "\x00\xff\x1b") {
				t.Errorf("message leaks raw bytes: %q", e.Message)
			}
			if snapshot(t, s) != before {
				t.Error("store changed")
			}
		})
	}
}

func TestStore_Write_tooLargeMessage(t *testing.T) {
	s := mustOpenStore(t, Options{MaxContentBytes: 10})
	_, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/a"), Content: make([]byte, 11)})
	e := wantErr(t, err, ErrTooLarge)
	if !strings.Contains(e.Message, "11") || !strings.Contains(e.Message, "10") {
		t.Errorf("message %q lacks the sizes", e.Message)
	}
	_, err = s.Write(ctx, WriteParams{Ref: mustRef(t, "/b"), Content: []byte("abc\xe2"), IsText: true})
	e = wantErr(t, err, ErrInvalid)
	if !strings.Contains(e.Message, "offset 3") || !strings.Contains(e.Hint, "binary") {
		t.Errorf("utf8 error = %q / %q", e.Message, e.Hint)
	}
}

func TestStore_Read(t *testing.T) {
	const text = "one\ntwo\r\nthree\n\nfive"
	tests := []struct {
		name          string
		offset, limit int64
		want          string
		start, end    int64
		hasMore       bool
	}{
		{"all", 0, 0, text, 1, 5, false},
		{"first two", 0, 2, "one\ntwo\r\n", 1, 2, true},
		{"middle", 2, 2, "three\n\n", 3, 4, true},
		{"last unterminated", 4, 1, "five", 5, 5, false},
		{"limit past end", 3, 10, "\nfive", 4, 5, false},
		{"offset at end", 5, 0, "", 0, 0, false},
	}
	s := mustOpenStore(t)
	mustWrite(t, s, "/t.txt", text)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Read(ctx, mustRef(t, "/t.txt"), tt.offset, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Content) != tt.want || res.StartLine != tt.start || res.EndLine != tt.end || res.HasMore != tt.hasMore || res.TotalLines != 5 {
				t.Errorf("Read = %q [%d,%d] more=%v total=%d", res.Content, res.StartLine, res.EndLine, res.HasMore, res.TotalLines)
			}
		})
	}
}

func TestStore_Read_edgeContent(t *testing.T) {
	s := mustOpenStore(t)
	long := strings.Repeat("é", 1<<19) + "\nend"
	for ref, content := range map[string]string{"/empty": "", "/long": long, "/multi": "日本\n語"} {
		if got := (mustWrite(t, s, ref, content)); got.Size != int64(len(content)) {
			t.Fatalf("size %d", got.Size)
		}
		if got := mustRead(t, s, ref); got != content {
			t.Errorf("Read(%s) = %d bytes, want %d", ref, len(got), len(content))
		}
	}
	res, err := s.Read(ctx, mustRef(t, "/long"), 1, 1)
	if err != nil || string(res.Content) != "end" {
		t.Errorf("Read line 2 = %q, %v", res.Content, err)
	}
	res, err = s.Read(ctx, mustRef(t, "/empty"), 0, 0)
	if err != nil || len(res.Content) != 0 || res.TotalLines != 0 || res.StartLine != 0 {
		t.Errorf("Read empty = %+v, %v", res, err)
	}
}

func TestStore_Read_errors(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "/notes/a.md", "a\nb\n")
	mustMkdir(t, s, "/empty")
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/bin"), Content: []byte{0, 1, 2}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		ref           Ref
		offset, limit int64
		want          error
	}{
		{"offset past end", mustRef(t, "/notes/a.md"), 3, 0, ErrOutOfRange},
		{"negative offset", mustRef(t, "/notes/a.md"), -1, 0, ErrInvalid},
		{"negative limit", mustRef(t, "/notes/a.md"), 0, -1, ErrInvalid},
		{"binary", mustRef(t, "/bin"), 0, 0, ErrNoText},
		{"placeholder", mustRef(t, "/empty"), 0, 0, ErrNoText},
		{"implicit dir", mustRef(t, "/notes"), 0, 0, ErrIsDir},
		{"drive root", mustRef(t, "agent:/"), 0, 0, ErrIsDir},
		{"missing", mustRef(t, "/notes/b.md"), 0, 0, ErrNotFound},
		{"missing id", Ref{ID: "0190f5a4-8b2c-7d3e-9f10-123456789abc"}, 0, 0, ErrNotFound},
		{"bad id", Ref{ID: "nope"}, 0, 0, ErrInvalid},
		{"empty ref", Ref{}, 0, 0, ErrInvalid},
		{"bad path", Ref{Drive: "agent", Path: "/a/../b"}, 0, 0, ErrInvalid},
		{"empty drive", mustRef(t, "disk:/x"), 0, 0, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Read(ctx, tt.ref, tt.offset, tt.limit)
			e := wantErr(t, err, tt.want)
			if tt.want == ErrOutOfRange && !strings.Contains(e.Message, "2 lines") {
				t.Errorf("message %q lacks the line count", e.Message)
			}
		})
	}
}

func TestStore_ReadRaw(t *testing.T) {
	s := mustOpenStore(t)
	bin := []byte{0, 0xff, 1}
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/b"), Content: bin}); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, s, "/d")
	it, got, err := s.ReadRaw(ctx, mustRef(t, "/b"))
	if err != nil || !bytes.Equal(got, bin) || it.IsText || it.MimeType != "application/octet-stream" {
		t.Fatalf("ReadRaw = %+v %v %v", it, got, err)
	}
	_, _, err = s.ReadRaw(ctx, mustRef(t, "/d"))
	wantErr(t, err, ErrIsDir)
	_, _, err = s.ReadRaw(ctx, mustRef(t, "/zz"))
	wantErr(t, err, ErrNotFound)
}

func TestStore_MakeDir(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "/file", "x")
	mustWrite(t, s, "/implicit/a", "x")
	tests := []struct {
		name        string
		ref         string
		wantCreated bool
		wantErr     error
	}{
		{"new", "/d", true, nil},
		{"again", "/d", false, nil},
		{"nested new", "/p/q/r", true, nil},
		{"implicit", "/implicit", false, nil},
		{"root of non-empty drive", "agent:/", false, nil},
		{"file", "/file", false, ErrConflict},
		{"below file", "/file/sub", false, ErrNotDir},
		{"root of empty drive", "disk:/", false, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, s)
			created, err := s.MakeDir(ctx, mustRef(t, tt.ref))
			if tt.wantErr != nil {
				wantErr(t, err, tt.wantErr)
				if snapshot(t, s) != before {
					t.Error("store changed")
				}
				return
			}
			if err != nil || created != tt.wantCreated {
				t.Fatalf("MakeDir = %v, %v; want %v", created, err, tt.wantCreated)
			}
			ok, isDir, err := s.Exists(ctx, mustRef(t, tt.ref))
			if !ok || !isDir || err != nil {
				t.Errorf("Exists = %v %v %v", ok, isDir, err)
			}
		})
	}
	// A placeholder survives its children coming and going.
	mustWrite(t, s, "/d/child", "c")
	if n, err := s.Delete(ctx, mustRef(t, "/d/child"), false); err != nil || n != 1 {
		t.Fatalf("Delete = %d, %v", n, err)
	}
	if ok, isDir, _ := s.Exists(ctx, mustRef(t, "/d")); !ok || !isDir {
		t.Error("placeholder vanished")
	}
}

func TestStore_InfoExistsSize(t *testing.T) {
	s := mustOpenStore(t)
	a := mustWrite(t, s, "/d/a.md", "12345")
	mustWrite(t, s, "/d/sub/b.md", "123")
	mustMkdir(t, s, "/d/empty")
	mustWrite(t, s, "/da", "x")
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/bin"), Content: []byte{0}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref           string
		exists, isDir bool
		size, count   int64
	}{
		{"/d/a.md", true, false, 5, 1},
		{"/d", true, true, 8, 3},
		{"/d/empty", true, true, 0, 0},
		{"agent:/", true, true, 10, 5},
		{"/d/none", false, false, 0, 0},
		{"disk:/", false, false, 0, 0},
		{a.ID, true, false, 5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			ref := mustRef(t, tt.ref)
			ok, isDir, err := s.Exists(ctx, ref)
			if err != nil || ok != tt.exists || isDir != tt.isDir {
				t.Fatalf("Exists = %v %v %v", ok, isDir, err)
			}
			info, err := s.Info(ctx, ref)
			size, count, serr := s.DirSize(ctx, ref)
			if !tt.exists {
				wantErr(t, err, ErrNotFound)
				wantErr(t, serr, ErrNotFound)
				return
			}
			if err != nil || serr != nil {
				t.Fatal(err, serr)
			}
			if info.Item.IsDir != tt.isDir || info.Item.Size != tt.size || (tt.isDir && info.ItemCount != tt.count) {
				t.Errorf("Info = %+v", info)
			}
			if tt.isDir && info.Item.MimeType != DirMimeType {
				t.Errorf("dir mime = %q", info.Item.MimeType)
			}
			if size != tt.size || count != tt.count {
				t.Errorf("DirSize = %d, %d", size, count)
			}
		})
	}
	if _, _, err := s.Exists(ctx, Ref{Drive: "Bad", Path: "/"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Exists(bad) = %v", err)
	}
	if ok, _, err := s.Exists(ctx, Ref{ID: "0190f5a4-8b2c-7d3e-9f10-123456789abc"}); ok || err != nil {
		t.Errorf("Exists(missing id) = %v, %v", ok, err)
	}
}

func TestStore_CountLines(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "/a", "1\n2\n3")
	mustWrite(t, s, "/e", "")
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "/bin"), Content: []byte("a\nb")}); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]int64{"/a": 3, "/e": 0} {
		if n, err := s.CountLines(ctx, mustRef(t, ref)); err != nil || n != want {
			t.Errorf("CountLines(%s) = %d, %v", ref, n, err)
		}
	}
	_, err := s.CountLines(ctx, mustRef(t, "/bin"))
	wantErr(t, err, ErrNoText)
	_, err = s.CountLines(ctx, mustRef(t, "agent:/"))
	wantErr(t, err, ErrIsDir)
}

func TestCountLines(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "a": 1, "a\n": 1, "\n": 1, "a\nb": 2, "\n\n": 2} {
		if got := CountLines([]byte(in)); got != want {
			t.Errorf("CountLines(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestStore_NotFoundHints(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "disk:/Users/evan/notes/readme.md", "r")
	mustWrite(t, s, "disk:/Users/evan/notes/guide.md", "g")
	mustMkdir(t, s, "disk:/Users/evan/notes/sub")
	mustWrite(t, s, "agent:/x", "x")
	tests := []struct {
		name, ref  string
		wantNearby []string
		wantHint   string
	}{
		{"sibling", "disk:/Users/evan/notes/architecture.md", []string{"disk:/Users/evan/notes/guide.md", "disk:/Users/evan/notes/readme.md", "disk:/Users/evan/notes/sub/"}, "Nearby items under disk:/Users/evan/notes: "},
		{"walk up", "disk:/Users/evan/notes/deep/er/x.md", []string{"disk:/Users/evan/notes/guide.md", "disk:/Users/evan/notes/readme.md", "disk:/Users/evan/notes/sub/"}, "Call tree disk:/Users/evan/notes to see more."},
		{"up to root", "disk:/Other/x", []string{"disk:/Users/"}, "Nearby items under disk:/: "},
		{"empty drive", "github:/a/b", []string{"agent:/", "disk:/"}, "agent, disk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Read(ctx, mustRef(t, tt.ref), 0, 0)
			e := wantErr(t, err, ErrNotFound)
			if !slices.Equal(e.Nearby, tt.wantNearby) || !strings.Contains(e.Hint, tt.wantHint) || e.Ref != tt.ref {
				t.Errorf("Nearby = %q, hint = %q, ref = %q", e.Nearby, e.Hint, e.Ref)
			}
		})
	}
	for i := range 8 {
		mustWrite(t, s, fmt.Sprintf("/many/%d", i), "x")
	}
	_, err := s.Info(ctx, mustRef(t, "/many/9"))
	if e := wantErr(t, err, ErrNotFound); len(e.Nearby) != 5 {
		t.Errorf("Nearby = %q, want 5", e.Nearby)
	}
}

func TestStore_List(t *testing.T) {
	s := mustOpenStore(t)
	for _, p := range []string{"/a/1", "/a/2/x", "/a-b", "/ab", "/a%/y", "/c"} {
		mustWrite(t, s, p, "data")
	}
	mustMkdir(t, s, "/a/0")
	mustMkdir(t, s, "/e")
	tests := []struct {
		name      string
		dir       string
		recursive bool
		want      []string
	}{
		{"root", "agent:/", false, []string{"a/", "a%/", "a-b", "ab", "c", "e/"}},
		{"a", "/a", false, []string{"0/", "1", "2/"}},
		{"a recursive", "/a", true, []string{"0/", "1", "2/x"}},
		{"empty dir", "/e", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []int{0, 1, 2} {
				var got []string
				token := ""
				for page := 0; ; page++ {
					entries, next, err := s.List(ctx, mustRef(t, tt.dir), tt.recursive, limit, token)
					if err != nil {
						t.Fatal(err)
					}
					if limit > 0 && len(entries) > limit {
						t.Fatalf("page of %d > limit %d", len(entries), limit)
					}
					for _, e := range entries {
						name := e.Name
						if e.IsDir {
							name += "/"
						}
						if e.IsDir != (e.Item == nil || e.Item.IsDir) {
							t.Errorf("entry %+v: item/dir mismatch", e)
						}
						got = append(got, name)
					}
					if next == "" {
						break
					}
					token = next
					if page > 10 {
						t.Fatal("no end")
					}
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("limit %d: List = %q, want %q", limit, got, tt.want)
				}
			}
		})
	}
	_, _, err := s.List(ctx, mustRef(t, "/c"), false, 0, "")
	wantErr(t, err, ErrNotDir)
	_, _, err = s.List(ctx, mustRef(t, "/nope"), false, 0, "")
	wantErr(t, err, ErrNotFound)
	_, _, err = s.List(ctx, mustRef(t, "/a"), false, 0, "!!!")
	wantErr(t, err, ErrInvalid)
	_, next, _ := s.List(ctx, mustRef(t, "agent:/"), false, 1, "")
	_, _, err = s.List(ctx, mustRef(t, "/a"), false, 0, next)
	wantErr(t, err, ErrInvalid)
	_, _, err = s.List(ctx, mustRef(t, "/a"), false, -1, "")
	wantErr(t, err, ErrInvalid)
}

func TestStore_StatsAndDrives(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "agent:/same.md", "12")
	mustWrite(t, s, "disk:/same.md", "345")
	mustWrite(t, s, "disk:/other", "6")
	drives, err := s.ListDrives(ctx)
	want := []DriveInfo{{"agent", 1, 2}, {"disk", 2, 4}}
	if err != nil || !slices.Equal(drives, want) {
		t.Fatalf("ListDrives = %+v, %v", drives, err)
	}
	if mustRead(t, s, "agent:/same.md") != "12" || mustRead(t, s, "disk:/same.md") != "345" {
		t.Error("same path on two drives mixed up")
	}
	st, err := s.Stats(ctx)
	if err != nil || st.ItemCount != 3 || st.Size != 6 || st.FileSize <= 0 || len(st.Drives) != 2 {
		t.Fatalf("Stats = %+v, %v", st, err)
	}
	if _, err := s.Delete(ctx, mustRef(t, "agent:/"), true); err != nil {
		t.Fatal(err)
	}
	drives, _ = s.ListDrives(ctx)
	if !slices.Equal(drives, want[1:]) {
		t.Errorf("after deleting agent: %+v", drives)
	}
}

func TestStore_Reopen(t *testing.T) {
	path := newLocation(t)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	it := mustWrite(t, s, "/keep.md", "kept\n")
	// A bbolt file has one owner; a PostgreSQL store is shared by replicas.
	var wait time.Duration // a PostgreSQL open connects and migrates: its default bound
	if testBackend == "bolt" {
		wait = 50 * time.Millisecond
	}
	second, err := Open(path, Options{OpenTimeout: wait})
	switch {
	case testBackend == "bolt" && (err == nil || !strings.Contains(err.Error(), "locked")):
		t.Errorf("second Open = %v, want a lock error", err)
	case testBackend == "postgres" && err != nil:
		t.Errorf("second Open = %v, want a replica", err)
	case testBackend == "postgres":
		if res, err := second.Read(ctx, Ref{ID: it.ID}, 0, 0); err != nil || string(res.Content) != "kept\n" {
			t.Errorf("read through a second replica: %+v, %v", res, err)
		}
		second.Close()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Read(ctx, Ref{ID: it.ID}, 0, 0)
	if err != nil || string(res.Content) != "kept\n" || res.Item.Path != "/keep.md" {
		t.Errorf("after reopen: %+v, %v", res, err)
	}
	if err := s.check(); err != nil {
		t.Error(err)
	}
	// An unknown schema version is refused.
	err = s.db.Update(ctx, func(tx backend.Tx) error {
		return tx.Bucket([]byte(bucketMeta)).Put([]byte(keySchema), []byte("99"))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "schema version") {
		t.Errorf("Open with schema 99 = %v", err)
	}
}

func TestStore_Concurrent(t *testing.T) {
	s := mustOpenStore(t)
	const workers, perWorker = 32, 40
	var (
		mu    sync.Mutex
		acked = map[string]string{} // ref -> last acknowledged content per writer-owned path
	)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				own := fmt.Sprintf("/w%d/%d.md", w, i%5)
				shared := fmt.Sprintf("/shared/%d", i%3)
				content := fmt.Sprintf("w%d i%d\n", w, i)
				_, err := s.Write(ctx, WriteParams{Ref: mustRef(t, own), Content: []byte(content), IsText: true, OnConflict: ConflictOverwrite})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[own] = content
				mu.Unlock()
				if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, shared), Content: []byte(content), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
					t.Error(err)
					return
				}
				if _, err := s.Read(ctx, mustRef(t, shared), 0, 0); err != nil {
					t.Error(err)
					return
				}
				if _, err := s.Tree(ctx, mustRef(t, "/shared"), 0, 0); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for ref, want := range acked {
		if got := mustRead(t, s, ref); got != want {
			t.Errorf("%s = %q, want %q", ref, got, want)
		}
	}
}

// TestStore_ItemRecordLeavesOutItsKey: an item's record does not repeat
// its id (the key), nor its creation time while it equals the update's;
// records that do, from older stores, still read.
func TestStore_ItemRecordLeavesOutItsKey(t *testing.T) {
	s := mustOpenStore(t)
	written := mustWrite(t, s, "notes:/a.md", "body")
	key := uuid.MustParse(written.ID)
	var rec []byte
	if err := s.db.View(ctx, func(tx backend.Tx) error {
		rec = bytes.Clone(tx.Bucket([]byte(bucketItems)).Get(key[:]))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(rec, []byte(written.ID)) || bytes.Contains(rec, []byte("CreatedAt")) {
		t.Errorf("record %s repeats the id or the update time", rec)
	}
	// The head prefix before the JSON is binary and may hold a '{' byte of its own.
	body := recordJSON(rec)
	head := rec[:len(rec)-len(body)]
	withID := append(bytes.Clone(head), bytes.Replace(body, []byte("{"), []byte(`{"ID":"`+written.ID+`",`), 1)...)
	if err := s.db.Update(ctx, func(tx backend.Tx) error { return tx.Bucket([]byte(bucketItems)).Put(key[:], withID) }); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []Ref{mustRef(t, "notes:/a.md"), {ID: written.ID}} {
		it, _, err := s.ReadRaw(ctx, ref)
		if err != nil || it.ID != written.ID || !it.CreatedAt.Equal(written.CreatedAt) || !it.CreatedAt.Equal(it.UpdatedAt) {
			t.Errorf("ReadRaw(%s) = id %q created %v updated %v, %v; want %s created %v", ref, it.ID, it.CreatedAt, it.UpdatedAt, err, written.ID, written.CreatedAt)
		}
	}
	// Once changed, the item keeps its creation time.
	time.Sleep(time.Millisecond)
	res, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "notes:/a.md"), Content: []byte("changed"), IsText: true, OnConflict: ConflictOverwrite})
	if err != nil {
		t.Fatal(err)
	}
	if changed := res.Item; !changed.CreatedAt.Equal(written.CreatedAt) || !changed.UpdatedAt.After(written.CreatedAt) {
		t.Errorf("after a change: created %v updated %v, want created %v and a later update", changed.CreatedAt, changed.UpdatedAt, written.CreatedAt)
	}
	if it, _, err := s.ReadRaw(ctx, Ref{ID: written.ID}); err != nil || !it.CreatedAt.Equal(written.CreatedAt) {
		t.Errorf("ReadRaw after a change: created %v, %v; want %v", it.CreatedAt, err, written.CreatedAt)
	}
}
