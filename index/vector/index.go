package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/viterin/vek/vek32"
)

// ErrDims is returned when a vector's length differs from the index's dimensions.
var ErrDims = errors.New("vector: dimension mismatch")

// ErrInvalid is returned for a vector that cannot be normalised: all zeros,
// or holding a NaN or an infinity.
var ErrInvalid = errors.New("vector: zero or non-finite vector")

// DefaultRescore is the default Options.Rescore: the int8 scan keeps
// k*DefaultRescore candidates for exact rescoring.
const DefaultRescore = 8

// minShardRows is the fewest rows worth a goroutine of their own.
const minShardRows = 16384

// Hit is one search result: the caller's id and its cosine similarity to the query.
type Hit struct {
	ID    uint64
	Score float32
}

// Filter restricts a search to the ids it allows. It is consulted inside the
// scan, before top-k selection, so a scoped search finds its matches however
// low they rank globally. Allowed is called concurrently from several
// goroutines and must be safe for that; it must not call back into the Index.
type Filter interface {
	// Allowed reports whether id may appear in the results.
	Allowed(id uint64) bool
}

// FilterFunc adapts a function to a Filter.
type FilterFunc func(id uint64) bool

// Allowed calls f(id).
func (f FilterFunc) Allowed(id uint64) bool { return f(id) }

// Options configure an Index. The zero value is an exact index using every CPU.
type Options struct {
	// Quantize keeps an int8 copy of every vector (one scale per vector) and
	// searches it first, rescoring the best k*Rescore candidates exactly in
	// float32. It costs dims+4 bytes more per vector and is approximate.
	Quantize bool
	// Rescore is the candidate multiplier of a quantized search; 0 means
	// DefaultRescore. Ignored unless Quantize is set.
	Rescore int
	// Shards caps the goroutines one search scans with; 0 means runtime.NumCPU().
	Shards int
	// Exact, with Quantize, keeps only the int8 copy in memory (qstride+4
	// bytes a vector instead of 4*dims more) and fetches the float32 vectors
	// of the candidates to rescore from Exact. SearchExact then fails.
	Exact ExactSource
}

// ExactSource supplies the float32 vectors of an index that keeps only int8
// copies. It is called with the index's read lock held and must not call back
// into the Index.
type ExactSource interface {
	// Vectors returns the vectors of ids, in any scale (they are normalised
	// here), nil for an id it no longer has.
	Vectors(ids []uint64) ([][]float32, error)
}

// ErrNoFloat is returned by SearchExact on an index built with Options.Exact.
var ErrNoFloat = errors.New("vector: exact scan needs the float32 matrix, which this index does not keep")

// Index is an in-memory index of L2-normalised float32 vectors answering exact
// (or, with Options.Quantize, int8-then-exact) cosine top-k queries.
// It is safe for concurrent use: searches share a read lock, Upsert and Delete
// take the write lock.
type Index struct {
	dims    int
	qstride int // int8 row length: dims rounded up to a multiple of 32
	rescore int
	shards  int
	quant   bool
	exact   ExactSource // nil: the float32 matrix is kept in data

	mu     sync.RWMutex
	data   []float32      // row-major matrix, len(ids)*dims; nil with an ExactSource
	ids    []uint64       // row -> id
	rows   map[uint64]int // id -> row
	qdata  []int8         // int8 matrix, len(ids)*qstride, nil unless quant
	qmem   *offHeap       // backs qdata outside the Go heap
	qscale []float32      // per-row dequantisation scale, nil unless quant
}

// New returns an empty exact index of dims-dimensional vectors.
func New(dims int) *Index { return NewWithOptions(dims, Options{}) }

// NewQuantized returns an empty index that searches an int8 copy first and
// rescores k*rescore candidates exactly (rescore 0 means DefaultRescore).
func NewQuantized(dims, rescore int) *Index {
	return NewWithOptions(dims, Options{Quantize: true, Rescore: rescore})
}

// NewWithOptions returns an empty index of dims-dimensional vectors. It panics
// if dims is not positive.
func NewWithOptions(dims int, opts Options) *Index {
	if dims <= 0 {
		panic(fmt.Sprintf("vector: dims %d, want > 0", dims))
	}
	x := &Index{
		dims:    dims,
		qstride: (dims + 31) &^ 31,
		rescore: opts.Rescore,
		shards:  opts.Shards,
		quant:   opts.Quantize || opts.Exact != nil,
		exact:   opts.Exact,
		rows:    make(map[uint64]int),
		qmem:    &offHeap{},
	}
	// The map outlives nothing that reads it: rows are only read under the
	// index's lock, and Export's callers must not keep them.
	runtime.AddCleanup(x, (*offHeap).release, x.qmem)
	if x.rescore <= 0 {
		x.rescore = DefaultRescore
	}
	if x.shards <= 0 {
		x.shards = runtime.NumCPU()
	}
	return x
}

