package pgstore

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ctxd/ctxd/vfs/backend"
)

// MaxValueSize is the largest value pgstore stores: a value travels in one
// protocol message, which PostgreSQL caps at 1 GB.
const MaxValueSize = 512 << 20

// headSize is how many leading bytes of a key its index entry holds
// (ctxd_kv.head; see migrations/0001_init.sql).
const headSize = 1024

// Limits of one flush statement, so that a transaction's buffered writes
// travel in messages of bounded size.
const (
	flushRows  = 1000
	flushBytes = 16 << 20
)

var errManaged = errors.New("pgstore: View and Update end their transaction themselves")

// vectorKey names a row of ctxd_vectors.
type vectorKey struct{ model, hash string }

// kvKey names a key in a bucket; the key is a string so it can key a map.
type kvKey struct {
	bucket int64
	key    string
}

// tx is a backend.Tx on one pooled connection. Its mutex serializes the
// connection's queries, so a read transaction may serve several
// goroutines; a write transaction belongs to one goroutine, as in bbolt.
type tx struct {
	db       *DB
	parent   context.Context // the caller's
	ctx      context.Context // parent, also cancelled by Close
	cancel   func()
	writable bool
	managed  bool // run by View or Update, which end it

	mu   sync.Mutex
	conn *pgxpool.Conn // nil once ended
	err  error         // the first failure; every later call returns it
	cat  catalog
	// pending holds the writes not yet sent: the last Put (a non-nil
	// value) or Delete (nil) of each key. cache holds what this
	// transaction read or flushed (nil: absent or a nested bucket). Both
	// stay right because no one else writes while a write transaction
	// holds the write lock, and a read transaction sees one snapshot.
	pending  map[kvKey][]byte
	pendKeys map[int64]*pendingKeys // pending's keys per bucket, for cursors
	cache    map[kvKey][]byte
	tails    map[int64]*tail          // see tail.go
	seqs     map[*bucketMeta]struct{} // buckets whose sequence changed
	vectors  map[vectorKey][]float32  // MirrorVector's writes, sent with the next flush
	changed  bool                     // something to commit (and notify)
	size     int64
	sizeRead bool
}

var _ backend.Tx = (*tx)(nil)

const catalogSQL = `SELECT id, parent, name, seq FROM ctxd_buckets`

// begin opens a transaction: BEGIN, the write lock for a writer, and the
// bucket catalog, in one round trip. A connection found broken (a server
// restart the pool has not noticed yet) is replaced once.
func (db *DB) begin(ctx context.Context, writable bool) (*tx, error) {
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(db.closing, cancel)
	t := &tx{
		db: db, parent: ctx, ctx: tctx, writable: writable,
		cancel:   func() { stop(); cancel() },
		cache:    map[kvKey][]byte{},
		pending:  map[kvKey][]byte{},
		pendKeys: map[int64]*pendingKeys{},
		tails:    map[int64]*tail{},
		seqs:     map[*bucketMeta]struct{}{},
	}
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if err = t.start(); err == nil || !connectionLost(err) {
			break
		}
		db.pool.Reset()
	}
	if err == nil {
		db.mu.Lock()
		if db.closed {
			err = ErrClosed
		} else {
			db.txs[t] = struct{}{}
		}
		db.mu.Unlock()
	}
	if err != nil {
		t.mu.Lock()
		t.close()
		t.mu.Unlock()
		return nil, t.classify(err)
	}
	return t, nil
}

func (t *tx) start() error {
	conn, err := t.db.pool.Acquire(t.ctx)
	if err != nil {
		return err
	}
	t.conn = conn
	b := &pgx.Batch{}
	if t.writable {
		b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
		b.Queue(`SELECT pg_advisory_xact_lock($1)`, t.db.writeLock)
	} else {
		b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	}
	b.Queue(catalogSQL)
	br := conn.SendBatch(t.ctx, b)
	err = execN(br, b.Len()-1)
	if err == nil {
		err = t.cat.load(br)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.release()
	}
	return err
}

