package session

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxd/ctxd/vfs"
)

// FuzzEvent checks what Append does to any text before storing it, and that
// an event survives its item's encoding: the text is cut to the bound at a
// rune boundary with the marker, valid UTF-8 without NUL (the tool and refs
// are cleaned the same way), and what is encoded reads back the same.
func FuzzEvent(f *testing.F) {
	f.Add("Fix the flaky test", "Bash", "/home/me/a.go", 300)
	f.Add("---\nkind: note\n---\nnot frontmatter", "", "", 256)
	f.Add(strings.Repeat("é", 200)+"\x00\xff", "Edit", "a\nb", 256)
	f.Add("- [ ] open goal\n- [x] done", "TodoWrite", "", 1024)
	f.Add("0", "\xff", "\x80", 300) // a tool and a ref of invalid UTF-8
	f.Fuzz(func(t *testing.T, text, tool, ref string, max int) {
		max = MinMaxEventBytes + (max%4096+4096)%4096
		got, cut := bound(text, max)
		if len(got) > max || !utf8.ValidString(got) || strings.ContainsRune(got, 0) {
			t.Fatalf("bound(%q, %d) = %q: over the bound, invalid UTF-8 or a NUL", text, max, got)
		}
		if cut != strings.Contains(got, "…[cut ") && !strings.Contains(text, "…[cut ") {
			t.Fatalf("bound(%q, %d) = %q, cut %v: the marker says otherwise", text, max, got, cut)
		}
		e := Event{Kind: KindToolUse, Text: got, Tool: clean(tool), Truncated: cut}
		if ref != "" {
			e.Refs = []string{clean(ref)}
		}
		content, err := e.encode()
		if err != nil {
			t.Fatalf("encode %+v: %v", e, err)
		}
		it := vfs.Item{Drive: Drive, Path: "/p/20261127T101500Z-s/events/e.md", Tags: e.tags()}
		back, err := decodeEvent(it, content)
		if err != nil {
			t.Fatalf("decode of %q: %v", content, err)
		}
		if back.Kind != e.Kind || back.Tool != e.Tool || back.Truncated != e.Truncated || strings.Join(back.Refs, "\x00") != strings.Join(e.Refs, "\x00") ||
			back.Text != strings.TrimSuffix(e.Text, "\n") {
			t.Fatalf("round trip of %+v gave %+v", e, back)
		}
	})
}
