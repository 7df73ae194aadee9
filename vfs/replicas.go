package vfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ctxd/ctxd/vfs/backend"
)

// This file is what several daemons sharing one store (replicas over
// PostgreSQL) need of it: where each one's indexes stand, so the outbox is
// trimmed only once every live replica has applied it and `ctxd status`
// shows each one's lag; and leases on queued work, so a chunk is embedded
// once for all of them.

const (
	// bucketReplicas (in meta): replica id -> replicaRecord (JSON).
	bucketReplicas = "replicas"
	// bucketClaims: queue tag (1) | queue key -> expiry (8, unix ns) | owner
	// replica id. A claimed entry is left to its owner until the lease
	// expires; a claim outlives its entry only until it expires (claim
	// sweeps expired ones).
	bucketClaims  = "claims"
	claimEmbed    = 'e' // the chunk embedding queue
	claimQuestion = 'q' // the question embedding queue
)

// ReplicaRetention is how long a replica that stopped reporting still holds
// back the trimming of the outbox. One that returns later than this finds
// the entries it missed trimmed and rebuilds its indexes from the store.
const ReplicaRetention = time.Hour

// DefaultClaimLease is how long a replica's claim on queued work lasts: a
// replica that crashed holding claims delays that work by at most this.
const DefaultClaimLease = 2 * time.Minute

type replicaRecord struct {
	Host     string    `json:"host,omitempty"`
	Applied  uint64    `json:"applied"`
	Reported time.Time `json:"reported"`
}

// Replica is where one replica's indexes stand.
type Replica struct {
	ID, Host string
	Applied  uint64    // the outbox sequence its indexes applied durably
	Reported time.Time // when it last said so
	// Lag is how many changes it has not applied and LagTime how long the
	// oldest of them has waited (0 when caught up), as of its report.
	Lag     uint64
	LagTime time.Duration
	// Gone is set for a replica silent past ReplicaRetention: it no longer
	// holds back trimming.
	Gone bool
}

// Replicas returns the head of the outbox and every replica that has
// reported to the store, this one included, by id.
func (s *Store) Replicas(ctx context.Context) (head uint64, out []Replica, err error) {
	err = s.view(ctx, func(t *txn) error {
		head, out = t.outbox.Sequence(), out[:0]
		now := t.now
		return t.replicas().ForEach(func(k, v []byte) error {
			var rec replicaRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("replica %q: %w", k, err)
			}
			r := Replica{ID: string(k), Host: rec.Host, Applied: rec.Applied, Reported: rec.Reported,
				Gone: now.Sub(rec.Reported) > ReplicaRetention}
			r.Lag, r.LagTime = t.lag(head, rec.Applied)
			out = append(out, r)
			return nil
		})
	})
	return head, out, err
}

// Lag returns the head of the outbox, how many changes follow applied and
// how long the first of them has waited, as Replicas computes them from a
// report: for a replica whose live position is known better than its last
// report (the daemon's own, from its search engine).
func (s *Store) Lag(ctx context.Context, applied uint64) (head, lag uint64, wait time.Duration, err error) {
	err = s.view(ctx, func(t *txn) error {
		head = t.outbox.Sequence()
		lag, wait = t.lag(head, applied)
		return nil
	})
	return head, lag, wait, err
}

// lag is how many changes up to head follow applied, and how long the first
// of them has waited (0 when it is no longer retained).
func (t *txn) lag(head, applied uint64) (uint64, time.Duration) {
	if head <= applied {
		return 0, 0
	}
	var wait time.Duration
	if at, ok := t.changeTime(applied); ok {
		wait = max(t.now.Sub(at), 0)
	}
	return head - applied, wait
}

func (t *txn) replicas() backend.Bucket {
	return t.tx.Bucket([]byte(bucketMeta)).Bucket([]byte(bucketReplicas))
}