// execN reads the results of the next n statements of a batch.
func execN(br pgx.BatchResults, n int) error {
	for range n {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// classify turns a driver error into what the caller sees.
func (t *tx) classify(err error) error {
	if errors.Is(err, ErrClosed) || t.parent.Err() == nil && t.db.closing.Err() != nil {
		return ErrClosed
	}
	return t.db.srv.classify(t.parent, err)
}

// fail records the transaction's first failure; with t.mu held.
func (t *tx) fail(err error) error {
	if t.err == nil {
		t.err = t.classify(err)
		if backend.IsUnavailable(t.err) {
			t.db.pool.Reset() // every pooled connection is suspect
		}
	}
	return t.err
}

func (t *tx) failure() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// usable returns why the transaction cannot run a query; with t.mu held.
func (t *tx) usable() error {
	if t.err != nil {
		return t.err
	}
	if t.conn == nil {
		return backend.ErrTxClosed
	}
	return nil
}

// writeCheck returns why the transaction cannot write; with t.mu held.
func (t *tx) writeCheck() error {
	if err := t.usable(); err != nil {
		return err
	}
	if !t.writable {
		return backend.ErrTxNotWritable
	}
	return nil
}

// release rolls back what is still open on the server and returns the
// connection to the pool (which drops it if it is broken); with t.mu held.
func (t *tx) release() {
	conn := t.conn
	if conn == nil {
		return
	}
	t.conn = nil
	pc := conn.Conn().PgConn()
	if !pc.IsClosed() && pc.TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), releaseTimeout)
		if _, err := conn.Exec(ctx, `ROLLBACK`); err != nil {
			_ = conn.Conn().Close(ctx)
		}
		cancel()
	}
	conn.Release()
}

// close ends the transaction for good; with t.mu held.
func (t *tx) close() {
	t.release()
	t.cancel()
	t.db.mu.Lock()
	delete(t.db.txs, t)
	t.db.mu.Unlock()
}

// end is how View and Update finish: whatever is still open rolls back.
func (t *tx) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.close()
}

// Commit sends the buffered writes, a change notification and COMMIT in one
// round trip.
func (t *tx) Commit() error {
	if t.managed {
		return errManaged
	}
	t.mu.Lock()
	if t.conn != nil && t.err == nil && !t.writable {
		t.mu.Unlock()
		return backend.ErrTxNotWritable
	}
	t.mu.Unlock()
	return t.commit()
}

func (t *tx) commit() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		t.close()
		return err
	}
	b := &pgx.Batch{}
	n := t.queueFlush(b)
	if t.changed {
		b.Queue(`SELECT pg_notify($1, '')`, notifyChannel)
		n++
	}
	b.Queue(`COMMIT`)
	br := t.conn.SendBatch(t.ctx, b)
	err := execN(br, n)
	if err == nil {
		var tag pgconn.CommandTag
		tag, err = br.Exec()
		if err == nil && tag.String() != "COMMIT" {
			err = errors.New("pgstore: the server rolled the transaction back")
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.fail(err)
	}
	t.close()
	return t.err
}

// Rollback discards the transaction.
func (t *tx) Rollback() error {
	if t.managed {
		return errManaged
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil {
		if t.err != nil {
			return t.err
		}
		return backend.ErrTxClosed
	}
	t.close()
	return nil
}

func (t *tx) Writable() bool { return t.writable }

// Size is the on-disk size of ctxd's tables, read once per transaction.
func (t *tx) Size() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sizeRead || t.usable() != nil {
		return t.size
	}
	if err := t.conn.QueryRow(t.ctx, sizeSQL, tables).Scan(&t.size); err != nil {
		t.fail(err)
		return 0
	}
	t.sizeRead = true
	return t.size
}

func (t *tx) Bucket(name []byte) backend.Bucket {
	return t.cat.root().bucket(t, name)
}

func (t *tx) CreateBucketIfNotExists(name []byte) (backend.Bucket, error) {
	return t.createBucket(t.cat.root(), name, true)
}

func (t *tx) DeleteBucket(name []byte) error {
	return t.deleteBucket(t.cat.root(), name)
}

func (t *tx) ForEach(fn func(name []byte, b backend.Bucket) error) error {
	for _, name := range t.childNames(t.cat.root()) {
		b := t.Bucket(name)
		if b == nil {
			continue // fn deleted it
		}
		if err := fn(name, b); err != nil {
			return err
		}
	}
	return t.failure()
}

