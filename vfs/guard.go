package vfs

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultContextRoots are the context roots of a store whose Options name
// none: where an agent's persistent context files (soul.md, beliefs.md, …)
// live.
var DefaultContextRoots = []string{"self:/"}

// The agent-modification guard. An agent (Actor.Agent) may not change a
// protected item: one whose AgentModification is false and that lies under a
// context root, is a context file (declares loading), or declares
// agent-modification: false. An agent's own note outside the roots whose
// frontmatter only carries tags or a title stays the agent's to edit. Nor
// may it create an item under a context root unless the item's frontmatter
// sets agent-modification: true, nor make an item it may change read-only to
// itself (a rewrite of beliefs.md without its frontmatter). Directory
// placeholders carry no frontmatter and are never protected. The owner may
// change anything. The checks run in the transaction of the change (putItem,
// removeItem, the source of a move), so a refused change leaves nothing
// behind.

// maxEditableHint bounds the agent-editable refs a refusal suggests, and
// maxHintScan the items looked at to find them.
const (
	maxEditableHint = 3
	maxHintScan     = 256
)

// parseContextRoots validates context roots given as drive:/path refs.
func parseContextRoots(roots []string) ([]Ref, error) {
	if roots == nil {
		roots = DefaultContextRoots
	}
	out := make([]Ref, 0, len(roots))
	for _, s := range roots {
		r, err := ParseRef(s)
		if err == nil && r.ID != "" {
			err = fmt.Errorf("an item id is not a directory")
		}
		if err != nil {
			return nil, fmt.Errorf("context root %q: %v (use drive:/path, e.g. %q)", s, err, DefaultContextRoots[0])
		}
		out = append(out, r)
	}
	return out, nil
}

// contextRoot returns the context root it lies under, if any.
func (t *txn) contextRoot(it *Item) (Ref, bool) {
	for _, r := range t.roots {
		if r.Drive == it.Drive && (r.Path == "/" || it.Path == r.Path || isUnder(it.Path, r.Path)) {
			return r, true
		}
	}
	return Ref{}, false
}

// guardPut checks that the actor may store it at its path, where old is the
// paths value it replaces (nil: nothing was at that path).
func (t *txn) guardPut(it *Item, old []byte) error {
	if !t.actor.Agent {
		return nil
	}
	if old != nil {
		prev, err := t.item(decodePathVal(old).id)
		if err != nil {
			return err
		}
		if err := t.guardChange(&prev); err != nil {
			return err
		}
		// An agent rewriting its beliefs without their frontmatter would
		// lock itself out of the file for good: refuse that instead.
		if _, under, declared := t.protection(it); !it.IsDir && !it.AgentModification && (under || declared) {
			ref := it.Ref()
			return newError(ErrReadOnly, ref,
				"keep agent-modification: true in the frontmatter; a context update keeps the frontmatter as it is",
				"This change would make %s read-only to agents: its new content does not set agent-modification: true.", ref)
		}
		return nil
	}
	if it.IsDir || it.AgentModification {
		return nil
	}
	root, under := t.contextRoot(it)
	if !under {
		return nil
	}
	ref, rootRef := it.Ref(), root.String()
	return newError(ErrReadOnly, ref,
		fmt.Sprintf("start the content with a frontmatter block setting agent-modification: true, write outside %s, or ask the owner%s", rootRef, t.editableHint(root, "")),
		"Agents may not create %s: items under the context root %s are read-only to agents unless their frontmatter sets agent-modification: true.", ref, rootRef)
}

// protection says what makes it read-only to agents unless it sets
// agent-modification: true: lying under a context root, or declaring
// loading or agent-modification in its frontmatter.
func (t *txn) protection(it *Item) (root Ref, under, declared bool) {
	root, under = t.contextRoot(it)
	return root, under, it.Loading != "" || slices.Contains(it.FrontmatterFields, fieldAgentModification)
}

// guardChange checks that the actor may change or remove the stored item prev.
func (t *txn) guardChange(prev *Item) error {
	if !t.actor.Agent || prev.IsDir || prev.AgentModification {
		return nil
	}
	root, under, declared := t.protection(prev)
	if !under && !declared {
		return nil
	}
	ref := prev.Ref()
	hint := "ask the owner to change it"
	if under {
		hint += t.editableHint(root, ref)
	}
	if !declared {
		return newError(ErrReadOnly, ref, hint,
			"%s is read-only to agents: it is under the context root %s and its frontmatter does not set agent-modification: true.", ref, root)
	}
	return newError(ErrReadOnly, ref, hint,
		"%s is read-only to agents: its frontmatter does not set agent-modification: true (agent-modification: false).", ref)
}

// guardRemove checks every item at keys in drive before a delete removes
// any, so that a refusal's hint sees the store as it is.
func (t *txn) guardRemove(drive string, keys [][]byte) error {
	if !t.actor.Agent {
		return nil
	}
	b := t.driveBucket(drive)
	for _, k := range keys {
		prev, err := t.item(b.Get(k)[1:17])
		if err != nil {
			return err
		}
		if err := t.guardChange(&prev); err != nil {
			return err
		}
	}
	return nil
}

// editableHint names up to maxEditableHint items under root other than
// except that agents may change, as the rest of a hint.
func (t *txn) editableHint(root Ref, except string) string {
	var refs []string
	scanned := 0
	subtree(t.driveBucket(root.Drive), root.Path, func(k, v []byte) {
		if len(refs) == maxEditableHint || scanned == maxHintScan || v[0]&flagDir != 0 {
			return
		}
		scanned++
		it, err := t.item(v[1:17])
		if err == nil && it.AgentModification && it.Ref() != except {
			refs = append(refs, it.Ref())
		}
	})
	if len(refs) == 0 {
		return ""
	}
	return "; agents may edit " + strings.Join(refs, ", ") + " instead"
}
