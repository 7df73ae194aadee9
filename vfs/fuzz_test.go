package vfs

import (
	"errors"
	"strings"
	"testing"
)

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{
		"", "/", "/a/b", "agent:/x", "disk:", "url:/https://e.com/a//b/", "Disk:/x", "/a/../b",
		"/a\x00", "/a//b", "disk:/x//", "0190f5a4-8b2c-7d3e-9f10-123456789abc", "a:b", "x:/a%_*/ü", "url:///", "/\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseRef(%q) error %v is not an ErrInvalid *Error", s, err)
			}
			return
		}
		again, err := ParseRef(r.String())
		if err != nil || again != r {
			t.Fatalf("ParseRef(%q) = %+v; round trip via %q = %+v, %v", s, r, r.String(), again, err)
		}
		if r.ID == "" {
			// Paths are validated, never rewritten: only a trailing "/" goes.
			if r.Drive != urlDrive && strings.Contains(s, "//") {
				t.Fatalf("ParseRef(%q) = %+v: an empty segment was collapsed, not refused", s, r)
			}
			clean, err := CleanPath(r.Drive, r.Path)
			if err != nil || clean != r.Path {
				t.Fatalf("CleanPath not idempotent: %q -> %q, %v", r.Path, clean, err)
			}
		}
	})
}

func FuzzApplyPatches(f *testing.F) {
	f.Add("1\n2\n3\n", int64(2), int64(2), "x", int64(4), int64(0), "y")
	f.Add("a", int64(1), int64(0), "z", int64(1), int64(1), "")
	f.Add("", int64(1), int64(0), "z\n\n", int64(0), int64(0), "")
	f.Add("a\n\nb", int64(3), int64(3), "", int64(1), int64(0), "\n")
	f.Fuzz(func(t *testing.T, content string, s1, e1 int64, c1 string, s2, e2 int64, c2 string) {
		patches := []Patch{{s1, e1, c1}}
		if s2 != 0 || e2 != 0 || c2 != "" {
			patches = append(patches, Patch{s2, e2, c2})
		}
		out, err := ApplyPatches([]byte(content), patches)
		if err != nil {
			if !errors.Is(err, ErrInvalidPatch) {
				t.Fatalf("error %v is not ErrInvalidPatch", err)
			}
			return
		}
		want := CountLines([]byte(content))
		for _, p := range patches {
			if p.EndLine != 0 {
				want -= p.EndLine - p.StartLine + 1
			}
			want += CountLines([]byte(p.Content))
		}
		if got := CountLines(out); got != want {
			t.Fatalf("ApplyPatches(%q, %+v) = %q: %d lines, want %d", content, patches, out, got, want)
		}
	})
}
