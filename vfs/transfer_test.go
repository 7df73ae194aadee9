package vfs

import (
	"slices"
	"strings"
	"testing"
)

// specialTree writes names whose bytes are SQL LIKE wildcards and prefixes of
// one another, to prove subtree operations are exact.
var specialTree = []string{
	"agent:/a%b/1", "agent:/a%b/sub/2",
	"agent:/a_b/1",
	"agent:/a%/1",
	"agent:/a/x", "agent:/a/y/z",
	"agent:/ab/1", "agent:/a-b", "agent:/a.b",
}

func writeAll(t *testing.T, s *Store, refs []string) {
	t.Helper()
	for _, r := range refs {
		mustWrite(t, s, r, "content of "+r)
	}
}

func without(all []string, drop ...string) []string {
	var out []string
	for _, r := range all {
		if !slices.Contains(drop, r) {
			out = append(out, r)
		}
	}
	return out
}

func sorted(refs []string) []string {
	refs = slices.Clone(refs)
	slices.Sort(refs)
	return refs
}

func TestStore_Delete(t *testing.T) {
	tests := []struct {
		name      string
		ref       string
		recursive bool
		wantN     int64
		removed   []string
	}{
		{"item", "agent:/a-b", false, 1, []string{"agent:/a-b"}},
		{"percent dir", "agent:/a%b", true, 2, []string{"agent:/a%b/1", "agent:/a%b/sub/2"}},
		{"underscore dir", "agent:/a_b", true, 1, []string{"agent:/a_b/1"}},
		{"percent only", "agent:/a%", true, 1, []string{"agent:/a%/1"}},
		{"prefix a not ab", "agent:/a", true, 2, []string{"agent:/a/x", "agent:/a/y/z"}},
		{"whole drive", "agent:/", true, int64(len(specialTree)), specialTree},
		{"by id", "", false, 1, []string{"agent:/ab/1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustOpenStore(t)
			writeAll(t, s, specialTree)
			mustWrite(t, s, "disk:/a/x", "other drive")
			ref := Ref{}
			if tt.ref == "" {
				info, err := s.Info(ctx, mustRef(t, "agent:/ab/1"))
				if err != nil {
					t.Fatal(err)
				}
				ref.ID = info.Item.ID
			} else {
				ref = mustRef(t, tt.ref)
			}
			n, err := s.Delete(ctx, ref, tt.recursive)
			if err != nil || n != tt.wantN {
				t.Fatalf("Delete = %d, %v; want %d", n, err, tt.wantN)
			}
			want := sorted(append(without(specialTree, tt.removed...), "disk:/a/x"))
			if got := sorted(paths(t, s)); !slices.Equal(got, want) {
				t.Errorf("left %q\nwant %q", got, want)
			}
		})
	}
}

func TestStore_Delete_dirs(t *testing.T) {
	s := mustOpenStore(t)
	mustMkdir(t, s, "/d")
	mustWrite(t, s, "/d/x", "x")
	before := snapshot(t, s)
	_, err := s.Delete(ctx, mustRef(t, "/d"), false)
	wantErr(t, err, ErrDirNotEmpty)
	if snapshot(t, s) != before {
		t.Error("store changed")
	}
	_, err = s.Delete(ctx, mustRef(t, "/nope"), true)
	if e := wantErr(t, err, ErrNotFound); !slices.Equal(e.Nearby, []string{"agent:/d/"}) {
		t.Errorf("Nearby = %q", e.Nearby)
	}
	if n, err := s.Delete(ctx, mustRef(t, "/d"), true); err != nil || n != 2 {
		t.Fatalf("Delete = %d, %v", n, err)
	}
	mustMkdir(t, s, "/e")
	if n, err := s.Delete(ctx, mustRef(t, "/e"), false); err != nil || n != 1 {
		t.Fatalf("Delete empty placeholder = %d, %v", n, err)
	}
	if got := paths(t, s); len(got) != 0 {
		t.Errorf("left %q", got)
	}
}

