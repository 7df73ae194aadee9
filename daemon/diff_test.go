package daemon

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestDiff compares revisions of real items: text changes as unified
// hunks with counts, the defaults (previous revision, current content),
// equal texts, binary content, the context_lines bounds, the
// max_diff_lines cut and a deleted item.
func TestDiff(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.MaxDiffLines = 30
	d := mustStart(t, cfg)
	vc := d.vfsClient(t)
	ctx := context.Background()
	diff := func(t *testing.T, req *ctxdv1.DiffRequest) *ctxdv1.DiffResponse {
		t.Helper()
		resp, err := vc.Diff(ctx, req)
		if err != nil {
			t.Fatalf("Diff %v: %v", req, err)
		}
		return resp
	}
	writeText(t, vc, "notes:/plan.md", "# Plan\n\none\ntwo\nthree\n")                   // rev 1
	writeText(t, vc, "notes:/plan.md", "# Plan\n\none\n2\nthree\nfour\n")               // rev 2
	writeText(t, vc, "notes:/plan.md", "# Plan\n\none\n2\nthree\nfour\n\nfive\n")       // rev 3
	writeText(t, vc, "notes:/plan.md", "# Plan (final)\n\none\n2\nthree\nfour\n\nfive") // rev 4

	t.Run("text", func(t *testing.T) {
		r := diff(t, &ctxdv1.DiffRequest{Ref: "notes:/plan.md", FromRev: 1, ToRev: 2})
		want := "--- notes:/plan.md@1\n+++ notes:/plan.md@2\n@@ -1,5 +1,6 @@\n # Plan\n \n one\n-two\n+2\n three\n+four\n"
		if r.Unified != want || r.Added != 2 || r.Removed != 1 || r.Binary || r.Truncated || r.FromRev != 1 || r.ToRev != 2 {
			t.Errorf("diff 1..2 = %+v\nunified:\n%s\nwant:\n%s", r, r.Unified, want)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		r := diff(t, &ctxdv1.DiffRequest{Ref: "notes:/plan.md"})
		if r.FromRev != 3 || r.ToRev != 0 || !strings.HasPrefix(r.Unified, "--- notes:/plan.md@3\n+++ notes:/plan.md@current\n") ||
			r.Added != 2 || r.Removed != 2 || !strings.Contains(r.Unified, "+# Plan (final)\n") ||
			!strings.HasSuffix(r.Unified, "-five\n+five\n\\ No newline at end of file\n") {
			t.Errorf("the last change = %+v\n%s", r, r.Unified)
		}
		r = diff(t, &ctxdv1.DiffRequest{Ref: "notes:/plan.md", ToRev: 1})
		if r.FromRev != 0 || !strings.HasPrefix(r.Unified, "--- /dev/null\n+++ notes:/plan.md@1\n") || r.Added != 5 || r.Removed != 0 {
			t.Errorf("the first revision = %+v\n%s", r, r.Unified)
		}
		r = diff(t, &ctxdv1.DiffRequest{Ref: "notes:/plan.md", FromRev: 3, ContextLines: 1})
		if strings.Count(r.Unified, "@@ ") != 2 || !strings.Contains(r.Unified, "@@ -1,2 +1,2 @@\n-# Plan\n+# Plan (final)\n \n") {
			t.Errorf("context_lines 1 makes two hunks:\n%s", r.Unified)
		}
	})
	t.Run("unchanged", func(t *testing.T) {
		r := diff(t, &ctxdv1.DiffRequest{Ref: "notes:/plan.md", FromRev: 2, ToRev: 2})
		if r.Unified != "" || r.Added != 0 || r.Removed != 0 {
			t.Errorf("a revision against itself = %+v", r)
		}
	})
	t.Run("binary", func(t *testing.T) {
		for i, data := range [][]byte{{0x89, 'P', 'N', 'G', 0, 1}, {0x89, 'P', 'N', 'G', 0, 2}} {
			if _, err := vc.Write(ctx, &ctxdv1.WriteRequest{Ref: "notes:/logo.png", Body: &ctxdv1.WriteRequest_Data{Data: data},
				OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE}); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		r := diff(t, &ctxdv1.DiffRequest{Ref: "notes:/logo.png"})
		if !r.Binary || r.Unified != "" || r.FromRev != 1 {
			t.Errorf("binary diff = %+v", r)
		}
	})
	t.Run("context_lines bounds", func(t *testing.T) {
		for _, n := range []int32{-1, 101} {
			_, err := vc.Diff(ctx, &ctxdv1.DiffRequest{Ref: "notes:/plan.md", ContextLines: n})
			if code, ed := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(ed.GetNextActionHint(), "100") {
				t.Errorf("context_lines %d: %v %v", n, code, ed)
			}
		}
		if r := diff(t, &ctxdv1.DiffRequest{Ref: "notes:/plan.md", FromRev: 1, ContextLines: 100}); r.Added == 0 {
			t.Errorf("context_lines 100 = %+v", r)
		}
		_, err := vc.Diff(ctx, &ctxdv1.DiffRequest{Ref: "notes:/plan.md", FromRev: 9})
		if code, _ := errorDetail(t, err); code != codes.NotFound {
			t.Errorf("a revision past the last: %v", err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		var before, after strings.Builder
		for i := range 40 {
			fmt.Fprintf(&before, "line %d\n", i)
			fmt.Fprintf(&after, "LINE %d\n", i)
		}
		writeText(t, vc, "notes:/long.md", before.String())
		writeText(t, vc, "notes:/long.md", after.String())
		r := diff(t, &ctxdv1.DiffRequest{Ref: "notes:/long.md"})
		if !r.Truncated || r.Added != 40 || r.Removed != 40 || strings.Count(r.Unified, "\n") != 30 {
			t.Errorf("cut diff: truncated %v, +%d -%d, %d lines:\n%s", r.Truncated, r.Added, r.Removed, strings.Count(r.Unified, "\n"), r.Unified)
		}
	})
	t.Run("deleted item", func(t *testing.T) {
		writeText(t, vc, "notes:/gone.md", "first\n")
		writeText(t, vc, "notes:/gone.md", "second\n")
		if _, err := vc.Delete(ctx, &ctxdv1.DeleteRequest{Ref: "notes:/gone.md"}); err != nil {
			t.Fatal(err)
		}
		r := diff(t, &ctxdv1.DiffRequest{Ref: "notes:/gone.md", FromRev: 1, ToRev: 2})
		if r.Unified != "--- notes:/gone.md@1\n+++ notes:/gone.md@2\n@@ -1 +1 @@\n-first\n+second\n" {
			t.Errorf("revisions of a deleted item:\n%s", r.Unified)
		}
		r = diff(t, &ctxdv1.DiffRequest{Ref: "notes:/gone.md", FromRev: 2})
		if r.Removed != 1 || r.Added != 0 {
			t.Errorf("a deleted item against its current (no) content = %+v\n%s", r, r.Unified)
		}
	})
}
