package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocs_Links: every relative link in README.md and docs/*.md names a
// file or directory that exists and, with #anchor, a heading of that
// markdown file whose GitHub slug is the anchor.
func TestDocs_Links(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	if len(files) < 2 {
		t.Fatalf("no docs pages beside the README: %v", files)
	}
	for _, problem := range brokenLinks(t, files) {
		t.Error(problem)
	}
}

// TestDocs_LinksCheckerFindsBrokenOnes keeps TestDocs_Links able to fail: a
// missing file, a missing heading in another file and in the same file are
// each reported; links to headings that exist, web links and links in code
// are not.
func TestDocs_LinksCheckerFindsBrokenOnes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("b.md", "# B page\n\n## Tokens, scopes: and `the` socket\n\n## Tokens, scopes: and `the` socket\n")
	a := write("a.md", "# A\n\n## Five-minute tour\n\n"+
		"[ok](b.md#tokens-scopes-and-the-socket) [ok](b.md#tokens-scopes-and-the-socket-1) [ok](#five-minute-tour)\n"+
		"[ok](b.md) [ok](https://example.com/x.md#nope) [`[ok]`](#a)\n"+
		"`[code](nope.md)`\n```sh\n[code](nope.md)\n```\n"+
		"[bad](missing.md) [bad](b.md#no-such-heading) [bad](#no-such-heading-here)\n")
	got := brokenLinks(t, []string{a})
	for _, want := range []string{"missing.md", "b.md#no-such-heading", "#no-such-heading-here"} {
		if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, "("+want+")") }) {
			t.Errorf("the broken link %s is not reported: %q", want, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d problems, want 3: %q", len(got), got)
	}
}

var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`\n]*`")
)

// brokenLinks returns one line per relative link of the markdown files that
// does not resolve.
func brokenLinks(t *testing.T, files []string) []string {
	t.Helper()
	var problems []string
	slugs := map[string][]string{} // file -> its headings' slugs
	headingsOf := func(path string) []string {
		if s, ok := slugs[path]; ok {
			return s
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := headingSlugs(string(text))
		slugs[path] = s
		return s
	}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range proseLines(string(text)) {
			for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(resolved); err != nil {
						problems = append(problems, file+":"+strconv.Itoa(i+1)+": ("+target+"): no such file")
						continue
					}
				}
				if anchor != "" && !slices.Contains(headingsOf(resolved), anchor) {
					problems = append(problems, file+":"+strconv.Itoa(i+1)+": ("+target+"): no heading with that slug in "+resolved)
				}
			}
		}
	}
	return problems
}

// proseLines returns the file's lines with those inside fenced code blocks
// blanked, so that line numbers stay the file's.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingSlugs returns the anchors GitHub gives the file's headings: lower
// case, punctuation dropped, spaces as hyphens, "-1", "-2", ... after a
// repeated one.
func headingSlugs(text string) []string {
	var out []string
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		hashes := len(line) - len(strings.TrimLeft(line, "#"))
		if hashes == 0 || hashes > 6 || !strings.HasPrefix(line[hashes:], " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(line[hashes:])) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out = append(out, slug+"-"+strconv.Itoa(n))
		} else {
			out = append(out, slug)
		}
		seen[slug]++
	}
	return out
}
