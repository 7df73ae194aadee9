package pgstore

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/ctxd/ctxd/vfs/backend"
)

// A cursor reads its bucket in pages: the first holds firstPage keys, each
// next one four times more up to maxPage, so a short walk costs one round
// trip and a scan of 100,000 keys about a hundred. A page also stops at
// pageBytes of keys and values (a page of large values is small), though
// never before its first key.
const (
	firstPage = 16
	maxPage   = 1024
	pageBytes = 4 << 20
)

// row is a key and its value; bucket marks the name of a nested bucket.
type row struct {
	key, value []byte
	bucket     bool
}

// cursor is a backend.Cursor holding one page: consecutive keys of its
// bucket around its position.
type cursor struct {
	b     *bucket
	rows  []row  // ascending
	i     int    // position in rows; -1 before them, len(rows) past them
	first bool   // no key precedes rows[0]
	last  bool   // no key follows rows[len(rows)-1]
	seek  []byte // after a Seek past the end: the key sought, for Prev
	size  int    // keys to ask for next
}

var _ backend.Cursor = (*cursor)(nil)

// page directions and bounds.
type pageQuery int

const (
	fromKey   pageQuery = iota // ascending, keys >= k
	afterKey                   // ascending, keys > k
	beforeKey                  // descending, keys < k
	fromEnd                    // descending from the last key
)

// pageSQL is each pageQuery's statement: $1 bucket, $2 limit, $3 byte
// budget, $4 head(k), $5 k. It returns each key with its value while the
// running size stays under the budget, and past it only the key (so the
// caller knows the page was cut, without fetching the values).
var pageSQL = map[pageQuery]string{
	fromKey:   pageStatement("", "AND head >= $4 AND key >= $5"),
	afterKey:  pageStatement("", "AND head >= $4 AND key > $5"),
	beforeKey: pageStatement("DESC", "AND head <= $4 AND key < $5"),
	fromEnd:   pageStatement("DESC", ""),
}

func pageStatement(dir, where string) string {
	return fmt.Sprintf(`SELECT key, CASE WHEN run - len < $3 THEN value END, value IS NULL, run - len < $3
FROM (SELECT head, key, value, len, sum(len) OVER (ORDER BY head %[1]s, key %[1]s) AS run
	FROM (SELECT head, key, value, octet_length(key) + coalesce(octet_length(value), 0) AS len
		FROM ctxd_kv WHERE bucket = $1 %[2]s
		ORDER BY head %[1]s, key %[1]s LIMIT $2) AS page) AS sized
ORDER BY head %[1]s, key %[1]s`, dir, where)
}

// fetch reads a page in q's direction from k and reports whether it
// reached the end of the bucket that way. Pages come back ascending, with
// the transaction's buffered puts laid over them, so a write transaction
// mixing cursors and puts sends its writes once, at commit. Buffered
// deletes in the bucket are sent first instead, with the page's query:
// laid over pages, they would make a loop that deletes the first key and
// seeks it again (the way around bbolt's skipping Next after a Delete)
// read every deleted key again on every seek.
func (c *cursor) fetch(q pageQuery, k []byte) (rows []row, end bool) {
	t := c.b.tx
	t.mu.Lock()
	defer t.mu.Unlock()
	pk := t.pendKeys[c.b.meta.id]
	flush := pk != nil && pk.deletes > 0
	page, end, err := c.page(q, k, flush)
	if err != nil || pk == nil || flush {
		return page, end
	}
	// The page covers the keys from k to its far end (to the bucket's end
	// if it reached it); buffered puts in that span join it.
	lo, hi := span{unbounded: true}, span{unbounded: true}
	switch {
	case q == fromKey || q == afterKey:
		lo = span{key: k, open: q == afterKey}
		if !end {
			hi = span{key: page[len(page)-1].key}
		}
	default:
		if q == beforeKey {
			hi = span{key: k, open: true}
		}
		if !end {
			lo = span{key: page[0].key}
		}
	}
	return overlay(t, c.b.meta.id, page, pk.inOrder(), lo, hi), end
}

// span is one end of the keys a page covers.
type span struct {
	key       []byte
	open      bool // the key itself is outside
	unbounded bool
}

// overlay lays buffered puts (pending, sorted) over page (ascending): the
// keys within [lo, hi] take their new values, joining the page in order
// where it lacks them.
func overlay(t *tx, bucket int64, page []row, pending []string, lo, hi span) []row {
	from, to := 0, len(pending)
	if !lo.unbounded {
		from = sort.Search(len(pending), func(i int) bool {
			c := strings.Compare(pending[i], string(lo.key))
			return c > 0 || c == 0 && !lo.open
		})
	}
	if !hi.unbounded {
		to = sort.Search(len(pending), func(i int) bool {
			c := strings.Compare(pending[i], string(hi.key))
			return c > 0 || c == 0 && hi.open
		})
	}
	if from >= to {
		return page
	}
	out := make([]row, 0, len(page)+to-from)
	i := 0
	for _, key := range pending[from:to] {
		for i < len(page) && string(page[i].key) < key {
			out = append(out, page[i])
			i++
		}
		if i < len(page) && string(page[i].key) == key {
			i++ // replaced
		}
		out = append(out, row{key: []byte(key), value: t.pending[kvKey{bucket, key}]})
	}
	return append(out, page[i:]...)
}

