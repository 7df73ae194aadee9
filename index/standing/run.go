package standing

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// run matches what the engine applies, batch by batch, until ctx ends.
func (h *Hub) run(ctx context.Context) {
	defer close(h.done)
	reload := time.NewTicker(reloadEvery)
	defer reload.Stop()
	for ctx.Err() == nil {
		select {
		case <-reload.C:
			if err := h.reload(ctx); err != nil && ctx.Err() == nil {
				h.log.Error("reloading durable subscriptions failed", "err", err)
			}
		default:
		}
		applied, changed := h.engine.Applied()
		h.mu.Lock()
		pos, n, gen := h.pos, len(h.subs), h.gen
		if applied > pos && n == 0 {
			// Nothing to match: the hub follows for free.
			h.pos = applied
		}
		h.mu.Unlock()
		if applied <= pos || n == 0 {
			select {
			case <-ctx.Done():
			case <-changed:
			case <-h.wake:
			case <-reload.C:
				if err := h.reload(ctx); err != nil && ctx.Err() == nil {
					h.log.Error("reloading durable subscriptions failed", "err", err)
				}
			}
			continue
		}
		if err := h.pass(ctx, pos, applied, gen); err != nil && ctx.Err() == nil {
			h.log.Error("matching standing queries failed; retrying", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// pass matches the next batch of outbox entries in (pos, applied] against
// the subscriptions of generation gen, and queues what matched.
func (h *Hub) pass(ctx context.Context, pos, applied, gen uint64) error {
	if h.m == nil || h.mGen != gen || time.Since(h.idfAt) > idfEvery {
		h.mu.Lock()
		subs := slices.Collect(maps.Keys(h.subs))
		gen = h.gen
		h.mu.Unlock()
		if time.Since(h.idfAt) > idfEvery {
			h.idf, h.idfAt = map[string]float64{}, time.Now()
		}
		m, err := h.newMatcher(ctx, subs, h.idf)
		if err != nil {
			return err
		}
		h.m, h.mGen = m, gen
	}
	changes, retained, err := h.store.Changes(ctx, pos, batchChanges)
	if err != nil {
		return err
	}
	var gap *Gap
	if retained > pos+1 {
		// The engine rebuilt past trimmed entries: nobody matched them.
		gap = &Gap{From: pos + 1, To: min(retained-1, applied), Reason: "the search indexes were rebuilt and these changes were not matched; search to catch up"}
	}
	n := 0
	for n < len(changes) && changes[n].Seq <= applied {
		n++
	}
	changes = changes[:n]
	last := applied
	if len(changes) > 0 {
		last = changes[len(changes)-1].Seq
	}
	h.mu.Lock()
	if h.gen != h.mGen {
		h.mu.Unlock()
		return nil // subscriptions changed: match with the new set
	}
	h.pos = last
	subs := slices.Collect(maps.Keys(h.subs))
	durables := len(h.durable)
	h.mu.Unlock()
	if gap != nil {
		h.log.Warn("standing queries: changes were trimmed before they were matched", "from", gap.From, "to", gap.To)
		for _, s := range subs {
			if !s.durable { // an inbox has no place for it; the log says so
				s.push(Event{Gap: gap})
			}
		}
	}
	var matches []pendingMatch
	if len(changes) > 0 {
		if matches, err = h.matchChanges(ctx, changes, h.m); err != nil {
			h.rewind(pos, last)
			return err
		}
	}
	toInbox := map[*Sub][]*Match{}
	for _, pm := range matches {
		switch {
		case pm.match.Change.Seq <= pm.sub.from:
		case pm.sub.durable:
			toInbox[pm.sub] = append(toInbox[pm.sub], pm.match)
		default:
			pm.sub.push(Event{Match: pm.match})
		}
	}
	if durables > 0 {
		if err := h.deliverDurable(ctx, toInbox, last); err != nil {
			h.rewind(pos, last) // matched again: streams may see a push twice
			return err
		}
	}
	return nil
}

// rewind makes the next pass match (pos, last] again after a failure.
func (h *Hub) rewind(pos, last uint64) {
	h.mu.Lock()
	if h.pos == last {
		h.pos = pos
	}
	h.mu.Unlock()
}

// newMatcher builds a matcher of subs, weighing terms by their IDF in the
// lexical index; idf caches weights across calls (nil: none).
func (h *Hub) newMatcher(ctx context.Context, subs []*Sub, idf map[string]float64) (*matcher, error) {
	if idf == nil {
		idf = map[string]float64{}
	}
	m := newMatcher(subs, idf)
	var missing []string
	for _, t := range m.allTerms() {
		if _, ok := idf[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		st, err := h.engine.TermStats(ctx, missing, "")
		if err != nil {
			return nil, err
		}
		for i, t := range missing {
			idf[t] = idfOf(st.Docs, st.DF[i])
		}
		m.setIDF(idf)
	}
	return m, nil
}

// pendingMatch is a match for one subscription.
type pendingMatch struct {
	sub   *Sub
	match *Match
}

// itemWork is what a batch needs read of one item.
type itemWork struct {
	seq      uint64 // its last change in the batch
	replica  string // the replica that made it
	lex      bool   // its text or metadata changed
	from, to int    // else the chunks whose vectors changed
}

// matchChanges reads the items changes name, as they are now, matches
// them with m and returns the new matches, ordered by the sequence of the
// change that caused them. Each item version is pushed once per
// subscription (Sub.fresh).
func (h *Hub) matchChanges(ctx context.Context, changes []vfs.IndexChange, m *matcher) ([]pendingMatch, error) {
	withVec := len(m.vslots) > 0
	byID := map[string]*itemWork{}
	var order []string
	for _, c := range changes {
		w := byID[c.ItemID]
		if w == nil {
			w = &itemWork{from: -1}
			byID[c.ItemID] = w
			order = append(order, c.ItemID)
		}
		w.seq = c.Seq
		if !c.VectorsOnly {
			w.replica = c.Replica
			w.lex = true
		} else if w.from < 0 {
			w.from, w.to = c.VectorsFrom, c.VectorsTo
		} else {
			w.from, w.to = min(w.from, c.VectorsFrom), max(w.to, c.VectorsTo)
		}
	}
	var reads []vfs.IndexRead
	for _, id := range order {
		switch w := byID[id]; {
		case w.lex:
			reads = append(reads, vfs.IndexRead{ItemID: id})
		case withVec:
			reads = append(reads, vfs.IndexRead{ItemID: id, From: w.from, To: w.to})
		}
	}
	type found struct {
		hit
		doc *vfs.IndexDoc
	}
	best := map[[2]string]*found{} // (sub id, item id)
	for len(reads) > 0 {
		docs, err := h.store.IndexDocs(ctx, reads, withVec, readChunks, readBytes)
		if err != nil {
			return nil, err
		}
		if len(docs) == 0 {
			break
		}
		for i := range docs {
			d := &docs[i]
			err := m.match(d, byID[d.ItemID].lex, func(x hit) {
				k := [2]string{x.sub.id, d.ItemID}
				if b := best[k]; b == nil || x.score > b.score {
					best[k] = &found{hit: x, doc: &vfs.IndexDoc{ItemID: d.ItemID, Drive: d.Drive, Path: d.Path, Time: d.Time}}
				}
			})
			if err != nil {
				return nil, err
			}
		}
		reads = reads[len(docs):]
		if last := docs[len(docs)-1]; last.More {
			reads = append([]vfs.IndexRead{{ItemID: last.ItemID, From: last.From + len(last.Chunks), To: readTo(byID[last.ItemID])}}, reads...)
		}
	}
	var keep []*found
	for _, f := range best {
		if f.sub.fresh(f.doc.ItemID, f.doc.Time.UnixNano()) {
			keep = append(keep, f)
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	hits := make([]search.ChunkHit, len(keep))
	for i, f := range keep {
		hits[i] = search.ChunkHit{
			ChunkID: search.ChunkID(f.doc.ItemID, f.chunk), Score: f.score, QueryIndexes: slices.Sorted(slices.Values(f.queries)),
			Queries: f.sub.q.Texts, SnippetChars: f.sub.q.SnippetChars,
		}
		if f.lex >= 0 {
			hits[i].Ranks = append(hits[i].Ranks, search.LegRank{Leg: search.LegBM25, Rank: 1, Score: f.lex})
		}
		if f.vec >= 0 {
			hits[i].Ranks = append(hits[i].Ranks, search.LegRank{Leg: search.LegVector, Rank: 1, Score: f.vec})
		}
	}
	results, ok, err := h.engine.Present(ctx, hits)
	if err != nil {
		return nil, err
	}
	changeOf := map[string]Change{}
	var out []pendingMatch
	for i, f := range keep {
		if !ok[i] {
			continue // deleted since
		}
		ch, seen := changeOf[f.doc.ItemID]
		if !seen {
			w := byID[f.doc.ItemID]
			ch = h.changeOf(ctx, f.doc, w.seq)
			ch.ReplicaID, ch.Remote = w.replica, w.replica != "" && w.replica != h.opts.ReplicaID
			changeOf[f.doc.ItemID] = ch
		}
		out = append(out, pendingMatch{sub: f.sub, match: &Match{Result: results[i], Change: ch}})
	}
	slices.SortStableFunc(out, func(a, b pendingMatch) int {
		return cmp.Or(cmp.Compare(a.match.Change.Seq, b.match.Change.Seq), cmp.Compare(a.sub.id, b.sub.id))
	})
	return out, nil
}

// readTo is the end of what an item's read covers (0: through its last chunk).
func readTo(w *itemWork) int {
	if w.lex {
		return 0
	}
	return w.to
}

// changeOf describes the change at seq of item d from its latest revision.
func (h *Hub) changeOf(ctx context.Context, d *vfs.IndexDoc, seq uint64) Change {
	ch := Change{Seq: seq, Time: d.Time}
	revs, err := h.store.History(ctx, vfs.Ref{Drive: d.Drive, Path: d.Path}, 1, 0)
	if err == nil && len(revs) > 0 {
		r := revs[0]
		ch.Op, ch.Actor, ch.Rev, ch.Time = r.Op, r.Actor, r.Rev, r.Time
	}
	return ch
}
