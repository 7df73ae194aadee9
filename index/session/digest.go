package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ctxd/ctxd/internal/runes"
	"github.com/ctxd/ctxd/vfs"
)

// Methods a digest is written by.
const (
	MethodExtractive = "extractive" // built from the events, no model
	MethodEnricher   = "enricher"   // written by the Summarizer from the extractive digest
)

// Bounds of a digest: it is read at every session start, so it stays short
// whatever the session did.
const (
	// MaxDigestEvents bounds the events a digest reads: the latest ones.
	MaxDigestEvents = 5000
	digestPrompts   = 10  // prompts listed
	digestNotes     = 15  // decisions, notes and summaries listed
	digestErrors    = 10  // errors listed
	digestFiles     = 20  // files listed
	digestCommands  = 15  // commands listed
	digestGoals     = 20  // open goals listed
	digestLine      = 160 // runes of one listed line
	// maxSummaryBytes bounds what the Summarizer's digest may add.
	maxSummaryBytes = 8 << 10
	// maxSummaryInput bounds the event text sent to the Summarizer beside
	// the extractive digest.
	maxSummaryInput = 24 << 10
)

// Digest is what a session did, in short.
type Digest struct {
	Ref      string
	Markdown string // the digest item's body
	Method   string // MethodExtractive or MethodEnricher
	// EventCount is the events the digest covers.
	EventCount int64
	// OpenGoals are the unchecked lines of the session's latest task list.
	OpenGoals []string
	// EnricherError says why the Summarizer's digest was not used.
	EnricherError string
	// EnricherPending is set when the Summarizer's digest will replace
	// this one in the background.
	EnricherPending bool
}

// digestMeta is a digest item's frontmatter.
type digestMeta struct {
	Title     string   `yaml:"title"`
	Session   string   `yaml:"session"`
	Project   string   `yaml:"project"`
	Events    int64    `yaml:"events"`
	Method    string   `yaml:"method"`
	OpenGoals []string `yaml:"open_goals,omitempty"`
}

// Digest writes the digest of a session without ending it. With wait and a
// Summarizer it asks the model (the extractive digest stays on failure).
func (s *Sessions) Digest(ctx context.Context, id, project string, wait bool) (Digest, error) {
	k, err := s.mustFind(ctx, project, id)
	if err != nil {
		return Digest{}, err
	}
	return s.writeDigest(ctx, k, wait)
}

// End marks a session ended and writes its digest; without wait, a
// Summarizer's digest replaces the extractive one in the background (Run).
func (s *Sessions) End(ctx context.Context, id, project string, wait bool) (Session, Digest, error) {
	k, err := s.mustFind(ctx, project, id)
	if err != nil {
		return Session{}, Digest{}, err
	}
	if err := s.setEnded(ctx, k, time.Now()); err != nil {
		return Session{}, Digest{}, fmt.Errorf("end session %s: %w", id, err)
	}
	d, err := s.writeDigest(ctx, k, wait)
	if err != nil {
		return Session{}, Digest{}, err
	}
	if !wait && s.opts.Summarizer != nil {
		select {
		case s.enrich <- k:
			d.EnricherPending = true
		default:
			s.opts.Log.Warn("the background digest queue is full; the session keeps its extractive digest", "session", id)
		}
	}
	sess, err := s.read(ctx, k)
	return sess, d, err
}

// writeDigest builds and writes the digest of the session at k.
func (s *Sessions) writeDigest(ctx context.Context, k sessionKey, withModel bool) (Digest, error) {
	sess, events, err := s.readAll(ctx, k)
	if err != nil {
		return Digest{}, err
	}
	body, goals := extractive(sess, events)
	d := Digest{Ref: child(k.ref(), digestName).String(), Markdown: body, Method: MethodExtractive, EventCount: sess.EventCount, OpenGoals: goals}
	if withModel && s.opts.Summarizer != nil {
		if text, err := s.summarize(ctx, body, events); err != nil {
			if ctx.Err() != nil {
				return Digest{}, ctx.Err()
			}
			d.EnricherError = err.Error()
		} else {
			d.Markdown, d.Method = text, MethodEnricher
		}
	}
	meta := digestMeta{Title: fmt.Sprintf("Digest of session %s (%s, %s)", sess.ID, sess.Project, sess.StartedAt.Format("2006-01-02 15:04")),
		Session: sess.ID, Project: sess.Project, Events: d.EventCount, Method: d.Method, OpenGoals: goals}
	fm, err := yaml.Marshal(meta)
	if err != nil {
		return Digest{}, err
	}
	content := "---\n" + string(fm) + "---\n" + d.Markdown
	_, err = s.store.Write(ctx, vfs.WriteParams{Ref: child(k.ref(), digestName), Content: []byte(content), IsText: true,
		MimeType: "text/markdown", Title: meta.Title, Tags: []string{digestTag, kindTag + string(KindSummary)}, OnConflict: vfs.ConflictOverwrite})
	if err != nil {
		return Digest{}, fmt.Errorf("write the digest of session %s: %w", sess.ID, err)
	}
	return d, nil
}

