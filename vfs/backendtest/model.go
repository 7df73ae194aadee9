package backendtest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxd/ctxd/vfs/backend"
)

// model is what a bucket should hold: a map, and its keys in order.
type model map[string]string

func (m model) keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// testRandomAgainstModel runs random puts, deletes, gets and cursor walks
// in write transactions over a few thousand keys, and checks every read
// against a map: what a transaction reads is what it wrote over what was
// committed, wherever its cursors cross the backend's pages.
func testRandomAgainstModel(t *testing.T, db backend.DB) {
	rng := rand.New(rand.NewPCG(28, 1))
	// Half the keys fall in a narrow range, where a transaction's writes
	// crowd the committed keys and the backend's page boundaries.
	const space, hot = 3000, 200
	key := func() string {
		if rng.IntN(2) == 0 {
			return fmt.Sprintf("r%05d", rng.IntN(hot))
		}
		return fmt.Sprintf("r%05d", rng.IntN(space))
	}
	committed := model{}
	update(t, db, func(tx backend.Tx) error {
		b := bucket(t, tx, "r")
		for range space / 2 {
			k, v := key(), fmt.Sprint(rng.IntN(1000))
			put(t, b, k, v)
			committed[k] = v
		}
		return nil
	})
	for round := range 6 {
		m := model{}
		for k, v := range committed {
			m[k] = v
		}
		rollback := round%3 == 2
		deletes := round%2 == 1 // half the rounds only put: a backend may treat deletes apart
		err := db.Update(t.Context(), func(tx backend.Tx) error {
			b := bucket(t, tx, "r")
			var sorted []string // m's keys in order, nil when stale
			var written []string
			seekKey := func() string {
				switch rng.IntN(3) {
				case 0:
					if len(written) > 0 {
						return written[rng.IntN(len(written))] // a key of this transaction
					}
				case 1:
					return key() + "x" // between keys
				}
				return key()
			}
			for op := range 300 {
				switch r := rng.IntN(20); {
				case r < 6:
					k, v := key(), fmt.Sprintf("%d.%d", round, op)
					put(t, b, k, v)
					m[k], sorted = v, nil
					written = append(written, k)
				case !deletes && r < 12:
					continue
				case r < 9:
					k := key()
					if err := b.Delete([]byte(k)); err != nil {
						return err
					}
					delete(m, k)
					sorted = nil
				case r < 11:
					k := key()
					var want []byte
					if v, ok := m[k]; ok {
						want = []byte(v)
					}
					wantValue(t, b, k, want)
				case r < 12:
					// Delete a run of keys through a cursor, seeking again
					// after each delete.
					c := b.Cursor()
					k, _ := c.Seek([]byte(key()))
					for n := rng.IntN(40); k != nil && n > 0; n-- {
						if err := c.Delete(); err != nil {
							return err
						}
						delete(m, string(k))
						k, _ = c.Seek(k)
					}
					sorted = nil
				default:
					if sorted == nil {
						sorted = m.keys()
					}
					walkModel(t, rng, b.Cursor(), m, sorted, seekKey)
				}
				if t.Failed() {
					return fmt.Errorf("round %d, op %d: the transaction's reads differ from the model", round, op)
				}
			}
			if rollback {
				return errTest
			}
			return nil
		})
		if rollback {
			wantErr(t, "Update", err, errTest)
		} else if err != nil {
			t.Fatal(err)
		} else {
			committed = m
		}
		view(t, db, func(tx backend.Tx) error {
			b := bucket(t, tx, "r")
			want := committed.keys()
			got := walk(b.Cursor())
			if len(got) != len(want) {
				t.Fatalf("after round %d: %d keys committed, want %d", round, len(got), len(want))
			}
			for i, k := range got {
				if string(k) != want[i] || string(b.Get(k)) != committed[want[i]] {
					t.Fatalf("after round %d: key #%d is %q=%q, want %q=%q", round, i, k, b.Get(k), want[i], committed[want[i]])
				}
			}
			return nil
		})
	}
}

// walkModel positions c (First, Last or Seek) and moves it in runs of
// random length and direction, checking each key and value against the
// model.
func walkModel(t *testing.T, rng *rand.Rand, c backend.Cursor, m model, sorted []string, seekKey func() string) {
	t.Helper()
	var k, v []byte
	var pos int // index into sorted; -1 or len(sorted) past an end
	switch rng.IntN(3) {
	case 0:
		k, v = c.First()
		pos = 0
	case 1:
		k, v = c.Last()
		pos = len(sorted) - 1
	default:
		seek := seekKey()
		k, v = c.Seek([]byte(seek))
		pos, _ = slices.BinarySearch(sorted, seek)
	}
	step, run := 1, 0 // direction, and moves left before turning
	for move := 0; ; move++ {
		if pos < 0 || pos >= len(sorted) {
			if k != nil {
				t.Errorf("cursor past an end gave %q", k)
			}
			return
		}
		if want := sorted[pos]; !bytes.Equal(k, []byte(want)) || string(v) != m[want] {
			t.Errorf("cursor move %d (%s): %q=%q, want %q=%q", move, moveName(move, step), k, v, want, m[want])
			return
		}
		if move == 600 {
			return
		}
		if run == 0 { // runs both ways, long enough to cross pages
			step, run = 1-2*rng.IntN(2), 1+rng.IntN(300)
		}
		run--
		if step > 0 {
			k, v = c.Next()
		} else {
			k, v = c.Prev()
		}
		pos += step
	}
}

func moveName(move, step int) string {
	switch {
	case move == 0:
		return "First, Last or Seek"
	case step > 0:
		return "Next"
	}
	return "Prev"
}