// changeTime returns when the first outbox entry after seq was written,
// if it is still retained and records its time.
func (t *txn) changeTime(seq uint64) (time.Time, bool) {
	k, v := t.outbox.Cursor().Seek(seqKey(seq + 1))
	if k == nil || len(v) < outboxTimeEnd {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v[outboxTimeEnd-8:]))), true
}

// reportReplica records that this store's replica applied the outbox
// through applied, and returns the sequence every live replica has applied.
func (t *txn) reportReplica(id, host string, applied uint64) (uint64, error) {
	b := t.replicas()
	rec, err := json.Marshal(replicaRecord{Host: host, Applied: applied, Reported: t.now})
	if err != nil {
		return 0, err
	}
	if err := b.Put([]byte(id), rec); err != nil {
		return 0, err
	}
	low := applied
	err = b.ForEach(func(k, v []byte) error {
		var r replicaRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("replica %q: %w", k, err)
		}
		if t.now.Sub(r.Reported) <= ReplicaRetention {
			low = min(low, r.Applied)
		}
		return nil
	})
	return low, err
}

// claimKey is the claims key of queue entry k of queue tag.
func claimKey(tag byte, k []byte) []byte { return append([]byte{tag}, k...) }

// claimable reports whether this replica may take queue entry k: nobody
// holds an unexpired claim on it but this replica.
func (t *txn) claimable(tag byte, k []byte, owner string) bool {
	v := t.tx.Bucket([]byte(bucketClaims)).Get(claimKey(tag, k))
	return v == nil || string(v[8:]) == owner || t.now.UnixNano() >= int64(binary.BigEndian.Uint64(v))
}

// claim leases queue entry k to owner until lease from now.
func (t *txn) claim(tag byte, k []byte, owner string, lease time.Duration) error {
	v := binary.BigEndian.AppendUint64(nil, uint64(t.now.Add(lease).UnixNano()))
	return t.tx.Bucket([]byte(bucketClaims)).Put(claimKey(tag, k), append(v, owner...))
}

// releaseClaims drops this replica's claims on the queue entries done
// (PendingChunk or PendingQuestion) on a shared store.
func releaseClaims[P interface{ queueKey() []byte }](s *Store, t *txn, tag byte, done []P) error {
	if !s.shared {
		return nil
	}
	b := t.tx.Bucket([]byte(bucketClaims))
	for _, p := range done {
		if err := b.Delete(claimKey(tag, p.queueKey())); err != nil {
			return err
		}
	}
	return nil
}

// sweepClaims deletes expired claims (those of entries gone meanwhile
// among them), so the bucket holds about the work in flight.
func (t *txn) sweepClaims() error {
	c := t.tx.Bucket([]byte(bucketClaims)).Cursor()
	now := t.now.UnixNano()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if now >= int64(binary.BigEndian.Uint64(v)) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
	}
	return nil
}

// claimQueue calls take for up to limit entries of queue q (tag), in queue
// order, after reset. On a store shared by replicas it skips the entries
// others hold and claims those taken, in one write; alone, it only reads.
func (s *Store) claimQueue(ctx context.Context, tag byte, q func(*txn) backend.Bucket, limit int, reset func(), take func(t *txn, k, v []byte) error) error {
	if !s.shared {
		return s.view(ctx, func(t *txn) error {
			reset()
			c := q(t).Cursor()
			n := 0
			for k, v := c.First(); k != nil && n < limit; k, v = c.Next() {
				if err := take(t, k, v); err != nil {
					return err
				}
				n++
			}
			return nil
		})
	}
	return s.update(ctx, func(t *txn) error {
		reset()
		if err := t.sweepClaims(); err != nil {
			return err
		}
		c := q(t).Cursor()
		var keys [][]byte
		for k, v := c.First(); k != nil && len(keys) < limit; k, v = c.Next() {
			if !t.claimable(tag, k, s.replicaID) {
				continue
			}
			if err := take(t, k, v); err != nil {
				return err
			}
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			if err := t.claim(tag, k, s.replicaID, s.claimLease); err != nil {
				return err
			}
		}
		return nil
	})
}