// readAll reads a session and its latest MaxDigestEvents events, oldest
// first, from one snapshot of the store.
func (s *Sessions) readAll(ctx context.Context, k sessionKey) (Session, []Event, error) {
	pctx, release, err := s.store.Pin(ctx)
	if err != nil {
		return Session{}, nil, err
	}
	defer release()
	sess, err := s.read(pctx, k)
	if err != nil {
		return Session{}, nil, err
	}
	var items []vfs.Item
	err = s.children(pctx, child(k.ref(), eventsDir), func(e vfs.Entry) {
		if e.Item != nil && !e.IsDir {
			items = append(items, *e.Item)
		}
	})
	if err != nil {
		return Session{}, nil, err
	}
	items = items[max(0, len(items)-MaxDigestEvents):]
	// Read the content of what the digest lists; of the tool uses, only
	// shell commands and the latest task list: most are reads and searches
	// the digest only counts.
	lastTasks := -1
	for i, it := range slices.Backward(items) {
		if slices.Contains(it.Tags, tasksTag) {
			lastTasks = i
			break
		}
	}
	events := make([]Event, 0, len(items))
	for i, it := range items {
		ev := metaOf(it)
		if ev.Kind != KindToolUse || slices.Contains(shellTools, strings.ToLower(ev.Tool)) || i == lastTasks {
			if ev, err = s.readEvent(pctx, it); err != nil {
				return Session{}, nil, err
			}
		}
		events = append(events, ev)
	}
	return sess, events, nil
}

// readDigest reads a session's digest: its frontmatter and its body.
func (s *Sessions) readDigest(ctx context.Context, k sessionKey) (digestMeta, string, error) {
	_, m, body, err := s.readDigestItem(ctx, k)
	return m, body, err
}

// readDigestItem reads a session's digest item: its metadata, frontmatter
// and body.
func (s *Sessions) readDigestItem(ctx context.Context, k sessionKey) (vfs.Item, digestMeta, string, error) {
	it, content, err := s.store.ReadRaw(ctx, child(k.ref(), digestName))
	if err != nil {
		return vfs.Item{}, digestMeta{}, "", err
	}
	block, body := vfs.SplitFrontmatter(content)
	var m digestMeta
	if block != nil {
		if err := yaml.Unmarshal(block, &m); err != nil {
			return vfs.Item{}, digestMeta{}, "", fmt.Errorf("digest %s: %w", child(k.ref(), digestName), err)
		}
	}
	return it, m, string(body), nil
}

// shellTools are tools whose TOOL_USE text starts with the command run.
var shellTools = []string{"bash", "shell", "terminal", "run_terminal_cmd", "run_shell_command", "execute_command"}

// taskLine is a task-list line: "- [ ] text" or "- [x] text".
var taskLine = regexp.MustCompile(`^\s*[-*+] \[([ xX])\] (.+)$`)

