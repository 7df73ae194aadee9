package vfs

import (
	"context"
	"strings"
	"testing"
)

const beliefs = "---\nloading: always\nagent-modification: true\n---\n# Beliefs\n\n- Be concise.\n"

// agentCtx is the context of an agent's calls.
func agentCtx() context.Context {
	return WithActor(context.Background(), Actor{Name: "bot", Agent: true})
}

// mustGuardedStore holds the owner's context files: soul.md (read-only to
// agents), beliefs.md (agents may edit), a frontmatter-less note under the
// context root, and outside it a free note and a locked one.
func mustGuardedStore(t *testing.T, opts ...Options) *Store {
	t.Helper()
	s := mustOpenStore(t, opts...)
	mustWrite(t, s, "self:/soul.md", soul)
	mustWrite(t, s, "self:/beliefs.md", beliefs)
	mustWrite(t, s, "self:/notes.md", "plain notes\n")
	mustWrite(t, s, "agent:/free.md", "scratch\n")
	mustWrite(t, s, "agent:/locked.md", "---\nagent-modification: false\n---\nhands off\n")
	return s
}

// wantReadOnly asserts a refusal of ref that changed nothing and whose hint
// says what to do.
func wantReadOnly(t *testing.T, s *Store, before string, err error, ref, hint string) {
	t.Helper()
	e := wantErr(t, err, ErrReadOnly)
	if e.Ref != ref || !strings.Contains(e.Message, ref) || !strings.Contains(e.Message, "agent-modification") {
		t.Errorf("refusal %+v does not name %s and the frontmatter flag", e, ref)
	}
	if !strings.Contains(e.Hint, hint) {
		t.Errorf("hint %q does not contain %q", e.Hint, hint)
	}
	if snapshot(t, s) != before {
		t.Errorf("a refused change altered the store")
	}
}

func TestStore_Guard_AgentRefused(t *testing.T) {
	s := mustGuardedStore(t)
	ctx := agentCtx()
	overwrite := func(ref, content string) error {
		_, err := s.Write(ctx, WriteParams{Ref: mustRef(t, ref), Content: []byte(content), IsText: true, OnConflict: ConflictOverwrite})
		return err
	}
	edit := func(ref string) error {
		_, err := s.Edit(ctx, mustRef(t, ref), []Patch{{StartLine: 1, EndLine: 0, Content: "x"}}, "")
		return err
	}
	move := func(src, dst string) error {
		_, err := s.Move(ctx, mustRef(t, src), mustRef(t, dst), ConflictOverwrite)
		return err
	}
	copyTo := func(src, dst string) error {
		_, err := s.Copy(ctx, mustRef(t, src), mustRef(t, dst), true, ConflictOverwrite)
		return err
	}
	del := func(ref string, recursive bool) error {
		_, err := s.Delete(ctx, mustRef(t, ref), recursive)
		return err
	}
	const editInstead = "agents may edit self:/beliefs.md instead"
	tests := []struct {
		name      string
		do        func() error
		ref, hint string
	}{
		{"write soul.md", func() error { return overwrite("self:/soul.md", "I am whoever.\n") }, "self:/soul.md", editInstead},
		{"edit soul.md", func() error { return edit("self:/soul.md") }, "self:/soul.md", editInstead},
		{"delete soul.md", func() error { return del("self:/soul.md", false) }, "self:/soul.md", "ask the owner"},
		{"delete the context root", func() error { return del("self:/", true) }, "self:/notes.md", editInstead},
		{"move soul.md away", func() error { return move("self:/soul.md", "agent:/soul.md") }, "self:/soul.md", editInstead},
		{"move onto soul.md", func() error { return move("agent:/free.md", "self:/soul.md") }, "self:/soul.md", editInstead},
		{"copy onto soul.md", func() error { return copyTo("agent:/free.md", "self:/soul.md") }, "self:/soul.md", editInstead},
		{"edit a note without frontmatter under the root", func() error { return edit("self:/notes.md") }, "self:/notes.md", editInstead},
		{"create under the root without the flag", func() error { return overwrite("self:/new.md", "---\nloading: always\n---\nnew\n") }, "self:/new.md", "agent-modification: true"},
		{"move a note into the root", func() error { return move("agent:/free.md", "self:/free.md") }, "self:/free.md", "agent-modification: true"},
		{"copy a note into the root", func() error { return copyTo("agent:/free.md", "self:/free.md") }, "self:/free.md", "agent-modification: true"},
		{"edit a locked item outside the root", func() error { return edit("agent:/locked.md") }, "agent:/locked.md", "ask the owner"},
		{"delete a locked item outside the root", func() error { return del("agent:/", true) }, "agent:/locked.md", "ask the owner"},
		{"drop beliefs.md's frontmatter", func() error { return overwrite("self:/beliefs.md", "- Be concise.\n") }, "self:/beliefs.md", "keep agent-modification: true"},
		{"flip beliefs.md to agent-modification: false", func() error {
			return overwrite("self:/beliefs.md", "---\nloading: always\nagent-modification: false\n---\n- Be concise.\n")
		}, "self:/beliefs.md", "keep agent-modification: true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, s)
			wantReadOnly(t, s, before, tt.do(), tt.ref, tt.hint)
		})
	}
}

