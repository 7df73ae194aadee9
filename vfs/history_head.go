package vfs

// An item's head: where its latest revision is. History is kept in time
// order, so an item's revisions are found from its head along the chain
// their records form (revRec.prev). The head of a live item is stored in
// front of its record, which every write of the item rewrites anyway, so
// recording a revision writes no page keyed by the item beyond those; a
// removed item's head moves to the revision_heads bucket.

import (
	"bytes"
	"fmt"
)

// bucketRevHeads holds the heads of items without a record (deleted):
// id (16) -> appendPos of the latest revision.
const bucketRevHeads = "revision_heads"

// headMark starts an item record that carries a head: headMark | time (8) |
// rev (8) | the JSON metadata (which starts with '{').
const (
	headMark = 0
	headLen  = 17
)

// recordHead returns the head an item record carries.
func recordHead(v []byte) (revPos, bool) {
	if len(v) < headLen || v[0] != headMark {
		return revPos{}, false
	}
	return decodePos(v[1:]), true
}

// recordJSON is the metadata of an item record.
func recordJSON(v []byte) []byte {
	if len(v) >= headLen && v[0] == headMark {
		return v[headLen:]
	}
	return v
}

// withHead returns item record JSON carrying head p.
func withHead(json []byte, p revPos) []byte {
	return append(appendPos(append(make([]byte, 0, headLen+len(json)), headMark), p), json...)
}

// itemHead returns the position of item u's latest revision; ok is false
// when u has no history.
func (t *txn) itemHead(u []byte) (revPos, bool) {
	if p, ok := t.pendingHeads[[16]byte(u)]; ok {
		return p, true
	}
	if v := t.items.Get(u); v != nil {
		return recordHead(v)
	}
	if v := t.revHeads.Get(u); len(v) == 16 {
		return decodePos(v), true
	}
	return revPos{}, false
}

// setItemHead makes p item u's head. It is held until the record is
// stored: the write that recorded the revision is about to store it anyway
// (putRecord takes the head), and what no write stores, storeHeads does.
func (t *txn) setItemHead(u []byte, p revPos) {
	if t.pendingHeads == nil {
		t.pendingHeads = map[[16]byte]revPos{}
	}
	t.pendingHeads[[16]byte(u)] = p
}

// recordValue is the stored record of item id with metadata rec: with the
// head the item has, taking it from revision_heads when the record is new
// (a deleted item restored).
func (t *txn) recordValue(id, rec []byte) ([]byte, error) {
	old := t.items.Get(id)
	head, has := t.pendingHeads[[16]byte(id)]
	switch {
	case has:
		delete(t.pendingHeads, [16]byte(id))
	case old != nil:
		head, has = recordHead(old)
	}
	if old == nil {
		if v := t.revHeads.Get(id); v != nil {
			if !has && len(v) == 16 {
				head, has = decodePos(v), true
			}
			if err := t.revHeads.Delete(bytes.Clone(id)); err != nil {
				return nil, err
			}
		}
	}
	if !has {
		return rec, nil
	}
	return withHead(rec, head), nil
}

// keepHead moves the head of item id, whose record is about to go, to
// revision_heads.
func (t *txn) keepHead(id []byte) error {
	head, ok := t.pendingHeads[[16]byte(id)]
	if ok {
		delete(t.pendingHeads, [16]byte(id))
	} else if head, ok = recordHead(t.items.Get(id)); !ok {
		return nil
	}
	return t.revHeads.Put(bytes.Clone(id), appendPos(nil, head))
}

// storeHeads writes the heads no write of the transaction stored into
// their items' records (a baseline revision recorded for an unchanged
// item), before the transaction commits. It fails when an item has no
// record: the head would be lost.
func (t *txn) storeHeads() error {
	for id, p := range t.pendingHeads {
		v := t.items.Get(id[:])
		if v == nil {
			return fmt.Errorf("history: the head of item %x was not stored", id)
		}
		if err := t.items.Put(id[:], withHead(recordJSON(v), p)); err != nil {
			return fmt.Errorf("put item %x: %w", id, err)
		}
		delete(t.pendingHeads, id)
	}
	return nil
}
