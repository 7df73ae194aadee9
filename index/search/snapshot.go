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

	"github.com/google/uuid"
)

// The vector snapshot saves the vector leg so that start-up reads one file
// instead of joining every chunk with its vector in the store. Layout, little
// endian: magic | dims u32 | seq u64 | model str | items u32 | per item:
// id [16] | rows u32 | drive, path, mime str | tags u16 + str each | rows u64 |
// per row: item u32 | chunk u32 | then rows*dims float32 | CRC-32C of all
// before. str is u32 length + bytes. It is written to a temp file, synced
// and renamed, so a crash leaves the previous snapshot.

const snapshotMagic = "CTXDVEC1"

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
		id, err := uuid.Parse(en.id)
		if err != nil {
			f.Close()
			return fmt.Errorf("snapshot: item id %q: %w", en.id, err)
		}
		w.bytes(id[:])
		w.u32(uint32(en.rows))
		w.str(en.drive)
		w.str(en.path)
		w.str(en.mime)
		w.u16(uint16(len(en.tags)))
		for _, t := range en.tags {
			w.str(t)
		}
	}
	w.u64(uint64(e.vec.idx.Len()))
	e.vec.idx.Each(func(id uint64, _ []float32) {
		w.u32(ordinal[id>>chunkBits])
		w.u32(uint32(id & (maxVectorChunks - 1)))
	})
	row := make([]byte, 4*e.dims)
	e.vec.idx.Each(func(_ uint64, vec []float32) {
		for i, x := range vec {
			binary.LittleEndian.PutUint32(row[4*i:], math.Float32bits(x))
		}
		w.bytes(row)
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
	syncDir(e.opts.Dir)
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
func loadSnapshot(path, model string, dims int) (snapshot, error) {
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
	leg := newVectorLeg(dims)
	n := r.u32()
	items := make([]*entry, 0, min(n, 1<<24))
	for range n {
		if r.err != nil {
			break
		}
		id := uuid.UUID(r.bytes(16))
		en := leg.cat.add(id.String())
		en.rows = int(r.u32())
		en.drive, en.path, en.mime = r.str(), r.str(), r.str()
		for range r.u16() {
			en.tags = append(en.tags, r.str())
		}
		items = append(items, en)
	}
	rows := r.u64()
	if r.err == nil && rows > uint64(st.Size())/uint64(4*dims) {
		return snapshot{}, fmt.Errorf("vector snapshot claims %d rows, more than the file holds", rows)
	}
	// Rows and vectors are read in bulk: at a million rows, per-value reads
	// would dominate start-up.
	ids := make([]uint64, rows)
	rowBuf := r.bytes(8 * int(rows))
	for i := range ids {
		item, chunk := binary.LittleEndian.Uint32(rowBuf[8*i:]), binary.LittleEndian.Uint32(rowBuf[8*i+4:])
		if int(item) >= len(items) || chunk >= maxVectorChunks {
			if r.err == nil {
				return snapshot{}, errors.New("vector snapshot row out of range")
			}
			break
		}
		ids[i] = vectorID(items[item].ord, int(chunk))
	}
	data := make([]float32, int(rows)*dims)
	buf := make([]byte, 1<<20)
	for done := 0; done < len(data) && r.err == nil; {
		n := min(len(buf)/4, len(data)-done)
		r.read(buf[:4*n])
		for i := range n {
			data[done+i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
		done += n
	}
	if r.err != nil {
		return snapshot{}, fmt.Errorf("read vector snapshot: %w", r.err)
	}
	if err := leg.idx.Load(ids, data); err != nil {
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
