package assemble

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/vfs"
)

func TestInit_OnlyWhereAbsent(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	mine := "---\nloading: always\nagent-modification: true\n---\n# My goals\n\n- Ship it.\n"
	e.write("self:/team/goals.md", mine)

	created, existing, err := Init(ctx, e.store, "self:/team/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"self:/team/soul.md", "self:/team/beliefs.md", "self:/team/capabilities.md"}; !slices.Equal(created, want) {
		t.Errorf("created %q, want %q", created, want)
	}
	if want := []string{"self:/team/goals.md"}; !slices.Equal(existing, want) {
		t.Errorf("existing %q, want %q", existing, want)
	}
	if _, got := e.read("self:/team/goals.md"); got != mine {
		t.Errorf("Init changed an existing file:\n%s", got)
	}
	for _, tc := range []struct {
		ref   string
		agent bool
	}{{"self:/team/soul.md", false}, {"self:/team/beliefs.md", true}, {"self:/team/capabilities.md", true}} {
		it, content := e.read(tc.ref)
		fm, warning := vfs.ParseFrontmatter([]byte(content))
		if warning != "" || fm.Loading != vfs.LoadingAlways || fm.AgentModification != tc.agent || fm.Title == "" || fm.Description == "" {
			t.Errorf("%s frontmatter %+v (warning %q), want loading always, agent-modification %v, a title and a description", tc.ref, fm, warning, tc.agent)
		}
		if it.Loading != vfs.LoadingAlways || it.AgentModification != tc.agent || it.Title != fm.Title {
			t.Errorf("%s item %+v does not carry its frontmatter", tc.ref, it)
		}
		if _, body := vfs.SplitFrontmatter([]byte(content)); len(strings.TrimSpace(string(body))) == 0 {
			t.Errorf("%s has no starter body", tc.ref)
		}
	}

	created, existing, err = Init(ctx, e.store, "self:/team")
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 0 || len(existing) != 4 {
		t.Errorf("second Init created %q and found %q, want nothing created and 4 found", created, existing)
	}
	created, _, err = Init(ctx, e.store, "")
	if err != nil || !slices.Equal(created, []string{"self:/soul.md", "self:/beliefs.md", "self:/goals.md", "self:/capabilities.md"}) {
		t.Errorf("Init of the default root created %q (%v)", created, err)
	}
	if _, _, err := Init(ctx, e.store, "0190c6d2-7a8b-7c3d-8e4f-0a1b2c3d4e5f"); !errors.Is(err, vfs.ErrInvalid) {
		t.Errorf("Init of an id: %v, want vfs.ErrInvalid", err)
	}
}

