package daemon

import (
	"reflect"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

func TestItemToProto_RoundTrip(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 30, 0, 123456789, time.UTC)
	in := vfs.Item{
		ID: "0193a6f2-0000-7000-8000-000000000001", Drive: "agent", Path: "/notes/a.md",
		Title: "A", Description: "d", MimeType: "text/markdown", IsText: true,
		Size: 12, ContentHash: "ab", SourceURL: "https://x", Tags: []string{"a", "b"},
		Importance: 0.5, CreatedAt: now, UpdatedAt: now.Add(time.Second),
		RetrievalCount: 3, LastRetrievedAt: now.Add(time.Minute), LineCount: 2,
		Origin:  vfs.Origin{ModTime: now, Size: 12, ETag: `"v1"`, LastModified: "Sat, 21 Nov 2026 10:30:00 GMT", CheckedAt: now, TTL: time.Hour, Title: "A page"},
		Loading: "contextual", AgentModification: true,
	}
	p := ItemToProto(&in)
	if p.Ref != "agent:/notes/a.md" {
		t.Errorf("ref = %q", p.Ref)
	}
	if p.IndexedAt != nil {
		t.Errorf("zero time should be unset, got %v", p.IndexedAt)
	}
	out := ItemFromProto(p)
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n in %+v\nout %+v", in, out)
	}
}

func TestOnConflictFromProto(t *testing.T) {
	tests := []struct {
		in   ctxdv1.OnConflict
		def  vfs.OnConflict
		want vfs.OnConflict
	}{
		{ctxdv1.OnConflict_ON_CONFLICT_UNSPECIFIED, vfs.ConflictSkip, vfs.ConflictSkip},
		{ctxdv1.OnConflict_ON_CONFLICT_ERROR, vfs.ConflictSkip, vfs.ConflictError},
		{ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE, vfs.ConflictError, vfs.ConflictOverwrite},
		{ctxdv1.OnConflict_ON_CONFLICT_SKIP, vfs.ConflictError, vfs.ConflictSkip},
	}
	for _, tt := range tests {
		if got := OnConflictFromProto(tt.in, tt.def); got != tt.want {
			t.Errorf("%v (default %v) = %v, want %v", tt.in, tt.def, got, tt.want)
		}
	}
}

func TestTreeToProto(t *testing.T) {
	root := &vfs.TreeNode{Name: "/", Drive: "agent", Path: "/", IsDir: true, Children: []*vfs.TreeNode{
		{Name: "a.md", Drive: "agent", Path: "/a.md", Size: 3, MimeType: "text/markdown"},
	}, OmittedChildren: 2}
	p := TreeToProto(root)
	if p.Ref != "agent:/" || len(p.Children) != 1 || p.Children[0].Ref != "agent:/a.md" || p.OmittedChildren != 2 || p.Children[0].SizeBytes != 3 {
		t.Errorf("tree = %v", p)
	}
}
