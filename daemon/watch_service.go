package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/ingest/watcher"
)

// Bounds of an AddWatch request besides the [limits] table; they keep a
// watch's record far below vfs.MaxRecordBytes.
const (
	maxWatchPathBytes    = 4096 // PATH_MAX
	maxWatchPatternBytes = 1024 // one exclude pattern
	maxWatchTags         = 64
)

// WatchConfig is the [watch] table: how persistent watches follow their
// trees.
type WatchConfig struct {
	// MaxDirs caps the directories one watch follows with kernel events
	// (one inotify watch each); a larger tree is scanned every
	// ScanInterval instead, as is one the kernel's fs.inotify limits
	// refuse (CTXD_WATCH_MAX_DIRS).
	MaxDirs int `toml:"max_dirs"`
	// ScanInterval is how often a scanning watch compares its tree with
	// its items, and a failed one retries (CTXD_WATCH_SCAN_INTERVAL).
	ScanInterval Duration `toml:"scan_interval"`
}

// DefaultWatchConfig is the [watch] table when the config sets none.
func DefaultWatchConfig() WatchConfig {
	return WatchConfig{MaxDirs: watcher.DefaultMaxDirs, ScanInterval: Duration{watcher.DefaultScanInterval}}
}

func (c *WatchConfig) applyEnv(lookupEnv func(string) (string, bool)) error {
	if v, ok := lookupEnv("CTXD_WATCH_MAX_DIRS"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("CTXD_WATCH_MAX_DIRS: %q is not a whole number", v)
		}
		c.MaxDirs = n
	}
	if v, ok := lookupEnv("CTXD_WATCH_SCAN_INTERVAL"); ok {
		if err := c.ScanInterval.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("CTXD_WATCH_SCAN_INTERVAL: %w", err)
		}
	}
	return nil
}

func (c *WatchConfig) validate() error {
	if c.MaxDirs < 1 {
		return fmt.Errorf("config: watch.max_dirs must be at least 1, got %d", c.MaxDirs)
	}
	if c.ScanInterval.Duration <= 0 {
		return fmt.Errorf("config: watch.scan_interval must be positive, got %s", c.ScanInterval)
	}
	return nil
}

// startWatches runs the stored watches of this replica; their first
// reconciles run in the background.
func (d *Daemon) startWatches() error {
	d.b.watches = watcher.New(d.b.store, d.b.ingest, watcher.Config{
		ReplicaID:    d.b.replicaID,
		LocalID:      localReplica,
		MaxWatches:   d.cfg.Limits.MaxWatches,
		MaxDirs:      d.cfg.Watch.MaxDirs,
		ScanInterval: d.cfg.Watch.ScanInterval.Duration,
		Policy:       ingest.Policy{AllowedRoots: d.cfg.AllowedRoots, AllowSecrets: d.cfg.AllowSecrets},
		Searchable:   (&ingestService{b: &d.b}).waitSearchable,
		Log:          d.log,
	})
	return d.b.watches.Start(context.Background())
}

// watchService adapts WatchService.
type watchService struct {
	ctxdv1.UnimplementedWatchServiceServer
	b   *backend
	log *slog.Logger
}

// AddWatch stores a watch and answers after its first reconcile.
func (s *watchService) AddWatch(ctx context.Context, req *ctxdv1.AddWatchRequest) (*ctxdv1.AddWatchResponse, error) {
	if err := s.checkAdd(req); err != nil {
		return nil, err
	}
	st, existed, err := s.b.watches.Add(ctx, watcher.Watch{
		Path: req.GetPath(), Drive: req.GetDrive(), Exclude: req.GetExclude(), IncludeHidden: req.GetIncludeHidden(),
		Tags: req.GetTags(), Debounce: time.Duration(req.GetDebounceMs()) * time.Millisecond, DeleteMissing: req.GetDeleteMissing(),
	})
	if err != nil {
		return nil, s.status("AddWatch", err)
	}
	return &ctxdv1.AddWatchResponse{Watch: WatchToProto(st), Existed: existed}, nil
}

