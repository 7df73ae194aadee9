package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailscale/hujson"
)

// Scope names a Claude Code settings file.
type Scope string

// The settings files Claude Code reads hooks from.
const (
	// ScopeUser is ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json
	// when set): every project of this user.
	ScopeUser Scope = "user"
	// ScopeProject is .claude/settings.json in the project: shared with
	// everyone who works on it (committed).
	ScopeProject Scope = "project"
	// ScopeLocal is .claude/settings.local.json in the project: this user
	// on this machine only (not committed).
	ScopeLocal Scope = "local"
)

// SettingsPath is the settings file of scope; dir is the project's
// directory for ScopeProject and ScopeLocal.
func SettingsPath(scope Scope, dir string) (string, error) {
	switch scope {
	case ScopeUser:
		if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
			return filepath.Join(d, "settings.json"), nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the user settings: %w", err)
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	case ScopeProject:
		return filepath.Join(dir, ".claude", "settings.json"), nil
	case ScopeLocal:
		return filepath.Join(dir, ".claude", "settings.local.json"), nil
	}
	return "", fmt.Errorf("unknown settings scope %q", scope)
}

// Entry is one hook Install registers: a command hook for Event.
type Entry struct {
	Event string
	// Matcher filters tool events by tool name; empty registers no
	// matcher, so that the hook runs for every source and reason.
	Matcher string
	Command string
	// Timeout is the host's limit for the command, in seconds.
	Timeout int
}

// hostMargin is added to the hook's own bound to make the host's timeout:
// the hook always ends first.
const hostMargin = 5 * time.Second

// Entries are ctxd's hooks, each running command: one per event of
// events (Events, or EventsFor the host's version). SessionStart and the
// other lifecycle events get no matcher (a matcher such as
// "startup|resume" would skip a source the host adds later: clear,
// compact, an IDE's own), the tool events the matcher "*" (every tool).
// The host's timeout is the hook's own bound plus hostMargin: deadline for
// every event, wait + deadline for SessionStart.
func Entries(command string, events []string, wait, deadline time.Duration) []Entry {
	secs := func(d time.Duration) int { return int(math.Ceil((d + hostMargin).Seconds())) }
	var out []Entry
	for _, ev := range events {
		e := Entry{Event: ev, Command: command, Timeout: secs(deadline)}
		switch ev {
		case SessionStart:
			e.Timeout = secs(wait + deadline)
		case PostToolUse, PostToolUseFailure:
			e.Matcher = "*"
		}
		out = append(out, e)
	}
	return out
}

// minFailureVersion is the oldest Claude Code release EventsFor registers
// PostToolUseFailure for. Releases before the event existed reject a
// settings file that names an event they do not know, whole (and every
// other setting in it with it); later ones ignore unknown events.
var minFailureVersion = [3]int{2, 1, 0}

var versionPattern = regexp.MustCompile(`^\s*v?(\d+)\.(\d+)\.(\d+)`)

