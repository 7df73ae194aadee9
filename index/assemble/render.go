package assemble

import (
	"fmt"
	"strings"
)

// Group headers of the rendered Markdown. Each is counted against the
// budget once, with the first section of its group.
var groupHeaders = map[Kind]string{
	KindAlways:     "## Persistent context\n\n",
	KindContextual: "## Context files for this task\n\n",
	KindChunk:      "## From memory: search results for the task\n\n",
	KindGoals:      "## Open goals from earlier sessions\n\n",
	KindDigest:     "## Earlier sessions\n\n",
}

// render returns a section as Markdown: a "### ref" header with what
// identifies it, then its text. Every part ends with a blank line, so the
// Markdown is the parts concatenated and its token count their sum (the
// tokenizer splits at whitespace).
func render(s Section) string {
	var b strings.Builder
	b.WriteString("### ")
	b.WriteString(s.Ref)
	switch s.Kind {
	case KindContextual:
		fmt.Fprintf(&b, " (matches the task: %s)", strings.Join(s.MatchedTerms, ", "))
	case KindChunk:
		fmt.Fprintf(&b, ", lines %d-%d", s.StartLine, s.EndLine)
		if s.Heading != "" {
			b.WriteString(": ")
			b.WriteString(s.Heading)
		}
	}
	b.WriteString("\n\n")
	b.WriteString(s.Text)
	if !strings.HasSuffix(s.Text, "\n") {
		b.WriteByte('\n')
	}
	// A chunk cut inside a code block would fence in everything after it.
	if f := openFence(s.Text); f != "" {
		b.WriteString(f + "\n")
	}
	b.WriteByte('\n')
	return b.String()
}

// openFence returns the fence (``` or ~~~) of a code block text opens and
// does not close, or "".
func openFence(text string) string {
	fence := ""
	for line := range strings.Lines(text) {
		l := strings.TrimLeft(line, " ")
		if len(line)-len(l) > 3 {
			continue
		}
		l = strings.TrimRight(l, " \t\r\n")
		switch {
		case fence == "" && (strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~")):
			fence = l[:3]
		case fence != "" && strings.HasPrefix(l, fence) && strings.Trim(l, fence[:1]) == "":
			fence = ""
		}
	}
	return fence
}
