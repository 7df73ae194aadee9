package vfs

import (
	"bytes"
	"fmt"
	"math"
	"mime"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Loading values of the frontmatter "loading" key: how context assembly
// uses a context file.
const (
	LoadingAlways     = "always"     // included verbatim in every task's context
	LoadingContextual = "contextual" // included when the task matches it
)

// MaxFrontmatterBytes bounds a frontmatter block, closing line included: a
// text item whose opening "---" line is not closed within it has no
// frontmatter (its text is stored and indexed as it is, with a warning).
const MaxFrontmatterBytes = 64 << 10

// Frontmatter is what a YAML frontmatter block at the start of a text item
// declares. Keys other than these are allowed and ignored.
type Frontmatter struct {
	Len               int64    // bytes of the block, closing line and its newline included; 0 when none
	Loading           string   // "", LoadingAlways or LoadingContextual
	AgentModification bool     // agents may change the item ("agent-modification", default false)
	Tags              []string // cleaned like WriteParams.Tags; nil when not declared
	Importance        *float64 // in [0, 1]; nil when not declared
	Title             string   // "" when not declared
	Description       string   // "" when not declared

	agentModificationSet bool // the block declares agent-modification
}

// Metadata fields frontmatter can fill, as Item.FrontmatterFields names them.
const (
	fieldTitle       = "title"
	fieldDescription = "description"
	fieldTags        = "tags"
	fieldImportance  = "importance"
	// fieldAgentModification is listed when the block declares the key, so
	// that the guard can tell an explicit false from the default.
	fieldAgentModification = "agent-modification"
)

// SplitFrontmatter splits content into its frontmatter block (byte-exact:
// the opening "---" line through the closing "---" or "..." line and its
// newline) and the body after it. block is nil when content does not start
// with "---\n" (or "---\r\n") closed within MaxFrontmatterBytes. It does not
// parse the block: ParseFrontmatter does.
func SplitFrontmatter(content []byte) (block, body []byte) {
	_, end := frontmatterBounds(content)
	if end == 0 {
		return nil, content
	}
	return content[:end], content[end:]
}

// opensFrontmatter reports whether content starts with a frontmatter opening line.
func opensFrontmatter(content []byte) bool {
	return bytes.HasPrefix(content, []byte("---\n")) || bytes.HasPrefix(content, []byte("---\r\n"))
}

// frontmatterBounds returns where the closing line of the frontmatter block
// starts and where the block ends; end is 0 when there is no block.
func frontmatterBounds(content []byte) (closeAt, end int) {
	if !opensFrontmatter(content) {
		return 0, 0
	}
	limit := min(len(content), MaxFrontmatterBytes)
	pos := bytes.IndexByte(content, '\n') + 1
	for pos < limit {
		lineEnd := len(content)
		next := len(content)
		if i := bytes.IndexByte(content[pos:], '\n'); i >= 0 {
			lineEnd, next = pos+i, pos+i+1
		}
		line := bytes.TrimRight(content[pos:lineEnd], " \t\r")
		if bytes.Equal(line, []byte("---")) || bytes.Equal(line, []byte("...")) {
			if next > MaxFrontmatterBytes {
				return 0, 0
			}
			return pos, next
		}
		pos = next
	}
	return 0, 0
}

// ParseFrontmatter parses the YAML frontmatter block at the start of
// content. It returns the zero Frontmatter when there is none, and also,
// with a warning saying what is wrong and where, when the block is malformed:
// YAML that does not parse or is not a mapping, a known key with a value of
// the wrong type, loading other than "always" or "contextual", importance
// outside 0..1, a tag or title a write would refuse, a key given twice, or
// no closing line within MaxFrontmatterBytes. A malformed block is text
// like any other: it sets no metadata.
func ParseFrontmatter(content []byte) (Frontmatter, string) {
	closeAt, end := frontmatterBounds(content)
	if end == 0 {
		if opensFrontmatter(content) {
			return Frontmatter{}, fmt.Sprintf("the frontmatter opened on line 1 has no closing \"---\" or \"...\" line within %d bytes, so it is stored as plain text and sets no metadata", MaxFrontmatterBytes)
		}
		return Frontmatter{}, ""
	}
	fm, problem := parseFrontmatterYAML(content[:closeAt])
	if problem != "" {
		last := bytes.Count(content[:end-1], []byte{'\n'}) + 1
		return Frontmatter{}, fmt.Sprintf("the frontmatter (lines 1-%d) is stored as plain text and sets no metadata: %s", last, problem)
	}
	fm.Len = int64(end)
	return fm, ""
}

// parseFrontmatterYAML parses the block up to its closing line. The opening
// "---" is a YAML document marker, so line numbers in errors are the item's.
func parseFrontmatterYAML(src []byte) (Frontmatter, string) {
	var fm Frontmatter
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return fm, strings.TrimPrefix(err.Error(), "yaml: ")
	}
	if len(doc.Content) == 0 {
		return fm, "" // an empty block
	}
	root := doc.Content[0]
	if root.ShortTag() == "!!null" {
		return fm, ""
	}
	if root.Kind != yaml.MappingNode {
		return fm, fmt.Sprintf("line %d: the frontmatter must be a mapping of keys to values", root.Line)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		k := key.Value
		switch k {
		case "loading", "agent-modification", fieldTags, fieldImportance, fieldTitle, fieldDescription:
		default:
			continue
		}
		if seen[k] {
			return fm, fmt.Sprintf("line %d: %s is given twice", key.Line, k)
		}
		seen[k] = true
		if val.Kind == yaml.AliasNode {
			val = val.Alias
		}
		if val.ShortTag() == "!!null" {
			continue
		}
		if p := fm.set(k, val); p != "" {
			return Frontmatter{}, fmt.Sprintf("line %d: %s", val.Line, p)
		}
	}
	return fm, ""
}

