package vfs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestNewAccess(t *testing.T) {
	tests := []struct {
		name          string
		drives, paths []string
		allow, deny   []string // drive:/path refs
		prefixes      []string
	}{
		{name: "unlimited", allow: []string{"agent:/", "vault:/keys.md"}},
		{name: "drive", drives: []string{"self"},
			allow: []string{"self:/", "self:/soul.md", "self:/a/b"}, deny: []string{"agent:/", "selfish:/x"},
			prefixes: []string{"self:/"}},
		{name: "subtree", paths: []string{"agent:/project-x/"},
			allow:    []string{"agent:/project-x", "agent:/project-x/a.md", "agent:/project-x/sub/b"},
			deny:     []string{"agent:/", "agent:/project-xyz", "agent:/project-xyz/plan.md", "agent:/project", "agent:/project-x-b", "self:/project-x"},
			prefixes: []string{"agent:/project-x"}},
		{name: "trailing slash optional", paths: []string{"agent:/project-x"},
			allow: []string{"agent:/project-x/a.md"}, deny: []string{"agent:/project-xyz"},
			prefixes: []string{"agent:/project-x"}},
		{name: "drive root path is the drive", paths: []string{"agent:/"},
			allow: []string{"agent:/anything"}, deny: []string{"self:/"}, prefixes: []string{"agent:/"}},
		{name: "covered subtrees dropped", drives: []string{"self", "self"}, paths: []string{"agent:/a/b", "agent:/a", "self:/x", "agent:/a/"},
			allow: []string{"agent:/a/c"}, deny: []string{"agent:/b"}, prefixes: []string{"self:/", "agent:/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewAccess(tt.drives, tt.paths)
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Limited(); got != (tt.prefixes != nil) {
				t.Errorf("Limited = %v", got)
			}
			for _, r := range tt.allow {
				ref := mustRef(t, r)
				if !a.Allows(ref.Drive, ref.Path) {
					t.Errorf("%s not allowed by %v", r, a)
				}
			}
			for _, r := range tt.deny {
				ref := mustRef(t, r)
				if a.Allows(ref.Drive, ref.Path) {
					t.Errorf("%s allowed by %v", r, a)
				}
			}
			if got := a.Prefixes(); !slices.Equal(got, tt.prefixes) {
				t.Errorf("Prefixes = %q, want %q", got, tt.prefixes)
			}
		})
	}
	for _, bad := range [][2][]string{
		{{"Agent"}, nil}, {nil, {"agent:project"}}, {nil, {"/project-x"}}, {nil, {"0190b8a5-8e2b-7c3d-9f00-000000000001"}}, {nil, {"agent:/a/../b"}},
	} {
		if _, err := NewAccess(bad[0], bad[1]); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewAccess(%q, %q) = %v, want ErrInvalid", bad[0], bad[1], err)
		}
	}
}

// Markers of what a limited caller must never see: in refs, names, counts' sources.
var secrets = []string{"xyz", "other", "vault", "keys", "SECRET"}

// noLeak fails when the rendering of v names anything outside the access
// other than the refs the caller asked about (which errors repeat).
func noLeak(t *testing.T, what string, v any, asked ...string) {
	t.Helper()
	s := fmt.Sprintf("%+v", v)
	if e := (*Error)(nil); errors.As(asError(v), &e) {
		s = fmt.Sprintf("%s %s %s %v", e.Message, e.Hint, e.Ref, e.Nearby)
	}
	for _, a := range asked {
		s = strings.ReplaceAll(s, a, "ASKED")
		if drive, _, ok := strings.Cut(a, ":"); ok {
			s = strings.ReplaceAll(s, fmt.Sprintf("drive %q", drive), "drive ASKED")
		}
	}
	for _, m := range secrets {
		if strings.Contains(s, m) {
			t.Errorf("%s leaks %q: %s", what, m, s)
		}
	}
}

func asError(v any) error {
	err, _ := v.(error)
	return err
}

// accessStore holds items inside agent:/project-x and self:/, and secrets
// beside them: a sibling path, another item of the drive, another drive.
func accessStore(t *testing.T) (s *Store, secretID string) {
	s = mustOpenStore(t)
	mustWrite(t, s, "agent:/project-x/notes.md", "visible notes\n")
	mustWrite(t, s, "agent:/project-x/sub/deep.md", "deep\nlines\n")
	secretID = mustWrite(t, s, "agent:/project-xyz/plan.md", "SECRET plan\n").ID
	mustWrite(t, s, "agent:/other.md", "SECRET other\n")
	mustWrite(t, s, "vault:/keys.md", "SECRET keys\n")
	mustWrite(t, s, "self:/soul.md", "soul\n")
	return s, secretID
}