// EventsFor returns the events to register for the Claude Code whose
// `claude --version` printed version ("2.1.50 (Claude Code)"): Events,
// without PostToolUseFailure for a release older than 2.1.0.
// An empty or unreadable version (no claude on PATH, an IDE's own) gets
// every event, as current releases know them all.
func EventsFor(version string) []string {
	m := versionPattern.FindStringSubmatch(version)
	if m == nil {
		return Events
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	if slices.Compare(v[:], minFailureVersion[:]) >= 0 {
		return Events
	}
	return slices.DeleteFunc(slices.Clone(Events), func(ev string) bool { return ev == PostToolUseFailure })
}

// IsCtxdCommand reports whether a hook command runs `ctxd hook
// claude-code`: a word whose base name is ctxd (quoted or not, any path),
// later the words hook and claude-code. Install replaces such commands and
// Uninstall removes them, wherever the binary was when they were written.
func IsCtxdCommand(command string) bool {
	words := strings.Fields(command)
	sawCtxd := false
	for i, w := range words {
		if filepath.Base(strings.Trim(w, `'"`)) == "ctxd" {
			sawCtxd = true
		}
		if sawCtxd && w == "hook" && i+1 < len(words) && words[i+1] == "claude-code" {
			return true
		}
	}
	return false
}

// Result is what Install or Uninstall did.
type Result struct {
	// Path is the settings file (symlinks resolved: the file written).
	Path string
	// Changed is false when the file already said what was asked.
	Changed bool
	// Backup is the copy of the file before the change; empty when nothing
	// changed or there was no file.
	Backup string
	// Removed and Added count ctxd's hook commands.
	Removed, Added int
}

// Install merges entries into the settings file at path, creating it (and
// its directory) when absent: ctxd's hooks already there are replaced, the
// user's own hooks and every other setting are kept byte for byte, with
// the entries added at the end of each event's list, indented as the file
// is. Installing twice changes nothing the second time. Before changing a
// file Install copies it to PATH.ctxd-backup-TIME; it writes atomically
// (a temp file, fsync, rename) through a symlinked path to its target. A
// file that is not a JSON object, or whose hooks are not shaped as Claude
// Code reads them, is an error and nothing is written.
func Install(path string, entries []Entry) (Result, error) {
	return edit(path, func(root *hujson.Value, indent string) (removed, added int, err error) {
		removed = removeCtxd(root)
		for _, e := range entries {
			if err := addEntry(root, indent, e); err != nil {
				return 0, 0, err
			}
			added++
		}
		return removed, added, nil
	})
}

// Uninstall removes ctxd's hooks from the settings file at path, and the
// event lists and hooks object that only they filled; everything else
// stays byte for byte. A missing file, or one without ctxd's hooks, is left
// alone.
func Uninstall(path string) (Result, error) {
	return edit(path, func(root *hujson.Value, _ string) (int, int, error) {
		return removeCtxd(root), 0, nil
	})
}

// edit applies change to the settings file at path and writes it back when
// it changed.
func edit(path string, change func(root *hujson.Value, indent string) (removed, added int, err error)) (Result, error) {
	res := Result{Path: path}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		res.Path = real
	} else if !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("settings file %s: %w", path, err)
	}
	data, err := os.ReadFile(res.Path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("read settings file %s: %w", res.Path, err)
	}
	src := data
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	}
	if err := checkSettings(src); err != nil {
		return res, fmt.Errorf("settings file %s %v; fix it or move it away (nothing was changed)", res.Path, err)
	}
	root, err := hujson.Parse(src)
	if err != nil { // checkSettings accepted it: cannot happen
		return res, fmt.Errorf("settings file %s: %w", res.Path, err)
	}
	if res.Removed, res.Added, err = change(&root, detectIndent(src)); err != nil {
		return res, fmt.Errorf("settings file %s: %w; fix it or move it away (nothing was changed)", res.Path, err)
	}
	out := root.Pack()
	if bytes.Equal(out, data) || !exists && res.Added == 0 {
		return res, nil
	}
	res.Changed = true
	mode := fs.FileMode(0o600) // settings may hold credentials in env
	if exists {
		fi, err := os.Stat(res.Path)
		if err != nil {
			return res, err
		}
		mode = fi.Mode().Perm()
		if res.Backup, err = backup(res.Path, data, mode); err != nil {
			return res, err
		}
	} else if err := os.MkdirAll(filepath.Dir(res.Path), 0o755); err != nil {
		return res, fmt.Errorf("create %s: %w", filepath.Dir(res.Path), err)
	}
	if err := writeAtomic(res.Path, out, mode); err != nil {
		return res, fmt.Errorf("write settings file %s: %w", res.Path, err)
	}
	return res, nil
}

// checkSettings requires standard JSON (Claude Code reads the file with a
// strict parser) whose top is an object, saying where it is not.
func checkSettings(data []byte) error {
	var top any
	err := json.Unmarshal(data, &top)
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		off := syn.Offset - 1 // just past the bad byte; at the end, the end
		if syn.Offset >= int64(len(data)) {
			off = int64(len(data))
		}
		line, col := position(data, max(off, 0))
		return fmt.Errorf("is not valid JSON (line %d, column %d: %v)", line, col, syn)
	case err != nil:
		return fmt.Errorf("is not valid JSON: %v", err)
	}
	if _, ok := top.(map[string]any); !ok {
		return errors.New("is not a JSON object")
	}
	return nil
}