// set stores the value of key k, or says why it is wrong.
func (fm *Frontmatter) set(k string, val *yaml.Node) string {
	scalar := func() (string, bool) { return val.Value, val.Kind == yaml.ScalarNode }
	switch k {
	case "loading":
		v, ok := scalar()
		if !ok || (v != LoadingAlways && v != LoadingContextual) {
			return fmt.Sprintf("loading must be %q or %q, not %s", LoadingAlways, LoadingContextual, describeNode(val))
		}
		fm.Loading = v
	case "agent-modification":
		if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!bool" {
			return fmt.Sprintf("agent-modification must be true or false, not %s", describeNode(val))
		}
		if err := val.Decode(&fm.AgentModification); err != nil {
			return fmt.Sprintf("agent-modification: %v", err)
		}
		fm.agentModificationSet = true
	case fieldTags:
		var tags []string
		switch val.Kind {
		case yaml.ScalarNode:
			tags = []string{val.Value}
		case yaml.SequenceNode:
			for _, n := range val.Content {
				if n.Kind == yaml.AliasNode {
					n = n.Alias
				}
				if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
					return fmt.Sprintf("tags must be a list of words, but one is %s", describeNode(n))
				}
				tags = append(tags, n.Value)
			}
		default:
			return fmt.Sprintf("tags must be a list of words, not %s", describeNode(val))
		}
		clean, err := cleanTags("", tags)
		if err != nil {
			return "tags: " + err.(*Error).Message
		}
		fm.Tags = clean
	case fieldImportance:
		var f float64
		if t := val.ShortTag(); val.Kind != yaml.ScalarNode || (t != "!!int" && t != "!!float") || val.Decode(&f) != nil {
			return fmt.Sprintf("importance must be a number from 0 to 1, not %s", describeNode(val))
		}
		if math.IsNaN(f) || f < 0 || f > 1 {
			return fmt.Sprintf("importance %s is outside 0..1", val.Value)
		}
		fm.Importance = &f
	case fieldTitle, fieldDescription:
		v, ok := scalar()
		if !ok {
			return fmt.Sprintf("%s must be text, not %s", k, describeNode(val))
		}
		if k == fieldDescription {
			fm.Description = v
			return ""
		}
		if strings.ContainsFunc(v, isControl) {
			return "the title contains control characters or line breaks"
		}
		fm.Title = v
	}
	return ""
}

// describeNode names a YAML value for a warning.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return quote(n.Value)
	}
	return "that value"
}

// frontmatterApplies reports whether a text item of MIME type mt is parsed for
// frontmatter: every text item but YAML, where "---" separates documents.
func frontmatterApplies(isText bool, mt string) bool {
	if !isText {
		return false
	}
	base, _, err := mime.ParseMediaType(mt)
	if err != nil {
		base = strings.ToLower(mt)
	}
	switch base {
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		return false
	}
	return !strings.HasSuffix(base, "+yaml")
}

// callerFields says which frontmatter-fillable fields hold a value the
// caller chose: for those, the caller's value wins over the frontmatter.
type callerFields struct{ title, description, tags, importance bool }

// editCallerFields returns the fields of it whose value neither came from
// its frontmatter nor is the default: an edit keeps those, and the new
// frontmatter sets the others.
func editCallerFields(it *Item) callerFields {
	from := func(f string) bool { return slices.Contains(it.FrontmatterFields, f) }
	return callerFields{
		title:       !from(fieldTitle) && it.Title != baseName(it.Path),
		description: !from(fieldDescription) && it.Description != "",
		tags:        !from(fieldTags) && len(it.Tags) > 0,
		importance:  !from(fieldImportance) && it.Importance != 0,
	}
}

// applyFrontmatter parses content's frontmatter into it: fields the caller
// set keep their value; each other one takes the frontmatter's value, or its
// default when the frontmatter does not declare it. It returns a warning
// naming the item when the frontmatter is malformed.
func applyFrontmatter(it *Item, content []byte, caller callerFields) string {
	var fm Frontmatter
	var warning string
	if opensFrontmatter(content) && frontmatterApplies(it.IsText, it.MimeType) {
		fm, warning = ParseFrontmatter(content)
		if warning != "" {
			warning = it.Ref() + ": " + warning + "."
		}
	}
	it.Loading, it.AgentModification, it.FrontmatterLen = fm.Loading, fm.AgentModification, fm.Len
	it.FrontmatterFields = nil
	if fm.agentModificationSet {
		it.FrontmatterFields = append(it.FrontmatterFields, fieldAgentModification)
	}
	fill := func(field string, chosen, declared bool, set, reset func()) {
		switch {
		case chosen:
		case declared:
			set()
			it.FrontmatterFields = append(it.FrontmatterFields, field)
		default:
			reset()
		}
	}
	fill(fieldTitle, caller.title, fm.Title != "", func() { it.Title = fm.Title }, func() { it.Title = baseName(it.Path) })
	fill(fieldDescription, caller.description, fm.Description != "", func() { it.Description = fm.Description }, func() { it.Description = "" })
	fill(fieldTags, caller.tags, fm.Tags != nil, func() { it.Tags = fm.Tags }, func() { it.Tags = nil })
	fill(fieldImportance, caller.importance, fm.Importance != nil, func() { it.Importance = *fm.Importance }, func() { it.Importance = 0 })
	return warning
}