// get reads a key: the transaction's own writes first, then what it read
// before, then the server; with t.mu held.
func (t *tx) get(m *bucketMeta, key []byte) []byte {
	if len(key) == 0 || t.usable() != nil {
		return nil
	}
	k := kvKey{m.id, string(key)}
	if v, ok := t.pending[k]; ok {
		return v
	}
	if v, ok := t.cache[k]; ok {
		return v
	}
	if m.children[k.key] != nil {
		return nil // a nested bucket
	}
	if t.absent(m.id, key) {
		t.cache[k] = nil
		return nil
	}
	// Ask for the first key at or after key: when there is none, the
	// bucket's end is learnt as well.
	var found, v []byte
	err := t.conn.QueryRow(t.ctx, `SELECT key, value FROM ctxd_kv WHERE bucket = $1 AND head >= $2 AND key >= $3
		ORDER BY head, key LIMIT 1`, m.id, head(key), key).Scan(&found, &v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		t.learnEnd(m.id, key)
		v = nil
	case err != nil:
		t.fail(err)
		return nil
	case !bytes.Equal(found, key):
		v = nil
	case v == nil:
		v = []byte{} // an empty value, not a missing one
	}
	t.cache[k] = v
	return v
}

func head(key []byte) []byte { return key[:min(len(key), headSize)] }

// queueFlush queues the buffered writes and sequence changes on b and
// returns how many statements it queued; flushed must follow their
// success. With t.mu held.
func (t *tx) queueFlush(b *pgx.Batch) int {
	n := t.queueVectors(b)
	if len(t.pending) == 0 && len(t.seqs) == 0 {
		return n
	}
	keys := make([]kvKey, 0, len(t.pending))
	for k := range t.pending {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].bucket != keys[j].bucket {
			return keys[i].bucket < keys[j].bucket
		}
		return keys[i].key < keys[j].key
	})
	var delB, putB []int64
	var delK, putK, putV [][]byte
	var putBytes int
	flushPuts := func() {
		if len(putK) > 0 {
			b.Queue(upsertSQL, putB, putK, putV)
			n++
			putB, putK, putV, putBytes = nil, nil, nil, 0
		}
	}
	for _, k := range keys {
		v := t.pending[k]
		if v == nil {
			delB, delK = append(delB, k.bucket), append(delK, []byte(k.key))
			if len(delK) == flushRows*10 {
				b.Queue(deleteSQL, delB, delK)
				n++
				delB, delK = nil, nil
			}
			continue
		}
		if len(putK) > 0 && (len(putK) == flushRows || putBytes+len(v) > flushBytes) {
			flushPuts()
		}
		putB, putK, putV = append(putB, k.bucket), append(putK, []byte(k.key)), append(putV, v)
		putBytes += len(k.key) + len(v)
	}
	if len(delK) > 0 {
		b.Queue(deleteSQL, delB, delK)
		n++
	}
	flushPuts()
	if len(t.seqs) > 0 {
		ids := make([]int64, 0, len(t.seqs))
		seqs := make([]int64, 0, len(t.seqs))
		for m := range t.seqs {
			ids, seqs = append(ids, m.id), append(seqs, int64(m.seq))
		}
		b.Queue(`UPDATE ctxd_buckets b SET seq = s.seq
			FROM unnest($1::bigint[], $2::bigint[]) AS s(id, seq) WHERE b.id = s.id`, ids, seqs)
		n++
	}
	return n
}

const (
	upsertSQL = `INSERT INTO ctxd_kv (bucket, key, value)
		SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[])
		ON CONFLICT (bucket, head, tail) DO UPDATE SET value = excluded.value`
	upsertVectorSQL = `INSERT INTO ctxd_vectors (model, chunk_hash, embedding)
		SELECT m, h, e::halfvec FROM unnest($1::text[], $2::bytea[], $3::text[]) AS u(m, h, e)
		ON CONFLICT (model, chunk_hash) DO UPDATE SET embedding = excluded.embedding`
	deleteSQL = `DELETE FROM ctxd_kv k USING unnest($1::bigint[], $2::bytea[]) AS d(bucket, key)
		WHERE k.bucket = d.bucket AND k.head = substring(d.key FROM 1 FOR 1024) AND k.key = d.key`
)

