package pgstore

import (
	"github.com/jackc/pgx/v5"

	"github.com/ctxd/ctxd/vfs/backend"
)

// bucketMeta is a bucket's catalog row as a transaction sees it.
type bucketMeta struct {
	id, parent int64
	name       string
	seq        uint64
	children   map[string]*bucketMeta
}

// catalog is the bucket tree a transaction loaded at its start (after the
// write lock, for a writer): Bucket and ForEachBucket cost no round trip.
// A write transaction changes its own copy as it creates and deletes.
type catalog struct {
	byID map[int64]*bucketMeta // 0: the root, holding the top-level buckets
}

func (c *catalog) root() *bucketMeta { return c.byID[0] }

func (c *catalog) load(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	c.byID = map[int64]*bucketMeta{0: {children: map[string]*bucketMeta{}}}
	var all []*bucketMeta
	for rows.Next() {
		m := &bucketMeta{children: map[string]*bucketMeta{}}
		var name []byte
		var seq int64
		if err := rows.Scan(&m.id, &m.parent, &name, &seq); err != nil {
			return err
		}
		m.name, m.seq = string(name), uint64(seq)
		c.byID[m.id] = m
		all = append(all, m)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range all {
		if p := c.byID[m.parent]; p != nil { // an orphan is Check's to report
			p.children[m.name] = m
		}
	}
	return nil
}

// subtree lists m's id and its descendants'.
func (c *catalog) subtree(m *bucketMeta) []int64 {
	ids := []int64{m.id}
	for _, child := range m.children {
		ids = append(ids, c.subtree(child)...)
	}
	return ids
}

func (c *catalog) remove(m *bucketMeta) {
	for _, child := range m.children {
		c.remove(child)
	}
	delete(c.byID, m.id)
}

// bucket is a backend.Bucket: a catalog entry seen through a transaction.
type bucket struct {
	tx   *tx
	meta *bucketMeta
}

var _ backend.Bucket = (*bucket)(nil)

// bucket returns m's nested bucket name, or nil.
func (m *bucketMeta) bucket(t *tx, name []byte) backend.Bucket {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.usable() != nil {
		return nil
	}
	child := m.children[string(name)]
	if child == nil {
		return nil
	}
	return &bucket{tx: t, meta: child}
}

func (t *tx) createBucket(parent *bucketMeta, name []byte, ifNotExists bool) (backend.Bucket, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writeCheck(); err != nil {
		return nil, err
	}
	switch {
	case len(name) == 0:
		return nil, backend.ErrKeyRequired
	case len(name) > backend.MaxKeySize:
		return nil, backend.ErrKeyTooLarge
	}
	if m := parent.children[string(name)]; m != nil {
		if ifNotExists {
			return &bucket{tx: t, meta: m}, nil
		}
		return nil, backend.ErrBucketExists
	}
	if parent.id != 0 && t.get(parent, name) != nil {
		return nil, backend.ErrIncompatible
	}
	if err := t.usable(); err != nil { // get failed
		return nil, err
	}
	m := &bucketMeta{parent: parent.id, name: string(name), children: map[string]*bucketMeta{}}
	err := t.roundTrip(func(b *pgx.Batch) {
		b.Queue(`INSERT INTO ctxd_buckets (parent, name) VALUES ($1, $2) RETURNING id`, parent.id, name)
		if parent.id != 0 {
			b.Queue(`INSERT INTO ctxd_kv (bucket, key, value) VALUES ($1, $2, NULL)`, parent.id, name)
		}
	}, func(br pgx.BatchResults) error {
		if err := br.QueryRow().Scan(&m.id); err != nil {
			return err
		}
		if parent.id != 0 {
			return execN(br, 1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	parent.children[m.name] = m
	t.cat.byID[m.id] = m
	t.cache[kvKey{parent.id, m.name}] = nil
	t.learnEmpty(m.id)
	if parent.id != 0 {
		t.wrote(parent.id, name, nil, true)
	}
	t.changed = true
	return &bucket{tx: t, meta: m}, nil
}

func (t *tx) deleteBucket(parent *bucketMeta, name []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writeCheck(); err != nil {
		return err
	}
	m := parent.children[string(name)]
	if m == nil {
		if parent.id != 0 && t.get(parent, name) != nil {
			return backend.ErrIncompatible
		}
		if err := t.usable(); err != nil {
			return err
		}
		return backend.ErrBucketNotFound
	}
	ids := t.cat.subtree(m)
	err := t.roundTrip(func(b *pgx.Batch) {
		b.Queue(`DELETE FROM ctxd_kv WHERE bucket = ANY($1)`, ids)
		b.Queue(`DELETE FROM ctxd_buckets WHERE id = ANY($1)`, ids)
		if parent.id != 0 {
			b.Queue(`DELETE FROM ctxd_kv WHERE bucket = $1 AND head = $2 AND key = $3`, parent.id, head(name), name)
		}
	}, func(br pgx.BatchResults) error {
		n := 2
		if parent.id != 0 {
			n++
		}
		return execN(br, n)
	})
	if err != nil {
		return err
	}
	delete(parent.children, m.name)
	t.cat.remove(m)
	for _, id := range ids {
		delete(t.tails, id)
	}
	t.cache[kvKey{parent.id, m.name}] = nil
	if parent.id != 0 {
		t.wrote(parent.id, name, nil, false)
	}
	t.changed = true
	return nil
}

func (b *bucket) Get(key []byte) []byte {
	t := b.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.get(b.meta, key)
}

// Prefetch implements backend.Prefetcher: the keys neither this
// transaction's writes nor its reads answer are read in one round trip
// into its read cache.
func (b *bucket) Prefetch(keys [][]byte) {
	t := b.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.usable() != nil {
		return
	}
	m := b.meta
	var heads, ask [][]byte
	seen := map[string]bool{}
	for _, key := range keys {
		k := kvKey{m.id, string(key)}
		if len(key) == 0 || seen[k.key] || m.children[k.key] != nil || t.absent(m.id, key) {
			continue
		}
		if _, ok := t.pending[k]; ok {
			continue
		}
		if _, ok := t.cache[k]; ok {
			continue
		}
		seen[k.key] = true
		heads, ask = append(heads, head(key)), append(ask, key)
	}
	if len(ask) == 0 {
		return
	}
	rows, err := t.conn.Query(t.ctx, `SELECT key, value FROM ctxd_kv
		WHERE bucket = $1 AND head = ANY($2::bytea[]) AND key = ANY($3::bytea[])`, m.id, heads, ask)
	if err != nil {
		t.fail(err)
		return
	}
	found := make(map[string][]byte, len(ask))
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			t.fail(err)
			return
		}
		if v == nil {
			v = []byte{} // an empty value, as get reads it
		}
		found[string(k)] = v
	}
	if err := rows.Err(); err != nil {
		t.fail(err)
		return
	}
	for _, key := range ask {
		t.cache[kvKey{m.id, string(key)}] = found[string(key)] // nil: absent
	}
}

func (b *bucket) Put(key, value []byte) error {
	t := b.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writeCheck(); err != nil {
		return err
	}
	switch {
	case len(key) == 0:
		return backend.ErrKeyRequired
	case len(key) > backend.MaxKeySize:
		return backend.ErrKeyTooLarge
	case len(value) > MaxValueSize:
		return backend.ErrValueTooLarge
	case b.meta.children[string(key)] != nil:
		return backend.ErrIncompatible
	}
	t.buffer(b.meta.id, key, append(make([]byte, 0, len(value)), value...))
	return nil
}

func (b *bucket) Delete(key []byte) error {
	t := b.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writeCheck(); err != nil {
		return err
	}
	if len(key) == 0 || len(key) > backend.MaxKeySize {
		return nil // no such key can exist
	}
	if b.meta.children[string(key)] != nil {
		return backend.ErrIncompatible
	}
	t.buffer(b.meta.id, key, nil)
	return nil
}

func (b *bucket) Cursor() backend.Cursor {
	return &cursor{b: b, size: firstPage}
}

func (b *bucket) ForEach(fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return b.tx.failure()
}

func (b *bucket) Bucket(name []byte) backend.Bucket {
	return b.meta.bucket(b.tx, name)
}

func (b *bucket) CreateBucket(name []byte) (backend.Bucket, error) {
	return b.tx.createBucket(b.meta, name, false)
}

func (b *bucket) CreateBucketIfNotExists(name []byte) (backend.Bucket, error) {
	return b.tx.createBucket(b.meta, name, true)
}

func (b *bucket) DeleteBucket(name []byte) error {
	return b.tx.deleteBucket(b.meta, name)
}

func (b *bucket) ForEachBucket(fn func(name []byte) error) error {
	for _, name := range b.tx.childNames(b.meta) {
		if err := fn(name); err != nil {
			return err
		}
	}
	return b.tx.failure()
}

func (b *bucket) Sequence() uint64 {
	b.tx.mu.Lock()
	defer b.tx.mu.Unlock()
	return b.meta.seq
}

func (b *bucket) NextSequence() (uint64, error) {
	t := b.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writeCheck(); err != nil {
		return 0, err
	}
	b.meta.seq++
	t.seqs[b.meta] = struct{}{}
	t.changed = true
	return b.meta.seq, nil
}

func (b *bucket) SetSequence(v uint64) error {
	t := b.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writeCheck(); err != nil {
		return err
	}
	b.meta.seq = v
	t.seqs[b.meta] = struct{}{}
	t.changed = true
	return nil
}

// Stats counts the keys and their bytes in the bucket and every bucket
// nested in it, markers of nested buckets included (as bbolt counts them).
func (b *bucket) Stats() backend.BucketStats {
	t := b.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	var s backend.BucketStats
	ids := t.cat.subtree(b.meta)
	_ = t.roundTrip(func(q *pgx.Batch) {
		q.Queue(`SELECT count(*), coalesce(sum(octet_length(key) + coalesce(octet_length(value), 0)), 0)::bigint
			FROM ctxd_kv WHERE bucket = ANY($1)`, ids)
	}, func(br pgx.BatchResults) error {
		return br.QueryRow().Scan(&s.Keys, &s.Bytes)
	})
	s.Used = s.Bytes
	return s
}

// SetFillPercent does nothing: PostgreSQL lays out its own pages.
func (b *bucket) SetFillPercent(float64) {}
