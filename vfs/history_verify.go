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
)

// verifyHistory checks history against the items: every revision has its
// log entry and metadata, an item's pending revisions are its newest
// and have its current content, every other revision names an archive
// entry of its item holding the bytes of its hash, deltas have bases of the
// same item, shared blobs hold their hash's bytes, reference and base-use
// counts match the references, deleted entries name a delete revision of
// an item that is gone, and (unless history was off) every live item with
// revisions has a latest revision recording it as it is.
func (t *txn) verifyHistory(ctx context.Context) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf("history: "+format, args...)) }
	blobRefs := map[[32]byte]int64{} // shared blob -> entries naming it
	entryRefs := map[string]int64{}  // entry key -> references to it
	baseUses := map[string]int64{}   // entry key -> deltas based on it
	metaRefs := map[string]int64{}   // meta key -> references
	latest := map[string]revRec{}
	byItem := map[string]int{}     // item -> revisions stored
	named := map[string][32]byte{} // entry key -> the content a revision naming it has
	var revs []revRec              // as reached from their items' heads, entries resolved
	nRevs := 0
	type entryAt struct{ k, v []byte }
	var entries []entryAt
	c := t.revs.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		switch {
		case isEntryKey(k):
			entries = append(entries, entryAt{k, v})
			continue
		case isMetaKey(k):
			continue // below, once the references are counted
		case !isRevKey(k):
			fail("unknown key %x in the revisions", k)
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
		byItem[string(r.id)]++
		metaRefs[string(metaKey(r.id, r.meta))]++
		if t.revActor.Get(append(actorPrefix(r.actor), k...)) == nil {
			fail("revision %x: not in the log", k)
		}
		if p, ok := latest[string(r.id)]; !ok || r.rev > p.rev {
			latest[string(r.id)] = r
		}
	}
	if n := t.revActor.Stats().Keys; n != int64(nRevs) {
		fail("%d log entries for %d revisions", n, nRevs)
	}
	trimBases := map[string]bool{} // entry key -> a trim delta a revision needs is based on it
	for id, n := range byItem {
		rs, keep := t.verifyChain([]byte(id), n, latest[id], fail)
		revs = append(revs, rs...)
		for p := range keep {
			trimBases[string(p.entryKey([]byte(id)))] = true
		}
	}
	for _, r := range revs {
		if r.entry.rev != 0 {
			ek := string(r.entry.entryKey(r.id))
			entryRefs[ek]++
			if h, ok := named[ek]; ok && h != r.hash {
				fail("item %x: revisions with contents %x and %x name archived content %d", r.id, h, r.hash, r.entry.rev)
			}
			named[ek] = r.hash
		}
	}
	t.verifyHeads(byItem, fail)
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
		if r.entry.rev != 0 {
			continue
		}
		switch it := items[string(r.id)]; {
		case it == nil:
			fail("item %x: revision %d is pending but the item is gone", r.id, r.rev)
		case hex.EncodeToString(r.hash[:]) != it.ContentHash:
			fail("%s: pending revision %d does not have the item's content", it.Ref(), r.rev)
		}
	}
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if !isMetaKey(k) {
			continue
		}
		var m Item
		if len(v) < 8 || metaID(v[8:]) != [8]byte(k[18:]) || json.Unmarshal(v[8:], &m) != nil {
			fail("item %x: metadata %x is corrupt", k[:16], k[18:])
		} else if n := int64(binary.BigEndian.Uint64(v)); n != metaRefs[string(k)] {
			fail("item %x: metadata %x has reference count %d, but %d references", k[:16], k[18:], n, metaRefs[string(k)])
		}
		delete(metaRefs, string(k))
	}
	for k := range metaRefs { // not stored: the record's, so the item must live
		if items[k[:16]] == nil {
			fail("item %x: revisions reference missing metadata %x", k[:16], k[18:])
		} else if _, err := t.metaOfRecord([]byte(k[:16]), [8]byte([]byte(k[18:]))); err != nil {
			fail("%v", err)
		}
	}
	var decoded []entry
	for _, ea := range entries {
		e, err := decodeEntry(ea.k, ea.v)
		if err != nil {
			fail("%v", err)
			continue
		}
		decoded = append(decoded, e)
		if base := e.base(); e.kind == blobDelta { // trim deltas are not counted in their base
			bk := string(base.entryKey(e.key[8:24]))
			entryRefs[bk]++
			baseUses[bk]++
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
		id, ek := e.key[8:24], string(e.key)
		if e.refs != entryRefs[ek] {
			fail("item %x: content %x has reference count %d, but %d references", id, e.hash, e.refs, entryRefs[ek])
		}
		if e.uses != baseUses[ek] {
			fail("item %x: content %x is the base of %d deltas by its count, but of %d", id, e.hash, e.uses, baseUses[ek])
		}
		if h, ok := named[ek]; ok && h != e.hash {
			fail("item %x: archived content %d is %x, not the %x its revisions have", id, e.pos().rev, e.hash, h)
		}
		if e.refs == 0 && !trimBases[ek] {
			fail("item %x: archived content %d is held by nothing", id, e.pos().rev)
		}
		delete(entryRefs, ek)
		delete(baseUses, ek)
		if base := e.base(); base.rev != 0 {
			b, err := t.entryAt(id, base)
			switch {
			case err != nil:
				fail("item %x: content %x: delta base %d is missing (%v)", id, e.hash, base.rev, err)
			case e.kind == blobDelta && !b.whole():
				fail("item %x: content %x: delta base %d is not stored whole", id, e.hash, base.rev)
			case e.kind == blobTrim && e.depth() != b.depth()+1:
				fail("item %x: content %x: depth %d on a base of depth %d", id, e.hash, e.depth(), b.depth())
			}
		}
		if _, err := t.blobContent(id, e.pos()); err != nil {
			fail("%v", err)
		}
	}
	for ek, n := range entryRefs {
		fail("item %x: %d references to archived content %d, which is missing", ek[8:24], n, posOfKey([]byte(ek)).rev)
	}
	for ek, n := range baseUses {
		fail("item %x: %d deltas based on archived content %d, which is missing", ek[8:24], n, posOfKey([]byte(ek)).rev)
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
		if len(k) < 17 || len(v) != 16 {
			fail("malformed deleted entry %x", k)
			continue
		}
		id := k[len(k)-16:]
		r, ok := latest[string(id)]
		switch {
		case t.items.Get(id) != nil:
			fail("deleted entry %x: the item lives", k)
		case !ok || !r.deleted || r.pos() != decodePos(v):
			fail("deleted entry %x: not the item's latest revision, a delete", k)
		case !bytes.Equal(k, deletedKey(r.drive, r.path, id)):
			fail("deleted entry %x: not at the deleted item's path", k)
		}
	}
	return errors.Join(errs...)
}

