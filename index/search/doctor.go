package search

import (
	"context"
	"fmt"

	"github.com/ctxd/ctxd/vfs"
)

// maxListed caps the chunk ids one problem line lists.
const maxListed = 5

// DoctorReport says whether the store and the indexes agree.
type DoctorReport struct {
	Problems                   []string
	StoreChunks, LexicalChunks int64
	StoreVectors, VectorChunks int64
	OutboxSeq, AppliedSeq      uint64
}

// Doctor verifies the store file and compares every chunk of the store with
// both indexes, at one outbox sequence: it pins a read of the store, brings
// the indexes to exactly that sequence from the pinned read, and compares
// before applying anything newer. Writes go on meanwhile (they wait only
// while the store's pages are checked, which comes first); the indexes apply
// them once Doctor is done. Whatever disagrees is drift and is listed;
// `Reindex` repairs it. Doctor stops with ctx's error when ctx ends.
func (e *Engine) Doctor(ctx context.Context) (DoctorReport, error) {
	var rep DoctorReport
	// The store's own checks are exact in their own transactions; they run
	// here, not on the run goroutine, so the indexes keep applying meanwhile.
	storeErr := e.store.Verify(ctx)
	if err := ctx.Err(); err != nil {
		return DoctorReport{}, err
	}
	err := e.do(ctx, func(c context.Context) error {
		e.setChecking(true)
		defer e.setChecking(false)
		pc, release, err := e.store.Pin(c)
		if err != nil {
			return err
		}
		defer release()
		for more := true; more; {
			if more, err = e.catchUp(pc); err != nil {
				return err
			}
		}
		if err := e.markIndexed(pc); err != nil { // what applying left to mark
			return err
		}
		rep, err = e.check(pc)
		return err
	})
	if err != nil {
		// fn may still be running (it stops soon): rep is not the caller's.
		return DoctorReport{}, err
	}
	if storeErr != nil {
		rep.Problems = append([]string{fmt.Sprintf("store: %v", storeErr)}, rep.Problems...)
	}
	return rep, nil
}

func (e *Engine) setChecking(on bool) {
	e.mu.Lock()
	e.state.Checking = on
	e.mu.Unlock()
}

// check runs on the run goroutine with the indexes caught up with the store
// that ctx pins. It returns an error only when ctx ended.
func (e *Engine) check(ctx context.Context) (DoctorReport, error) {
	var rep DoctorReport
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	e.mu.RLock()
	defer e.mu.RUnlock()
	var missingLex, missingVec, extraVec, driftQ []string
	seq, err := e.store.ScanIndexDocs(ctx, e.vec != nil, func(d vfs.IndexDoc) error {
		rep.StoreChunks += int64(len(d.Chunks))
		var en *entry
		if e.vec != nil {
			en = e.vec.cat.get(d.ItemID)
		}
		for j, ch := range d.Chunks {
			i := d.From + j
			id := ChunkID(d.ItemID, i)
			if ok, err := e.lex.Has(id); err != nil {
				return err
			} else if !ok {
				missingLex = append(missingLex, id)
			}
			if e.vec == nil || i >= maxVectorChunks {
				continue
			}
			has := en != nil && e.vec.idx.Contains(vectorID(en.ord, i))
			switch {
			case ch.Vector != nil && !has:
				missingVec = append(missingVec, id)
			case ch.Vector == nil && has:
				extraVec = append(extraVec, id)
			}
			if ch.Vector != nil {
				rep.StoreVectors++
			}
			var have [][32]byte
			if en != nil {
				have = en.questions[i]
			}
			if !sameQuestions(have, ch.Questions) {
				driftQ = append(driftQ, id)
			}
		}
		return nil
	})
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	if err != nil {
		problem("scan store: %v", err)
	}
	rep.OutboxSeq, rep.AppliedSeq = seq, e.state.AppliedSeq
	ln, err := e.lex.Count()
	if err != nil {
		problem("lexical index: %v", err)
	}
	rep.LexicalChunks = int64(ln)
	if e.vec != nil {
		rep.VectorChunks = int64(e.vec.chunkRows())
	}
	list := func(ids []string) string {
		if len(ids) > maxListed {
			return fmt.Sprintf("%v and %d more", ids[:maxListed], len(ids)-maxListed)
		}
		return fmt.Sprint(ids)
	}
	if len(missingLex) > 0 {
		problem("lexical index lacks %d chunks of the store: %s", len(missingLex), list(missingLex))
	}
	if rep.LexicalChunks != rep.StoreChunks {
		problem("lexical index holds %d chunks, the store %d", rep.LexicalChunks, rep.StoreChunks)
	}
	if len(missingVec) > 0 {
		problem("vector index lacks %d embedded chunks: %s", len(missingVec), list(missingVec))
	}
	if len(extraVec) > 0 {
		problem("vector index holds %d chunks the store has no vector for: %s", len(extraVec), list(extraVec))
	}
	if len(driftQ) > 0 {
		problem("vector index holds other question vectors than the store for %d chunks: %s", len(driftQ), list(driftQ))
	}
	if e.vec != nil && rep.VectorChunks != rep.StoreVectors {
		problem("vector index holds %d vectors, the store %d", rep.VectorChunks, rep.StoreVectors)
	}
	if rep.AppliedSeq != rep.OutboxSeq {
		problem("indexes applied the outbox up to %d of %d", rep.AppliedSeq, rep.OutboxSeq)
	}
	return rep, nil
}

// sameQuestions reports whether the question rows of a chunk (hashes by
// slot) are the store's questions qs.
func sameQuestions(have [][32]byte, qs []vfs.IndexQuestion) bool {
	if len(have) != min(len(qs), maxQuestionSlots) {
		return false
	}
	for i, h := range have {
		if qs[i].Hash != h {
			return false
		}
	}
	return true
}