func limitedCtx(t *testing.T, drives, paths []string) context.Context {
	t.Helper()
	a, err := NewAccess(drives, paths)
	if err != nil {
		t.Fatal(err)
	}
	return WithAccess(context.Background(), a)
}

func TestAccess_ReadsSeeOnlyInside(t *testing.T) {
	s, secretID := accessStore(t)
	ctx := limitedCtx(t, []string{"self"}, []string{"agent:/project-x/"})
	visible := int64(len("visible notes\n") + len("deep\nlines\n"))

	for _, ref := range []string{"agent:/project-xyz/plan.md", "agent:/other.md", "vault:/keys.md", secretID, "agent:/project-xyz", "vault:/"} {
		r := mustRef(t, ref)
		_, err := s.Read(ctx, r, 0, 0)
		noLeak(t, "Read "+ref, wantErr(t, err, ErrNotFound), ref)
		_, _, err = s.ReadRaw(ctx, r)
		noLeak(t, "ReadRaw "+ref, wantErr(t, err, ErrNotFound), ref)
		_, err = s.CountLines(ctx, r)
		noLeak(t, "CountLines "+ref, wantErr(t, err, ErrNotFound), ref)
		_, err = s.Info(ctx, r)
		noLeak(t, "Info "+ref, wantErr(t, err, ErrNotFound), ref)
		_, _, err = s.DirSize(ctx, r)
		noLeak(t, "DirSize "+ref, wantErr(t, err, ErrNotFound), ref)
		_, err = s.History(ctx, r, 0, 0)
		noLeak(t, "History "+ref, wantErr(t, err, ErrNotFound), ref)
		if ok, _, err := s.Exists(ctx, r); ok || err != nil {
			t.Errorf("Exists(%s) = %v, %v", ref, ok, err)
		}
	}

	// The drive root above the subtree shows only the way to it.
	info, err := s.Info(ctx, mustRef(t, "agent:/"))
	if err != nil || info.ItemCount != 2 || info.Item.Size != visible {
		t.Errorf("Info(agent:/) = %d items, %d bytes, %v; want 2, %d", info.ItemCount, info.Item.Size, err, visible)
	}
	if size, count, err := s.DirSize(ctx, mustRef(t, "agent:/")); err != nil || count != 2 || size != visible {
		t.Errorf("DirSize(agent:/) = %d, %d, %v", size, count, err)
	}
	drives, err := s.ListDrives(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []DriveInfo{{Name: "agent", ItemCount: 2, Size: visible}, {Name: "self", ItemCount: 1, Size: int64(len("soul\n"))}}
	if !slices.Equal(drives, want) {
		t.Errorf("ListDrives = %+v, want %+v", drives, want)
	}
	for _, dir := range []string{"", "agent:/"} {
		var r Ref
		if dir != "" {
			r = mustRef(t, dir)
		}
		tree, err := s.Tree(ctx, r, 5, 0)
		if err != nil {
			t.Fatal(err)
		}
		noLeak(t, "Tree "+dir, RenderTree(tree))
		if !strings.Contains(RenderTree(tree), "deep.md") {
			t.Errorf("Tree(%q) lacks a visible item:\n%s", dir, RenderTree(tree))
		}
		if tree.Size != visible && dir != "" || dir == "" && tree.Size != visible+int64(len("soul\n")) {
			t.Errorf("Tree(%q) size = %d", dir, tree.Size)
		}
	}
	for _, rec := range []bool{false, true} {
		entries, _, err := s.List(ctx, mustRef(t, "agent:/"), rec, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name)
		}
		want := []string{"project-x"}
		if rec {
			want = []string{"project-x/notes.md", "project-x/sub/deep.md"}
		}
		if !slices.Equal(names, want) {
			t.Errorf("List(agent:/, recursive=%v) = %q, want %q", rec, names, want)
		}
	}
	// Paging a recursive listing stays inside.
	page, next, err := s.List(ctx, mustRef(t, "agent:/"), true, 1, "")
	if err != nil || len(page) != 1 || next == "" {
		t.Fatalf("List page 1 = %v, %q, %v", page, next, err)
	}
	page, next, err = s.List(ctx, mustRef(t, "agent:/"), true, 1, next)
	if err != nil || len(page) != 1 || page[0].Name != "project-x/sub/deep.md" || next != "" {
		t.Fatalf("List page 2 = %+v, %q, %v; want deep.md and the end", page, next, err)
	}

	// Not-found hints name only visible neighbours and drives.
	_, err = s.Read(ctx, mustRef(t, "agent:/project-xa"), 0, 0)
	e := wantErr(t, err, ErrNotFound)
	noLeak(t, "hint next to the sibling", e, "agent:/project-xa")
	if !slices.Equal(e.Nearby, []string{"agent:/project-x/"}) {
		t.Errorf("Nearby = %q, want the visible subtree only", e.Nearby)
	}
	_, err = s.Read(ctx, mustRef(t, "vault:/keys2.md"), 0, 0)
	e = wantErr(t, err, ErrNotFound)
	noLeak(t, "hint in a drive outside", e, "vault:/keys2.md")
	if !slices.Equal(e.Nearby, []string{"agent:/", "self:/"}) {
		t.Errorf("Nearby = %q, want the visible drives", e.Nearby)
	}
}

