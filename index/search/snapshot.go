package search

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"github.com/ctxd/ctxd/index/vector"
	"github.com/ctxd/ctxd/internal/fsync"
	"github.com/ctxd/ctxd/vfs"
)

// The vector snapshot saves the vector leg so that start-up reads one file
// instead of joining every chunk with its vector in the store. Layout, little
// endian: magic | dims u32 | seq u64 | model str | items u32 | per item:
// id [16] | rows u32 | drive, path, mime str | tags u16 + str each | time u64
// (lexical.TimeKey, as int64) |
// question chunks u32 + per chunk: chunk u32 | n u16 | n question hashes [32] |
// rows u64 | per row: item u32 | chunk u32 (a question row: 1<<31 | slot<<20 |
// chunk) | qstride u32 | rows*qstride int8 | rows
// float32 (the int8 copies and their scales; the float32 vectors stay in the
// store) | CRC-32C of all before. str is u32 length + bytes. It is written to
// a temp file, synced and renamed, so a crash leaves the previous snapshot.
// The matrices are written and read as whole arrays: at a million rows
// anything per value would dominate start-up.

const snapshotMagic = "CTXDVEC5"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type snapshot struct {
	leg *vectorLeg
	seq uint64
}

// writeSnapshot saves e.vec as of e.vecSeq; the caller holds e.mu.
func (e *Engine) writeSnapshot() error {
	path := filepath.Join(e.opts.Dir, snapshotFile)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // a no-op after the rename
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	w := &snapWriter{w: bw}
	w.bytes([]byte(snapshotMagic))
	w.u32(uint32(e.dims))
	w.u64(e.vecSeq)
	w.str(e.model)
	ordinal := map[uint64]uint32{} // catalog ordinal -> index in the file
	var items []*entry
	for _, en := range e.vec.cat.byOrd {
		if en != nil {
			ordinal[en.ord] = uint32(len(items))
			items = append(items, en)
		}
	}
	w.u32(uint32(len(items)))
	for _, en := range items {
		w.bytes(en.id[:])
		w.u32(uint32(en.rows))
		w.str(en.drive)
		w.str(en.path)
		w.str(en.mime)
		w.u16(uint16(len(en.tags)))
		for _, t := range en.tags {
			w.str(t)
		}
		w.u64(uint64(en.time))
		w.u32(uint32(len(en.questions)))
		for chunk, hashes := range en.questions {
			w.u32(uint32(chunk))
			w.u16(uint16(len(hashes)))
			for _, h := range hashes {
				w.bytes(h[:])
			}
		}
	}
	e.vec.idx.Export(func(m vector.Matrices) error {
		w.u64(uint64(len(m.IDs)))
		rows := make([]byte, 8*len(m.IDs))
		for i, id := range m.IDs {
			binary.LittleEndian.PutUint32(rows[8*i:], ordinal[id>>chunkBits])
			chunk := uint32(id & (maxVectorChunks - 1))
			if isQuestion(id) {
				chunk |= 1<<31 | uint32(questionSlot(id))<<chunkBits
			}
			binary.LittleEndian.PutUint32(rows[8*i+4:], chunk)
		}
		w.bytes(rows)
		w.u32(uint32(m.QStride))
		w.bytes(vector.Int8Bytes(m.Q))
		w.floats(m.QScale)
		return nil
	})
	if w.err == nil {
		w.err = bw.Flush()
	}
	if w.err == nil {
		w.err = binary.Write(f, binary.LittleEndian, crc.Sum32())
	}
	if w.err == nil {
		w.err = f.Sync()
	}
	if err := errors.Join(w.err, f.Close()); err != nil {
		return fmt.Errorf("write vector snapshot: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	fsync.Dir(e.opts.Dir) // best effort: the index is derived, a lost entry is rebuilt
	e.snapSeq, e.haveSnap = e.vecSeq, true
	e.snapAt = time.Now()
	return nil
}

// peekSnapshotSeq returns the sequence in a snapshot's header, if there is a
// readable one.
func peekSnapshotSeq(path string) (uint64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	r := &snapReader{r: bufio.NewReader(f)}
	magic := r.bytes(len(snapshotMagic))
	r.u32()
	seq := r.u64()
	if r.err != nil || string(magic) != snapshotMagic {
		return 0, false
	}
	return seq, true
}

// loadSnapshot reads a snapshot written for model and dims.
func loadSnapshot(path, model string, dims int, store *vfs.Store) (snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return snapshot{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return snapshot{}, err
	}
	if st.Size() < 4 {
		return snapshot{}, errors.New("vector snapshot truncated")
	}
	crc := crc32.New(castagnoli)
	r := &snapReader{r: bufio.NewReaderSize(io.TeeReader(io.LimitReader(f, st.Size()-4), crc), 1<<20)}
	if string(r.bytes(len(snapshotMagic))) != snapshotMagic {
		return snapshot{}, errors.New("not a ctxd vector snapshot")
	}
	gotDims := int(r.u32())
	seq := r.u64()
	gotModel := r.str()
	if r.err == nil && (gotModel != model || gotDims != dims) {
		return snapshot{}, fmt.Errorf("snapshot is for model %q (%d dims), not %q (%d dims)", gotModel, gotDims, model, dims)
	}
	leg := newVectorLeg(dims, store)
	n := r.u32()
	items := make([]*entry, 0, min(n, 1<<24))
	for range n {
		if r.err != nil {
			break
		}
		var id uuid.UUID
		r.read(id[:])
		en := leg.cat.add(id)
		en.rows = int(r.u32())
		drive, path, mime := r.str(), r.str(), r.str()
		var tags []string
		for range r.u16() {
			tags = append(tags, r.str())
		}
		leg.cat.describe(en, drive, path, mime, tags)
		en.time = int64(r.u64())
		for range min(r.u32(), maxVectorChunks) {
			chunk, n := int(r.u32()), int(r.u16())
			if r.err != nil || n == 0 || n > maxQuestionSlots {
				if r.err == nil {
					r.err = errors.New("question count out of range")
				}
				break
			}
			if en.questions == nil {
				en.questions = map[int][][32]byte{}
			}
			hashes := make([][32]byte, n)
			for j := range hashes {
				r.read(hashes[j][:])
			}
			en.questions[chunk] = hashes
			leg.qrows += n
		}
		items = append(items, en)
	}
	rows := r.u64()
	if r.err == nil && rows > uint64(st.Size())/uint64(dims) {
		return snapshot{}, fmt.Errorf("vector snapshot claims %d rows, more than the file holds", rows)
	}
	// Rows and vectors are read in bulk: at a million rows, per-value reads
	// would dominate start-up.
	ids := make([]uint64, rows)
	rowBuf := r.bytes(8 * int(rows))
	for i := range ids {
		item, chunk := binary.LittleEndian.Uint32(rowBuf[8*i:]), binary.LittleEndian.Uint32(rowBuf[8*i+4:])
		question, slot := chunk&(1<<31) != 0, int(chunk>>chunkBits)&(maxQuestionSlots-1)
		chunk &= maxVectorChunks - 1
		bad := binary.LittleEndian.Uint32(rowBuf[8*i+4:])&^(1<<31|(maxQuestionSlots-1)<<chunkBits|(maxVectorChunks-1)) != 0
		if bad || int(item) >= len(items) || question && slot >= len(items[item].questions[int(chunk)]) {
			if r.err == nil {
				return snapshot{}, errors.New("vector snapshot row out of range")
			}
			break
		}
		ids[i] = vectorID(items[item].ord, int(chunk))
		if question {
			ids[i] = questionID(items[item].ord, int(chunk), slot)
		}
	}
	qstride := int(r.u32())
	if r.err == nil && (qstride < dims || qstride > dims+64) {
		return snapshot{}, errors.New("vector snapshot: bad int8 stride")
	}
	if r.err != nil {
		return snapshot{}, fmt.Errorf("read vector snapshot: %w", r.err)
	}
	// The rows are read straight into the index's storage (outside the Go
	// heap): at a million rows a copy would be 380 MB more at start-up.
	err = leg.idx.LoadQuantized(ids, qstride, func(q []int8, qscale []float32) error {
		r.read(vector.Int8Bytes(q))
		r.floats(qscale)
		if r.err != nil {
			return fmt.Errorf("read vector snapshot: %w", r.err)
		}
		return nil
	})
	if err != nil {
		return snapshot{}, fmt.Errorf("vector snapshot: %w", err)
	}
	var want uint32
	if err := binary.Read(f, binary.LittleEndian, &want); err != nil {
		return snapshot{}, fmt.Errorf("read vector snapshot checksum: %w", err)
	}
	if want != crc.Sum32() {
		return snapshot{}, errors.New("vector snapshot checksum mismatch")
	}
	return snapshot{leg: leg, seq: seq}, nil
}

// snapWriter writes little-endian fields, keeping the first error.
type snapWriter struct {
	w   *bufio.Writer
	buf [8]byte
	err error
}

func (w *snapWriter) bytes(b []byte) {
	if w.err == nil {
		_, w.err = w.w.Write(b)
	}
}

func (w *snapWriter) u16(v uint16) {
	binary.LittleEndian.PutUint16(w.buf[:], v)
	w.bytes(w.buf[:2])
}

func (w *snapWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(w.buf[:], v)
	w.bytes(w.buf[:4])
}

func (w *snapWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(w.buf[:], v)
	w.bytes(w.buf[:8])
}

func (w *snapWriter) floats(v []float32) {
	if littleEndian {
		w.bytes(floatBytes(v))
		return
	}
	for _, x := range v {
		w.u32(math.Float32bits(x))
	}
}

func (w *snapWriter) str(s string) {
	w.u32(uint32(len(s)))
	w.bytes([]byte(s))
}

// snapReader reads little-endian fields, keeping the first error; after an
// error every read returns zero values.
type snapReader struct {
	r   *bufio.Reader
	buf [8]byte
	err error
}

func (r *snapReader) bytes(n int) []byte {
	b := make([]byte, n)
	r.read(b)
	return b
}

func (r *snapReader) read(b []byte) {
	if r.err != nil {
		clear(b)
		return
	}
	if _, err := io.ReadFull(r.r, b); err != nil {
		r.err = err
		clear(b)
	}
}

func (r *snapReader) u16() uint16 {
	r.read(r.buf[:2])
	return binary.LittleEndian.Uint16(r.buf[:])
}

func (r *snapReader) u32() uint32 {
	r.read(r.buf[:4])
	return binary.LittleEndian.Uint32(r.buf[:])
}

func (r *snapReader) u64() uint64 {
	r.read(r.buf[:8])
	return binary.LittleEndian.Uint64(r.buf[:])
}

func (r *snapReader) floats(v []float32) {
	if littleEndian {
		r.read(floatBytes(v))
		return
	}
	for i := range v {
		v[i] = math.Float32frombits(r.u32())
	}
}

func (r *snapReader) str() string {
	n := r.u32()
	if r.err != nil || n > 1<<20 {
		if r.err == nil {
			r.err = errors.New("string too long")
		}
		return ""
	}
	return string(r.bytes(int(n)))
}

// littleEndian is true on hosts whose memory order is the snapshot's, where
// the matrices are copied as bytes.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// floatBytes views v's memory as bytes.
func floatBytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}
