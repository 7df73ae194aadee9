package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ctxd/ctxd/daemon"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/internal/fsync"
	"github.com/ctxd/ctxd/vfs"
	"github.com/ctxd/ctxd/vfs/boltstore"
)

func (c *cli) backupCommand() *cobra.Command {
	var force bool
	var dataDir string
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Copy the store, consistently, to a file while the daemon serves",
		Long: `Write a consistent copy of the whole store to FILE, as a bbolt store file
that ctxd restore puts into a data dir, while the daemon goes on serving
writes and searches. A PostgreSQL store is copied from one snapshot. FILE is
written as FILE.partial, its SHA-256 checked against the daemon's, synced and
renamed; an existing FILE is refused without --force. "-" writes to stdout.

With --data-dir, the store in that data directory is copied without a daemon
(none may be running on it). There is no deadline unless --timeout is given.`,
		Args: exactArgs(1),
		PreRunE: func(*cobra.Command, []string) error {
			if c.json {
				return usageError{errors.New("backup prints text only; --json is not supported")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := c.untilInterrupted(cmd)
			defer stop()
			return c.backup(ctx, args[0], dataDir, force)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite FILE if it exists")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "copy the store of this data directory without a daemon (none may run on it)")
	return cmd
}

// backupSummary is what the daemon (or the store, without one) reports of
// a finished backup.
type backupSummary struct {
	size, items, seq int64
	sha256, source   string
}

// backup writes the backup to file ("-": stdout) through a .partial file.
func (c *cli) backup(ctx context.Context, file, dataDir string, force bool) (err error) {
	start := time.Now()
	out, report := io.Writer(c.stdout), c.stdout
	var f *os.File
	partial := file + ".partial"
	if file != "-" {
		if _, err := os.Stat(file); err == nil && !force {
			return fmt.Errorf("%s exists: pass --force to overwrite it, or choose another file", file)
		}
		if f, err = os.OpenFile(partial, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
			return err
		}
		defer func() {
			if f != nil {
				f.Close()
				os.Remove(partial)
			}
		}()
		out = f
	} else {
		report = c.stderr
	}
	h := sha256.New()
	var written int64
	w := io.MultiWriter(out, h, countWriter{&written})
	var sum backupSummary
	if dataDir != "" {
		sum, err = backupDataDir(ctx, dataDir, w)
	} else {
		sum, err = c.backupFromDaemon(ctx, w)
	}
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum.sha256 || written != sum.size {
		return fmt.Errorf("the backup received (%d bytes, SHA-256 %s) differs from what was sent (%d bytes, SHA-256 %s); take it again", written, got, sum.size, sum.sha256)
	}
	if f != nil {
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Rename(partial, file); err != nil {
			return err
		}
		f = nil
		if err := fsync.Dir(filepath.Dir(file)); err != nil {
			return err
		}
	}
	took := time.Since(start)
	fmt.Fprint(report, grouped.Sprintf("backup of the %s store: %s, %d items through change %d, %s in %.1fs (%.0f MB/s)\nsha256 %s\n",
		sum.source, file, sum.items, sum.seq, humanBytes(sum.size), took.Seconds(), float64(sum.size)/1e6/max(took.Seconds(), 1e-3), sum.sha256))
	return nil
}

// backupFromDaemon streams the daemon's backup into w.
func (c *cli) backupFromDaemon(ctx context.Context, w io.Writer) (backupSummary, error) {
	cl, err := c.dial()
	if err != nil {
		return backupSummary{}, err
	}
	defer cl.conn.Close()
	stream, err := cl.admin.Backup(ctx, &ctxdv1.BackupRequest{})
	if err != nil {
		return backupSummary{}, c.noDaemonHint(err)
	}
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return backupSummary{}, errors.New("the daemon ended the backup without its summary; take it again")
		}
		if err != nil {
			return backupSummary{}, c.noDaemonHint(err)
		}
		if _, err := w.Write(msg.Data); err != nil {
			return backupSummary{}, err
		}
		if s := msg.Summary; s != nil {
			return backupSummary{size: s.Size, items: s.Items, seq: s.OutboxSeq, sha256: s.Sha256, source: s.SourceStore}, nil
		}
	}
}

// noDaemonHint says how to back up without a daemon when none answers.
func (c *cli) noDaemonHint(err error) error {
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable && len(st.Details()) == 0 {
		return fmt.Errorf("cannot reach the daemon at %s (%s): start it, or back up the store of a stopped daemon with --data-dir DIR", c.socket, st.Message())
	}
	return err
}

// backupDataDir copies the store of a data dir no daemon runs on into w.
func backupDataDir(ctx context.Context, dataDir string, w io.Writer) (backupSummary, error) {
	path := filepath.Join(dataDir, boltstore.FileName)
	if _, err := os.Stat(path); err != nil {
		return backupSummary{}, fmt.Errorf("no store in %s: %w", dataDir, err)
	}
	lock, err := daemon.LockDataDir(dataDir)
	if err != nil {
		return backupSummary{}, fmt.Errorf("%w (a running daemon is backed up without --data-dir)", err)
	}
	defer lock.Close()
	s, err := vfs.Open(path, vfs.Options{})
	if err != nil {
		return backupSummary{}, err
	}
	info, err := s.Backup(ctx, w, vfs.BackupOptions{TempDir: dataDir})
	if err = errors.Join(err, s.Close()); err != nil {
		return backupSummary{}, err
	}
	return backupSummary{size: info.Size, items: info.Items, seq: int64(info.OutboxSeq), sha256: hex.EncodeToString(info.SHA256[:]), source: info.Source}, nil
}

type countWriter struct{ n *int64 }

func (c countWriter) Write(p []byte) (int, error) {
	*c.n += int64(len(p))
	return len(p), nil
}

func (c *cli) restoreCommand() *cobra.Command {
	var force bool
	var dataDir string
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Put a backup into a data dir (no daemon may run on it)",
		Long: `Put the store in FILE (a file ctxd backup wrote) into a data directory:
--data-dir, else the daemon's (its config file and CTXD_DATA_DIR). No daemon
may run on it: restore holds the data dir's lock while it works. FILE is
checked to be a ctxd store this build reads before anything is touched; a
data dir that already holds a store is refused without --force. The file is
copied into the data dir and renamed over the store at once, and the search
indexes (derived from the store) are removed: the daemon rebuilds them from
the restored store when it starts, without embedding anything again.`,
		Args: exactArgs(1),
		PreRunE: func(*cobra.Command, []string) error {
			if c.json {
				return usageError{errors.New("restore prints text only; --json is not supported")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := c.untilInterrupted(cmd)
			defer stop()
			dir, err := resolveDataDir(dataDir)
			if err != nil {
				return err
			}
			return c.restore(ctx, args[0], dir, force)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace the store the data dir holds")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "data directory to restore into (default: the daemon's)")
	return cmd
}

// resolveDataDir is flag, else the data dir and store the daemon's config
// file and environment name; a daemon on PostgreSQL keeps no store there.
func resolveDataDir(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	cfg := daemon.DefaultConfig()
	if err := cfg.LoadConfigFile(daemon.DefaultConfigFile(), false); err != nil {
		return "", err
	}
	if err := cfg.ApplyEnv(os.LookupEnv); err != nil {
		return "", err
	}
	if vfs.IsPostgresURL(cfg.Store) {
		return "", errors.New("the daemon's store is PostgreSQL, not a file in its data dir: restore into a data dir with --data-dir, then copy it with ctxd migrate --from DIR --to postgres://...")
	}
	return filepath.Abs(cfg.DataDir)
}

// restore puts file into dataDir as its store.
func (c *cli) restore(ctx context.Context, file, dataDir string, force bool) (err error) {
	info, err := vfs.InspectBackup(ctx, file)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	lock, err := daemon.LockDataDir(dataDir)
	if err != nil {
		return fmt.Errorf("%w; restore needs the data dir to itself", err)
	}
	defer lock.Close()
	store := filepath.Join(dataDir, boltstore.FileName)
	if _, err := os.Stat(store); err == nil && !force {
		return fmt.Errorf("%s already holds a store (%s): pass --force to replace it (take a backup of it first)", dataDir, store)
	}
	sum, err := copyFileSynced(ctx, file, store+".restore")
	if err != nil {
		return err
	}
	defer os.Remove(store + ".restore")
	if err := os.Rename(store+".restore", store); err != nil {
		return err
	}
	if err := fsync.Dir(dataDir); err != nil {
		return err
	}
	fmt.Fprint(c.stdout, grouped.Sprintf("restored %s into %s: %d items through change %d, %s, sha256 %s\n",
		file, store, info.Items, info.OutboxSeq, humanBytes(info.Size), hex.EncodeToString(sum)))
	index := filepath.Join(dataDir, "index")
	if _, err := os.Stat(index); err == nil {
		if err := os.RemoveAll(index); err != nil {
			return fmt.Errorf("remove the old search indexes in %s: %w; remove them by hand before starting the daemon", index, err)
		}
		fmt.Fprintf(c.stdout, "removed the search indexes in %s; the daemon rebuilds them from the store when it starts\n", index)
	}
	return nil
}

// copyFileSynced copies src to a new file dst, syncs it, and returns the
// SHA-256 of what it copied. It stops when ctx ends.
func copyFileSynced(ctx context.Context, src, dst string) (sum []byte, err error) {
	in, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(dst)
		}
	}()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), ctxReader{ctx, in}); err != nil {
		return nil, err
	}
	if err := out.Sync(); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// ctxReader fails its reads once ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// doctorDataDir checks the store of a data dir no daemon runs on: its
// pages, counters and history (vfs.Store.Verify). The search indexes are
// left to a daemon, which rebuilds or catches them up on start.
func (c *cli) doctorDataDir(ctx context.Context, flag string) error {
	dataDir, err := filepath.Abs(flag)
	if err != nil {
		return err
	}
	path := filepath.Join(dataDir, boltstore.FileName)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no store in %s: %w", dataDir, err)
	}
	lock, err := daemon.LockDataDir(dataDir)
	if err != nil {
		return fmt.Errorf("%w (run ctxd doctor without --data-dir to check a running daemon)", err)
	}
	defer lock.Close()
	s, err := vfs.Open(path, vfs.Options{})
	if err != nil {
		return err
	}
	st, err := s.Stats(ctx)
	var seq uint64
	if err == nil {
		seq, err = s.OutboxSeq(ctx)
	}
	if err == nil {
		err = s.Verify(ctx)
	}
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Fprint(c.stdout, grouped.Sprintf("store %s: %d items, %s, changes through %d; search indexes not checked without a daemon\n", path, st.ItemCount, humanBytes(st.Size), seq))
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(c.stdout, "problem: %s\n", line)
		}
		return exitCodeError(exitError)
	}
	fmt.Fprintln(c.stdout, "ok")
	return nil
}