// verifyChain checks item id's n revisions (latest, its newest): its head
// names the newest, every revision is reached from it along the chain, and
// its pending revisions are its newest. It returns them as reached, their
// entries resolved, and the entries trim deltas they need are based on.
func (t *txn) verifyChain(id []byte, n int, latest revRec, fail func(string, ...any)) ([]revRec, map[revPos]bool) {
	head, ok := t.itemHead(id)
	if !ok || head != latest.pos() {
		fail("item %x: its head %v does not name its latest revision %d", id, head, latest.rev)
		return nil, nil
	}
	var out []revRec
	var chain []revLink
	archived := false
	err := t.revsDown(id, func(r revLink) bool {
		out, chain = append(out, r.record()), append(chain, r)
		if r.entry.rev != 0 {
			archived = true
		} else if archived {
			fail("item %x: pending revision %d is older than an archived one", id, r.rev)
		}
		return true
	})
	if err != nil {
		fail("item %x: %v", id, err)
	} else if len(out) != n {
		fail("item %x: %d of its %d revisions are reached from its latest", id, len(out), n)
	}
	for i, r := range out {
		for j, tm := range r.back.t[:r.back.n] {
			if o := i + 2 + j; o < len(out) && out[o].time != tm {
				fail("item %x: revision %d names revision %d's time as %d, not %d", id, r.rev, out[o].rev, tm, out[o].time)
			}
		}
	}
	keep, err := t.trimBases(id, chain)
	if err != nil {
		fail("item %x: %v", id, err)
	}
	return out, keep
}

// verifyHeads checks that every head names an item with revisions
// (byItem): those in item records, and those of items without a record.
func (t *txn) verifyHeads(byItem map[string]int, fail func(string, ...any)) {
	c := t.items.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if _, ok := recordHead(v); ok && byItem[string(k)] == 0 {
			fail("item %x: its record names a head but it has no revisions", k)
		}
	}
	hc := t.revHeads.Cursor()
	for k, v := hc.First(); k != nil; k, v = hc.Next() {
		switch {
		case len(k) != 16 || len(v) != 16:
			fail("malformed head %x", k)
		case t.items.Get(k) != nil:
			fail("item %x: a head of a live item outside its record", k)
		case byItem[string(k)] == 0:
			fail("item %x: a head but no revisions", k)
		}
	}
}
