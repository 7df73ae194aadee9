package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/exporttree"
)

// TestExportImport_RoundTrip exports a store holding every kind of item
// (markdown with frontmatter, plain text, empty text, JSON, binary, an
// empty directory placeholder, url drive pages nested in each other,
// unicode and awkward paths, items with tags, importance, description and
// source URL), written with history off so none has history, and imports
// the export into an empty daemon: every item comes back with the same
// content and metadata and its id, except one whose id an item there
// already had, which gets a new one.
func TestExportImport_RoundTrip(t *testing.T) {
	cfgA, dir := tempConfig(t)
	cfgA.History = false
	runDaemon(t, cfgA)
	a := vfsClient(t, cfgA.Socket)
	bin := make([]byte, 300<<10)
	rand.NewChaCha8([32]byte{9}).Read(bin)
	long := strings.Repeat("ü", 120) + ".md" // 243 bytes: longer than a file name may be once escaped
	writes := []*ctxdv1.WriteRequest{
		{Ref: "notes:/ctx/agent.md", Body: &ctxdv1.WriteRequest_Content{Content: "---\ntitle: Agent notes\ndescription: What the agent keeps\ntags: [ops, memory]\nimportance: 0.8\nloading: always\nagent-modification: true\n---\n# Notes\n\nbody\n"}},
		{Ref: "notes:/plain.txt", Body: &ctxdv1.WriteRequest_Content{Content: "hello\nworld\n"}, Title: "Plain title", Description: "plain",
			Tags: []string{"b", "a"}, Importance: 0.3, SourceUrl: "https://example.com/src"},
		{Ref: "notes:/empty.txt", Body: &ctxdv1.WriteRequest_Content{Content: ""}},
		{Ref: "data:/config.json", Body: &ctxdv1.WriteRequest_Content{Content: "{\"a\": [1, 2], \"b\": \"ü\"}\n"}},
		{Ref: "files:/scan.bin", Body: &ctxdv1.WriteRequest_Data{Data: bin}, MimeType: "application/x-scan", Tags: []string{"scan"}},
		{Ref: "url:/https://example.com/docs", Body: &ctxdv1.WriteRequest_Content{Content: "docs home\n"}},
		{Ref: "url:/https://example.com/docs/page?x=1&y=a:b", Body: &ctxdv1.WriteRequest_Content{Content: "a page\n"}},
		{Ref: "notes:/naïve café/日本語 ファイル.md", Body: &ctxdv1.WriteRequest_Content{Content: "# 日本語\n"}},
		{Ref: "notes:/odd/100% done: yes?.md", Body: &ctxdv1.WriteRequest_Content{Content: "odd\n"}},
		{Ref: "notes:/odd/" + long, Body: &ctxdv1.WriteRequest_Content{Content: "long\n"}},
	}
	// One WriteBatch: Write answers a nested url page with an error
	// after writing it (the parent's tree snapshot fails on the url drive).
	if _, err := a.WriteBatch(context.Background(), &ctxdv1.WriteBatchRequest{Items: writes}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.MakeDir(context.Background(), &ctxdv1.MakeDirRequest{Ref: "notes:/empty/inner"}); err != nil {
		t.Fatal(err)
	}
	want := listAll(t, a)
	if len(want) != len(writes)+1 {
		t.Fatalf("the source store lists %d items, want %d", len(want), len(writes)+1)
	}

	out := filepath.Join(dir, "export")
	code, stdout, errOut := ctxd(t, cfgA.Socket, "", "export", out)
	if code != 0 || !strings.Contains(stdout, "exported 10 items") || !strings.Contains(stdout, "1 empty directories") {
		t.Fatalf("export = %d\n%s%s", code, stdout, errOut)
	}
	if got, err := os.ReadFile(filepath.Join(out, "notes", "plain.txt")); err != nil || string(got) != "hello\nworld\n" {
		t.Errorf("notes/plain.txt = %q, %v", got, err)
	}
	if got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(exporttree.FilePath("files", "/scan.bin")))); err != nil || !bytes.Equal(got, bin) {
		t.Errorf("the binary file differs from the item (%v)", err)
	}
	if st, err := os.Stat(filepath.Join(out, "notes", "empty", "inner")); err != nil || !st.IsDir() {
		t.Errorf("the empty directory placeholder: %v", err)
	}
	if code, _, errOut := ctxd(t, cfgA.Socket, "", "export", out); code != 1 || !strings.Contains(errOut, "--force") {
		t.Errorf("export into a non-empty dir = %d, %s; want it refused, naming --force", code, errOut)
	}

	// The importing store already has an item with plain.txt's id.
	cfgB, _ := tempConfig(t)
	runDaemon(t, cfgB)
	b := vfsClient(t, cfgB.Socket)
	taken := want["notes:/plain.txt"].Item.Id
	if r, err := b.Write(context.Background(), &ctxdv1.WriteRequest{Ref: "other:/taken.md", Id: taken, Body: &ctxdv1.WriteRequest_Content{Content: "x"}}); err != nil || r.Item.Id != taken {
		t.Fatalf("write with a free id: %v, %v", r, err)
	}
	code, stdout, errOut = ctxd(t, cfgB.Socket, "", "import", out)
	if code != 0 || !strings.Contains(stdout, "10 created (9 kept their ids, 1 got new ids") || !strings.Contains(stdout, "1 empty directories created") {
		t.Fatalf("import = %d\n%s%s", code, stdout, errOut)
	}
	got := listAll(t, b)
	delete(got, "other:/taken.md")
	for ref, w := range want {
		g, ok := got[ref]
		if !ok {
			t.Errorf("%s is missing after the import", ref)
			continue
		}
		wi, gi := comparable(w.Item), comparable(g.Item)
		if ref == "notes:/plain.txt" {
			if gi.Id == taken || gi.Id == "" {
				t.Errorf("%s got the taken id %s", ref, gi.Id)
			}
			gi.Id = wi.Id
		}
		if !proto.Equal(wi, gi) {
			t.Errorf("%s after the round trip:\n got %v\nwant %v", ref, gi, wi)
		}
		if !w.Item.IsDir && !bytes.Equal(w.data, g.data) {
			t.Errorf("%s: the content differs after the round trip", ref)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the import made %d items, the export held %d", len(got), len(want))
	}

	// A file changed since the export is refused, naming it.
	if err := os.WriteFile(filepath.Join(out, "notes", "plain.txt"), []byte("changed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgC, _ := tempConfig(t)
	runDaemon(t, cfgC)
	if code, _, errOut := ctxd(t, cfgC.Socket, "", "import", out); code != 1 || !strings.Contains(errOut, "plain.txt does not match the manifest") {
		t.Errorf("import of a changed file = %d, %s; want it refused", code, errOut)
	}
}

// exported is an item and its content as the API returns them.
type exported struct {
	Item *ctxdv1.Item
	data []byte
}

// listAll reads every item of every drive.
func listAll(t *testing.T, c ctxdv1.VfsServiceClient) map[string]exported {
	t.Helper()
	ctx := context.Background()
	drives, err := c.ListDrives(ctx, &ctxdv1.ListDrivesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]exported{}
	for _, d := range drives.Drives {
		list, err := c.List(ctx, &ctxdv1.ListRequest{Ref: d.Name + ":", Recursive: true, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Entries {
			if e.Item == nil {
				continue
			}
			x := exported{Item: e.Item}
			if !e.Item.IsDir {
				r, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: e.Ref, Raw: true})
				if err != nil {
					t.Fatal(err)
				}
				x.data = r.Data
			}
			out[e.Ref] = x
		}
	}
	return out
}

// comparable is the part of an item an import restores: everything but
// the times and retrieval counts, which are the importing store's.
func comparable(it *ctxdv1.Item) *ctxdv1.Item {
	c := proto.Clone(it).(*ctxdv1.Item)
	c.CreatedAt, c.UpdatedAt, c.IndexedAt, c.LastRetrievedAt, c.RetrievalCount = nil, nil, nil, nil, 0
	c.Tags = slices.Clone(c.Tags)
	return c
}
