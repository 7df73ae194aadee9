package exporttree

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// ManifestName is the manifest's file name at the export's root. No drive
// can have it as its name (drive names hold no dot).
const ManifestName = "ctxd-manifest.jsonl"

// Format and Version identify a manifest's header.
const (
	Format  = "ctxd-export"
	Version = 1
)

// Header is the manifest's first line.
type Header struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
	// Roots are what was exported: drive roots ("notes:") or a subtree.
	Roots []string `json:"roots"`
}

// Entry is one item of the manifest.
type Entry struct {
	// File is the item's path relative to the export's root, slash-separated.
	File string `json:"file"`
	// Dir is set for an explicit empty-directory placeholder, which is a
	// directory at File.
	Dir bool `json:"dir,omitempty"`
	// Item is the item's metadata as the API's Item message in JSON.
	Item json.RawMessage `json:"item"`
}

// MaxSegment is the longest file name FilePath makes, in bytes (most
// filesystems allow 255).
const MaxSegment = 200

// FilePath returns the slash-separated path, relative to the export's root,
// of the item at drive:/path (path cleaned, starting with "/").
func FilePath(drive, path string) string {
	rest := strings.TrimPrefix(path, "/")
	segs := strings.Split(rest, "/")
	if drive == "url" {
		segs = []string{rest}
	}
	out := make([]string, 0, len(segs)+1)
	out = append(out, drive)
	for _, s := range segs {
		out = append(out, segment(s))
	}
	return strings.Join(out, "/")
}

// segment escapes one path segment into a file name.
func segment(s string) string {
	if s == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' || c == '/' || c == '\\' || c < 0x20 || c == 0x7f || strings.IndexByte(`:*?"<>|`, c) >= 0 {
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(hex.EncodeToString([]byte{c})))
			continue
		}
		b.WriteByte(c)
	}
	name := b.String()
	if len(name) <= MaxSegment {
		return name
	}
	sum := sha256.Sum256([]byte(s))
	tail := "~" + hex.EncodeToString(sum[:8])
	cut := MaxSegment - len(tail)
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	// An escape cut in half would read as another byte.
	if i := strings.LastIndexByte(name[:cut], '%'); i >= 0 && i > cut-3 {
		cut = i
	}
	return name[:cut] + tail
}