func TestStore_Move(t *testing.T) {
	tests := []struct {
		name     string
		src, dst string
		wantDest string
		moved    map[string]string // old ref -> new ref
	}{
		{"rename item", "agent:/a-b", "agent:/renamed", "agent:/renamed", map[string]string{"agent:/a-b": "agent:/renamed"}},
		{"item into existing dir", "agent:/a-b", "agent:/a", "agent:/a/a-b", map[string]string{"agent:/a-b": "agent:/a/a-b"}},
		{"item to drive root", "agent:/a/x", "disk:/", "disk:/x", map[string]string{"agent:/a/x": "disk:/x"}},
		{"percent subtree", "agent:/a%b", "agent:/moved", "agent:/moved", map[string]string{
			"agent:/a%b/1": "agent:/moved/1", "agent:/a%b/sub/2": "agent:/moved/sub/2"}},
		{"prefix a not ab", "agent:/a", "agent:/z", "agent:/z", map[string]string{
			"agent:/a/x": "agent:/z/x", "agent:/a/y/z": "agent:/z/y/z"}},
		{"dir into existing dir", "agent:/a_b", "agent:/a%", "agent:/a%/a_b", map[string]string{"agent:/a_b/1": "agent:/a%/a_b/1"}},
		{"across drives", "agent:/a", "disk:/b", "disk:/b", map[string]string{
			"agent:/a/x": "disk:/b/x", "agent:/a/y/z": "disk:/b/y/z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustOpenStore(t)
			writeAll(t, s, specialTree)
			ids := map[string]string{}
			for old := range tt.moved {
				info, err := s.Info(ctx, mustRef(t, old))
				if err != nil {
					t.Fatal(err)
				}
				ids[old] = info.Item.ID
			}
			res, err := s.Move(ctx, mustRef(t, tt.src), mustRef(t, tt.dst), ConflictError)
			if err != nil {
				t.Fatal(err)
			}
			if res.Count != int64(len(tt.moved)) || res.Destination != tt.wantDest || res.Skipped != 0 {
				t.Errorf("Move = %+v", res)
			}
			var want []string
			for _, r := range specialTree {
				if n, ok := tt.moved[r]; ok {
					r = n
				}
				want = append(want, r)
			}
			if got := sorted(paths(t, s)); !slices.Equal(got, sorted(want)) {
				t.Errorf("paths %q\nwant %q", got, sorted(want))
			}
			for old, nw := range tt.moved {
				info, err := s.Info(ctx, mustRef(t, nw))
				if err != nil || info.Item.ID != ids[old] {
					t.Errorf("%s: id %q, want %q (%v)", nw, info.Item.ID, ids[old], err)
				}
				if got := mustRead(t, s, nw); got != "content of "+old {
					t.Errorf("%s content = %q", nw, got)
				}
			}
		})
	}
}

func TestStore_Copy(t *testing.T) {
	s := mustOpenStore(t)
	writeAll(t, s, specialTree)
	mustMkdir(t, s, "agent:/a%b/empty")
	res, err := s.Copy(ctx, mustRef(t, "agent:/a%b"), mustRef(t, "backup:/"), true, ConflictError)
	if err != nil || res.Count != 3 || res.Destination != "backup:/a%b" {
		t.Fatalf("Copy = %+v, %v", res, err)
	}
	for _, r := range []string{"1", "sub/2"} {
		src, _ := s.Info(ctx, mustRef(t, "agent:/a%b/"+r))
		dst, err := s.Info(ctx, mustRef(t, "backup:/a%b/"+r))
		if err != nil || dst.Item.ID == src.Item.ID || dst.Item.ContentHash != src.Item.ContentHash {
			t.Errorf("copy of %s: %+v %v", r, dst.Item, err)
		}
	}
	if ok, isDir, _ := s.Exists(ctx, mustRef(t, "backup:/a%b/empty")); !ok || !isDir {
		t.Error("placeholder not copied")
	}
	if ok, _, _ := s.Exists(ctx, mustRef(t, "agent:/a%b/1")); !ok {
		t.Error("source removed by copy")
	}
	// Item copy, then a directory without recursive.
	res, err = s.Copy(ctx, mustRef(t, "agent:/a-b"), mustRef(t, "agent:/copy"), false, ConflictError)
	if err != nil || res.Count != 1 || mustRead(t, s, "agent:/copy") != "content of agent:/a-b" {
		t.Fatalf("item Copy = %+v, %v", res, err)
	}
	before := snapshot(t, s)
	_, err = s.Copy(ctx, mustRef(t, "agent:/a"), mustRef(t, "agent:/b"), false, ConflictError)
	wantErr(t, err, ErrIsDir)
	if snapshot(t, s) != before {
		t.Error("store changed")
	}
}

