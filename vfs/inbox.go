package vfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/google/uuid"
)

// Inboxes are the queues of durable subscriptions (index/standing): what
// matched while nobody read it, kept across restarts and shared by the
// replicas of a store. An entry is keyed by the outbox sequence of the
// change that matched and the item, so that replicas that each match the
// same change add it once. An inbox is bounded: past its bound the oldest
// entries go, and are counted until the next read acknowledges.

// inboxesKind is the records kind holding one nested bucket per inbox:
// seq (8) | item id (16) -> value; keyInboxCount -> the entries held (8).
// The bucket's sequence counts the entries dropped since the last ack.
const inboxesKind = "inboxes"

// keyInboxCount is shorter than an entry key, which Cursor walks skip.
var keyInboxCount = []byte("n")

const inboxKeyLen = 24

// InboxEntry is one entry of an inbox.
type InboxEntry struct {
	Seq    uint64
	ItemID string
	Value  []byte
}

// InboxState is what an inbox holds.
type InboxState struct {
	Pending int64 // entries held
	Dropped int64 // entries dropped for the bound since the last ack
}

func inboxKey(seq uint64, itemID string) ([]byte, error) {
	u, err := parseID(itemID)
	if err != nil {
		return nil, err
	}
	k := make([]byte, inboxKeyLen)
	binary.BigEndian.PutUint64(k, seq)
	copy(k[8:], u)
	return k, nil
}

// inbox returns the bucket of inbox name, creating it when create is set
// (else nil when it does not exist).
func (t *txn) inbox(name string, create bool) (backend.Bucket, error) {
	root, err := t.records(inboxesKind, create)
	if err != nil || root == nil {
		return nil, err
	}
	if !create {
		return root.Bucket([]byte(name)), nil
	}
	return root.CreateBucketIfNotExists([]byte(name))
}

func inboxState(b backend.Bucket) InboxState {
	if b == nil {
		return InboxState{}
	}
	var st InboxState
	if v := b.Get(keyInboxCount); len(v) == 8 {
		st.Pending = int64(binary.BigEndian.Uint64(v))
	}
	st.Dropped = int64(b.Sequence())
	return st
}

func putInboxCount(b backend.Bucket, n int64) error {
	v := make([]byte, 8)
	binary.BigEndian.PutUint64(v, uint64(n))
	return b.Put(keyInboxCount, v)
}

// AppendInbox adds entries to inbox name, in one transaction; an entry
// whose sequence and item it already holds is left as it is. Past max
// entries the oldest are dropped and counted.
func (s *Store) AppendInbox(ctx context.Context, name string, entries []InboxEntry, max int) (InboxState, error) {
	var st InboxState
	err := s.update(ctx, func(t *txn) error {
		b, err := t.inbox(name, true)
		if err != nil {
			return err
		}
		st = inboxState(b)
		for _, e := range entries {
			k, err := inboxKey(e.Seq, e.ItemID)
			if err != nil {
				return err
			}
			if b.Get(k) != nil {
				continue
			}
			if err := b.Put(k, e.Value); err != nil {
				return fmt.Errorf("append inbox %s: %w", name, err)
			}
			st.Pending++
		}
		if st.Pending > int64(max) {
			c := b.Cursor()
			for k, _ := c.First(); k != nil && st.Pending > int64(max); k, _ = c.Next() {
				if len(k) != inboxKeyLen {
					continue
				}
				if err := c.Delete(); err != nil {
					return err
				}
				st.Pending--
				st.Dropped++
			}
			if err := b.SetSequence(uint64(st.Dropped)); err != nil {
				return err
			}
		}
		return putInboxCount(b, st.Pending)
	})
	return st, err
}

// ReadInbox returns the oldest limit entries of inbox name and its state.
func (s *Store) ReadInbox(ctx context.Context, name string, limit int) ([]InboxEntry, InboxState, error) {
	var out []InboxEntry
	var st InboxState
	err := s.view(ctx, func(t *txn) error {
		out = out[:0]
		b, err := t.inbox(name, false)
		if err != nil || b == nil {
			return err
		}
		st = inboxState(b)
		c := b.Cursor()
		for k, v := c.First(); k != nil && len(out) < limit; k, v = c.Next() {
			if len(k) != inboxKeyLen {
				continue
			}
			out = append(out, InboxEntry{Seq: binary.BigEndian.Uint64(k), ItemID: uuid.UUID(k[8:]).String(), Value: bytes.Clone(v)})
		}
		return nil
	})
	return out, st, err
}

// AckInbox deletes the entries of inbox name up to and including through
// (by sequence, then item), and resets its dropped count; the zero
// InboxEntry only resets the count.
func (s *Store) AckInbox(ctx context.Context, name string, through InboxEntry) error {
	var last []byte
	if through.ItemID != "" {
		var err error
		if last, err = inboxKey(through.Seq, through.ItemID); err != nil {
			return err
		}
	}
	return s.update(ctx, func(t *txn) error {
		b, err := t.inbox(name, false)
		if err != nil || b == nil {
			return err
		}
		st := inboxState(b)
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) != inboxKeyLen {
				continue
			}
			if last == nil || bytes.Compare(k, last) > 0 {
				break
			}
			if err := c.Delete(); err != nil {
				return err
			}
			st.Pending--
		}
		if err := b.SetSequence(0); err != nil {
			return err
		}
		return putInboxCount(b, st.Pending)
	})
}

// InboxState returns what inbox name holds.
func (s *Store) InboxState(ctx context.Context, name string) (InboxState, error) {
	var st InboxState
	err := s.view(ctx, func(t *txn) error {
		b, err := t.inbox(name, false)
		st = inboxState(b)
		return err
	})
	return st, err
}

// DeleteInbox deletes inbox name and what it holds.
func (s *Store) DeleteInbox(ctx context.Context, name string) error {
	return s.update(ctx, func(t *txn) error {
		root, err := t.records(inboxesKind, false)
		if err != nil || root == nil || root.Bucket([]byte(name)) == nil {
			return err
		}
		return root.DeleteBucket([]byte(name))
	})
}
