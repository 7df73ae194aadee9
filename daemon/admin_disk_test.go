package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs/boltstore"
)

// TestStatus_Disk breaks the data directory down: the store components add
// up to the store file, the lexical index shows, and without the flag
// nothing is reported.
func TestStatus_Disk(t *testing.T) {
	cfg := testConfig(t)
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := d.vfsClient(t)
	for i := range 20 {
		writeText(t, vc, fmt.Sprintf("notes:/n%02d.md", i), strings.Repeat(fmt.Sprintf("Note %d about herons and their nests.\n\n", i), 30))
	}
	admin := ctxdv1.NewAdminServiceClient(conn)
	waitIndexed(t, admin, 30*time.Second)

	plain, err := admin.Status(t.Context(), &ctxdv1.StatusRequest{})
	if err != nil || len(plain.Disk) != 0 {
		t.Fatalf("without disk: %v, %v", plain.GetDisk(), err)
	}
	st, err := admin.Status(t.Context(), &ctxdv1.StatusRequest{Disk: true})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*ctxdv1.DiskComponent{}
	var store int64
	for i, c := range st.Disk {
		byName[c.Name] = c
		if strings.HasPrefix(c.Name, "store/") {
			store += c.Bytes
		}
		if i > 0 && c.Bytes > st.Disk[i-1].Bytes {
			t.Errorf("not largest first: %s after %s", c.Name, st.Disk[i-1].Name)
		}
	}
	info, err := os.Stat(filepath.Join(cfg.DataDir, boltstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if store != info.Size() {
		t.Errorf("store components sum to %d, the file has %d bytes", store, info.Size())
	}
	if c := byName["store/content"]; c == nil || c.Keys == 0 || c.UsedBytes == 0 || c.UsedBytes > c.Bytes {
		t.Errorf("store/content = %v", c)
	}
	if c := byName["index/lexical"]; c == nil || c.Bytes == 0 {
		t.Errorf("index/lexical = %v in %v", c, st.Disk)
	}
}