func TestStore_Transfer_conflicts(t *testing.T) {
	setup := func(t *testing.T) *Store {
		s := mustOpenStore(t)
		writeAll(t, s, []string{"/src/a", "/src/b", "/src/c/d", "/dst/src/a", "/dst/src/c/d"})
		return s
	}
	for _, move := range []bool{false, true} {
		name := "copy"
		if move {
			name = "move"
		}
		run := func(s *Store, oc OnConflict) (TransferResult, error) {
			if move {
				return s.Move(ctx, mustRef(t, "/src"), mustRef(t, "/dst"), oc)
			}
			return s.Copy(ctx, mustRef(t, "/src"), mustRef(t, "/dst"), true, oc)
		}
		t.Run(name+"/error", func(t *testing.T) {
			s := setup(t)
			before := snapshot(t, s)
			_, err := run(s, ConflictError)
			e := wantErr(t, err, ErrConflict)
			if e.Ref != "agent:/dst/src/a" || !strings.Contains(e.Message, "2 conflicting") {
				t.Errorf("error = %+v", e)
			}
			if snapshot(t, s) != before {
				t.Error("store changed")
			}
		})
		t.Run(name+"/skip", func(t *testing.T) {
			s := setup(t)
			res, err := run(s, ConflictSkip)
			if err != nil || res.Count != 1 || res.Skipped != 2 {
				t.Fatalf("= %+v, %v", res, err)
			}
			if got := mustRead(t, s, "/dst/src/a"); got != "content of /dst/src/a" {
				t.Errorf("skipped item changed: %q", got)
			}
			if got := mustRead(t, s, "/dst/src/b"); got != "content of /src/b" {
				t.Errorf("b = %q", got)
			}
			srcA, _, _ := s.Exists(ctx, mustRef(t, "/src/a"))
			srcB, _, _ := s.Exists(ctx, mustRef(t, "/src/b"))
			if !srcA || srcB == move {
				t.Errorf("source after skip: a=%v b=%v", srcA, srcB)
			}
		})
		t.Run(name+"/overwrite", func(t *testing.T) {
			s := setup(t)
			old, _ := s.Info(ctx, mustRef(t, "/dst/src/a"))
			srcA, _ := s.Info(ctx, mustRef(t, "/src/a"))
			res, err := run(s, ConflictOverwrite)
			if err != nil || res.Count != 3 || res.Skipped != 0 {
				t.Fatalf("= %+v, %v", res, err)
			}
			if got := mustRead(t, s, "/dst/src/c/d"); got != "content of /src/c/d" {
				t.Errorf("d = %q", got)
			}
			now, _ := s.Info(ctx, mustRef(t, "/dst/src/a"))
			wantID := old.Item.ID
			if move {
				wantID = srcA.Item.ID
			}
			if now.Item.ID != wantID {
				t.Errorf("id after overwrite = %s, want %s", now.Item.ID, wantID)
			}
		})
	}
}

func TestStore_Transfer_rejects(t *testing.T) {
	tests := []struct {
		name     string
		src, dst string
		copy     bool
		want     error
	}{
		{"dir into itself", "/a", "/a/b", false, ErrInvalid},
		{"dir into own subtree", "/a", "/a/b/c", false, ErrInvalid},
		{"copy dir into itself", "/a", "/a/new", true, ErrInvalid},
		{"item onto itself", "/f", "/f", false, ErrInvalid},
		{"item into its own dir", "/a/b/c", "/a/b", false, ErrInvalid},
		{"drive root into itself", "agent:/", "/x", false, ErrInvalid},
		{"missing source", "/nope", "/x", false, ErrNotFound},
		{"file onto dir", "/a", "/z", false, ErrConflict},
		{"below a file", "/f", "/h/sub", false, ErrNotDir},
		{"dir onto file", "/a", "/h", false, ErrNotDir},
		{"bad dst", "/f", "Bad:/x", false, ErrInvalid},
		{"dst contains source", "/q/q", "/", false, ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustOpenStore(t)
			writeAll(t, s, []string{"/a/b/c", "/f", "/g/f/x", "/h", "/q/q/q/1", "/q/q/1", "/z/a/b/c/d"})
			before := snapshot(t, s)
			dst, err := ParseRef(tt.dst)
			if err != nil {
				dst = Ref{Drive: "Bad", Path: "/x"} // as a caller might build it
			}
			if tt.copy {
				_, err = s.Copy(ctx, mustRef(t, tt.src), dst, true, ConflictOverwrite)
			} else {
				_, err = s.Move(ctx, mustRef(t, tt.src), dst, ConflictOverwrite)
			}
			wantErr(t, err, tt.want)
			if snapshot(t, s) != before {
				t.Error("store changed")
			}
		})
	}
}

func TestStore_Move_wholeDrive(t *testing.T) {
	s := mustOpenStore(t)
	writeAll(t, s, specialTree)
	res, err := s.Move(ctx, mustRef(t, "agent:/"), mustRef(t, "backup:/"), ConflictError)
	if err != nil || res.Count != int64(len(specialTree)) || res.Destination != "backup:/" {
		t.Fatalf("Move = %+v, %v", res, err)
	}
	var want []string
	for _, r := range specialTree {
		want = append(want, "backup:"+strings.TrimPrefix(r, "agent:"))
	}
	if got := sorted(paths(t, s)); !slices.Equal(got, sorted(want)) {
		t.Errorf("paths %q", got)
	}
	if drives, _ := s.ListDrives(ctx); len(drives) != 1 || drives[0].Name != "backup" {
		t.Errorf("drives = %+v", drives)
	}
}

func TestStore_Move_explicitDirs(t *testing.T) {
	s := mustOpenStore(t)
	mustMkdir(t, s, "/src")
	mustMkdir(t, s, "/src/empty")
	mustMkdir(t, s, "/dst/src/empty")
	mustWrite(t, s, "/src/x", "x")
	res, err := s.Move(ctx, mustRef(t, "/src"), mustRef(t, "/dst"), ConflictError)
	if err != nil || res.Count != 2 || res.Destination != "agent:/dst/src" {
		t.Fatalf("Move = %+v, %v", res, err)
	}
	want := []string{"agent:/dst/src/", "agent:/dst/src/empty/", "agent:/dst/src/x"}
	if got := paths(t, s); !slices.Equal(got, want) {
		t.Errorf("paths %q, want %q", got, want)
	}
}