// position is the 1-based line and column of the byte at offset.
func position(data []byte, offset int64) (line, col int) {
	before := data[:min(int(offset), len(data))]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// detectIndent is one level of the file's indentation: the leading
// whitespace of its first indented line, two spaces (Claude Code's own)
// when it has none.
func detectIndent(data []byte) string {
	for _, line := range bytes.Split(data, []byte("\n"))[1:] {
		body := bytes.TrimLeft(line, " \t")
		if len(body) > 0 && len(body) < len(line) {
			return string(line[:len(line)-len(body)])
		}
	}
	return "  "
}

// name is an object member's name.
func name(m *hujson.ObjectMember) string { return m.Name.Value.(hujson.Literal).String() }

// member finds key in obj.
func member(obj *hujson.Object, key string) *hujson.Value {
	for i := range obj.Members {
		if name(&obj.Members[i]) == key {
			return &obj.Members[i].Value
		}
	}
	return nil
}

// lineIndent is the indentation an Extra ends with: what follows its last
// newline; ok is false when it has none.
func lineIndent(e hujson.Extra) (string, bool) {
	i := bytes.LastIndexByte(e, '\n')
	if i < 0 {
		return "", false
	}
	return string(e[i+1:]), true
}

// removeCtxd removes ctxd's hook commands from every event, then the
// groups, event lists and hooks object they leave empty, and returns how
// many commands it removed. Values not shaped as Claude Code reads hooks
// are left alone: they hold no command Install wrote.
func removeCtxd(root *hujson.Value) int {
	top := root.Value.(*hujson.Object)
	hooks := member(top, "hooks")
	if hooks == nil {
		return 0
	}
	events, ok := hooks.Value.(*hujson.Object)
	if !ok {
		return 0
	}
	removed := 0
	events.Members = dropMembers(events.Members, func(ev *hujson.ObjectMember) bool {
		groups, ok := ev.Value.Value.(*hujson.Array)
		if !ok {
			return false
		}
		before := removed
		groups.Elements = dropElements(groups.Elements, func(g *hujson.Value) bool {
			obj, ok := g.Value.(*hujson.Object)
			if !ok {
				return false
			}
			list := member(obj, "hooks")
			if list == nil {
				return false
			}
			cmds, ok := list.Value.(*hujson.Array)
			if !ok {
				return false
			}
			had := len(cmds.Elements)
			cmds.Elements = dropElements(cmds.Elements, isCtxdHook)
			removed += had - len(cmds.Elements)
			return had > 0 && len(cmds.Elements) == 0
		})
		return removed > before && len(groups.Elements) == 0
	})
	if removed > 0 && len(events.Members) == 0 {
		top.Members = dropMembers(top.Members, func(m *hujson.ObjectMember) bool { return name(m) == "hooks" })
		if len(top.Members) == 0 && len(bytes.TrimSpace(top.AfterExtra)) == 0 {
			top.AfterExtra = nil // {} as Install found it in a new file
		}
	}
	return removed
}

// isCtxdHook reports whether a hook object runs IsCtxdCommand.
func isCtxdHook(v *hujson.Value) bool {
	h, ok := v.Value.(*hujson.Object)
	if !ok {
		return false
	}
	c := member(h, "command")
	if c == nil {
		return false
	}
	lit, ok := c.Value.(hujson.Literal)
	return ok && lit.Kind() == '"' && IsCtxdCommand(lit.String())
}

// dropElements removes the elements drop picks. The new last element
// loses the whitespace it had before its comma, which would otherwise
// read as a trailing comma.
func dropElements(elems []hujson.Value, drop func(*hujson.Value) bool) []hujson.Value {
	kept := elems[:0]
	for i := range elems {
		if !drop(&elems[i]) {
			kept = append(kept, elems[i])
		}
	}
	if n := len(kept); n > 0 && n < len(elems) {
		kept[n-1].AfterExtra = nil
	}
	return kept
}

// dropMembers is dropElements for an object's members.
func dropMembers(ms []hujson.ObjectMember, drop func(*hujson.ObjectMember) bool) []hujson.ObjectMember {
	kept := ms[:0]
	for i := range ms {
		if !drop(&ms[i]) {
			kept = append(kept, ms[i])
		}
	}
	if n := len(kept); n > 0 && n < len(ms) {
		kept[n-1].Value.AfterExtra = nil
	}
	return kept
}

// settingsGroup and settingsHook are a group of hooks and one command hook
// as Claude Code's settings hold them, fields in the order its reference
// shows them.
type settingsGroup struct {
	Matcher string         `json:"matcher,omitempty"`
	Hooks   []settingsHook `json:"hooks"`
}

type settingsHook struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

// addEntry appends e's group to hooks.EVENT, creating the hooks object and
// the event's list when absent.
func addEntry(root *hujson.Value, unit string, e Entry) error {
	top := root.Value.(*hujson.Object)
	hooks := member(top, "hooks")
	if hooks == nil {
		hooks = appendMember(top, "", unit, "hooks", "{}")
	}
	events, ok := hooks.Value.(*hujson.Object)
	if !ok {
		return errors.New(`"hooks" is not an object`)
	}
	hooksIndent := memberIndent(top, "hooks", "", unit)
	list := member(events, e.Event)
	if list == nil {
		list = appendMember(events, hooksIndent, unit, e.Event, "[]")
	}
	groups, ok := list.Value.(*hujson.Array)
	if !ok {
		return fmt.Errorf(`"hooks.%s" is not a list`, e.Event)
	}
	group := settingsGroup{Matcher: e.Matcher, Hooks: []settingsHook{{Type: "command", Command: e.Command, Timeout: e.Timeout}}}
	eventIndent := memberIndent(events, e.Event, hooksIndent, unit)
	indent := eventIndent + unit
	if n := len(groups.Elements); n > 0 {
		if in, ok := lineIndent(groups.Elements[n-1].BeforeExtra); ok {
			indent = in
		}
	}
	v, err := formatted(group, indent, unit)
	if err != nil {
		return err
	}
	v.BeforeExtra = hujson.Extra("\n" + indent)
	groups.Elements = append(groups.Elements, v)
	closeOnNewLine(&groups.AfterExtra, eventIndent)
	return nil
}

// memberIndent is the indentation of key's line in obj: that of its name,
// or the parent's plus one unit when it shares a line.
func memberIndent(obj *hujson.Object, key, parent, unit string) string {
	for i := range obj.Members {
		if m := &obj.Members[i]; name(m) == key {
			if in, ok := lineIndent(m.Name.BeforeExtra); ok {
				return in
			}
		}
	}
	return parent + unit
}

// appendMember adds "key": raw at the end of obj, on its own line indented
// like its siblings (or parent plus one unit), and returns its value.
func appendMember(obj *hujson.Object, parent, unit, key, raw string) *hujson.Value {
	indent := parent + unit
	if n := len(obj.Members); n > 0 {
		if in, ok := lineIndent(obj.Members[n-1].Name.BeforeExtra); ok {
			indent = in
		}
	}
	name, _ := hujson.Parse([]byte(fmt.Sprintf("%q", key)))
	name.BeforeExtra = hujson.Extra("\n" + indent)
	value, _ := hujson.Parse([]byte(raw))
	value.BeforeExtra = hujson.Extra(" ")
	obj.Members = append(obj.Members, hujson.ObjectMember{Name: name, Value: value})
	closeOnNewLine(&obj.AfterExtra, parent)
	return &obj.Members[len(obj.Members)-1].Value
}

// closeOnNewLine puts a container's closing bracket on its own line at
// indent, unless it is there already.
func closeOnNewLine(after *hujson.Extra, indent string) {
	if !bytes.Contains(*after, []byte("\n")) {
		*after = hujson.Extra("\n" + indent)
	}
}

// formatted is v as JSON indented for a value whose first line is at
// indent, with nothing around it.
func formatted(v any, indent, unit string) (hujson.Value, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indent, unit)
	if err := enc.Encode(v); err != nil {
		return hujson.Value{}, err
	}
	return hujson.Parse(bytes.TrimSpace(b.Bytes()))
}

// backup copies data, the file at path before a change, beside it as
// PATH.ctxd-backup-TIME (-2, -3, … when that exists).
func backup(path string, data []byte, mode fs.FileMode) (string, error) {
	base := path + ".ctxd-backup-" + time.Now().Format("20060102-150405")
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
	if err := writeAtomic(name, data, mode); err != nil {
		return "", fmt.Errorf("back up %s: %w", path, err)
	}
	return name, nil
}

// writeAtomic writes data to path through a temp file in its directory,
// synced and renamed over path, then syncs the directory: a reader sees
// the old file or the new one, never a part.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // fails harmlessly once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
