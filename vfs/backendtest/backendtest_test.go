package backendtest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/backendtest"
	"github.com/ctxd/ctxd/vfs/boltstore"
)

// TestBoltstore runs the suite on bbolt, the reference the contract was
// drawn from: a case bbolt fails is a wrong case (or a boltstore bug).
func TestBoltstore(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.DB {
		db, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"), boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := db.Check(context.Background()); err != nil {
				t.Errorf("Check at cleanup: %v", err)
			}
			if err := db.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return db
	})
}