func TestUpdate_KeepsFrontmatter(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	// Comments, key order, blank lines, trailing spaces and a "..." close:
	// every byte of the block must survive.
	block := "---\n# who may edit this\nagent-modification: true   \nloading: always\n\ntitle: \"Beliefs\"\ntags: [team, priors]\n...\n"
	before := e.write("self:/beliefs.md", block+"# Beliefs\n\n- Old belief.\n")
	if before.Title != "Beliefs" || !slices.Equal(before.Tags, []string{"priors", "team"}) {
		t.Fatalf("frontmatter not applied on write: %+v", before)
	}

	body := "# Beliefs\n\n- New belief.\n- Another one, without a final newline."
	res, err := Update(ctx, e.store, vfs.Ref{Drive: "self", Path: "/beliefs.md"}, []byte(body), before.ContentHash)
	if err != nil {
		t.Fatal(err)
	}
	it, content := e.read("self:/beliefs.md")
	if content != block+body {
		t.Errorf("content after Update:\n%q\nwant\n%q", content, block+body)
	}
	if res.Item.ContentHash != it.ContentHash || it.ID != before.ID {
		t.Errorf("result %+v does not describe the stored item %+v", res.Item, it)
	}
	if it.Title != "Beliefs" || !slices.Equal(it.Tags, before.Tags) || !slices.Equal(it.FrontmatterFields, before.FrontmatterFields) || it.Loading != vfs.LoadingAlways {
		t.Errorf("metadata after Update %+v, want the frontmatter's as before %+v", it, before)
	}

	// A caller that echoes the whole file has the block dropped, not doubled.
	if _, err := Update(ctx, e.store, vfs.Ref{ID: it.ID}, []byte(block+"# Beliefs\n\n- Echoed.\n"), ""); err != nil {
		t.Fatal(err)
	}
	if _, content := e.read("self:/beliefs.md"); content != block+"# Beliefs\n\n- Echoed.\n" {
		t.Errorf("content after an echoed Update:\n%q", content)
	}
	// A different block is refused: Update never changes frontmatter.
	_, err = Update(ctx, e.store, vfs.Ref{ID: it.ID}, []byte("---\nagent-modification: false\n---\nbody\n"), "")
	var ve *vfs.Error
	if !errors.As(err, &ve) || !errors.Is(err, vfs.ErrInvalid) || ve.Hint == "" {
		t.Errorf("Update with another frontmatter: %v, want vfs.ErrInvalid with a hint", err)
	}
	// A stale hash is refused and changes nothing.
	_, err = Update(ctx, e.store, vfs.Ref{ID: it.ID}, []byte("lost\n"), before.ContentHash)
	if !errors.Is(err, vfs.ErrChanged) {
		t.Errorf("Update with a stale hash: %v, want vfs.ErrChanged", err)
	}
	if _, content := e.read("self:/beliefs.md"); strings.Contains(content, "lost") {
		t.Error("a refused Update changed the content")
	}
	// A file without frontmatter has its whole content replaced.
	e.write("agent:/plain.md", "old\n")
	if _, err := Update(ctx, e.store, vfs.Ref{Drive: "agent", Path: "/plain.md"}, []byte("new\n"), ""); err != nil {
		t.Fatal(err)
	}
	if _, content := e.read("agent:/plain.md"); content != "new\n" {
		t.Errorf("plain file after Update: %q", content)
	}
}

func TestUpdate_Actor(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	goals := e.write("self:/goals.md", "---\nloading: always\nagent-modification: true\n---\n# Goals\n")
	soul := e.write("self:/soul.md", "---\nloading: always\nagent-modification: false\n---\n# Soul\n")
	agent := vfs.WithActor(ctx, vfs.Actor{Name: "worker", Agent: true})

	// The caller's actor reaches the store, with the context_update operation.
	if _, err := Update(agent, e.store, vfs.Ref{Drive: "self", Path: "/goals.md"}, []byte("# Goals\n\n- Done.\n"), goals.ContentHash); err != nil {
		t.Fatalf("agent update of an agent-editable file: %v", err)
	}
	revs, err := e.store.History(ctx, vfs.Ref{Drive: "self", Path: "/goals.md"}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 1 || revs[0].Actor != "worker" || revs[0].Op != vfs.OpContextUpdate {
		t.Errorf("latest revision %+v, want actor worker and op %s", revs, vfs.OpContextUpdate)
	}
	// The store's guard refuses the agent on a protected file; the owner may.
	_, err = Update(agent, e.store, vfs.Ref{Drive: "self", Path: "/soul.md"}, []byte("# Evil soul\n"), "")
	if !errors.Is(err, vfs.ErrReadOnly) {
		t.Errorf("agent update of soul.md: %v, want vfs.ErrReadOnly", err)
	}
	if _, content := e.read("self:/soul.md"); !strings.HasSuffix(content, "# Soul\n") {
		t.Errorf("a refused update changed soul.md: %q", content)
	}
	if _, err := Update(ctx, e.store, vfs.Ref{ID: soul.ID}, []byte("# Soul, by the owner\n"), ""); err != nil {
		t.Errorf("owner update of soul.md: %v", err)
	}
}
