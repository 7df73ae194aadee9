package search

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/uuid"
)

// TestCatalog_CompactEntries: an entry keeps its item id as the UUID's
// bytes and gives back the store's spelling; entries share one copy of a
// drive name and media type however many copies they were given.
func TestCatalog_CompactEntries(t *testing.T) {
	c := newCatalog()
	ids := []string{uuid.NewString(), uuid.NewString()}
	var ens []*entry
	for _, id := range ids {
		en := c.add(uuid.MustParse(id))
		// Distinct copies, as decoding each item's record makes them.
		c.describe(en, strings.Clone("notes"), "/"+id+".md", strings.Clone("text/markdown"), nil)
		ens = append(ens, en)
	}
	for i, en := range ens {
		if en.itemID() != ids[i] || c.get(ids[i]) != en {
			t.Fatalf("entry %d: id %s, get %p, want %s and %p", i, en.itemID(), c.get(ids[i]), ids[i], en)
		}
	}
	if unsafe.StringData(ens[0].drive) != unsafe.StringData(ens[1].drive) || unsafe.StringData(ens[0].mime) != unsafe.StringData(ens[1].mime) {
		t.Fatal("two entries keep their own copies of the same drive and media type")
	}
	if ens[0].path == ens[1].path {
		t.Fatal("paths were shared across items")
	}
	for _, id := range []string{"", "not-a-uuid", uuid.NewString()} {
		if en := c.get(id); en != nil {
			t.Errorf("get(%q) = the entry of %s, want none", id, en.itemID())
		}
	}
}