func TestAccess_HistoryShowsOnlyInside(t *testing.T) {
	s, secretID := accessStore(t)
	bg := context.Background()
	// An item that lay outside before it moved in, and a deleted secret.
	mustWrite(t, s, "vault:/keys-moved.md", "SECRET before\n")
	if _, err := s.Move(bg, mustRef(t, "vault:/keys-moved.md"), mustRef(t, "agent:/project-x/moved.md"), ConflictError); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(bg, WriteParams{Ref: mustRef(t, "agent:/project-x/moved.md"), Content: []byte("now visible\n"), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(bg, mustRef(t, "agent:/project-xyz/plan.md"), false); err != nil {
		t.Fatal(err)
	}
	ctx := limitedCtx(t, nil, []string{"agent:/project-x"})

	revs, err := s.History(ctx, mustRef(t, "agent:/project-x/moved.md"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	noLeak(t, "History of the moved item", revs)
	if len(revs) != 2 { // the move and the write; not the write at vault:/
		t.Errorf("History = %d revisions, want 2: %+v", len(revs), revs)
	}
	_, _, err = s.ReadRevision(ctx, mustRef(t, "agent:/project-x/moved.md"), 1)
	noLeak(t, "ReadRevision 1", wantErr(t, err, ErrNotFound))
	_, err = s.Revert(ctx, mustRef(t, "agent:/project-x/moved.md"), 1)
	noLeak(t, "Revert to 1", wantErr(t, err, ErrNotFound))
	if got := mustRead(t, s, "agent:/project-x/moved.md"); got != "now visible\n" {
		t.Errorf("content after the refused revert = %q", got)
	}

	for _, ref := range []string{secretID, "agent:/project-xyz/plan.md"} {
		_, err = s.History(ctx, mustRef(t, ref), 0, 0)
		noLeak(t, "History of the deleted secret", wantErr(t, err, ErrNotFound), ref)
		_, err = s.Revert(ctx, mustRef(t, ref), 1)
		noLeak(t, "Revert of the deleted secret", wantErr(t, err, ErrNotFound), ref)
	}
	for _, under := range []Ref{{}, mustRef(t, "agent:/"), mustRef(t, "agent:/project-xyz")} {
		del, err := s.Deleted(ctx, under, 0)
		if err != nil || len(del) != 0 {
			t.Errorf("Deleted(%v) = %+v, %v; want nothing", under, del, err)
		}
	}
	log, _, err := s.Log(ctx, LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	noLeak(t, "Log", log)
	if len(log) != 4 { // notes.md, deep.md, the move in, the write
		t.Errorf("Log = %d revisions, want 4", len(log))
	}
	// Paging skips what is outside too.
	page, next, err := s.Log(ctx, LogQuery{Limit: 3})
	if err != nil || len(page) != 3 || next == "" {
		t.Fatalf("Log page 1 = %d, %q, %v", len(page), next, err)
	}
	if page, next, err = s.Log(ctx, LogQuery{Limit: 3, PageToken: next}); err != nil || len(page) != 1 || next != "" {
		t.Errorf("Log page 2 = %d, %q, %v", len(page), next, err)
	}
}

func TestAccess_ChangesStayInside(t *testing.T) {
	s, secretID := accessStore(t)
	ctx := limitedCtx(t, []string{"self"}, []string{"agent:/project-x/"})
	before := snapshot(t, s)

	// A destination outside is refused alike whether it exists or not.
	var msgs []string
	for _, ref := range []string{"agent:/other.md", "agent:/absent.md", "agent:/project-xyz/plan.md", "vault:/keys.md"} {
		_, err := s.Write(ctx, WriteParams{Ref: mustRef(t, ref), Content: []byte("x"), IsText: true, OnConflict: ConflictOverwrite})
		e := wantErr(t, err, ErrDenied)
		msgs = append(msgs, strings.ReplaceAll(e.Message, ref, "REF"))
	}
	if len(slices.Compact(msgs)) != 1 {
		t.Errorf("denials differ by target: %q", msgs)
	}
	_, err := s.MakeDir(ctx, mustRef(t, "agent:/newdir"))
	wantErr(t, err, ErrDenied)

	for _, src := range []string{"agent:/other.md", "vault:/keys.md", secretID} {
		_, err = s.Copy(ctx, mustRef(t, src), mustRef(t, "agent:/project-x/stolen.md"), false, ConflictError)
		noLeak(t, "Copy from "+src, wantErr(t, err, ErrNotFound), src)
		_, err = s.Move(ctx, mustRef(t, src), mustRef(t, "agent:/project-x/stolen.md"), ConflictError)
		noLeak(t, "Move from "+src, wantErr(t, err, ErrNotFound), src)
		_, err = s.Delete(ctx, mustRef(t, src), true)
		noLeak(t, "Delete "+src, wantErr(t, err, ErrNotFound), src)
		_, err = s.Edit(ctx, mustRef(t, src), []Patch{{StartLine: 1, EndLine: 1, Content: "x\n"}}, "")
		noLeak(t, "Edit "+src, wantErr(t, err, ErrNotFound), src)
	}
	for _, dst := range []string{"agent:/other.md", "agent:/project-xyz", "vault:/", "agent:/"} {
		_, err = s.Copy(ctx, mustRef(t, "agent:/project-x/notes.md"), mustRef(t, dst), false, ConflictOverwrite)
		wantErr(t, err, ErrDenied)
		_, err = s.Move(ctx, mustRef(t, "agent:/project-x/notes.md"), mustRef(t, dst), ConflictOverwrite)
		wantErr(t, err, ErrDenied)
	}
	// A directory above the subtree is visible but not the caller's to delete or move.
	_, err = s.Delete(ctx, mustRef(t, "agent:/"), true)
	wantErr(t, err, ErrDenied)
	_, err = s.Move(ctx, mustRef(t, "agent:/"), mustRef(t, "self:/agent"), ConflictOverwrite)
	wantErr(t, err, ErrDenied)
	if after := snapshot(t, s); after != before {
		t.Errorf("a refused change changed the store:\nbefore %s\nafter %s", before, after)
	}

	// Inside, everything works, across the allowed drive and subtree.
	if _, err := s.Copy(ctx, mustRef(t, "agent:/project-x/notes.md"), mustRef(t, "self:/notes.md"), false, ConflictError); err != nil {
		t.Errorf("Copy inside: %v", err)
	}
	if _, err := s.Move(ctx, mustRef(t, "self:/notes.md"), mustRef(t, "agent:/project-x/sub"), ConflictError); err != nil {
		t.Errorf("Move inside: %v", err)
	}
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "agent:/project-x/new.md"), Content: []byte("new"), IsText: true}); err != nil {
		t.Errorf("Write inside: %v", err)
	}
	if n, err := s.Delete(ctx, mustRef(t, "agent:/project-x"), true); err != nil || n != 4 {
		t.Errorf("Delete the subtree = %d, %v; want 4", n, err)
	}
	if got := paths(t, s); !slices.Equal(got, []string{"agent:/other.md", "agent:/project-xyz/plan.md", "self:/soul.md", "vault:/keys.md"}) {
		t.Errorf("paths = %q", got)
	}
}

// TestAccess_ItemsByID: Items finds an item by id only inside the access;
// outside, like a missing id, the entry is the zero Item.
func TestAccess_ItemsByID(t *testing.T) {
	s, secretID := accessStore(t)
	inside := mustWrite(t, s, "agent:/project-x/more.md", "more\n").ID
	gone := mustWrite(t, s, "agent:/project-x/gone.md", "gone\n").ID
	if _, err := s.Delete(context.Background(), mustRef(t, "agent:/project-x/gone.md"), false); err != nil {
		t.Fatal(err)
	}
	ids := []string{secretID, inside, gone}
	all, err := s.Items(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if all[0].Path != "/project-xyz/plan.md" || all[1].Path != "/project-x/more.md" || all[2].ID != "" {
		t.Fatalf("unlimited: %+v", all)
	}
	limited, err := s.Items(limitedCtx(t, nil, []string{"agent:/project-x/"}), ids)
	if err != nil {
		t.Fatal(err)
	}
	if limited[0].ID != "" || limited[1].ID != inside || limited[2].ID != "" {
		t.Fatalf("limited: %+v", limited)
	}
}