// checkAdd bounds the request.
func (s *watchService) checkAdd(req *ctxdv1.AddWatchRequest) error {
	invalid := func(msg, hint string) error {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, msg, hint)
	}
	switch {
	case req.GetPath() == "":
		return invalid("AddWatch needs a path", "Pass the absolute path of a directory on the daemon's host (`ctxd watch add DIR`).")
	case len(req.GetPath()) > maxWatchPathBytes:
		return invalid(fmt.Sprintf("the path is %d bytes, over the limit of %d", len(req.GetPath()), maxWatchPathBytes), "Pass a shorter path.")
	case len(req.GetExclude()) > s.b.limits.MaxWatchExcludes:
		return overLimit("max_watch_excludes", fmt.Sprintf("%d exclude patterns, over the limit of %d", len(req.GetExclude()), s.b.limits.MaxWatchExcludes))
	case len(req.GetTags()) > maxWatchTags:
		return invalid(fmt.Sprintf("%d tags, over the limit of %d", len(req.GetTags()), maxWatchTags), "Tag the watch's items with fewer tags.")
	case req.GetDebounceMs() < 0 || req.GetDebounceMs() > watcher.MaxDebounce.Milliseconds():
		return invalid(fmt.Sprintf("debounce_ms %d is outside 0 to %d", req.GetDebounceMs(), watcher.MaxDebounce.Milliseconds()),
			"Pass a debounce in milliseconds (`ctxd watch add --debounce 500ms`), or 0 for the default of 200 ms.")
	}
	for i, p := range req.GetExclude() {
		if len(p) > maxWatchPatternBytes {
			return invalid(fmt.Sprintf("exclude pattern %d is %d bytes, over the limit of %d", i, len(p), maxWatchPatternBytes),
				"Shorten the pattern: gitignore patterns match by name and glob, for example \"*.csv\" or \"build/\".")
		}
	}
	return nil
}

// ListWatches lists every watch with where it stands.
func (s *watchService) ListWatches(ctx context.Context, _ *ctxdv1.ListWatchesRequest) (*ctxdv1.ListWatchesResponse, error) {
	ws, err := s.watches(ctx)
	if err != nil {
		return nil, s.status("ListWatches", err)
	}
	return &ctxdv1.ListWatchesResponse{Watches: ws}, nil
}

// watches lists every watch, as ListWatches and Status show them.
func (s *watchService) watches(ctx context.Context) ([]*ctxdv1.Watch, error) {
	states, err := s.b.watches.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*ctxdv1.Watch, len(states))
	for i, st := range states {
		out[i] = WatchToProto(st)
	}
	return out, nil
}

// RemoveWatch forgets a watch; its items are kept.
func (s *watchService) RemoveWatch(ctx context.Context, req *ctxdv1.RemoveWatchRequest) (*ctxdv1.RemoveWatchResponse, error) {
	if req.GetWatch() == "" {
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, "RemoveWatch needs a watch id or path",
			"Pass an id or path from `ctxd watch list`.")
	}
	st, err := s.b.watches.Remove(ctx, req.GetWatch())
	if err != nil {
		return nil, s.status("RemoveWatch", err)
	}
	return &ctxdv1.RemoveWatchResponse{Watch: WatchToProto(st)}, nil
}

// status converts the manager's errors; the rest go to toStatus.
func (s *watchService) status(method string, err error) error {
	var we *watcher.Error
	if !errors.As(err, &we) {
		return toStatus(s.log, s.b.storeInfo, method, err)
	}
	switch {
	case errors.Is(err, watcher.ErrLimit):
		return limitError("max_watches", we.Message, we.Hint)
	case errors.Is(err, watcher.ErrNotFound):
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND, we.Message, we.Hint)
	}
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, we.Message, we.Hint)
}
