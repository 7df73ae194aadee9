package ingest

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ctxd/ctxd/vfs"
)

// knownTexts is a Deduper that knows stored texts by their exact content,
// standing in for the daemon's embedding comparison (tested in daemon),
// and records the paths it was asked about.
type knownTexts struct {
	mu    sync.Mutex
	known map[string]string // content -> ref of the stored item
	fail  error
	asked []string
}

func (k *knownTexts) DuplicateOf(_ context.Context, ref vfs.Ref, content []byte, mt, title string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.asked = append(k.asked, ref.Path)
	return k.known[string(content)], k.fail
}

func TestAdd_DedupeSkipsNewDuplicatesOnly(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	in, s := newTestIngester(t, root)
	writeFiles(t, root, map[string]string{"dup.md": "stored already\n", "new.md": "something new\n", "logo.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"})
	dd := &knownTexts{known: map[string]string{"stored already\n": "notes:/orig.md"}}
	var rec recorder
	if _, err := in.Add(ctx, AddOptions{Sources: []string{root}, Dedupe: dd}, rec.sink()); err != nil {
		t.Fatal(err)
	}
	dup, added := rec.get(diskRef(filepath.Join(root, "dup.md")).String()), rec.get(diskRef(filepath.Join(root, "new.md")).String())
	if dup.Action != Skipped || dup.DuplicateOf != "notes:/orig.md" || added.Action != Added || added.DuplicateOf != "" {
		t.Fatalf("dup.md %+v, new.md %+v", dup, added)
	}
	if ok, _, _ := s.Exists(ctx, diskRef(filepath.Join(root, "dup.md"))); ok {
		t.Error("the duplicate was written")
	}
	if png := rec.get(diskRef(filepath.Join(root, "logo.png")).String()); png.Action != Added {
		t.Errorf("logo.png: %+v", png)
	}
	slices.Sort(dd.asked)
	if want := []string{filepath.ToSlash(filepath.Join(root, "dup.md")), filepath.ToSlash(filepath.Join(root, "new.md"))}; !slices.Equal(dd.asked, want) {
		t.Errorf("asked about %v, want only the new text sources %v", dd.asked, want)
	}

	// An item already stored is updated whatever it duplicates; a failing
	// comparison fails only its source.
	writeFiles(t, root, map[string]string{"new.md": "stored already\n", "other.md": "another one\n"})
	dd.asked, dd.fail = nil, errors.New("no model")
	if _, err := in.Add(ctx, AddOptions{Sources: []string{root}, OnConflict: vfs.ConflictOverwrite, Dedupe: dd}, rec.sink()); err != nil {
		t.Fatal(err)
	}
	if r := rec.get(diskRef(filepath.Join(root, "new.md")).String()); r.Action != Updated {
		t.Errorf("new.md changed: %+v", r)
	}
	if r := rec.get(diskRef(filepath.Join(root, "other.md")).String()); r.Action != Failed || !errors.Is(r.Err, dd.fail) {
		t.Errorf("other.md with a failing comparison: %+v", r)
	}
	if len(dd.asked) != 2 { // dup.md, still new, and other.md
		t.Errorf("asked about %v", dd.asked)
	}
}