// Dims returns the dimension of the index's vectors.
func (x *Index) Dims() int { return x.dims }

// Len returns the number of vectors in the index.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids)
}

// Contains reports whether id has a vector in the index.
func (x *Index) Contains(id uint64) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.rows[id]
	return ok
}

// Reserve grows the index's storage to hold n more vectors without
// reallocating: a bulk load of a known size then never copies the matrix
// (growth by append briefly needs the old and the new matrix at once).
func (x *Index) Reserve(n int) {
	if n <= 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ids = slices.Grow(x.ids, n)
	if x.exact == nil {
		x.data = slices.Grow(x.data, n*x.dims)
	}
	if x.quant {
		x.qdata = x.qmem.grow(x.qdata, n*x.qstride)[:len(x.qdata)]
		x.qscale = slices.Grow(x.qscale, n)
	}
}

// Upsert stores vec under id, replacing any vector id already had. vec is
// copied and L2-normalised, so any non-zero finite vector is accepted.
func (x *Index) Upsert(id uint64, vec []float32) error {
	if len(vec) != x.dims {
		return fmt.Errorf("upsert %d: %w: got %d, want %d", id, ErrDims, len(vec), x.dims)
	}
	inv, err := invNorm(vec)
	if err != nil {
		return fmt.Errorf("upsert %d: %w", id, err)
	}
	d := x.dims
	x.mu.Lock()
	defer x.mu.Unlock()
	row, ok := x.rows[id]
	if !ok {
		row = len(x.ids)
		x.ids = append(x.ids, id)
		x.rows[id] = row
		if x.exact == nil {
			x.data = slices.Grow(x.data, d)[:(row+1)*d]
		}
		if x.quant {
			x.qdata = x.qmem.grow(x.qdata, x.qstride)
			x.qscale = append(x.qscale, 0)
		}
	}
	var dst []float32
	if x.exact == nil {
		dst = x.data[row*d : (row+1)*d]
	} else {
		dst = make([]float32, d)
	}
	for i, v := range vec {
		dst[i] = v * inv
	}
	if x.quant {
		x.qscale[row] = quantize(x.qdata[row*x.qstride:(row+1)*x.qstride], dst)
	}
	return nil
}

// Matrices are an index's contents as Export shows them and Load takes
// them: row i holds id IDs[i], its normalised vector Data[i*dims:(i+1)*dims]
// and, for a quantized index, its int8 copy Q[i*QStride:(i+1)*QStride] with
// scale QScale[i].
type Matrices struct {
	IDs     []uint64
	Data    []float32
	Q       []int8
	QScale  []float32
	QStride int
}

// Export calls fn with the index's matrices under the read lock; fn must not
// keep them or call back into the Index. It is for saving an index quickly.
func (x *Index) Export(fn func(Matrices) error) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return fn(Matrices{IDs: x.ids, Data: x.data, Q: x.qdata, QScale: x.qscale, QStride: x.qstride})
}

