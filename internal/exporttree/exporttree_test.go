package exporttree

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestFilePath(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	for _, tc := range []struct{ drive, path, want string }{
		{"notes", "/a.md", "notes/a.md"},
		{"notes", "/naïve café/日本語.md", "notes/naïve café/日本語.md"},
		{"notes", "/100%/a:b?c*.md", "notes/100%25/a%3Ab%3Fc%2A.md"},
		{"notes", "/tab\there", "notes/tab%09here"},
		{"url", "/https://example.com/a?b=c", "url/https%3A%2F%2Fexample.com%2Fa%3Fb=c"},
		{"url", "/https://example.com", "url/https%3A%2F%2Fexample.com"},
	} {
		if got := FilePath(tc.drive, tc.path); got != tc.want {
			t.Errorf("FilePath(%s, %q) = %q, want %q", tc.drive, tc.path, got, tc.want)
		}
	}
	a, b := FilePath("notes", "/"+long+"a"), FilePath("notes", "/"+long+"b")
	if a == b || len(filepath.Base(a)) > MaxSegment || len(filepath.Base(b)) > MaxSegment {
		t.Errorf("long segments: %q and %q (want distinct names of at most %d bytes)", a, b, MaxSegment)
	}
	if got := FilePath("notes", "/"+strings.Repeat("%", 100)); len(filepath.Base(got)) > MaxSegment || strings.Contains(got[len(got)-20:], "%2~") {
		t.Errorf("a long escaped segment = %q", got)
	}
}

// TestFilePath_OneToOne checks that refs differing in the bytes that are
// escaped, and in empty segments, get different files.
func TestFilePath_OneToOne(t *testing.T) {
	seen := map[string]string{}
	for _, p := range []string{"/a:b", "/a%3Ab", "/a%b", "/a%25b", "/a/b", "/a%2Fb", "/x", "/https:", "/https://x", "/https:/x"} {
		for _, d := range []string{"notes", "url"} {
			f := FilePath(d, p)
			if other, ok := seen[f]; ok {
				t.Errorf("%s:%s and %s map to one file %q", d, p, other, f)
			}
			seen[f] = d + ":" + p
		}
	}
}
