package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"

	"github.com/ctxd/ctxd/daemon/hook"
)

// hookFlags are the options of `ctxd hook claude-code`; install writes
// those set on its command line into the hook command.
type hookFlags struct {
	budget, promptBudget int32
	cfg                  hook.Config
}

// register adds the flags to fs; the project option is named project (on
// install, where --project names the settings file, hook-project).
func (f *hookFlags) register(fs *pflag.FlagSet, project string) {
	fs.Int32Var(&f.budget, "budget", hook.DefaultBudget, "token budget of the context injected at SessionStart")
	fs.Int32Var(&f.promptBudget, "prompt-budget", hook.DefaultPromptBudget, "token budget of the context injected for each prompt")
	fs.DurationVar(&f.cfg.Deadline, "deadline", hook.DefaultDeadline, "bound of one event: reading its input and every call to the daemon")
	fs.DurationVar(&f.cfg.Wait, "wait", hook.DefaultWait, "how long a SessionStart waits for a daemon that is starting (0: never)")
	fs.StringVar(&f.cfg.Project, project, "", "the sessions' project (default: derived by the daemon from the host's working directory)")
}

func (c *cli) hookCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Capture agent sessions from their host's hooks and hand context back (Claude Code)",
		Long: `Agent hosts run ctxd as a hook on their events: ctxd records the session (prompts,
tool uses, errors, files changed) through the daemon and hands the next session
what it should know. "ctxd hook install claude-code" registers the hooks in
Claude Code's settings; Claude Code then runs "ctxd hook claude-code" on each event.`,
		Args: exactArgs(0),
	}
	cmd.AddCommand(c.hookRunCommand(), c.hookInstallCommand(true), c.hookInstallCommand(false))
	return cmd
}

// hookRunCommand is `ctxd hook claude-code`, run by Claude Code: it exits 0
// whatever happens, flag mistakes included, so the host never breaks.
func (c *cli) hookRunCommand() *cobra.Command {
	var f hookFlags
	cmd := &cobra.Command{
		Use:   "claude-code",
		Short: "Handle one Claude Code hook event: its JSON on stdin, the host's JSON on stdout; always exits 0",
		Long: `Handle one Claude Code hook event (SessionStart, UserPromptSubmit, PostToolUse,
PostToolUseFailure, PreCompact, Stop, SessionEnd), as Claude Code runs it: the
event's JSON on stdin; on stdout only the JSON Claude Code documents to add
context ({"hookSpecificOutput":{"hookEventName":...,"additionalContext":...}}),
or nothing; what went wrong in one line on stderr. It always exits 0, within
--deadline (a SessionStart within --wait + --deadline). Other events are
ignored. Register it with "ctxd hook install claude-code".`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "ctxd hook: unexpected arguments %q ignored\n", args)
			}
			cl, err := c.dial(grpc.WithConnectParams(hook.ConnectParams))
			if err != nil {
				fmt.Fprintf(c.stderr, "ctxd hook: %v\n", err)
				return nil
			}
			defer cl.conn.Close()
			cfg := f.cfg
			cfg.Conn, cfg.Socket, cfg.Budget, cfg.PromptBudget = cl.conn, c.socket, f.budget, f.promptBudget
			hook.Run(cmd.Context(), cfg, c.stdin, c.stdout, c.stderr)
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		fmt.Fprintf(c.stderr, "ctxd hook: %v; nothing done\n", err)
		return exitCodeError(exitOK)
	})
	f.register(cmd.Flags(), "project")
	return cmd
}

