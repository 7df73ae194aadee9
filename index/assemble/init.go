package assemble

import (
	"context"
	"fmt"

	"github.com/ctxd/ctxd/vfs"
)

// starter is one file Init creates.
type starter struct {
	name, title, description string
	agentModification        bool
	body                     string
}

// content is the file: its frontmatter block, then the body.
func (s starter) content() []byte {
	return fmt.Appendf(nil, "---\ntitle: %s\ndescription: %s\nloading: %s\nagent-modification: %t\n---\n%s",
		s.title, s.description, vfs.LoadingAlways, s.agentModification, s.body)
}

// starters are the files of a new context root, in the order Build renders
// them (wellKnown).
var starters = []starter{
	{
		name: "soul.md", title: "Soul", description: "Who the agent is and how it behaves; only the owner edits it.",
		body: `# Soul

Who I am and how I work. The owner writes this file; I cannot change it.

- I work for the owner of this memory and act in their interest.
- I say what I did, what I did not do, and what I am unsure of.
- I check what my memory holds (search, read) before I rely on it, and I
  cite the drive:/path ref of what I used.
- I do not invent the content of files I have not read.
`,
	},
	{
		name: "beliefs.md", title: "Beliefs", description: "What the agent has learned about the owner, the work and the world.",
		agentModification: true,
		body: `# Beliefs

What I have learned that should shape later work. I update this file
(context update) when I learn something lasting; one belief per line, the
most important first, and I remove beliefs that turned out wrong.

- I should be concise and clear in my work products.
- I should ask for help when I am stuck rather than guess.
`,
	},
	{
		name: "goals.md", title: "Goals", description: "What the agent is working towards now.",
		agentModification: true,
		body: `# Goals

What I am working towards. I update this file (context update) when a goal
is reached, changes or is added, and keep it short.

- No goals yet: ask the owner what to work on.
`,
	},
	{
		name: "capabilities.md", title: "Capabilities", description: "What ctxd offers the agent, by theme.",
		agentModification: true,
		body: `# Capabilities

What my memory (ctxd) lets me do. Items are addressed as drive:/path
(agent:/ is my scratch space, self:/ holds this context, disk:/ and url:/
hold ingested files and pages); every error says what to try next.

- **Read**: list a directory, show a tree, read an item by line range, get
  an item's metadata, check that a path exists, count lines, sum a
  directory's size.
- **Write**: create or overwrite an item, edit line ranges in place, copy,
  move, delete, make a directory. Passing the content hash I last read
  makes a write fail instead of overwriting a change I have not seen.
- **Search**: hybrid search (BM25 words, substrings and meaning, fused) or
  one leg alone, filtered by drive, path, type and tags, within a token
  budget; each result names its ref, heading and lines.
- **Ingest**: add local files, directories and web pages, refresh them
  when their source changes, and re-embed items.
- **Context**: files under a context root with a loading frontmatter key
  shape every task. loading: always files (soul, beliefs, goals, this
  file) are always included; loading: contextual files only when a task
  matches them. Building the context for a task adds the best search
  results within a token budget and lists what it left out. I may update
  the body of files whose frontmatter says agent-modification: true
  (beliefs, goals, this file); the others are read-only to me.
- **History**: every change to an item is kept as a revision (who, when,
  what). I can list an item's history, read an earlier revision, revert to
  it, restore a deleted item, and see the log of changes across the store.
`,
	},
}

// Init creates soul.md, beliefs.md, goals.md and capabilities.md under the
// directory root ("" means the first of vfs.DefaultContextRoots), each with
// its frontmatter: soul.md always loaded and read-only to agents, the others
// always loaded and agent-editable. A file that exists is left untouched
// (the write skips it in the same transaction that finds it, so two
// concurrent Inits create each file once). It returns the refs created and
// the refs that existed, in the order above; on an error, the files before
// it were handled.
func Init(ctx context.Context, store *vfs.Store, root string) (created, existing []string, err error) {
	if root == "" {
		root = vfs.DefaultContextRoots[0]
	}
	dir, err := rootRef(root)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range starters {
		ref := vfs.Ref{Drive: dir.Drive, Path: joinPath(dir.Path, s.name)}
		res, err := store.Write(ctx, vfs.WriteParams{
			Ref: ref, Content: s.content(), IsText: true, MimeType: "text/markdown",
			OnConflict: vfs.ConflictSkip,
		})
		if err != nil {
			return created, existing, fmt.Errorf("init %s: %w", ref, err)
		}
		if res.Skipped {
			existing = append(existing, ref.String())
		} else {
			created = append(created, ref.String())
		}
	}
	return created, existing, nil
}

// rootRef parses a context root: a drive:/path directory ref, not an id.
func rootRef(root string) (vfs.Ref, error) {
	r, err := vfs.ParseRef(root)
	if err != nil {
		return r, err
	}
	if r.ID != "" {
		return r, &vfs.Error{Kind: vfs.ErrInvalid, Ref: root, Message: fmt.Sprintf("The context root %s is an item id, not a directory.", root),
			Hint: `name the root as a directory ref such as "self:/" or "self:/researcher/"`}
	}
	return r, nil
}

// joinPath joins a clean directory path and a name.
func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}