// page reads one page from the server, after the buffered writes if flush,
// unless what the transaction knows of the bucket's end answers it (see
// tail.go). With t.mu held.
func (c *cursor) page(q pageQuery, k []byte, flush bool) (rows []row, end bool, err error) {
	t := c.b.tx
	id := c.b.meta.id
	from := k
	if q == afterKey {
		from = successor(k)
	}
	if tl := t.tails[id]; tl != nil && tl.end != nil && !flush {
		switch {
		case len(tl.end) == 0,
			(q == fromKey || q == afterKey) && bytes.Compare(from, tl.end) >= 0:
			return nil, true, nil
		case q == fromEnd && tl.last != nil:
			return []row{*tl.last}, false, nil
		}
	}
	rows, end, err = c.query(q, k, flush)
	switch {
	case err != nil:
	case q == fromEnd && len(rows) > 0:
		t.learnLast(id, rows[len(rows)-1])
	case q == fromEnd:
		t.learnEmpty(id)
	case q == beforeKey || !end:
	case len(rows) > 0:
		t.learnLast(id, rows[len(rows)-1])
	default:
		t.learnEnd(id, from)
	}
	return rows, end, err
}

// query reads one page from the server, after the buffered writes if
// flush. With t.mu held.
func (c *cursor) query(q pageQuery, k []byte, flush bool) (rows []row, end bool, err error) {
	t := c.b.tx
	limit := c.size
	c.size = min(c.size*4, maxPage)
	args := []any{c.b.meta.id, limit, int64(pageBytes)}
	if q != fromEnd {
		if k == nil {
			k = []byte{} // not NULL: Seek(nil) is First
		}
		args = append(args, head(k), k)
	}
	cut := false
	err = t.send(flush, func(b *pgx.Batch) {
		b.Queue(pageSQL[q], args...)
	}, func(br pgx.BatchResults) error {
		res, err := br.Query()
		if err != nil {
			return err
		}
		defer res.Close()
		for res.Next() {
			var r row
			var within bool
			if err := res.Scan(&r.key, &r.value, &r.bucket, &within); err != nil {
				return err
			}
			if !within {
				cut = true
				continue
			}
			if !r.bucket && r.value == nil {
				r.value = []byte{}
			}
			rows = append(rows, r)
		}
		return res.Err()
	})
	if err != nil {
		return nil, true, err
	}
	if q == beforeKey || q == fromEnd {
		slices.Reverse(rows)
	}
	return rows, !cut && len(rows) < limit, nil
}

func (c *cursor) at() ([]byte, []byte) {
	if c.i < 0 || c.i >= len(c.rows) {
		return nil, nil
	}
	r := c.rows[c.i]
	return r.key, r.value
}

func (c *cursor) First() ([]byte, []byte) {
	c.size = firstPage
	c.rows, c.last = c.fetch(fromKey, []byte{})
	c.first, c.i, c.seek = true, 0, nil
	return c.at()
}

func (c *cursor) Last() ([]byte, []byte) {
	c.size = firstPage
	c.rows, c.first = c.fetch(fromEnd, nil)
	c.last, c.i, c.seek = true, len(c.rows)-1, nil
	return c.at()
}

func (c *cursor) Seek(seek []byte) ([]byte, []byte) {
	c.size = firstPage
	c.rows, c.last = c.fetch(fromKey, seek)
	c.first, c.i, c.seek = false, 0, nil
	if len(c.rows) == 0 {
		// Past the end: remember where, for Prev.
		c.seek = append([]byte{}, seek...)
	}
	return c.at()
}

func (c *cursor) Next() ([]byte, []byte) {
	switch {
	case len(c.rows) == 0, c.i >= len(c.rows):
		return nil, nil
	case c.i+1 < len(c.rows):
		c.i++
		return c.at()
	case c.last:
		c.i = len(c.rows)
		return nil, nil
	}
	rows, end := c.fetch(afterKey, c.rows[c.i].key)
	if len(rows) == 0 {
		c.last, c.i = true, len(c.rows)
		return nil, nil
	}
	c.rows, c.i, c.first, c.last = rows, 0, false, end
	return c.at()
}

func (c *cursor) Prev() ([]byte, []byte) {
	switch {
	case len(c.rows) == 0 && c.seek != nil:
		rows, end := c.fetch(beforeKey, c.seek)
		c.seek = nil
		c.rows, c.i, c.first, c.last = rows, len(rows)-1, end, true
		return c.at()
	case c.i < 0:
		return nil, nil
	case c.i > 0:
		c.i = min(c.i, len(c.rows)) - 1
		return c.at()
	case len(c.rows) == 0 || c.first:
		c.i = -1
		return nil, nil
	}
	rows, end := c.fetch(beforeKey, c.rows[0].key)
	if len(rows) == 0 {
		c.first, c.i = true, -1
		return nil, nil
	}
	c.rows, c.i, c.first, c.last = rows, len(rows)-1, end, false
	return c.at()
}

// Delete buffers the delete of the current key, like Bucket.Delete; the
// page keeps it, so the walk goes on from it.
func (c *cursor) Delete() error {
	if c.i < 0 || c.i >= len(c.rows) {
		return nil
	}
	if c.rows[c.i].bucket {
		return backend.ErrIncompatible
	}
	return c.b.Delete(c.rows[c.i].key)
}