// extractive builds a session's digest from its events, and returns the
// open goals: prompts, decisions and notes, errors, files changed and
// commands run, each list bounded, with counts and refs.
func extractive(sess Session, events []Event) (string, []string) {
	var b strings.Builder
	counts := map[Kind]int{}
	for _, e := range events {
		counts[e.Kind]++
	}
	fmt.Fprintf(&b, "# Session %s on %s\n\n", sess.ID, sess.Project)
	when := sess.StartedAt.UTC().Format("2006-01-02 15:04 UTC")
	if !sess.Open() {
		fmt.Fprintf(&b, "From %s to %s (%s)", when, sess.EndedAt.UTC().Format("15:04 UTC"), sess.EndedAt.Sub(sess.StartedAt).Round(time.Minute))
	} else {
		fmt.Fprintf(&b, "Started %s, still open", when)
	}
	if sess.Actor != "" {
		fmt.Fprintf(&b, ", by %s", sess.Actor)
	}
	fmt.Fprintf(&b, ". %d events", sess.EventCount)
	var parts []string
	for _, k := range Kinds {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(parts, ", "))
	}
	if int64(len(events)) < sess.EventCount {
		fmt.Fprintf(&b, " (the latest %d read)", len(events))
	}
	b.WriteString(".\n")
	if sess.EventCount > 0 {
		fmt.Fprintf(&b, "Events: %s/%s/\n", strings.TrimSuffix(sess.Ref, "/"+recordName), eventsDir)
	}

	var prompts, notes, errs []string
	files := newTally()
	commands := newTally()
	var goals []string
	for _, e := range events {
		line := firstLine(e.Text)
		stamp := e.Time.UTC().Format("15:04")
		switch e.Kind {
		case KindPrompt:
			prompts = append(prompts, fmt.Sprintf("%s %s", stamp, line))
		case KindDecision, KindNote, KindSummary:
			notes = append(notes, fmt.Sprintf("%s %s: %s (%s)", stamp, e.Kind, line, e.Ref))
		case KindError:
			if e.Tool != "" {
				line = e.Tool + ": " + line
			}
			errs = append(errs, fmt.Sprintf("%s %s (%s)", stamp, line, e.Ref))
		case KindFileChange:
			for _, r := range e.Refs {
				files.add(r)
			}
		case KindToolUse:
			if slices.Contains(shellTools, strings.ToLower(e.Tool)) {
				commands.add(line)
			}
			if g, ok := taskList(e.Text); ok {
				goals = g
			}
		}
	}
	section := func(title string, total int, lines []string) {
		if total == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s (%d)\n\n", title, total)
		for _, l := range lines {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	section("Prompts", len(prompts), latest(prompts, digestPrompts))
	section("Decisions and notes", len(notes), latest(notes, digestNotes))
	section("Errors", len(errs), latest(errs, digestErrors))
	section("Files changed", len(files.order), files.lines(digestFiles))
	section("Commands run", len(commands.order), commands.lines(digestCommands))
	if len(goals) > 0 {
		shown := goals[:min(len(goals), digestGoals)]
		fmt.Fprintf(&b, "\n## Open goals (%d)\n\n", len(goals))
		for _, g := range shown {
			fmt.Fprintf(&b, "- [ ] %s\n", g)
		}
		if len(goals) > len(shown) {
			fmt.Fprintf(&b, "- … %d more\n", len(goals)-len(shown))
		}
	}
	return b.String(), goals
}

// latest returns the last max lines, after a line counting those left out.
func latest(lines []string, max int) []string {
	if len(lines) <= max {
		return lines
	}
	return append([]string{fmt.Sprintf("… %d earlier", len(lines)-max)}, lines[len(lines)-max:]...)
}

// taskList returns the unchecked items of the task-list lines text holds,
// and whether it holds any.
func taskList(text string) ([]string, bool) {
	var open []string
	found := false
	for line := range strings.Lines(text) {
		m := taskLine.FindStringSubmatch(strings.TrimRight(line, "\r\n"))
		if m == nil {
			continue
		}
		found = true
		if m[1] == " " {
			open = append(open, runes.Ellipsize(strings.TrimSpace(m[2]), digestLine))
		}
	}
	return open, found
}

// tally counts lines in order of first appearance.
type tally struct {
	order []string
	n     map[string]int
}

func newTally() *tally { return &tally{n: map[string]int{}} }

func (t *tally) add(s string) {
	s = runes.Ellipsize(strings.TrimSpace(s), digestLine)
	if s == "" {
		return
	}
	if t.n[s] == 0 {
		t.order = append(t.order, s)
	}
	t.n[s]++
}

// lines lists the counted lines, the most frequent first (ties in order of
// appearance), with their counts; the rest are summed in a last line.
func (t *tally) lines(max int) []string {
	order := slices.Clone(t.order)
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(t.n[b], t.n[a]) })
	var out []string
	for i, s := range order {
		if i == max {
			out = append(out, fmt.Sprintf("… %d more", len(order)-max))
			break
		}
		line := "`" + strings.ReplaceAll(s, "`", "'") + "`"
		if n := t.n[s]; n > 1 {
			line = fmt.Sprintf("%s (%d×)", line, n)
		}
		out = append(out, line)
	}
	return out
}

// firstLine is the first non-blank line of text, cut to digestLine runes.
func firstLine(text string) string {
	for line := range strings.Lines(text) {
		if l := strings.TrimSpace(line); l != "" {
			return runes.Ellipsize(l, digestLine)
		}
	}
	return ""
}

// summarize asks the Summarizer for a digest from the extractive one and
// the events' text (bounded), and bounds its answer.
func (s *Sessions) summarize(ctx context.Context, extractiveDigest string, events []Event) (string, error) {
	var in strings.Builder
	in.WriteString(extractiveDigest)
	in.WriteString("\n\n# The events, oldest first\n\n")
	for _, e := range events {
		line := fmt.Sprintf("- %s %s: %s\n", e.Time.UTC().Format("15:04"), e.Kind, runes.Ellipsize(strings.Join(strings.Fields(e.Text), " "), 400))
		if in.Len()+len(line) > maxSummaryInput {
			in.WriteString("- … (the rest left out)\n")
			break
		}
		in.WriteString(line)
	}
	text, err := s.opts.Summarizer.Summarize(ctx, summaryInstructions, in.String())
	if err != nil {
		return "", err
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return "", errors.New("the model answered with an empty digest")
	}
	text, _ = bound(text, maxSummaryBytes)
	return text + "\n", nil
}

const summaryInstructions = `You write the digest of an AI coding agent's work session, for the agent that continues the work in its next session. ` +
	`From the extractive digest and the events below, write markdown: a title line "# Session ID on PROJECT", then what was asked and what was done, ` +
	`the decisions made and why, the errors met and whether they were solved, the files changed, and what is left open. ` +
	`Be concrete: keep names, paths, commands and numbers. Write at most 400 words. Answer with the digest only.`
