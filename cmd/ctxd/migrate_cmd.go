package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxd/ctxd/daemon"
	"github.com/ctxd/ctxd/vfs"
	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/boltstore"
	"github.com/ctxd/ctxd/vfs/pgstore"
	"github.com/ctxd/ctxd/vfs/storecopy"
)

func (c *cli) migrateCommand() *cobra.Command {
	var from, to string
	var batchKeys int
	cmd := &cobra.Command{
		Use:   "migrate --from STORE --to STORE",
		Short: "Copy a store to another backend or file (stop its daemon first)",
		Long: `Copy the store at --from into the empty store at --to: every bucket, key,
value and sequence, in transactions of at most --batch-keys keys and 32 MiB.
migrate opens both stores itself, no daemon involved: stop the daemon (every
replica) serving the source first; a running daemon holds a bbolt file's lock.

A store is a postgres:// (or postgresql://) URL, a bbolt file ending in .db,
or a data directory, meaning the ctxd.db in it (created for --to).

An interrupted migrate (Ctrl-C, a kill, a lost connection) continues where it
stopped when run again with the same --from and --to. A destination that
already holds a store is refused. After copying, both stores are compared
bucket by bucket (key counts, sequences, a SHA-256 of all keys and values) and
each store's own checks run, as in ctxd doctor; migrate exits 1 when anything
disagrees. There is no deadline unless --timeout is given.

  ctxd migrate --from ~/.local/share/ctxd --to postgres://ctxd@db.internal/ctxd`,
		Args: exactArgs(0),
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case from == "" || to == "":
				return usageError{errors.New("give both --from and --to")}
			case batchKeys < 1 || batchKeys > storecopy.MaxBatchKeys:
				return usageError{fmt.Errorf("--batch-keys must be 1 to %d, not %d", storecopy.MaxBatchKeys, batchKeys)}
			case c.json:
				return usageError{errors.New("migrate prints text only; --json is not supported")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := c.untilInterrupted(cmd)
			defer stop()
			return c.migrate(ctx, from, to, batchKeys)
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the store to copy: a data directory, a .db file or a postgres:// URL")
	f.StringVar(&to, "to", "", "the empty store to copy into: a data directory, a .db file or a postgres:// URL")
	f.IntVar(&batchKeys, "batch-keys", storecopy.DefaultBatchKeys, "most keys per destination transaction")
	return cmd
}

// storeLocation is where --from or --to points: a PostgreSQL URL or a bbolt
// file.
type storeLocation struct {
	url  string // a postgres:// URL, or ""
	path string // the bbolt file, absolute
	dir  bool   // path is the store file of a data directory
}

// parseLocation reads a --from or --to value.
func parseLocation(s string) (storeLocation, error) {
	if vfs.IsPostgresURL(s) {
		if _, err := url.Parse(s); err != nil {
			return storeLocation{}, fmt.Errorf("%q is not a URL: %w", daemon.RedactStoreURL(s), err)
		}
		return storeLocation{url: s}, nil
	}
	if strings.Contains(s, "://") {
		return storeLocation{}, fmt.Errorf("%q: a store is a postgres:// URL, a .db file or a data directory", daemon.RedactStoreURL(s))
	}
	path, err := filepath.Abs(s)
	if err != nil {
		return storeLocation{}, err
	}
	if strings.HasSuffix(path, ".db") {
		return storeLocation{path: path}, nil
	}
	return storeLocation{path: filepath.Join(path, boltstore.FileName), dir: true}, nil
}

// String names the store without its password: in messages, and recorded
// in the destination as the source of an unfinished migration.
func (l storeLocation) String() string {
	if l.url != "" {
		return daemon.RedactStoreURL(l.url)
	}
	return l.path
}

// open opens the store's backend; the source (create false) must exist.
func (l storeLocation) open(ctx context.Context, create bool) (backend.DB, error) {
	if l.url != "" {
		ctx, cancel := context.WithTimeout(ctx, pgstore.DefaultOpenTimeout) // the copy itself has no deadline unless --timeout
		defer cancel()
		db, err := pgstore.Open(ctx, l.url, pgstore.Options{})
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", l, err)
		}
		return db, nil
	}
	if _, err := os.Stat(l.path); errors.Is(err, os.ErrNotExist) && !create {
		if l.dir {
			return nil, fmt.Errorf("no store at %s: give a data directory holding %s, a .db file or a postgres:// URL", filepath.Dir(l.path), boltstore.FileName)
		}
		return nil, fmt.Errorf("no store at %s", l.path)
	}
	if l.dir && create {
		if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
			return nil, err
		}
	}
	db, err := boltstore.Open(l.path, boltstore.Options{})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", l, err)
	}
	return db, nil
}

