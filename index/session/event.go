package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ctxd/ctxd/internal/runes"
	"github.com/ctxd/ctxd/vfs"
)

// Kind is what an event records.
type Kind string

// Kinds of events.
const (
	KindPrompt     Kind = "prompt"      // a prompt the user gave
	KindToolUse    Kind = "tool_use"    // a tool the agent used
	KindDecision   Kind = "decision"    // a decision made
	KindError      Kind = "error"       // an error met
	KindNote       Kind = "note"        // a note the agent kept
	KindFileChange Kind = "file_change" // a file the agent changed (Refs)
	KindSummary    Kind = "summary"     // a summary of work so far; digests count as one
)

// Kinds lists every kind, in the order digests report them.
var Kinds = []Kind{KindPrompt, KindToolUse, KindDecision, KindError, KindNote, KindFileChange, KindSummary}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return slices.Contains(Kinds, k) }

// Bounds of an event. Text longer than Options.MaxEventBytes is cut, never
// refused: a host captures what happened and must not fail for it.
const (
	// DefaultMaxEventBytes is the default bound of an event's text.
	DefaultMaxEventBytes = 8 << 10
	// MinMaxEventBytes is the least Options.MaxEventBytes may be.
	MinMaxEventBytes = 256
	// MaxEventsPerAppend bounds the events of one Append.
	MaxEventsPerAppend = 256
	// MaxEventRefs bounds an event's refs, MaxRefBytes each one.
	MaxEventRefs = 32
	MaxRefBytes  = 1 << 10
	// MaxToolBytes bounds an event's tool name.
	MaxToolBytes = 128
	// maxCwdBytes bounds the working directory a session records.
	maxCwdBytes = 4 << 10
	// maxActorBytes bounds a session's actor.
	maxActorBytes = 128
)

// Event is one thing that happened in a session.
type Event struct {
	Ref       string // its item's ref; set by Append
	Time      time.Time
	Kind      Kind
	Text      string
	Refs      []string
	Tool      string
	Truncated bool // Text was cut to the bound
}

// eventMeta is an event item's frontmatter: what the event holds besides
// its text (the item's body). It is written as one line of JSON, which is
// YAML too (so the store's frontmatter parser and people read it as such)
// and decodes several times faster: a digest reads every event.
type eventMeta struct {
	Kind      Kind     `json:"kind" yaml:"kind"`
	Tool      string   `json:"tool,omitempty" yaml:"tool,omitempty"`
	Refs      []string `json:"refs,omitempty" yaml:"refs,omitempty"`
	Truncated bool     `json:"truncated,omitempty" yaml:"truncated,omitempty"`
}

// check validates what an event's writer gives besides its text.
func (e *Event) check(i int) error {
	bad := func(format string, args ...any) error {
		return &vfs.Error{Kind: vfs.ErrInvalid, Message: fmt.Sprintf("events[%d]: ", i) + fmt.Sprintf(format, args...),
			Hint: "give each event a kind (prompt, tool_use, decision, error, note, file_change, summary) and text; see the limits in docs/sessions.md"}
	}
	switch {
	case e.Kind == "":
		return bad("the event has no kind")
	case !e.Kind.Valid():
		return bad("the kind %q is not one of prompt, tool_use, decision, error, note, file_change, summary", e.Kind)
	case strings.TrimSpace(e.Text) == "":
		return bad("the event has no text")
	case len(e.Refs) > MaxEventRefs:
		return bad("the event has %d refs; at most %d are allowed", len(e.Refs), MaxEventRefs)
	case len(e.Tool) > MaxToolBytes:
		return bad("the tool name is %d bytes; at most %d are allowed", len(e.Tool), MaxToolBytes)
	}
	for _, r := range e.Refs {
		if len(r) > MaxRefBytes || strings.TrimSpace(r) == "" {
			return bad("a ref is empty or over %d bytes", MaxRefBytes)
		}
	}
	return nil
}

// bound makes text valid UTF-8 without NUL bytes (a host's tool output may
// hold anything) and cuts it to at most max bytes at a rune boundary,
// marker included. It reports whether it cut.
func bound(text string, max int) (string, bool) {
	text = clean(text)
	if len(text) <= max {
		return text, false
	}
	// The marker's number takes at most as many digits as len(text).
	keep := runes.Cut(text, max-len(cutMarker(len(text))))
	return keep + cutMarker(len(text)-len(keep)), true
}

// clean makes s valid UTF-8 without NUL bytes, replacing what is not with
// U+FFFD: what a host reports may hold anything, and the store takes text.
func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

func cutMarker(n int) string { return fmt.Sprintf("…[cut %d bytes]", n) }

// encode is the event item's content: its frontmatter, then its text.
func (e *Event) encode() ([]byte, error) {
	meta, err := json.Marshal(eventMeta{Kind: e.Kind, Tool: e.Tool, Refs: e.Refs, Truncated: e.Truncated})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(meta)
	b.WriteString("\n---\n")
	b.WriteString(e.Text)
	if !strings.HasSuffix(e.Text, "\n") {
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// title is an event item's title: its kind, and its tool.
func (e *Event) title() string {
	if e.Tool != "" {
		return string(e.Kind) + " " + e.Tool
	}
	return string(e.Kind)
}

// tags are an event item's tags: "event", its kind's, and "tasks" on a tool
// use holding a task list, so a digest finds the latest without reading
// every tool use.
func (e *Event) tags() []string {
	tags := []string{eventTag, kindTag + string(e.Kind)}
	if _, ok := taskList(e.Text); ok && e.Kind == KindToolUse {
		tags = append(tags, tasksTag)
	}
	return tags
}

// metaOf is what an event item's metadata says of the event without its
// content: its ref, time, kind (from its tags) and tool (from its title).
func metaOf(it vfs.Item) Event {
	e := Event{Ref: it.Ref(), Time: it.CreatedAt}
	for _, t := range it.Tags {
		if k, ok := strings.CutPrefix(t, kindTag); ok {
			e.Kind = Kind(k)
		}
	}
	if _, tool, ok := strings.Cut(it.Title, " "); ok {
		e.Tool = tool
	}
	return e
}

// decodeEvent reads an event item back.
func decodeEvent(it vfs.Item, content []byte) (Event, error) {
	block, body := vfs.SplitFrontmatter(content)
	var m eventMeta
	inner := bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSpace(block), []byte("---")), []byte("---")))
	if json.Unmarshal(inner, &m) != nil { // edited by hand: YAML after all
		if err := yaml.Unmarshal(block, &m); err != nil { // the block's first document
			return Event{}, fmt.Errorf("event %s: %w", it.Ref(), err)
		}
	}
	return Event{Ref: it.Ref(), Time: it.CreatedAt, Kind: m.Kind, Text: strings.TrimSuffix(string(body), "\n"),
		Refs: m.Refs, Tool: m.Tool, Truncated: m.Truncated}, nil
}
