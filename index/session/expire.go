package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ctxd/ctxd/vfs"
)

// expireActor is who history records as deleting expired events.
var expireActor = vfs.Actor{Name: "retention", Op: "expire"}

// TTL is how long the events of project are kept.
func (s *Sessions) TTL(project string) time.Duration {
	if d, ok := s.opts.ProjectTTL[project]; ok && d > 0 {
		return d
	}
	return s.opts.EventTTL
}

// Expire deletes the events older than their project's TTL as of now, and
// returns how many it deleted. A session whose events all expire is first
// given its digest, if it has none that covers them, so what it did stays.
// Records and digests are never expired. Deletes go through the store, so
// history keeps the events as it keeps any deleted item (for the store's
// history_min_age).
func (s *Sessions) Expire(ctx context.Context, now time.Time) (int64, error) {
	ctx = vfs.WithActor(ctx, expireActor)
	projects, err := s.projects(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, project := range projects {
		cutoff := now.Add(-s.TTL(project))
		names, err := s.sessionDirs(ctx, project)
		if err != nil {
			return n, err
		}
		for _, name := range names {
			started, _, _ := splitDir(name)
			if !started.Before(cutoff) {
				break // directories sort by start: the rest started later
			}
			d, err := s.expireSession(ctx, sessionKey{project, name}, cutoff)
			n += d
			if err != nil {
				return n, fmt.Errorf("expire events of %s: %w", dirRef(project, name), err)
			}
		}
	}
	return n, nil
}

// expireSession deletes the session's events recorded before cutoff.
func (s *Sessions) expireSession(ctx context.Context, k sessionKey, cutoff time.Time) (int64, error) {
	events := child(k.ref(), eventsDir)
	var old []vfs.Ref
	total := 0
	err := s.children(ctx, events, func(e vfs.Entry) {
		total++
		if t, ok := eventTime(e.Name); ok && t.Before(cutoff) && !e.IsDir {
			old = append(old, vfs.Ref{Drive: e.Drive, Path: e.Path})
		}
	})
	if err != nil || len(old) == 0 {
		return 0, err
	}
	if len(old) < total {
		var n int64
		for _, r := range old {
			if _, err := s.store.Delete(ctx, r, false); err != nil && !errors.Is(err, vfs.ErrNotFound) {
				return n, err
			}
			n++
		}
		return n, nil
	}
	meta, _, err := s.readDigest(ctx, k)
	if errors.Is(err, vfs.ErrNotFound) || err == nil && meta.Events < int64(total) {
		_, err = s.writeDigest(ctx, k, false)
	}
	if err != nil {
		return 0, err
	}
	return s.store.Delete(ctx, events, true)
}