func TestStore_Guard_AgentAllowed(t *testing.T) {
	s := mustGuardedStore(t)
	ctx := agentCtx()
	if _, err := s.Edit(ctx, mustRef(t, "self:/beliefs.md"), []Patch{{StartLine: 7, EndLine: 0, Content: "- Ask when stuck."}}, ""); err != nil {
		t.Errorf("agent edit of beliefs.md: %v", err)
	}
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "agent:/free.md"), Content: []byte("mine\n"), IsText: true, OnConflict: ConflictOverwrite}); err != nil {
		t.Errorf("agent write outside the root: %v", err)
	}
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "self:/invoicing.md"), Content: []byte("---\nloading: contextual\nagent-modification: true\n---\n# Invoicing\n"), IsText: true}); err != nil {
		t.Errorf("agent creating an editable context file: %v", err)
	}
	if _, err := s.MakeDir(ctx, mustRef(t, "self:/researcher")); err != nil {
		t.Errorf("agent making a directory under the root: %v", err)
	}
	if _, err := s.Copy(ctx, mustRef(t, "self:/soul.md"), mustRef(t, "agent:/soul-copy.md"), false, ConflictError); err != nil {
		t.Errorf("agent copying soul.md out (reading it): %v", err)
	}
	if _, err := s.Move(ctx, mustRef(t, "self:/beliefs.md"), mustRef(t, "self:/researcher/beliefs.md"), ConflictError); err != nil {
		t.Errorf("agent moving beliefs.md within the root: %v", err)
	}
	if _, err := s.Delete(ctx, mustRef(t, "self:/invoicing.md"), false); err != nil {
		t.Errorf("agent deleting its own context file: %v", err)
	}
}

// Outside the context roots only context files and items that declare
// agent-modification: false are protected: an agent's own note whose
// frontmatter carries just tags stays the agent's to edit.
func TestStore_Guard_DeclaredOutsideRoots(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "agent:/tagged.md", "---\ntags: [todo]\n---\nbuy milk\n")
	mustWrite(t, s, "agent:/playbook.md", "---\nloading: contextual\n---\n# Playbook\n")
	ctx := agentCtx()
	if _, err := s.Edit(ctx, mustRef(t, "agent:/tagged.md"), []Patch{{StartLine: 4, EndLine: 4, Content: "buy oat milk"}}, ""); err != nil {
		t.Errorf("agent edit of its tagged note: %v", err)
	}
	before := snapshot(t, s)
	_, err := s.Edit(ctx, mustRef(t, "agent:/playbook.md"), []Patch{{StartLine: 4, EndLine: 4, Content: "# Mine now"}}, "")
	wantReadOnly(t, s, before, err, "agent:/playbook.md", "ask the owner")
}

func TestStore_Guard_OwnerAllowed(t *testing.T) {
	s := mustGuardedStore(t)
	for _, ctx := range []context.Context{context.Background(), WithActor(context.Background(), Actor{Name: "ci"})} {
		for _, ref := range []string{"self:/soul.md", "self:/beliefs.md", "self:/notes.md", "agent:/locked.md"} {
			if _, err := s.Edit(ctx, mustRef(t, ref), []Patch{{StartLine: 1, EndLine: 0, Content: "x"}}, ""); err != nil {
				t.Errorf("%s edit of %s: %v", ActorFrom(ctx).Name, ref, err)
			}
		}
	}
	if _, err := s.Delete(context.Background(), mustRef(t, "self:/"), true); err != nil {
		t.Errorf("owner deleting the context root: %v", err)
	}
}

func TestStore_Guard_ContextRoots(t *testing.T) {
	s := mustGuardedStore(t, Options{ContextRoots: []string{"team:/ctx/"}})
	ctx := agentCtx()
	// self:/ is no context root here: only frontmatter protects.
	if _, err := s.Edit(ctx, mustRef(t, "self:/notes.md"), []Patch{{StartLine: 1, EndLine: 0, Content: "x"}}, ""); err != nil {
		t.Errorf("edit of a frontmatter-less note outside the roots: %v", err)
	}
	before := snapshot(t, s)
	_, err := s.Edit(ctx, mustRef(t, "self:/soul.md"), []Patch{{StartLine: 1, EndLine: 0, Content: "x"}}, "")
	wantReadOnly(t, s, before, err, "self:/soul.md", "ask the owner")
	_, err = s.Write(ctx, WriteParams{Ref: mustRef(t, "team:/ctx/a.md"), Content: []byte("a\n"), IsText: true})
	wantReadOnly(t, s, before, err, "team:/ctx/a.md", "write outside team:/ctx")
	if _, err := s.Write(ctx, WriteParams{Ref: mustRef(t, "team:/other.md"), Content: []byte("a\n"), IsText: true}); err != nil {
		t.Errorf("write beside the root: %v", err)
	}

	for _, bad := range [][]string{{"self"}, {"0b7d3f4e-8c1a-4b2e-9f3d-2a6c5e8b1d40"}} {
		if _, err := Open(newLocation(t), Options{ContextRoots: bad}); err == nil || !strings.Contains(err.Error(), "context root") {
			t.Errorf("Open with context roots %q: %v, want an error naming the context root", bad, err)
		}
	}
}

func TestStore_Guard_Revert(t *testing.T) {
	s := mustGuardedStore(t)
	owner := context.Background()
	if _, err := s.Edit(owner, mustRef(t, "self:/soul.md"), []Patch{{StartLine: 9, EndLine: 9, Content: "# The soul"}}, ""); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)
	_, err := s.Revert(agentCtx(), mustRef(t, "self:/soul.md"), 1)
	wantReadOnly(t, s, before, err, "self:/soul.md", "agents may edit self:/beliefs.md instead")

	// Restoring a deleted protected item creates it under the root.
	if _, err := s.Delete(owner, mustRef(t, "self:/notes.md"), false); err != nil {
		t.Fatal(err)
	}
	before = snapshot(t, s)
	_, err = s.Revert(agentCtx(), mustRef(t, "self:/notes.md"), 1)
	wantReadOnly(t, s, before, err, "self:/notes.md", "agent-modification: true")

	if _, err := s.Revert(owner, mustRef(t, "self:/soul.md"), 1); err != nil {
		t.Errorf("owner revert of soul.md: %v", err)
	}
}
