package ingest

import (
	"net/url"
	"path/filepath"
	"strings"
)

// Natural drives of ingested sources.
const (
	DriveDisk   = "disk"
	DriveURL    = "url"
	DriveGitHub = "github"
)

// rawGitHubBase serves GitHub file contents; file URLs are fetched from it.
const rawGitHubBase = "https://raw.githubusercontent.com/"

// source is one thing to ingest and where it goes in the store.
type source struct {
	file     string // absolute file or directory path; "" for URLs
	fetchURL string // what to GET for URLs
	drive    string
	path     string // the item path (for a directory: its root)
}

// IsURL tells URLs from file paths in Add's sources and in items' SourceURL.
// Schemes are case-insensitive.
func IsURL(s string) bool {
	hasPrefix := func(p string) bool { return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) }
	return hasPrefix("http://") || hasPrefix("https://")
}

// classify turns one Add source into a source: an absolute path goes to the
// disk drive under the same path, a GitHub file URL to the github drive as
// /<owner>/<repo>/<path>, any other http(s) URL to the url drive with the URL
// (fragment dropped) as its path. drive, if set, overrides the drive.
func classify(raw, drive string) (source, error) {
	var s source
	switch {
	case IsURL(raw):
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return s, newError(ErrInvalid, raw, "pass an absolute http(s) URL such as https://example.com/page",
				"%q is not a valid URL.", raw)
		}
		u.Fragment, u.RawFragment = "", ""
		s.fetchURL, s.drive, s.path = u.String(), DriveURL, "/"+u.String()
		if p, raw, ok := gitHubFile(u); ok {
			s.fetchURL, s.drive, s.path = raw, DriveGitHub, p
		}
	case filepath.IsAbs(raw):
		s.file = filepath.Clean(raw)
		s.drive, s.path = DriveDisk, filepath.ToSlash(s.file)
	case strings.Contains(raw, "://"):
		return s, newError(ErrInvalid, raw, "ingest files by absolute path or web pages by http(s) URL",
			"%q: only http and https URLs can be fetched.", raw)
	default:
		return s, newError(ErrInvalid, raw, "send an absolute path; `ctxd add` resolves relative paths against its working directory",
			"%q is a relative path, and the daemon's working directory is not the caller's.", raw)
	}
	if drive != "" {
		s.drive = drive
		if s.file == "" && drive != DriveURL {
			// Only the url drive keeps a URL's "//"; vfs refuses empty segments elsewhere.
			for strings.Contains(s.path, "//") {
				s.path = strings.ReplaceAll(s.path, "//", "/")
			}
		}
	}
	return s, nil
}

// gitHubFile maps github.com/<owner>/<repo>/blob/<ref>/<path> and
// raw.githubusercontent.com/<owner>/<repo>/<ref>/<path> to the item path
// /<owner>/<repo>/<path> and the raw content URL. The branch or commit is
// kept only in the raw URL, so the item's path stays stable across branches.
func gitHubFile(u *url.URL) (itemPath, rawURL string, ok bool) {
	segs := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
	switch {
	case u.Host == "github.com" && len(segs) >= 5 && segs[2] == "blob":
		owner, repo, ref, rest := segs[0], segs[1], segs[3], segs[4:]
		return "/" + owner + "/" + repo + "/" + strings.Join(rest, "/"),
			rawGitHubBase + owner + "/" + repo + "/" + ref + "/" + strings.Join(rest, "/"), true
	case u.Host == "raw.githubusercontent.com" && len(segs) >= 4:
		owner, repo, rest := segs[0], segs[1], segs[3:]
		return "/" + owner + "/" + repo + "/" + strings.Join(rest, "/"), u.String(), true
	}
	return "", "", false
}
