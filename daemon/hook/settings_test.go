package hook_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/daemon/hook"
)

const testCommand = "/opt/ctxd/bin/ctxd hook claude-code"

// userSettings is a settings file as Claude Code writes it (two-space
// JSON), with the user's own hooks beside other settings.
const userSettings = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "Read(~/.zshrc)"
    ],
    "deny": []
  },
  "env": {
    "BASH_DEFAULT_TIMEOUT_MS": "120000"
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Write|Edit",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \"$CLAUDE_PROJECT_DIR\"",
            "timeout": 30
          }
        ]
      }
    ],
    "Notification": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send 'Claude Code' 'needs you'"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "echo \"branch: $(git branch --show-current)\""
          }
        ]
      }
    ]
  },
  "includeCoAuthoredBy": false
}
`

func writeSettings(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func entries() []hook.Entry {
	return hook.Entries(testCommand, hook.Events, hook.DefaultWait, hook.DefaultDeadline)
}

// settingsHooks decodes a settings file's hooks.
type settingsHooks struct {
	Hooks map[string][]struct {
		Matcher *string `json:"matcher"`
		Hooks   []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int    `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

func readHooks(t *testing.T, path string) settingsHooks {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s settingsHooks
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s is not valid JSON after the change: %v\n%s", path, err, data)
	}
	return s
}

// ctxdCommands counts the ctxd commands per event.
func ctxdCommands(s settingsHooks) map[string]int {
	n := map[string]int{}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if hook.IsCtxdCommand(h.Command) {
					n[ev]++
				}
			}
		}
	}
	return n
}

// checkInstalled: every event has exactly one ctxd command, in a group of
// its own at the end of the event's list, with no matcher but "*" for the
// tool events, a timeout above the hook's own bound, and type command.
func checkInstalled(t *testing.T, path, command string) {
	t.Helper()
	s := readHooks(t, path)
	for _, ev := range hook.Events {
		groups := s.Hooks[ev]
		if n := ctxdCommands(s)[ev]; n != 1 || len(groups) == 0 {
			t.Errorf("%s: %d ctxd commands", ev, n)
			continue
		}
		g := groups[len(groups)-1]
		if len(g.Hooks) != 1 || g.Hooks[0].Command != command || g.Hooks[0].Type != "command" {
			t.Errorf("%s: last group %+v", ev, g)
		}
		wantMatcher := ""
		if ev == hook.PostToolUse || ev == hook.PostToolUseFailure {
			wantMatcher = "*"
		}
		if (g.Matcher == nil) != (wantMatcher == "") || g.Matcher != nil && *g.Matcher != wantMatcher {
			t.Errorf("%s: matcher %v, want %q", ev, g.Matcher, wantMatcher)
		}
		bound := hook.DefaultDeadline
		if ev == hook.SessionStart {
			bound += hook.DefaultWait
		}
		if time.Duration(g.Hooks[0].Timeout)*time.Second <= bound {
			t.Errorf("%s: host timeout %ds is not above the hook's bound %s", ev, g.Hooks[0].Timeout, bound)
		}
	}
}

