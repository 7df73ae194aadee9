package session

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ctxd/ctxd/vfs"
)

// Drive is the drive sessions live on.
const Drive = "session"

// Where a session's items live under its directory
// session:/PROJECT/STARTED-ID/ (see the package doc).
const (
	recordName = "session.md"
	digestName = "digest.md"
	eventsDir  = "events"
)

// DefaultProject is the project of a session that names none and has no
// working directory.
const DefaultProject = "default"

// stampLayout is a session directory's start time: UTC, to the second, so
// that directories sort by start.
const stampLayout = "20060102T150405Z"

// eventStampLayout is an event name's time: to the microsecond, so events
// sort by time.
const eventStampLayout = "20060102T150405.000000Z"

var (
	idPattern      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	projectPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	// dirPattern is a session directory's name: its start, a dash, its id.
	dirPattern = regexp.MustCompile(`^\d{8}T\d{6}Z-[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
)

// Tags every event carries: "event", and "kind:" with its kind. A digest
// carries "digest" and the summary kind's tag, so a kind filter on
// summaries finds digests too.
const (
	eventTag  = "event"
	digestTag = "digest"
	kindTag   = "kind:"
	tasksTag  = "tasks" // a tool use holding a task list
)

// dirRef is a session's directory.
func dirRef(project, dir string) vfs.Ref {
	return vfs.Ref{Drive: Drive, Path: "/" + project + "/" + dir}
}

func child(dir vfs.Ref, name string) vfs.Ref {
	return vfs.Ref{Drive: Drive, Path: dir.Path + "/" + name}
}

// dirName is the directory name of a session started at t with id.
func dirName(t time.Time, id string) string {
	return t.UTC().Format(stampLayout) + "-" + id
}

// splitDir parses a session directory's name into its start and id.
func splitDir(name string) (started time.Time, id string, ok bool) {
	if !dirPattern.MatchString(name) {
		return time.Time{}, "", false
	}
	t, err := time.Parse(stampLayout, name[:len(stampLayout)])
	if err != nil {
		return time.Time{}, "", false
	}
	return t, name[len(stampLayout)+1:], true
}

// eventName is the name of an event recorded at t: its time, its place in
// its batch (so a batch keeps its order within a microsecond), its kind and
// a random suffix (so two writers never collide).
func eventName(t time.Time, i int, k Kind) string {
	var r [3]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%s-%03d-%s-%x.md", t.UTC().Format(eventStampLayout), i%1000, k, r)
}

// eventTime reads the time an event name starts with.
func eventTime(name string) (time.Time, bool) {
	if len(name) < len(eventStampLayout) {
		return time.Time{}, false
	}
	t, err := time.Parse(eventStampLayout, name[:len(eventStampLayout)])
	return t, err == nil
}

// IsEvent reports whether the item at drive and path is a session event:
// session:/PROJECT/SESSION/events/NAME. Search weighs events by their age
// (their recency), and nothing else.
func IsEvent(drive, p string) bool {
	if drive != Drive {
		return false
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	return len(parts) == 4 && parts[2] == eventsDir
}

// keeps reports whether the item at p (on the session drive) is a session's
// record or digest: what stays when its events expire, and what prune
// leaves alone.
func keeps(p string) bool {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	return len(parts) == 3 && (parts[2] == recordName || parts[2] == digestName)
}

// Keeps reports whether the item at drive and path is a session's record
// or digest, which outlive the session's events and which prune leaves
// alone.
func Keeps(drive, p string) bool { return drive == Drive && keeps(p) }

// ProjectFromDir names the project of a working directory: the base name
// of its git repository's root (the nearest directory up that holds .git),
// or of dir itself outside a repository, lowercased, with every character
// outside a-z0-9._- made "-". It is DefaultProject for an empty dir or one
// whose name keeps nothing.
func ProjectFromDir(dir string) string {
	if dir == "" {
		return DefaultProject
	}
	dir = filepath.Clean(dir)
	root := dir
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			root = d
			break
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	return projectName(filepath.Base(root))
}

// projectName turns a directory's base name into a project name.
func projectName(base string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), ".-_")
	if len(name) > 64 {
		name = strings.Trim(name[:64], ".-_")
	}
	if name == "" {
		return DefaultProject
	}
	return name
}

// parsePath splits a path on the session drive into its project, its
// session directory's name and the rest ("" for the directory itself).
func parsePath(p string) (project, dir, rest string, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 3)
	if len(parts) < 2 || !projectPattern.MatchString(parts[0]) || !dirPattern.MatchString(parts[1]) {
		return "", "", "", false
	}
	if len(parts) == 3 {
		rest = parts[2]
	}
	return parts[0], parts[1], rest, true
}
