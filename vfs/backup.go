package vfs

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/boltstore"
	"github.com/ctxd/ctxd/vfs/storecopy"
)

// This file is the store's hot backup: a consistent copy of the whole key
// space, as a bbolt store file (what `ctxd restore` puts into a data dir),
// taken while writers go on.

// BackupInfo describes a backup file.
type BackupInfo struct {
	Size   int64    // the file's bytes
	SHA256 [32]byte // the file's SHA-256
	// OutboxSeq is the outbox sequence of the last write the copy holds:
	// every write acknowledged with a sequence up to it is in the copy,
	// none after it.
	OutboxSeq uint64
	Items     int64     // items in the copy, every drive
	TakenAt   time.Time // when the snapshot was taken
	// Source is the backend the copy was taken from: "bolt" or "postgres".
	Source string
}

// BackupOptions configures Backup.
type BackupOptions struct {
	// TempDir holds the temporary bbolt file a store that is not a bbolt
	// file is copied into before it is streamed ("" means os.TempDir()).
	// It needs room for the whole copy; the file is removed when Backup
	// returns.
	TempDir string
}

// Backup writes a consistent copy of the whole store to w as a bbolt store
// file and reports what it wrote. Writes and reads go on meanwhile; the copy
// holds exactly the writes committed before its snapshot.
//
// A bbolt store is copied page by page from one read transaction, which
// keeps the pages it reads from reuse while it runs: the file may grow by
// what writers change meanwhile. Any other backend (PostgreSQL) is read in
// one snapshot transaction and copied key for key (storecopy) into a
// temporary bbolt file under opts.TempDir, which is then streamed to w.
// Backup stops with ctx's error once ctx ends, ending its transaction and
// removing its temporary file; what it wrote to w is then incomplete.
func (s *Store) Backup(ctx context.Context, w io.Writer, opts BackupOptions) (BackupInfo, error) {
	if s.pinnedTxn(ctx) != nil {
		return BackupInfo{}, errors.New("backup: called under a pinned read")
	}
	h := sha256.New()
	out := ctxWriter{ctx, io.MultiWriter(w, h)}
	var info BackupInfo
	var err error
	if bolt, ok := s.db.(*boltstore.DB); ok {
		info.Source = "bolt"
		info.Size, err = bolt.WriteSnapshot(ctx, out, func(tx backend.Tx) error {
			info.describe(s.newTxn(tx))
			return nil
		})
	} else {
		info.Source = "postgres"
		err = s.backupBySnapshot(ctx, out, opts, &info)
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return BackupInfo{}, fmt.Errorf("backup: %w", ctxErr)
		}
		return BackupInfo{}, fmt.Errorf("backup: %w", err)
	}
	copy(info.SHA256[:], h.Sum(nil))
	return info, nil
}

// describe records what t's snapshot holds.
func (b *BackupInfo) describe(t *txn) {
	b.TakenAt = t.now
	b.OutboxSeq = t.outbox.Sequence()
	b.Items = 0
	for _, d := range t.driveNames() {
		n, _ := t.counts(d)
		b.Items += n
	}
}

// backupBySnapshot copies one snapshot of the store into a temporary bbolt
// file and streams that to w.
func (s *Store) backupBySnapshot(ctx context.Context, w io.Writer, opts BackupOptions, info *BackupInfo) (err error) {
	f, err := os.CreateTemp(opts.TempDir, "ctxd-backup-*.db")
	if err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	name := f.Name()
	defer func() { err = errors.Join(err, os.Remove(name)) }()
	if err := f.Close(); err != nil {
		return err
	}
	dst, err := boltstore.Open(name, boltstore.Options{})
	if err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	err = s.db.View(ctx, func(tx backend.Tx) error {
		info.describe(s.newTxn(tx))
		_, err := storecopy.Copy(ctx, snapshotDB{tx}, dst, storecopy.Options{Source: "backup", BatchBytes: 8 << 20})
		return err
	})
	if err = errors.Join(err, dst.Close()); err != nil {
		return err
	}
	f, err = os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	info.Size, err = io.Copy(w, f)
	return err
}

// snapshotDB is a read transaction seen as a store of its own, so that
// storecopy's batches all read the one snapshot.
type snapshotDB struct{ tx backend.Tx }

var errSnapshotReadOnly = errors.New("a backup snapshot is read-only")

func (d snapshotDB) View(ctx context.Context, fn func(backend.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(d.tx)
}
func (snapshotDB) Update(context.Context, func(backend.Tx) error) error { return errSnapshotReadOnly }
func (snapshotDB) Batch(context.Context, func(backend.Tx) error) error  { return errSnapshotReadOnly }
func (snapshotDB) Begin(context.Context, bool) (backend.Tx, error)      { return nil, errSnapshotReadOnly }
func (snapshotDB) Usage(context.Context) (backend.Usage, error)         { return backend.Usage{}, nil }
func (snapshotDB) Check(context.Context) error                          { return nil }
func (snapshotDB) Close() error                                         { return nil }

// ctxWriter fails its writes once ctx ends.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// InspectBackup opens the bbolt file at path read-only and checks that it
// is a whole ctxd store this build reads (its schema version; not the
// destination of an unfinished copy), without changing it. It reports the
// file's size, outbox sequence and items; SHA256 and TakenAt stay zero.
func InspectBackup(ctx context.Context, path string) (BackupInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return BackupInfo{}, err
	}
	if !st.Mode().IsRegular() {
		return BackupInfo{}, fmt.Errorf("%s is not a regular file", path)
	}
	db, err := boltstore.Open(path, boltstore.Options{ReadOnly: true})
	if err != nil {
		return BackupInfo{}, fmt.Errorf("%s is not a ctxd store file: %w", path, err)
	}
	defer db.Close()
	info := BackupInfo{Size: st.Size(), Source: "bolt"}
	err = db.View(ctx, func(tx backend.Tx) error {
		if tx.Bucket([]byte(storecopy.ProgressBucket)) != nil {
			return errors.New("it is the destination of an unfinished copy")
		}
		meta := tx.Bucket(nameMeta)
		if meta == nil || meta.Bucket(nameDrives) == nil {
			return errors.New("it holds no ctxd store (no meta bucket)")
		}
		// Open converts a store of an earlier version.
		v := meta.Get([]byte(keySchema))
		if n, err := strconv.Atoi(string(v)); err != nil || n < 1 || n > schemaVersion {
			return fmt.Errorf("schema version %q is not supported (this ctxd reads versions 1 to %d)", v, schemaVersion)
		}
		for _, name := range [][]byte{nameItems, nameContent, namePaths, nameOutbox} {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("it lacks the %s bucket", name)
			}
		}
		info.describe(&txn{tx: tx, drives: meta.Bucket(nameDrives), outbox: tx.Bucket(nameOutbox)})
		info.TakenAt = time.Time{}
		return nil
	})
	if err != nil {
		return BackupInfo{}, fmt.Errorf("%s is not a ctxd store file: %w", path, err)
	}
	return info, nil
}