// Load replaces the index's contents with m, whose slices it takes
// ownership of. The rows must already be L2-normalised, as Export shows
// them: Load restores a saved index without the per-row work of Upsert. A
// quantized index computes the int8 copy in parallel when m has none (or one
// of another stride).
func (x *Index) Load(m Matrices) error {
	ids, data := m.IDs, m.Data
	haveQ := m.QStride == x.qstride && len(m.Q) == len(ids)*x.qstride && len(m.QScale) == len(ids)
	if len(data) != len(ids)*x.dims && (x.exact == nil || !haveQ || len(data) != 0) {
		return fmt.Errorf("load: %w: %d values for %d rows of %d", ErrDims, len(data), len(ids), x.dims)
	}
	rows, err := rowsOf(ids)
	if err != nil {
		return err
	}
	var qmem []byte
	var qdata []int8
	qscale := m.QScale
	switch {
	case !x.quant:
		qscale = nil
	case haveQ:
		qmem = allocRows(len(ids) * x.qstride)
		qdata = bytesInt8(qmem)
		copy(qdata, m.Q)
	default:
		qmem = allocRows(len(ids) * x.qstride)
		qdata, qscale = bytesInt8(qmem), make([]float32, len(ids))
		var wg sync.WaitGroup
		per := (len(ids) + x.shards - 1) / max(x.shards, 1)
		for lo := 0; lo < len(ids); lo += per {
			hi := min(lo+per, len(ids))
			wg.Go(func() {
				for r := lo; r < hi; r++ {
					qscale[r] = quantize(qdata[r*x.qstride:(r+1)*x.qstride], data[r*x.dims:(r+1)*x.dims])
				}
			})
		}
		wg.Wait()
	}
	if x.exact != nil {
		data = nil // the source has the float32 vectors
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.qmem.adopt(qmem)
	x.ids, x.data, x.rows, x.qdata, x.qscale = ids, data, rows, qdata, qscale
	return nil
}

// LoadQuantized replaces the contents of an index that keeps only int8 rows
// (Options.Exact) with rows for ids: fill writes their int8 rows (QStride
// values each, as Export shows them) and scales straight into the index's
// storage, so a saved index loads without Load's copy of its rows.
func (x *Index) LoadQuantized(ids []uint64, qstride int, fill func(q []int8, qscale []float32) error) error {
	if x.exact == nil {
		return errors.New("load: LoadQuantized is for an index with an exact source; use Load")
	}
	if qstride != x.qstride {
		return fmt.Errorf("load: %w: int8 rows of %d values, the index's are %d", ErrDims, qstride, x.qstride)
	}
	rows, err := rowsOf(ids)
	if err != nil {
		return err
	}
	qmem := allocRows(len(ids) * x.qstride)
	qdata, qscale := bytesInt8(qmem), make([]float32, len(ids))
	if err := fill(qdata, qscale); err != nil {
		freeRows(qmem)
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.qmem.adopt(qmem)
	x.ids, x.data, x.rows, x.qdata, x.qscale = ids, nil, rows, qdata, qscale
	return nil
}

// rowsOf maps ids to their rows, refusing an id that appears twice.
func rowsOf(ids []uint64) (map[uint64]int, error) {
	rows := make(map[uint64]int, len(ids))
	for row, id := range ids {
		if _, dup := rows[id]; dup {
			return nil, fmt.Errorf("load: id %d appears twice", id)
		}
		rows[id] = row
	}
	return rows, nil
}

// Delete removes id's vector and reports whether there was one. The last row
// is moved into the hole, so a delete costs O(dims) and never rebuilds.
func (x *Index) Delete(id uint64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	row, ok := x.rows[id]
	if !ok {
		return false
	}
	delete(x.rows, id)
	last := len(x.ids) - 1
	d, qs := x.dims, x.qstride
	if row != last {
		moved := x.ids[last]
		x.ids[row] = moved
		x.rows[moved] = row
		if x.exact == nil {
			copy(x.data[row*d:(row+1)*d], x.data[last*d:(last+1)*d])
		}
		if x.quant {
			copy(x.qdata[row*qs:(row+1)*qs], x.qdata[last*qs:(last+1)*qs])
			x.qscale[row] = x.qscale[last]
		}
	}
	x.ids = x.ids[:last]
	if x.exact == nil {
		x.data = x.data[:last*d]
	}
	if x.quant {
		x.qdata = x.qdata[:last*qs]
		x.qscale = x.qscale[:last]
	}
	return true
}

// Search returns the k vectors most cosine-similar to q among those allow
// admits (nil admits all), best first; ties are broken by ascending id. q need
// not be normalised. A quantized index searches approximately (see Options).
func (x *Index) Search(q []float32, k int, allow Filter) ([]Hit, error) {
	return x.SearchContext(context.Background(), q, k, allow)
}

// SearchContext is Search that gives up with ctx's error once ctx ends:
// every shard of the scan checks ctx every scanCheckRows rows.
func (x *Index) SearchContext(ctx context.Context, q []float32, k int, allow Filter) ([]Hit, error) {
	if !x.quant {
		return x.search(ctx, q, k, allow, 0)
	}
	return x.search(ctx, q, k, allow, x.rescore)
}

// SearchExact is Search forced to the exact float32 scan, even on a quantized
// index: the reference a quantized search's recall is measured against.
func (x *Index) SearchExact(q []float32, k int, allow Filter) ([]Hit, error) {
	return x.search(context.Background(), q, k, allow, 0)
}

// scanCheckRows is how many rows a scan shard covers between checks of its
// context: about a millisecond of work.
const scanCheckRows = 8192

// search scans exactly if rescore is 0, else scans the int8 matrix for
// k*rescore candidates and rescores them.
func (x *Index) search(ctx context.Context, q []float32, k int, allow Filter, rescore int) ([]Hit, error) {
	quant := rescore > 0
	if !quant && x.exact != nil {
		return nil, ErrNoFloat
	}
	if len(q) != x.dims {
		return nil, fmt.Errorf("search: %w: got %d, want %d", ErrDims, len(q), x.dims)
	}
	inv, err := invNorm(q)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	qn := make([]float32, len(q))
	for i, v := range q {
		qn[i] = v * inv
	}
	var qq []int8
	if quant {
		qq = make([]int8, x.qstride)
		quantize(qq, qn)
	}
	if k <= 0 {
		return nil, nil
	}

	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	if n == 0 {
		return nil, nil
	}
	keep := k
	if quant {
		keep = k * rescore
	}
	nsh := min(x.shards, (n+minShardRows-1)/minShardRows)
	nsh = max(nsh, 1)
	heaps := make([]topK, nsh)
	var wg sync.WaitGroup
	for s := range nsh {
		lo, hi := s*n/nsh, (s+1)*n/nsh
		h := &heaps[s]
		*h = newTopK(keep)
		scan := func() {
			for from := lo; from < hi && ctx.Err() == nil; from += scanCheckRows {
				to := min(from+scanCheckRows, hi)
				if quant {
					x.scanInt8(qq, from, to, allow, h)
				} else {
					x.scanExact(qn, from, to, allow, h)
				}
			}
		}
		if s == nsh-1 {
			scan()
		} else {
			wg.Go(scan)
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	best := mergeTopK(heaps, keep)
	if quant {
		// Rescore the int8 candidates exactly in float32.
		h := newTopK(k)
		if x.exact == nil {
			for _, c := range best {
				r := c.row
				h.push(vek32.Dot(qn, x.data[r*x.dims:(r+1)*x.dims]), c.id, r)
			}
		} else if err := x.rescoreFrom(qn, best, &h); err != nil {
			return nil, err
		}
		best = mergeTopK([]topK{h}, k)
	}
	hits := make([]Hit, len(best))
	for i, c := range best {
		hits[i] = Hit{ID: c.id, Score: c.score}
	}
	return hits, nil
}

// scanExact pushes the float32 dot product of q with each allowed row in [lo, hi) into h.
func (x *Index) scanExact(q []float32, lo, hi int, allow Filter, h *topK) {
	d := x.dims
	for r := lo; r < hi; r++ {
		id := x.ids[r]
		if allow != nil && !allow.Allowed(id) {
			continue
		}
		s := vek32.Dot(q, x.data[r*d:(r+1)*d])
		if h.accepts(s) {
			h.push(s, id, r)
		}
	}
}

// scanInt8 pushes the approximate (int8) score of qq with each allowed row in [lo, hi) into h.
func (x *Index) scanInt8(qq []int8, lo, hi int, allow Filter, h *topK) {
	qs := x.qstride
	for r := lo; r < hi; r++ {
		id := x.ids[r]
		if allow != nil && !allow.Allowed(id) {
			continue
		}
		s := float32(dotInt8(qq, x.qdata[r*qs:(r+1)*qs])) * x.qscale[r]
		if h.accepts(s) {
			h.push(s, id, r)
		}
	}
}

// rescoreFrom scores candidates with the float32 vectors of the ExactSource.
func (x *Index) rescoreFrom(qn []float32, cands []cand, h *topK) error {
	ids := make([]uint64, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	vecs, err := x.exact.Vectors(ids)
	if err != nil {
		return fmt.Errorf("rescore: %w", err)
	}
	if len(vecs) != len(ids) {
		return fmt.Errorf("rescore: %d vectors for %d ids", len(vecs), len(ids))
	}
	for i, c := range cands {
		v := vecs[i]
		if len(v) != x.dims {
			continue // gone from the source since it was indexed
		}
		inv, err := invNorm(v)
		if err != nil {
			continue
		}
		h.push(vek32.Dot(qn, v)*inv, c.id, c.row)
	}
	return nil
}

// invNorm returns 1/‖v‖, or ErrInvalid if v is zero or not finite.
func invNorm(v []float32) (float32, error) {
	var ss float64
	for _, f := range v {
		ss += float64(f) * float64(f)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return 0, ErrInvalid
	}
	return float32(1 / math.Sqrt(ss)), nil
}