// migrate copies from into to, resuming an unfinished copy, then verifies
// both ends.
func (c *cli) migrate(ctx context.Context, fromArg, toArg string, batchKeys int) (err error) {
	from, err := parseLocation(fromArg)
	if err != nil {
		return usageError{fmt.Errorf("--from: %w", err)}
	}
	to, err := parseLocation(toArg)
	if err != nil {
		return usageError{fmt.Errorf("--to: %w", err)}
	}
	if from.String() == to.String() {
		return usageError{fmt.Errorf("--from and --to are the same store (%s)", from)}
	}
	src, err := from.open(ctx, false)
	if err != nil {
		return err
	}
	// vfs.New takes a backend over and closes it with the store.
	srcOpen := true
	defer func() {
		if srcOpen {
			err = errors.Join(err, src.Close())
		}
	}()
	if err := requireBuckets(ctx, src, from); err != nil {
		return err
	}
	dst, err := to.open(ctx, true)
	if err != nil {
		return err
	}
	dstOpen := true
	defer func() {
		if dstOpen {
			err = errors.Join(err, dst.Close())
		}
	}()

	terminal, width := terminalWidth(c.stderr)
	p := &copyProgress{w: c.stderr, terminal: terminal, width: width, start: time.Now()}
	rep, err := storecopy.Copy(ctx, src, dst, storecopy.Options{BatchKeys: batchKeys, Source: from.String(), Progress: p.update})
	p.clear()
	if err != nil {
		if done := rep.Done(); done.Keys+done.Buckets > 0 {
			fmt.Fprint(c.stderr, grouped.Sprintf("ctxd: stopped after copying %d of ~%d keys; run the same migrate again to resume\n", done.Keys+done.Buckets, rep.SourceKeys))
		}
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted")
		}
		return err
	}
	c.printCopySummary(rep)

	fmt.Fprintln(c.stderr, "verifying: comparing the stores, then checking each")
	var problems []string
	counts, err := storecopy.Verify(ctx, src, dst)
	if err != nil {
		problems = append(problems, strings.Split(err.Error(), "\n")...)
	}
	for _, side := range []struct {
		name string
		db   backend.DB
		open *bool
	}{{"source", src, &srcOpen}, {"destination", dst, &dstOpen}} {
		s, err := vfs.New(side.db, vfs.Options{})
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: open the store: %v", side.name, err))
			continue
		}
		*side.open = false
		if side.name == "destination" {
			// The copy is key for key; a typed vector column beside the
			// keys (PostgreSQL's ctxd_vectors) is filled from them.
			if n, merr := s.MirrorVectors(ctx); merr != nil {
				problems = append(problems, fmt.Sprintf("destination: %v", merr))
			} else if n > 0 {
				fmt.Fprint(c.stderr, grouped.Sprintf("mirrored %d vectors into ctxd_vectors\n", n))
			}
		}
		err = s.Verify(ctx)
		if cerr := s.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		for _, line := range strings.Split(errString(err), "\n") {
			if line != "" {
				problems = append(problems, side.name+": "+line)
			}
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("verify: %w", ctx.Err())
	}
	for _, pr := range problems {
		fmt.Fprintf(c.stdout, "problem: %s\n", pr)
	}
	if len(problems) > 0 {
		return exitCodeError(exitError)
	}
	fmt.Fprint(c.stdout, grouped.Sprintf("verified: both stores hold the same %d buckets, %d keys, %s, and pass their checks\n", counts.Buckets, counts.Keys, humanBytes(counts.Bytes)))
	return nil
}

