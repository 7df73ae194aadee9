package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/daemon"
	"github.com/ctxd/ctxd/internal/pgtest"
	"github.com/ctxd/ctxd/vfs"
	"github.com/ctxd/ctxd/vfs/backend"
	"github.com/ctxd/ctxd/vfs/boltstore"
	"github.com/ctxd/ctxd/vfs/pgstore"
	"github.com/ctxd/ctxd/vfs/storecopy"
)

// TestCLI_Migrate moves a daemon's store to PostgreSQL and from there into a
// new data directory that a daemon then serves: refused while the source's
// daemon runs, copied and verified once it stopped, refused when repeated.
func TestCLI_Migrate(t *testing.T) {
	cfg, dir := tempConfig(t)
	d, err := daemon.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ ref, content string }{
		{"agent:/notes/a.md", "first\n"},
		{"agent:/notes/a.md", "second\n"},
		{"agent:/notes/a.md", "third\n"},
		{"work:/b.md", "# B\n\nbody of b\n"},
		{"work:/gone.md", "deleted below\n"},
	} {
		if code, _, errOut := ctxd(t, cfg.Socket, w.content, "write", w.ref, "--on-conflict", "overwrite"); code != 0 {
			t.Fatalf("write %s: %s", w.ref, errOut)
		}
	}
	if code, _, errOut := ctxd(t, cfg.Socket, "", "rm", "work:/gone.md"); code != 0 {
		t.Fatal(errOut)
	}

	halfway := filepath.Join(dir, "halfway.db")
	code, _, errOut := ctxd(t, cfg.Socket, "", "migrate", "--from", cfg.DataDir, "--to", halfway)
	if code != 1 || !strings.Contains(errOut, "locked") {
		t.Errorf("migrate from a served store: %d %s", code, errOut)
	}
	if _, err := os.Stat(halfway); !os.IsNotExist(err) {
		t.Errorf("the refused migrate left %s behind: %v", halfway, err)
	}
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Stop(stop); err != nil {
		t.Fatal(err)
	}

	dsn := pgtest.NewDatabase(t)
	code, out, errOut := ctxd(t, cfg.Socket, "", "migrate", "--from", cfg.DataDir, "--to", dsn, "--batch-keys", "5")
	if code != 0 || !strings.Contains(out, "copied ") || !strings.Contains(out, "verified: both stores hold the same") || !strings.Contains(errOut, "verifying") {
		t.Fatalf("migrate to PostgreSQL: %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	code, _, errOut = ctxd(t, cfg.Socket, "", "migrate", "--from", cfg.DataDir, "--to", dsn)
	if code != 1 || !strings.Contains(errOut, "migrating into a used store is refused") {
		t.Errorf("second migrate into the same database: %d %s", code, errOut)
	}

	// The copy is the store: read through the store's API on PostgreSQL.
	db, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := vfs.New(db, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := vfs.ParseRef("agent:/notes/a.md")
	res, err := s.Read(context.Background(), ref, 0, 0)
	hist, herr := s.History(context.Background(), ref, 0, 0)
	s.Close()
	if err != nil || herr != nil || string(res.Content) != "third\n" || len(hist) != 3 {
		t.Fatalf("a.md on PostgreSQL: %q, %d revisions, %v, %v", res.Content, len(hist), err, herr)
	}

	// PostgreSQL to a new data directory, which a daemon then serves.
	cfg2 := cfg
	cfg2.DataDir, cfg2.Socket = filepath.Join(dir, "data2"), filepath.Join(dir, "s2.sock")
	if code, out, errOut := ctxd(t, cfg.Socket, "", "migrate", "--from", dsn, "--to", cfg2.DataDir); code != 0 || !strings.Contains(out, "verified") {
		t.Fatalf("migrate to a data directory: %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	runDaemon(t, cfg2)
	for _, st := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "agent:/notes/a.md"}, "third\n"},
		{[]string{"read", "work:/b.md"}, "# B\n\nbody of b\n"},
		{[]string{"history", "agent:/notes/a.md"}, "\n3 "},
		{[]string{"exists", "work:/gone.md"}, "no"},
	} {
		if _, out, errOut := ctxd(t, cfg2.Socket, "", st.args...); !strings.Contains("\n"+out, st.want) {
			t.Errorf("ctxd %v on the migrated store = %q (%s), want %q", st.args, out, errOut, st.want)
		}
	}
}

// TestCLI_MigrateResumes finishes a copy that an interruption left in the
// destination, and says so.
func TestCLI_MigrateResumes(t *testing.T) {
	dir := t.TempDir()
	srcPath, dstPath := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	s, err := vfs.Open(srcPath, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		ref, _ := vfs.ParseRef("agent:/n" + strings.Repeat("x", i) + ".md")
		if _, err := s.Write(context.Background(), vfs.WriteParams{Ref: ref, Content: []byte("note\n"), IsText: true}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	src, err := boltstore.Open(srcPath, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := boltstore.Open(dstPath, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = storecopy.Copy(ctx, src, dst, storecopy.Options{BatchKeys: 10, Source: srcPath, Progress: func(storecopy.Report) { cancel() }})
	src.Close()
	dst.Close()
	if err != context.Canceled {
		t.Fatalf("interrupted copy: %v", err)
	}
	code, out, errOut := ctxd(t, "", "", "migrate", "--from", srcPath, "--to", dstPath)
	if code != 0 || !strings.Contains(out, "resumed after") || !strings.Contains(out, "verified") {
		t.Fatalf("resumed migrate: %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

// TestCLI_MigrateKilled kills a migrate process (SIGKILL) in the middle of
// its copy into PostgreSQL; the next migrate finishes the copy, having
// copied every key exactly once.
func TestCLI_MigrateKilled(t *testing.T) {
	srcDir := t.TempDir()
	s, err := vfs.Open(filepath.Join(srcDir, boltstore.FileName), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ps []vfs.WriteParams
	for i := range 300 {
		ref, _ := vfs.ParseRef(fmt.Sprintf("agent:/notes/%03d.md", i))
		ps = append(ps, vfs.WriteParams{Ref: ref, Content: []byte(fmt.Sprintf("note %d\n", i)), IsText: true})
	}
	if _, err := s.WriteBatch(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
	s.Close()

	dsn := pgtest.NewDatabase(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "migrate", "--from", srcDir, "--to", dsn, "--batch-keys", "1")
	cmd.Env = append(os.Environ(), "CTXD_TEST_AS_CLI=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	db, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Kill it once the copy has reached the items bucket, a third of the way.
	inItems := func() (marker, items bool) {
		err := db.View(context.Background(), func(tx backend.Tx) error {
			marker, items = tx.Bucket([]byte(storecopy.ProgressBucket)) != nil, tx.Bucket([]byte("items")) != nil
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return marker, items
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, items := inItems(); items {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the copy did not reach the items bucket within a minute")
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if marker, _ := inItems(); !marker {
		t.Fatal("the copy finished before the kill: give it more keys")
	}

	code, out, errOut := ctxd(t, "", "", "migrate", "--from", srcDir, "--to", dsn)
	m := regexp.MustCompile(`copied \d+ buckets, ([\d,]+) keys.*resumed after ([\d,]+) keys(?s:.*)verified: both stores hold the same \d+ buckets, ([\d,]+) keys`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("migrate after the kill: %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	n := func(s string) int { v, _ := strconv.Atoi(strings.ReplaceAll(s, ",", "")); return v }
	if copied, earlier, total := n(m[1]), n(m[2]), n(m[3]); earlier == 0 || copied+earlier != total {
		t.Errorf("the killed run copied %d keys and the second %d, of %d", earlier, copied, total)
	}
}

func TestCLI_MigrateUsage(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	db, err := boltstore.Open(empty, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no --to", []string{"--from", dir}, 2, "give both --from and --to"},
		{"batch keys", []string{"--from", dir, "--to", dir + "/b.db", "--batch-keys", "0"}, 2, "--batch-keys must be 1 to"},
		{"same store", []string{"--from", dir, "--to", filepath.Join(dir, "ctxd.db")}, 2, "are the same store"},
		{"other scheme", []string{"--from", dir, "--to", "mysql://u:secret@h/db"}, 2, `"mysql://u:xxxxx@h/db": a store is a postgres:// URL`},
		{"no source", []string{"--from", filepath.Join(dir, "nothing"), "--to", dir + "/b.db"}, 1, "no store at " + filepath.Join(dir, "nothing")},
		{"empty source", []string{"--from", empty, "--to", dir + "/b.db"}, 1, empty + " holds no store"},
		{"json", []string{"--json", "--from", dir, "--to", dir + "/b.db"}, 2, "--json is not supported"},
	} {
		code, _, errOut := ctxd(t, "", "", append([]string{"migrate"}, tc.args...)...)
		if code != tc.wantCode || !strings.Contains(errOut, tc.wantErr) || strings.Contains(errOut, "secret") {
			t.Errorf("%s: migrate %v = %d %q, want %d %q", tc.name, tc.args, code, errOut, tc.wantCode, tc.wantErr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b.db")); !os.IsNotExist(err) {
		t.Errorf("a refused migrate created its destination: %v", err)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://ctxd:s3cret@db:5432/ctxd?sslmode=disable":       "postgres://ctxd:xxxxx@db:5432/ctxd?sslmode=disable",
		"postgresql://db/ctxd?password=s3cret&user=ctxd":            "postgresql://db/ctxd?password=xxxxx&user=ctxd",
		"postgres:///t1?host=/tmp/pg&user=postgres&sslmode=disable": "postgres:///t1?host=/tmp/pg&user=postgres&sslmode=disable",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCopyProgress_Line(t *testing.T) {
	rep := storecopy.Report{Copied: storecopy.Counts{Buckets: 100, Keys: 900, Bytes: 2_000_000}, SourceKeys: 2000}
	for _, tc := range []struct {
		terminal bool
		elapsed  time.Duration
		rep      storecopy.Report
		want     string
	}{
		{true, 2 * time.Second, rep, "copying [==========>         ]  50% 1,000 of ~2,000 keys, 2.0 MB, 500 keys/s, ETA 2s"},
		{false, 2 * time.Second, rep, "copying 1,000 of ~2,000 keys, 2.0 MB, 500 keys/s, ETA 2s"},
		{true, 500 * time.Millisecond, rep, "copying [==========>         ]  50% 1,000 of ~2,000 keys, 2.0 MB"},
		// A resumed copy: the rate counts this run's keys, the bar all.
		{false, 2 * time.Second, storecopy.Report{Earlier: storecopy.Counts{Keys: 1000}, Copied: storecopy.Counts{Keys: 500}, SourceKeys: 2000},
			"copying 1,500 of ~2,000 keys, 0 B, 250 keys/s, ETA 2s"},
	} {
		p := &copyProgress{terminal: tc.terminal}
		if got := p.line(tc.rep, tc.elapsed); got != tc.want {
			t.Errorf("line(terminal=%v, %s) = %q, want %q", tc.terminal, tc.elapsed, got, tc.want)
		}
	}
}
