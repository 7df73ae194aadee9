package vfs

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ctxd/ctxd/internal/pgtest"
)

// The package's tests are the store's conformance suite: every one runs on
// each backend. `go test ./vfs` runs them on bbolt, then runs itself again
// with CTXD_TEST_BACKEND=postgres against a real PostgreSQL (internal/pgtest);
// setting the variable runs one backend only. Fuzzing and benchmarks run on
// the backend chosen (bbolt unless set), once.
const backendEnv = "CTXD_TEST_BACKEND"

// testBackend is the backend this test binary runs on.
var testBackend = cmp.Or(os.Getenv(backendEnv), "bolt")

func TestMain(m *testing.M) {
	flag.Parse()
	code := pgtest.Main(m) // benchmarks use PostgreSQL beside bbolt
	if testBackend == "postgres" {
		os.Exit(code)
	}
	if _, set := os.LookupEnv(backendEnv); set || flagSet("test.fuzz") || flagSet("test.bench") || flagSet("test.list") {
		os.Exit(code)
	}
	fmt.Println("vfs: the same tests on PostgreSQL")
	child := exec.Command(os.Args[0], os.Args[1:]...)
	child.Env = append(os.Environ(), backendEnv+"=postgres")
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	if err := child.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			fmt.Fprintln(os.Stderr, "vfs: run the tests on PostgreSQL:", err)
		}
		code = max(code, 1)
	}
	os.Exit(code)
}

func flagSet(name string) bool {
	f := flag.Lookup(name)
	return f != nil && f.Value.String() != "" && f.Value.String() != f.DefValue
}

// newLocation returns where a test's store lives on the backend under test:
// a bbolt file in a temp dir, or a fresh PostgreSQL database. Opening it
// again reopens the same store.
func newLocation(t testing.TB) string {
	t.Helper()
	if testBackend == "postgres" {
		return pgtest.NewDatabase(t)
	}
	return filepath.Join(t.TempDir(), "ctxd.db")
}