// requireBuckets refuses a source that holds nothing: the wrong file or
// database, whose copy would verify as equal.
func requireBuckets(ctx context.Context, db backend.DB, l storeLocation) error {
	var n int
	err := db.View(ctx, func(tx backend.Tx) error {
		return tx.ForEach(func([]byte, backend.Bucket) error { n++; return nil })
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("%s holds no store: nothing to migrate", l)
	}
	return err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// printCopySummary prints "copied 21 buckets, 123,456 keys, 1.2 GB in 12.3s
// (10,034 keys/s)", and what earlier runs had copied when it resumed.
func (c *cli) printCopySummary(rep storecopy.Report) {
	cp := rep.Copied
	fmt.Fprint(c.stdout, grouped.Sprintf("copied %d buckets, %d keys, %s in %.1fs", cp.Buckets, cp.Keys, humanBytes(cp.Bytes), rep.Duration.Seconds()))
	if s := rep.Duration.Seconds(); s >= rateAfter.Seconds() && cp.Keys > 0 {
		fmt.Fprint(c.stdout, grouped.Sprintf(" (%d keys/s)", int64(float64(cp.Keys)/s)))
	}
	if e := rep.Earlier; e != (storecopy.Counts{}) {
		fmt.Fprint(c.stdout, grouped.Sprintf("; resumed after %d keys (%s) an earlier run copied", e.Keys, humanBytes(e.Bytes)))
	}
	fmt.Fprintln(c.stdout)
}

// copyProgress draws the progress line of a copy on stderr, like ingest's:
// in place on a terminal, a plain line every plainRedraw otherwise.
type copyProgress struct {
	w        io.Writer
	terminal bool
	width    int
	start    time.Time
	drawn    time.Time
	shown    bool
}

// update draws rep unless the line was drawn too recently.
func (p *copyProgress) update(rep storecopy.Report) {
	now := time.Now()
	last, every := p.drawn, terminalRedraw
	if !p.terminal {
		last, every = cmp.Or(p.drawn, p.start), plainRedraw
	}
	if !last.IsZero() && now.Sub(last) < every {
		return
	}
	p.drawn = now
	line := p.line(rep, now.Sub(p.start))
	if !p.terminal {
		fmt.Fprintf(p.w, "progress: %s\n", line)
		return
	}
	if p.width > 1 && len(line) >= p.width {
		line = line[:p.width-1]
	}
	fmt.Fprint(p.w, eraseLine+line)
	p.shown = true
}

// line renders "copying [=====>   ] 45% 123,456 of ~270,000 keys, 1.2 GB,
// 12,345 keys/s, ETA 10s". The total is the source backend's estimate, which
// counts nested buckets too; entries copied are keys and buckets.
func (p *copyProgress) line(rep storecopy.Report, elapsed time.Duration) string {
	d := rep.Done()
	entries := d.Keys + d.Buckets
	var b strings.Builder
	b.WriteString("copying")
	total := rep.SourceKeys
	frac := 0.0
	if total > 0 {
		frac = min(float64(entries)/float64(total), 1)
	}
	if p.terminal && total > 0 {
		fmt.Fprintf(&b, " %s %3.0f%%", bar(frac), 100*frac)
	}
	b.WriteString(grouped.Sprintf(" %d of ~%d keys, %s", entries, total, humanBytes(d.Bytes)))
	copied := rep.Copied.Keys + rep.Copied.Buckets
	if elapsed < rateAfter || copied == 0 {
		return b.String()
	}
	rate := float64(copied) / elapsed.Seconds()
	b.WriteString(grouped.Sprintf(", %d keys/s", int64(rate)))
	if total > entries {
		fmt.Fprintf(&b, ", ETA %s", formatETA(time.Duration(min(float64(total-entries)/rate, 1e8)*float64(time.Second))))
	}
	return b.String()
}

func (p *copyProgress) clear() {
	if p.shown {
		fmt.Fprint(p.w, eraseLine)
		p.shown = false
	}
}
