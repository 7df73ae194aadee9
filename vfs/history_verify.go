package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctxd/ctxd/vfs/backend"
)

// verifyHistory checks history against the items: every revision has its
// index entries and metadata, an item's pending revisions have its current
// content, every other revision's content is an archive entry of its item
// (found by the item's hash index, which names exactly its entries) holding
// the bytes of its hash, deltas have bases of the same item, shared blobs
// hold their hash's bytes, reference and base-use counts match the
// references, deleted entries name a
// delete revision of an item that is gone, and (unless history was off)
// every live item with revisions has a latest revision recording it as it is.
func (t *txn) verifyHistory(ctx context.Context) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf("history: "+format, args...)) }
	blobRefs := map[[32]byte]int64{} // shared blob -> entries naming it
	entryRefs := map[string]int64{}  // id | hash -> references to the item's entry
	baseUses := map[string]int64{}   // id | hash -> deltas based on the item's entry
	metaRefs := map[string]int64{}   // meta key -> references
	latest := map[string]revRec{}
	var revs []revRec
	nRevs := 0
	c := t.revs.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if !isRevKey(k) {
			continue
		}
		if nRevs++; nRevs%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r, err := decodeRevRec(k, v)
		if err != nil {
			fail("revision %x: %v", k, err)
			continue
		}
		revs = append(revs, r)
		metaRefs[string(metaKey(r.id, r.meta))]++
		lk := logKey(r.time, r.id, r.rev)
		if t.revLog.Get(lk) == nil {
			fail("revision %x: not in the time index", k)
		}
		if t.revActor.Get(append(actorPrefix(r.actor), lk...)) == nil {
			fail("revision %x: not in the actor index", k)
		}
		latest[string(r.id)] = r
	}
	for name, b := range map[string]backend.Bucket{"time": t.revLog, "actor": t.revActor} {
		if n := b.Stats().Keys; n != int64(nRevs) {
			fail("%d %s index entries for %d revisions", n, name, nRevs)
		}
	}
	gap := t.tx.Bucket([]byte(bucketMeta)).Get([]byte(keyHistoryGap)) != nil
	items := map[string]*Item{}
	for id, r := range latest {
		if t.items.Get([]byte(id)) == nil {
			continue
		}
		it, err := t.item([]byte(id))
		if err != nil {
			fail("%v", err)
			continue
		}
		items[id] = &it
		if !gap && !matchesLatest(r, &it) {
			fail("%s: latest revision %d (%s, %x) does not record the item (%s)", it.Ref(), r.rev, r.op, r.hash, it.ContentHash)
		}
	}
	for _, r := range revs {
		id := string(r.id)
		it := items[id]
		if it != nil && r.rev > latest[id].rev-t.pending(r.id) {
			if hex.EncodeToString(r.hash[:]) != it.ContentHash {
				fail("%s: pending revision %d does not have the item's content", it.Ref(), r.rev)
			}
			continue
		}
		entryRefs[id+string(r.hash[:])]++
	}
	type entryAt struct{ k, v []byte }
	var entries []entryAt
	indexed := map[string][]byte{} // id | hash -> rev of the index
	for k, v := c.First(); k != nil; k, v = c.Next() {
		switch {
		case isRevKey(k):
		case isEntryKey(k):
			entries = append(entries, entryAt{k, v})
		case isIndexKey(k):
			indexed[string(k[:16])+string(k[18:])] = v
		case len(k) == 18 && k[16] == 0xff && k[17] == 'p':
			id := string(k[:16])
			if n := t.pending(k[:16]); n <= 0 || items[id] == nil || n > latest[id].rev {
				fail("item %x: pending count %d for an item that is gone or has fewer revisions", k[:16], n)
			}
		case len(k) == 26 && k[16] == 0xff && k[17] == 'm':
			var m Item
			if len(v) < 8 || metaID(v[8:]) != [8]byte(k[18:]) || json.Unmarshal(v[8:], &m) != nil {
				fail("item %x: metadata %x is corrupt", k[:16], k[18:])
			} else if n := int64(binary.BigEndian.Uint64(v)); n != metaRefs[string(k)] {
				fail("item %x: metadata %x has reference count %d, but %d references", k[:16], k[18:], n, metaRefs[string(k)])
			}
			delete(metaRefs, string(k))
		default:
			fail("unknown key %x in the revisions", k)
		}
	}
	for k := range metaRefs { // not stored: the record's, so the item must live
		if items[k[:16]] == nil {
			fail("item %x: revisions reference missing metadata %x", k[:16], k[18:])
		} else if _, err := t.metaOfRecord([]byte(k[:16]), [8]byte([]byte(k[18:]))); err != nil {
			fail("%v", err)
		}
	}
	byRev := map[string][]byte{} // id | rev -> hash the index gives it
	for ih, rev := range indexed {
		byRev[ih[:16]+string(rev)] = []byte(ih[16:])
	}
	var decoded []entry
	for _, ea := range entries {
		id := ea.k[:16]
		hash := byRev[string(ea.k[:24])]
		if hash == nil {
			fail("item %x: content archived at %x is not indexed", id, ea.k[16:24])
			continue
		}
		delete(indexed, string(id)+string(hash))
		e, err := decodeEntry(ea.k, ea.v, hash)
		if err != nil {
			fail("%v", err)
			continue
		}
		decoded = append(decoded, e)
		if base := e.base(); base != nil {
			entryRefs[string(id)+string(base)]++
			baseUses[string(id)+string(base)]++
		}
		if e.kind == blobShared {
			blobRefs[e.hash]++
		}
	}
	for i, e := range decoded {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		id := e.key[:16]
		ih := string(id) + string(e.hash[:])
		if e.refs != entryRefs[ih] {
			fail("item %x: content %x has reference count %d, but %d references", id, e.hash, e.refs, entryRefs[ih])
		}
		if e.uses != baseUses[ih] {
			fail("item %x: content %x is the base of %d deltas by its count, but of %d", id, e.hash, e.uses, baseUses[ih])
		}
		delete(entryRefs, ih)
		delete(baseUses, ih)
		if base := e.base(); base != nil {
			b, ok, err := t.entryOf(id, base)
			switch {
			case err != nil || !ok:
				fail("item %x: content %x: delta base %x is missing (%v)", id, e.hash, base, err)
			case e.kind == blobDelta && !b.whole():
				fail("item %x: content %x: delta base %x is not stored whole", id, e.hash, base)
			case e.kind == blobTrim && e.depth() != b.depth()+1:
				fail("item %x: content %x: depth %d on a base of depth %d", id, e.hash, e.depth(), b.depth())
			}
		}
		if _, err := t.blobContent(id, e.hash[:]); err != nil {
			fail("%v", err)
		}
	}
	for ih, v := range indexed {
		fail("item %x: index of content %x names %x, which holds no entry", ih[:16], ih[16:], v)
	}
	for ih, n := range entryRefs {
		fail("item %x: %d references to content %x, which is not archived", ih[:16], n, ih[16:])
	}
	for ih, n := range baseUses {
		fail("item %x: %d deltas based on content %x, which is not archived", ih[:16], n, ih[16:])
	}
	bc := t.blobs.Cursor()
	for k, v := bc.First(); k != nil; k, v = bc.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(k) != 33 || (k[32] != 0 && k[32] != 1) {
			fail("malformed blob key %x", k)
			continue
		}
		h := [32]byte(k[:32])
		if k[32] == 1 {
			if t.blobs.Get(blobKey(h[:], 0)) == nil {
				fail("reference count of missing blob %x", h)
			}
			if len(v) != 8 || int64(binary.BigEndian.Uint64(v)) != blobRefs[h] {
				fail("blob %x: reference count %x, but %d references", h, v, blobRefs[h])
			}
			delete(blobRefs, h)
			continue
		}
		if t.blobs.Get(blobKey(h[:], 1)) == nil {
			fail("blob %x has no reference count", h)
		}
		if len(v) < 1 || v[0] != blobZstd {
			fail("blob %x is not stored whole", h)
			continue
		}
		if out, err := zdecode(v[1:], nil); err != nil {
			fail("blob %x: %v", h, err)
		} else if sha256.Sum256(out) != h {
			fail("blob %x: content does not match its hash", h)
		}
	}
	for h, n := range blobRefs {
		fail("blob %x: %d references but no blob", h, n)
	}
	dc := t.deleted.Cursor()
	for k, v := dc.First(); k != nil; k, v = dc.Next() {
		if len(k) < 17 || len(v) != 8 {
			fail("malformed deleted entry %x", k)
			continue
		}
		id := k[len(k)-16:]
		r, ok := latest[string(id)]
		switch {
		case t.items.Get(id) != nil:
			fail("deleted entry %x: the item lives", k)
		case !ok || !r.deleted || r.rev != int64(binary.BigEndian.Uint64(v)):
			fail("deleted entry %x: not the item's latest revision, a delete", k)
		case !bytes.Equal(k, deletedKey(r.drive, r.path, id)):
			fail("deleted entry %x: not at the deleted item's path", k)
		}
	}
	return errors.Join(errs...)
}
