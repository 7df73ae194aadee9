package vfs

import (
	"bytes"
	"context"

	"github.com/ctxd/ctxd/vfs/backend"
)

// Records are small named values the daemon keeps beside the items: its own
// lasting state that is not content (watches, durable subscriptions). They
// live in the store rather than in a file beside it so that they survive
// like items do, are shared by the replicas of a store, and move with it
// (ctxd migrate copies every bucket). They are neither searched nor
// recorded in history.

// bucketRecords: one nested bucket per kind: name -> value.
const bucketRecords = "records"

// MaxRecordBytes bounds one record's value.
const MaxRecordBytes = 1 << 20

// Record is one named value of a kind.
type Record struct {
	Name  string
	Value []byte
}

// PutRecord stores value under kind and name, replacing what was there.
func (s *Store) PutRecord(ctx context.Context, kind, name string, value []byte) error {
	if err := checkRecord(kind, name, value); err != nil {
		return err
	}
	return s.update(ctx, func(t *txn) error {
		b, err := t.records(kind, true)
		if err != nil {
			return err
		}
		return b.Put([]byte(name), value)
	})
}

// UpdateRecord replaces the record kind/name with what fn returns for its
// current value (nil when there is none), in one transaction; fn returning
// nil deletes it. fn may run more than once.
func (s *Store) UpdateRecord(ctx context.Context, kind, name string, fn func(old []byte) ([]byte, error)) error {
	if err := checkRecord(kind, name, nil); err != nil {
		return err
	}
	return s.update(ctx, func(t *txn) error {
		b, err := t.records(kind, true)
		if err != nil {
			return err
		}
		v, err := fn(bytes.Clone(b.Get([]byte(name))))
		if err != nil {
			return err
		}
		if v == nil {
			return b.Delete([]byte(name))
		}
		if err := checkRecord(kind, name, v); err != nil {
			return err
		}
		return b.Put([]byte(name), v)
	})
}

// GetRecord returns the record kind/name, or nil when there is none.
func (s *Store) GetRecord(ctx context.Context, kind, name string) ([]byte, error) {
	var out []byte
	err := s.view(ctx, func(t *txn) error {
		out = nil
		if b, _ := t.records(kind, false); b != nil {
			out = bytes.Clone(b.Get([]byte(name)))
		}
		return nil
	})
	return out, err
}

// ListRecords returns every record of kind, by name.
func (s *Store) ListRecords(ctx context.Context, kind string) ([]Record, error) {
	var out []Record
	err := s.view(ctx, func(t *txn) error {
		out = out[:0]
		b, _ := t.records(kind, false)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			out = append(out, Record{Name: string(k), Value: bytes.Clone(v)})
			return nil
		})
	})
	return out, err
}

// DeleteRecord deletes the record kind/name and reports whether it existed.
func (s *Store) DeleteRecord(ctx context.Context, kind, name string) (bool, error) {
	var existed bool
	err := s.update(ctx, func(t *txn) error {
		existed = false
		b, _ := t.records(kind, false)
		if b == nil || b.Get([]byte(name)) == nil {
			return nil
		}
		existed = true
		return b.Delete([]byte(name))
	})
	return existed, err
}

// records returns the bucket of kind, creating it when create is set; else
// nil when it does not exist.
func (t *txn) records(kind string, create bool) (backend.Bucket, error) {
	root := t.tx.Bucket([]byte(bucketRecords))
	if !create {
		return root.Bucket([]byte(kind)), nil
	}
	return root.CreateBucketIfNotExists([]byte(kind))
}

func checkRecord(kind, name string, value []byte) error {
	switch {
	case kind == "" || len(kind) > 64:
		return newError(ErrInvalid, "", "name the kind with 1 to 64 bytes", "The record kind %q is empty or too long.", kind)
	case name == "" || len(name) > 1024:
		return newError(ErrInvalid, "", "name the record with 1 to 1024 bytes", "The record name is empty or longer than 1024 bytes.")
	case len(value) > MaxRecordBytes:
		return newError(ErrTooLarge, "", "keep a record under 1 MiB", "The record %s/%s holds %d bytes, over the limit of %d.", kind, name, len(value), MaxRecordBytes)
	}
	return nil
}