// flushed moves the sent writes into the read cache; with t.mu held.
func (t *tx) flushed() {
	for k, v := range t.pending {
		t.cache[k] = v
		t.wrote(k.bucket, []byte(k.key), v, false)
	}
	clear(t.pending)
	clear(t.pendKeys)
	clear(t.seqs)
	clear(t.vectors)
}

// MirrorVector implements backend.VectorMirror: the vector goes to
// ctxd_vectors with the transaction's other writes. A vector halfvec
// cannot hold (not finite, or beyond ±65504) is left out: the store's own
// copy is what ctxd searches.
func (t *tx) MirrorVector(model string, chunkHash []byte, vec []float32) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writeCheck(); err != nil {
		return err
	}
	for _, x := range vec {
		if math.IsNaN(float64(x)) || math.Abs(float64(x)) > 65504 {
			return nil
		}
	}
	if t.vectors == nil {
		t.vectors = map[vectorKey][]float32{}
	}
	t.vectors[vectorKey{model, string(chunkHash)}] = slices.Clone(vec)
	t.changed = true
	return nil
}

// queueVectors queues the mirrored vectors on b, in statements of at most
// flushRows, and returns how many statements; with t.mu held.
func (t *tx) queueVectors(b *pgx.Batch) int {
	n := 0
	var models, texts []string
	var hashes [][]byte
	send := func() {
		b.Queue(upsertVectorSQL, models, hashes, texts)
		models, hashes, texts = nil, nil, nil
		n++
	}
	for k, vec := range t.vectors {
		buf := append(make([]byte, 0, 10*len(vec)), '[')
		for i, x := range vec {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendFloat(buf, float64(x), 'g', -1, 32)
		}
		models, hashes, texts = append(models, k.model), append(hashes, []byte(k.hash)), append(texts, string(append(buf, ']')))
		if len(models) == flushRows {
			send()
		}
	}
	if len(models) > 0 {
		send()
	}
	return n
}

// buffer records a Put (v non-nil) or Delete (v nil) until the next
// flush; with t.mu held.
func (t *tx) buffer(bucket int64, key []byte, v []byte) {
	k := kvKey{bucket, string(key)}
	pk := t.pendKeys[bucket]
	if pk == nil {
		pk = &pendingKeys{sorted: true}
		t.pendKeys[bucket] = pk
	}
	prev, ok := t.pending[k]
	switch {
	case !ok:
		if n := len(pk.keys); n > 0 && pk.keys[n-1] > k.key {
			pk.sorted = false
		}
		pk.keys = append(pk.keys, k.key)
	case prev == nil:
		pk.deletes--
	}
	if v == nil {
		pk.deletes++
	}
	t.pending[k] = v
	t.changed = true
}

// pendingKeys lists a bucket's buffered keys, sorted when a cursor needs
// them (keys written in order, the common case, never need sorting).
type pendingKeys struct {
	keys    []string
	sorted  bool
	deletes int // how many of keys are deleted
}

func (pk *pendingKeys) inOrder() []string {
	if !pk.sorted {
		slices.Sort(pk.keys)
		pk.sorted = true
	}
	return pk.keys
}

// roundTrip sends the buffered writes, then what queue adds, in one round
// trip, and hands read the results of the latter. A failure fails the
// transaction. With t.mu held.
func (t *tx) roundTrip(queue func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	return t.send(true, queue, read)
}

// send is roundTrip, leaving the buffered writes buffered unless flush.
func (t *tx) send(flush bool, queue func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	if err := t.usable(); err != nil {
		return err
	}
	b := &pgx.Batch{}
	n := 0
	if flush {
		n = t.queueFlush(b)
	}
	queue(b)
	br := t.conn.SendBatch(t.ctx, b)
	err := execN(br, n)
	if err == nil {
		err = read(br)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return t.fail(err)
	}
	if n > 0 {
		t.flushed()
	}
	return nil
}

// childNames lists a bucket's nested buckets in name order.
func (t *tx) childNames(m *bucketMeta) [][]byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([][]byte, 0, len(m.children))
	for name := range m.children {
		names = append(names, []byte(name))
	}
	slices.SortFunc(names, bytes.Compare)
	return names
}
