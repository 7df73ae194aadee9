package ingest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/vfs"
)

// TestRefresh_ReparsesFrontmatter checks that a refresh takes the metadata
// of the source's new frontmatter instead of keeping the old frontmatter's
// values as if someone had set them.
func TestRefresh_ReparsesFrontmatter(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	in, s := newTestIngester(t, root)
	writeFiles(t, root, map[string]string{"n.md": "---\ntitle: Old\ndescription: first\ntags: [a]\nimportance: 0.3\nloading: always\n---\nbody\n"})
	if _, err := in.Add(ctx, AddOptions{Sources: []string{root}}, Sink{}); err != nil {
		t.Fatal(err)
	}
	ref := diskRef(filepath.Join(root, "n.md"))
	if info, err := s.Info(ctx, ref); err != nil || info.Item.Title != "Old" || info.Item.Loading != "always" {
		t.Fatalf("after add: %+v, %v", info.Item, err)
	}
	writeFiles(t, root, map[string]string{"n.md": "---\ntitle: New\ndescription: second\ntags: [b]\nimportance: 0.6\nloading: contextual\n---\nlonger body\n"})
	if sum, err := in.Refresh(ctx, RefreshOptions{Refs: []vfs.Ref{ref}}, Sink{}); err != nil || sum.Updated != 1 {
		t.Fatalf("refresh = %+v, %v", sum, err)
	}
	info, err := s.Info(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if it := info.Item; it.Title != "New" || it.Description != "second" || strings.Join(it.Tags, ",") != "b" || it.Importance != 0.6 || it.Loading != "contextual" {
		t.Errorf("after refresh: title %q, description %q, tags %v, importance %v, loading %q; want the new frontmatter's",
			it.Title, it.Description, it.Tags, it.Importance, it.Loading)
	}
}
