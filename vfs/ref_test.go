package vfs

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in   string
		want Ref
	}{
		{"/notes/a.md", Ref{Drive: "agent", Path: "/notes/a.md"}},
		{"/", Ref{Drive: "agent", Path: "/"}},
		{"disk:/Users/x/foo.md/", Ref{Drive: "disk", Path: "/Users/x/foo.md"}},
		{"disk:", Ref{Drive: "disk", Path: "/"}},
		{"disk:/", Ref{Drive: "disk", Path: "/"}},
		{"google-docs:/1AbC", Ref{Drive: "google-docs", Path: "/1AbC"}},
		{"my_drive2:/a b/ü %_*", Ref{Drive: "my_drive2", Path: "/a b/ü %_*"}},
		{"url:/https://example.com/post/", Ref{Drive: "url", Path: "/https://example.com/post"}},
		{"url:/https://example.com/a//b", Ref{Drive: "url", Path: "/https://example.com/a//b"}},
		{"0190f5a4-8b2c-7d3e-9f10-123456789abc", Ref{ID: "0190f5a4-8b2c-7d3e-9f10-123456789abc"}},
		{"0190F5A4-8B2C-7D3E-9F10-123456789ABC", Ref{ID: "0190f5a4-8b2c-7d3e-9f10-123456789abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRef(tt.in)
			if err != nil {
				t.Fatalf("ParseRef: %v", err)
			}
			if got != tt.want {
				t.Fatalf("ParseRef = %+v, want %+v", got, tt.want)
			}
			again, err := ParseRef(got.String())
			if err != nil || again != got {
				t.Fatalf("round trip via %q = %+v, %v", got.String(), again, err)
			}
		})
	}
}

func TestParseRef_invalid(t *testing.T) {
	tests := map[string]string{
		"empty":             "",
		"uppercase drive":   "Disk:/x",
		"drive digit first": "1disk:/x",
		"drive with dot":    "my.drive:/x",
		"no colon":          "notes/a.md",
		"relative path":     "disk:notes",
		"dotdot":            "/a/../b",
		"dot":               "disk:/a/./b",
		"trailing dotdot":   "/a/..",
		"nul":               "/a\x00b",
		"newline":           "/a\nb",
		"del":               "/a\x7fb",
		"c1 control":        "/a\u0085b",
		"invalid utf8":      "/a\xffb",
		"long path":         "/" + strings.Repeat("a/", 2100),
		"long segment":      "/" + strings.Repeat("a", 256),
		"long drive":        strings.Repeat("d", 65) + ":/x",
		"url dotdot":        "url:/https://x/../y",
		"bare uuid-ish":     "0190f5a4-8b2c-7d3e-9f10-123456789abz",
		"empty drive":       ":/x",
		"drive with space":  "my drive:/x",
		"url nul":           "url:/https://x/\x00",
		"tab in drive path": "disk:/\t",
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseRef(in)
			e := wantErr(t, err, ErrInvalid)
			if strings.ContainsAny(e.Message, "\x00\xff\n\x7f") {
				t.Errorf("message leaks raw bytes: %q", e.Message)
			}
		})
	}
}

func TestCleanPath(t *testing.T) {
	tests := []struct{ drive, in, want string }{
		{"agent", "/", "/"},
		{"agent", "/a/b/", "/a/b"},
		{"agent", "/a%b/_c/*", "/a%b/_c/*"},
		{"agent", "/.hidden/..x/...", "/.hidden/..x/..."},
		{"url", "/https://e.com/", "/https://e.com"},
		{"url", "/https://e.com//", "/https://e.com"},
		{"url", "///", "/"},
		{"url", "/https://e.com/" + strings.Repeat("q", 300), "/https://e.com/" + strings.Repeat("q", 300)},
	}
	for _, tt := range tests {
		t.Run(tt.drive+tt.in, func(t *testing.T) {
			got, err := CleanPath(tt.drive, tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("CleanPath(%q, %q) = %q, %v; want %q", tt.drive, tt.in, got, err, tt.want)
			}
		})
	}
}

// TestParseRef_doubleSlash refuses an empty segment instead of rewriting
// the ref, and shows the ref that was probably meant.
func TestParseRef_doubleSlash(t *testing.T) {
	tests := map[string]string{
		"/a//b":                   "agent:/a/b",
		"disk:/Users/x//foo.md/":  "disk:/Users/x/foo.md",
		"agent://":                "agent:/",
		"//notes":                 "agent:/notes",
		"work:/a/b//":             "work:/a/b",
		"github:/o/r///README.md": "github:/o/r/README.md",
	}
	for in, cleaned := range tests {
		t.Run(in, func(t *testing.T) {
			_, err := ParseRef(in)
			e := wantErr(t, err, ErrInvalid)
			if !strings.Contains(e.Message, "//") || !strings.Contains(e.Hint, quote(cleaned)) {
				t.Errorf("error = %+v, want the message to name // and the hint %s", e, cleaned)
			}
			if _, err := CleanPath(mustRefDrive(in), in[strings.IndexByte(in, '/'):]); !errors.Is(err, ErrInvalid) {
				t.Errorf("CleanPath accepted the path of %s: %v", in, err)
			}
		})
	}
}

// mustRefDrive returns the drive a ref string names, agent for a bare path.
func mustRefDrive(s string) string {
	if drive, _, ok := strings.Cut(s, ":"); ok {
		return drive
	}
	return DefaultDrive
}

func TestValidateDrive(t *testing.T) {
	for _, ok := range []string{"a", "agent", "google-docs", "x_1", strings.Repeat("a", 64)} {
		if err := ValidateDrive(ok); err != nil {
			t.Errorf("ValidateDrive(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "A", "1a", "-a", "a.b", "a/b", "ä", strings.Repeat("a", 65)} {
		wantErr(t, ValidateDrive(bad), ErrInvalid)
	}
}

func TestFormatRef(t *testing.T) {
	if got := FormatRef("disk", "/"); got != "disk:/" {
		t.Errorf("FormatRef root = %q", got)
	}
	if got := FormatRef("disk", ""); got != "disk:/" {
		t.Errorf("FormatRef empty = %q", got)
	}
	if got := FormatRef("agent", "/a/b"); got != "agent:/a/b" {
		t.Errorf("FormatRef = %q", got)
	}
}

func TestParentOf(t *testing.T) {
	tests := map[string]string{
		"/":                "/",
		"/a":               "/",
		"/a/b":             "/a",
		"/https://e.com":   "/https:",
		"/https://e.com/x": "/https://e.com",
	}
	for in, want := range tests {
		if got := parentOf(in); got != want {
			t.Errorf("parentOf(%q) = %q, want %q", in, got, want)
		}
	}
}