func backups(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".ctxd-backup-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestInstall_FreshFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", ".claude", "settings.json")
	res, err := hook.Install(path, entries())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.Backup != "" || res.Added != len(hook.Events) || res.Path != path {
		t.Errorf("result %+v", res)
	}
	checkInstalled(t, path, testCommand)
	data, _ := os.ReadFile(path)
	var indented bytes.Buffer
	json.Indent(&indented, data, "", "  ")
	if indented.String() != string(data) {
		t.Errorf("a new file is not two-space JSON:\n%s", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if b := backups(t, path); len(b) != 0 {
		t.Errorf("backups of a new file: %v", b)
	}
	// Uninstall leaves the now empty settings, and installs again cleanly.
	if res, err := hook.Uninstall(path); err != nil || !res.Changed || res.Removed != len(hook.Events) {
		t.Errorf("uninstall: %+v %v", res, err)
	}
	if data, _ := os.ReadFile(path); string(data) != "{}\n" {
		t.Errorf("after uninstall: %q", data)
	}
}

// TestInstall_KeepsTheUsersFile: the user's hooks and settings stay byte
// for byte, ctxd's are appended in the file's style; a second install
// changes nothing; uninstall restores the original bytes.
func TestInstall_KeepsTheUsersFile(t *testing.T) {
	path := writeSettings(t, userSettings)
	res, err := hook.Install(path, entries())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.Added != len(hook.Events) || len(backups(t, path)) != 1 || res.Backup != backups(t, path)[0] {
		t.Errorf("result %+v, backups %v", res, backups(t, path))
	}
	if b, _ := os.ReadFile(res.Backup); string(b) != userSettings {
		t.Errorf("backup differs from the original")
	}
	checkInstalled(t, path, testCommand)
	data, _ := os.ReadFile(path)
	// Still two-space JSON as Claude Code writes it.
	var indented bytes.Buffer
	json.Indent(&indented, data, "", "  ")
	if indented.String() != string(data) {
		t.Errorf("not in the file's style:\n%s", data)
	}
	// Everything but hooks is as it was; the user's hooks come first, unchanged.
	var before, after map[string]any
	json.Unmarshal([]byte(userSettings), &before)
	json.Unmarshal(data, &after)
	for k, v := range before {
		if k != "hooks" && !reflect.DeepEqual(after[k], v) {
			t.Errorf("%s changed: %v -> %v", k, v, after[k])
		}
	}
	for ev, groups := range before["hooks"].(map[string]any) {
		got := after["hooks"].(map[string]any)[ev].([]any)
		if !reflect.DeepEqual(got[:len(groups.([]any))], groups) {
			t.Errorf("%s: the user's hooks changed", ev)
		}
	}
	// The original text is a prefix of the new one up to where hooks were added.
	if !strings.HasPrefix(string(data), userSettings[:strings.Index(userSettings, `    "Notification"`)-len("      }\n    ],\n")]) {
		t.Errorf("bytes before the first change moved:\n%s", data)
	}

	again, err := hook.Install(path, entries())
	if err != nil || again.Changed || again.Backup != "" || again.Removed != len(hook.Events) || again.Added != len(hook.Events) {
		t.Errorf("second install: %+v %v", again, err)
	}
	if d, _ := os.ReadFile(path); !bytes.Equal(d, data) || len(backups(t, path)) != 1 {
		t.Errorf("second install changed the file or backed it up again")
	}

	un, err := hook.Uninstall(path)
	if err != nil || !un.Changed || un.Removed != len(hook.Events) || un.Backup == "" {
		t.Errorf("uninstall: %+v %v", un, err)
	}
	if d, _ := os.ReadFile(path); string(d) != userSettings {
		t.Errorf("uninstall did not restore the file:\n%s", d)
	}
	if un, err := hook.Uninstall(path); err != nil || un.Changed {
		t.Errorf("second uninstall: %+v %v", un, err)
	}
}

// TestInstall_ReplacesAMovedBinary: ctxd's hooks written with another path
// (the binary moved, other options) are replaced, not duplicated.
func TestInstall_ReplacesAMovedBinary(t *testing.T) {
	path := writeSettings(t, userSettings)
	if _, err := hook.Install(path, hook.Entries("'/old place/ctxd' --socket /run/x.sock hook claude-code --budget 500", hook.Events, time.Second, time.Second)); err != nil {
		t.Fatal(err)
	}
	res, err := hook.Install(path, entries())
	if err != nil || !res.Changed || res.Removed != len(hook.Events) {
		t.Fatalf("%+v %v", res, err)
	}
	checkInstalled(t, path, testCommand)
	if strings.Contains(string(must(os.ReadFile(path))), "/old place/") {
		t.Error("the old command survived")
	}
}

// TestUninstall_OnlyCtxd: a ctxd command the user put in a group of their
// own goes, the group and its other hook stay; commands that only look
// alike stay.
func TestUninstall_OnlyCtxd(t *testing.T) {
	path := writeSettings(t, `{
    "hooks": {
        "Stop": [
            {
                "hooks": [
                    { "type": "command", "command": "say done" },
                    { "type": "command", "command": "~/bin/ctxd hook claude-code" }
                ]
            }
        ],
        "PreCompact": [
            { "hooks": [ { "type": "command", "command": "ctxd-backup hook claude-code" } ] },
            { "hooks": [ { "type": "command", "command": "ctxd hook other-host" } ] }
        ]
    }
}`)
	res, err := hook.Uninstall(path)
	if err != nil || res.Removed != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	want := `{
    "hooks": {
        "Stop": [
            {
                "hooks": [
                    { "type": "command", "command": "say done" }
                ]
            }
        ],
        "PreCompact": [
            { "hooks": [ { "type": "command", "command": "ctxd-backup hook claude-code" } ] },
            { "hooks": [ { "type": "command", "command": "ctxd hook other-host" } ] }
        ]
    }
}`
	if got := string(must(os.ReadFile(path))); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestInstall_FollowsTheFilesIndent: a four-space file gets four-space
// hooks; a one-line file stays valid.
func TestInstall_FollowsTheFilesIndent(t *testing.T) {
	var four bytes.Buffer
	json.Indent(&four, []byte(userSettings), "", "    ")
	path := writeSettings(t, four.String()+"\n")
	if _, err := hook.Install(path, entries()); err != nil {
		t.Fatal(err)
	}
	data := must(os.ReadFile(path))
	var re bytes.Buffer
	json.Indent(&re, data, "", "    ")
	if re.String() != string(data) {
		t.Errorf("not four-space JSON:\n%s", data)
	}
	checkInstalled(t, path, testCommand)

	path = writeSettings(t, `{"model":"opus","hooks":{}}`)
	if _, err := hook.Install(path, entries()); err != nil {
		t.Fatal(err)
	}
	checkInstalled(t, path, testCommand)
	if res, err := hook.Uninstall(path); err != nil || !res.Changed {
		t.Fatalf("%+v %v", res, err)
	}
	var v map[string]any
	if err := json.Unmarshal(must(os.ReadFile(path)), &v); err != nil || v["model"] != "opus" {
		t.Errorf("after uninstall: %v %v", v, err)
	}
}

// TestInstall_Malformed: a file Claude Code could not read is reported
// with where it breaks, and nothing is written.
func TestInstall_Malformed(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"syntax", "{\n  \"model\": \"opus\",\n  \"hooks\": {\n}\n", "line 5"},
		{"trailing comma", "{\n  \"model\": \"opus\",\n}\n", "line 3, column 1"},
		{"comment", "// mine\n{}\n", "line 1, column 1"},
		{"not an object", "[]\n", "not a JSON object"},
		{"hooks not an object", `{"hooks": ["x"]}`, `"hooks" is not an object`},
		{"event not a list", `{"hooks": {"Stop": {"hooks": []}}}`, `"hooks.Stop" is not a list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeSettings(t, tt.content)
			_, err := hook.Install(path, entries())
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "nothing was changed") {
				t.Errorf("error %v, want one naming %s and %q", err, path, tt.want)
			}
			if got := string(must(os.ReadFile(path))); got != tt.content {
				t.Errorf("file changed to %q", got)
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Errorf("files left beside it: %v", entries)
			}
		})
	}
}

// TestInstall_ThroughSymlink: a settings file linked from a dotfiles
// repository is changed where it lives, and the link stays a link.
func TestInstall_ThroughSymlink(t *testing.T) {
	target := writeSettings(t, userSettings)
	link := filepath.Join(t.TempDir(), "settings.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	res, err := hook.Install(link, entries())
	if err != nil || res.Path != target {
		t.Fatalf("%+v %v", res, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	checkInstalled(t, target, testCommand)
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode changed to %v", fi.Mode())
	}
}

// TestEventsFor: PostToolUseFailure only for a Claude Code that knows it
// (an older one would reject the whole settings file), every event when
// the version is unknown.
func TestEventsFor(t *testing.T) {
	without := slices.DeleteFunc(slices.Clone(hook.Events), func(e string) bool { return e == hook.PostToolUseFailure })
	for version, want := range map[string][]string{
		"2.1.50 (Claude Code)":  hook.Events,
		"2.1.0 (Claude Code)":   hook.Events,
		"10.0.1":                hook.Events,
		"2.0.77 (Claude Code)":  without,
		"1.0.88 (Claude Code)":  without,
		"":                      hook.Events,
		"claude: command found": hook.Events,
	} {
		if got := hook.EventsFor(version); !slices.Equal(got, want) {
			t.Errorf("EventsFor(%q) = %v", version, got)
		}
	}
	if len(hook.Events) != 7 {
		t.Errorf("EventsFor changed Events: %v", hook.Events)
	}
}

func TestIsCtxdCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"ctxd hook claude-code":                                   true,
		"/home/me/.local/bin/ctxd hook claude-code --budget 3000": true,
		"'/Applications/My Tools/ctxd' hook claude-code":          true,
		"/usr/bin/ctxd --socket /run/ctxd.sock hook claude-code":  true,
		"ctxd hook install claude-code":                           false,
		"ctxd-lint hook claude-code":                              false,
		"ctxd hook codex":                                         false,
		"prettier --write":                                        false,
	} {
		if got := hook.IsCtxdCommand(cmd); got != want {
			t.Errorf("IsCtxdCommand(%q) = %v", cmd, got)
		}
	}
}

func TestSettingsPath(t *testing.T) {
	t.Setenv("HOME", "/home/me")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	for _, tt := range []struct {
		scope hook.Scope
		want  string
	}{
		{hook.ScopeUser, "/home/me/.claude/settings.json"},
		{hook.ScopeProject, "/src/app/.claude/settings.json"},
		{hook.ScopeLocal, "/src/app/.claude/settings.local.json"},
	} {
		if got, err := hook.SettingsPath(tt.scope, "/src/app"); err != nil || got != tt.want {
			t.Errorf("%s: %q %v", tt.scope, got, err)
		}
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "/cfg/claude")
	if got, _ := hook.SettingsPath(hook.ScopeUser, ""); got != "/cfg/claude/settings.json" {
		t.Errorf("with CLAUDE_CONFIG_DIR: %q", got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
