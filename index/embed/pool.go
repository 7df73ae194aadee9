package embed

import (
	"fmt"
	"math"
)

// batchInputs is one padded batch as the graph takes it: row-major
// [batch, seqLen] token ids, attention mask and token type ids.
type batchInputs struct {
	batch, seqLen int
	ids, mask     []int64
	types         []int64
}

// padBatch lays out tokenized inputs as one [len(seqs), longest] batch,
// padding every row with padID up to the longest input of this batch only
// (never to MaxTokens), with mask 1 on real tokens and 0 on padding. The
// slices are carved from buf when it is large enough, so the caller can reuse
// one buffer for every batch.
func padBatch(seqs [][]int64, padID int64, buf []int64) batchInputs {
	seqLen := 0
	for _, s := range seqs {
		seqLen = max(seqLen, len(s))
	}
	n := len(seqs) * seqLen
	if cap(buf) < 3*n {
		buf = make([]int64, 3*n)
	}
	buf = buf[:3*n]
	in := batchInputs{
		batch: len(seqs), seqLen: seqLen,
		ids: buf[:n], mask: buf[n : 2*n], types: buf[2*n : 3*n],
	}
	clear(in.types)
	for i, s := range seqs {
		row := i * seqLen
		copy(in.ids[row:], s)
		for j := range seqLen {
			if j < len(s) {
				in.mask[row+j] = 1
			} else {
				in.ids[row+j] = padID
				in.mask[row+j] = 0
			}
		}
	}
	return in
}

// pool turns the graph's token vectors hidden ([batch, seqLen, dims],
// row-major) into one vector per input: the mean over the positions where
// mask is 1 (PoolingMean) or the first position (PoolingCLS), then L2
// normalisation when normalize is set. It writes into out[i], which must have
// length dims.
func pool(out [][]float32, hidden []float32, mask []int64, batch, seqLen, dims int, pooling string, normalize bool) error {
	if len(hidden) < batch*seqLen*dims || len(mask) < batch*seqLen || len(out) < batch {
		return fmt.Errorf("pool: short input: hidden %d, mask %d, out %d for [%d,%d,%d]",
			len(hidden), len(mask), len(out), batch, seqLen, dims)
	}
	var acc []float64
	if pooling == PoolingMean {
		acc = make([]float64, dims)
	}
	for b := range batch {
		v := out[b][:dims]
		base := b * seqLen * dims
		switch pooling {
		case PoolingCLS:
			copy(v, hidden[base:base+dims])
		case PoolingMean:
			// Accumulate in float64: 512 float32 additions lose digits the
			// golden comparison can see.
			clear(acc)
			var count float64
			for t := range seqLen {
				m := mask[b*seqLen+t]
				if m == 0 {
					continue
				}
				w := float64(m)
				count += w
				row := hidden[base+t*dims : base+(t+1)*dims]
				for d, x := range row {
					acc[d] += w * float64(x)
				}
			}
			// sentence-transformers clamps the count to 1e-9; an all-padding
			// row (impossible with [CLS]/[SEP]) gives a zero vector.
			count = max(count, 1e-9)
			for d := range v {
				v[d] = float32(acc[d] / count)
			}
		default:
			return fmt.Errorf("pool: unknown pooling %q", pooling)
		}
		if normalize {
			l2normalize(v)
		}
	}
	return nil
}

// l2normalize scales v to unit length in place; a zero vector stays zero
// (sentence-transformers divides by max(norm, 1e-12)).
func l2normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	norm := max(math.Sqrt(ss), 1e-12)
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
}

// Cosine returns the cosine similarity of a and b (0 if either is zero or the
// lengths differ). For normalised vectors it equals the dot product.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