// hookInstallCommand is `ctxd hook install claude-code` or, with install
// false, `ctxd hook uninstall claude-code`.
func (c *cli) hookInstallCommand(install bool) *cobra.Command {
	var (
		f                hookFlags
		user, project    bool
		local            bool
		dir, binary      string
		use, short, long string
	)
	if install {
		use, short = "install claude-code", "Register ctxd's hooks in Claude Code's settings (--user, the default; --project; --local)"
		long = `Merge ctxd's hooks into a Claude Code settings file: --user (the default)
~/.claude/settings.json (or $CLAUDE_CONFIG_DIR/settings.json) for every project;
--project .claude/settings.json of the project directory (--dir, default the
current one), shared with everyone who works on it; --local
.claude/settings.local.json there, for you alone.

It registers "ctxd hook claude-code" for SessionStart, UserPromptSubmit,
PostToolUse, PostToolUseFailure, PreCompact, Stop and SessionEnd (not
PostToolUseFailure when "claude --version" says a release older than 2.1.0,
which would reject the whole file for an event it does not know), with no
matcher (every session source, every end reason) and "*" for the tool events
(every tool), each with a timeout above the hook's own bound. The command is
the absolute path of this ctxd binary (--ctxd to name another): hosts started
from an IDE or a desktop launcher often lack your shell's PATH. Options given
here (--budget, --prompt-budget, --deadline, --wait, --hook-project as the
hook's --project, --socket) are written into the command. Your own hooks and every other setting are kept
byte for byte; ctxd's hooks already there are replaced, so installing again
changes nothing. The file is backed up to FILE.ctxd-backup-TIME before any
change and written atomically; a malformed file is reported and left alone.`
	} else {
		use, short = "uninstall claude-code", "Remove ctxd's hooks from Claude Code's settings, and nothing else"
		long = `Remove every "ctxd hook claude-code" command from a Claude Code settings file
(--user, the default; --project; --local, as for install), and the event lists
that only they filled. Your own hooks and every other setting are kept byte for
byte; the file is backed up to FILE.ctxd-backup-TIME before any change.`
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || args[0] != "claude-code" {
				return usageError{errors.New(`name the host: claude-code (the only one supported)`)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			scope := hook.ScopeUser
			switch {
			case user && (project || local), project && local:
				return usageError{errors.New("give at most one of --user, --project and --local")}
			case project:
				scope = hook.ScopeProject
			case local:
				scope = hook.ScopeLocal
			}
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = wd
			}
			path, err := hook.SettingsPath(scope, dir)
			if err != nil {
				return err
			}
			if !install {
				res, err := hook.Uninstall(path)
				if err != nil {
					return err
				}
				if !res.Changed {
					fmt.Fprintf(c.stdout, "no ctxd hooks in %s\n", res.Path)
					return nil
				}
				fmt.Fprintf(c.stdout, "removed %d ctxd hooks from %s (backup: %s)\n", res.Removed, res.Path, res.Backup)
				return nil
			}
			command, err := hookCommandLine(cmd, binary)
			if err != nil {
				return err
			}
			version := claudeVersion(cmd.Context())
			events := hook.EventsFor(version)
			if len(events) < len(hook.Events) {
				fmt.Fprintf(c.stdout, "not registering PostToolUseFailure: Claude Code %s predates it (failed tool uses go unrecorded; update Claude Code and install again)\n", strings.Fields(version)[0])
			}
			res, err := hook.Install(path, hook.Entries(command, events, f.cfg.Wait, f.cfg.Deadline))
			if err != nil {
				return err
			}
			switch {
			case !res.Changed:
				fmt.Fprintf(c.stdout, "ctxd's hooks are already in %s\n", res.Path)
			case res.Backup == "":
				fmt.Fprintf(c.stdout, "installed %d ctxd hooks in %s, running: %s\n", res.Added, res.Path, command)
			default:
				fmt.Fprintf(c.stdout, "installed %d ctxd hooks in %s (backup: %s), running: %s\n", res.Added, res.Path, res.Backup, command)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&user, "user", false, "the user's settings, for every project (the default)")
	fl.BoolVar(&project, "project", false, "the project's shared settings, .claude/settings.json in --dir")
	fl.BoolVar(&local, "local", false, "the project's local settings, .claude/settings.local.json in --dir")
	fl.StringVar(&dir, "dir", "", "the project directory of --project and --local (default: the current directory)")
	if install {
		fl.StringVar(&binary, "ctxd", "", "the ctxd binary the hooks run (default: this one, by absolute path)")
		f.register(fl, "hook-project")
	}
	return cmd
}

// hookCommandLine is the shell command the installed hooks run: the ctxd
// binary by absolute path, "hook claude-code", and the hook options set on
// install's command line.
func hookCommandLine(cmd *cobra.Command, binary string) (string, error) {
	if binary == "" {
		self, err := selfPath()
		if err != nil {
			return "", err
		}
		binary = self
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable ctxd binary; pass --ctxd PATH", abs)
	}
	words := []string{shellQuote(abs)}
	if s := cmd.Flags().Lookup("socket"); s != nil && s.Changed {
		words = append(words, "--socket", shellQuote(s.Value.String()))
	}
	words = append(words, "hook", "claude-code")
	for _, name := range []string{"budget", "prompt-budget", "deadline", "wait", "hook-project"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			flag := name
			if name == "hook-project" {
				flag = "project"
			}
			words = append(words, "--"+flag, shellQuote(fl.Value.String()))
		}
	}
	return strings.Join(words, " "), nil
}

// selfPath is the path this ctxd was started by, made absolute: a PATH
// lookup of its name keeps a symlink such as ~/.local/bin/ctxd (which an
// upgrade replaces) rather than its target. A binary in the temp dir (go
// run, a test build) would vanish, so it is refused.
func selfPath() (string, error) {
	p := os.Args[0]
	if !strings.Contains(p, string(filepath.Separator)) {
		if lp, err := exec.LookPath(p); err == nil {
			p = lp
		} else if p, err = os.Executable(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if tmp := filepath.Clean(os.TempDir()); strings.HasPrefix(abs, tmp+string(filepath.Separator)) {
		return "", fmt.Errorf("this ctxd runs from the temp dir (%s), which is no place for a hook to run it from; install ctxd (make install-service puts it in ~/.local/bin) or pass --ctxd PATH", abs)
	}
	return abs, nil
}

// claudeVersion is what `claude --version` prints, or "" when there is no
// claude on PATH or it does not answer within five seconds.
func claudeVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "claude", "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+-]+$`)

// shellQuote quotes s for sh when it needs it.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
