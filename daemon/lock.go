package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDataDir takes an exclusive flock on dataDir/ctxd.lock and records the
// pid in it, so a second daemon on the same data dir fails at once with a
// message naming the first. The kernel drops the lock if the process dies.
func lockDataDir(dataDir string) (*os.File, error) {
	name := filepath.Join(dataDir, "ctxd.lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(name)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(b))
			return nil, fmt.Errorf("data dir %s is in use by another ctxd (pid %s); stop it, or pass --data-dir to use another", dataDir, pid)
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// LockDataDir takes the lock a running daemon holds on dataDir, for a
// command that must change the data dir while no daemon uses it (ctxd
// restore); it fails at once, naming the daemon's pid, while one does.
// Closing the file releases the lock.
func LockDataDir(dataDir string) (*os.File, error) { return lockDataDir(dataDir) }
