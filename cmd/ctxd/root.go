package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxd/ctxd/daemon"
)

// Exit codes: 0 success, 1 a failed call, 2 bad usage. `exists` exits 1 when
// the ref does not exist.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// cli carries the global flags and output streams of one invocation.
type cli struct {
	socket  string
	token   string // sent as the bearer token when set; else CTXD_TOKEN
	json    bool
	timeout time.Duration
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
}

// exitCodeError lets a command choose its exit code without printing anything.
type exitCodeError int

func (e exitCodeError) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// usageError marks mistakes in the command line itself.
type usageError struct{ error }

// Run executes the command line args and returns the process exit code.
func Run(ctx context.Context, args []string) int {
	return runWith(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}

func runWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr}
	root := c.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	var code exitCodeError
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "ctxd: %v\n", err)
		return exitUsage
	default:
		c.printError(err)
		return exitError
	}
}

func (c *cli) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "ctxd",
		Short: "ctxd is a local memory layer for AI agents",
		Long: `ctxd keeps an agent's knowledge as items addressed by drive:/path refs.

"ctxd serve" runs the daemon and "ctxd migrate" copies a store between
backends; every other command talks to the daemon over its unix socket. A
ref is drive:/path, a bare /path (the agent drive), or an item id.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	socket := os.Getenv("CTXD_SOCKET")
	if socket == "" {
		socket = daemon.DefaultSocket()
	}
	pf := root.PersistentFlags()
	pf.StringVar(&c.socket, "socket", socket, "daemon unix socket (env CTXD_SOCKET)")
	// The token's default is not shown: help would print the secret.
	pf.StringVar(&c.token, "token", "", "bearer token sent on every call, needed when the daemon sets socket_auth (env CTXD_TOKEN)")
	pf.BoolVar(&c.json, "json", false, "print responses as JSON, for scripts")
	pf.DurationVar(&c.timeout, "timeout", 30*time.Second, "deadline for each call")
	root.AddCommand(c.serveCommand(), c.migrateCommand())
	c.addVFSCommands(root)
	root.AddCommand(c.addCommand(), c.refreshCommand())
	root.AddCommand(c.watchCommand())
	root.AddCommand(c.mcpCommand())
	root.AddCommand(c.toolsCommand())
	root.AddCommand(c.sessionCommand(), c.pruneCommand(), c.compactCommand())
	root.AddCommand(c.hookCommand())
	root.AddCommand(c.subscribeCommand(), c.subscriptionCommand())
	root.AddCommand(c.backupCommand(), c.restoreCommand())
	return root
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MaximumNArgs(n)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// cliFlagNames maps the request fields and phrases that daemon hints use
// (they are written for API callers) to the flags a command-line user types.
// Longer names come first, so "on_conflict=overwrite" wins over "on_conflict".
var cliFlagNames = []struct{ api, cli string }{
	{"on_conflict=overwrite", "--on-conflict overwrite"},
	{"on_conflict=skip", "--on-conflict skip"},
	{"on_conflict", "--on-conflict"},
	{"recursive=true", "-r"},
	{"expected_hash", "--if-hash"},
	{"next_page_token", "--page-token"},
	{"a raw read", "read --raw"},
	{"data instead of content", "--binary"},
}

var hintReplacer = func() *strings.Replacer {
	var pairs []string
	for _, f := range cliFlagNames {
		pairs = append(pairs, f.api, f.cli)
	}
	return strings.NewReplacer(pairs...)
}()

// cliHint rewrites a daemon hint for the command line.
func cliHint(hint string) string { return hintReplacer.Replace(hint) }
