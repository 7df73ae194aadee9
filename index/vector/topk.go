package vector

import "slices"

// cand is a scored row: its score, its id (for tie-breaking and results) and its row.
type cand struct {
	score float32
	id    uint64
	row   int
}

// worse orders candidates: lower score first, and among equal scores the higher id.
func worse(a, b cand) bool {
	return a.score < b.score || (a.score == b.score && a.id > b.id)
}

// topK is a bounded min-heap keeping the k best candidates pushed into it.
// Its storage is allocated once, so pushes never allocate.
type topK struct {
	k int
	h []cand
}

func newTopK(k int) topK { return topK{k: k, h: make([]cand, 0, k)} }

// accepts reports whether a candidate with score s could enter the heap; a
// cheap pre-check that keeps the hot loop from building a cand for nothing.
func (t *topK) accepts(s float32) bool {
	return len(t.h) < t.k || s >= t.h[0].score
}

// push offers a candidate, evicting the worst if the heap is full.
func (t *topK) push(s float32, id uint64, row int) {
	c := cand{score: s, id: id, row: row}
	h := t.h
	if len(h) < t.k {
		h = append(h, c)
		i := len(h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !worse(h[i], h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		t.h = h
		return
	}
	if !worse(h[0], c) {
		return
	}
	h[0] = c
	i, n := 0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// mergeTopK returns the k best candidates across heaps, best first.
func mergeTopK(heaps []topK, k int) []cand {
	var all []cand
	if len(heaps) == 1 {
		all = heaps[0].h
	} else {
		for _, h := range heaps {
			all = append(all, h.h...)
		}
	}
	slices.SortFunc(all, func(a, b cand) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	return all[:min(k, len(all))]
}
