package toolset

import (
	"context"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// The watch tools need what context_add needs: they read the daemon host's
// files, for as long as the watch exists.
func init() {
	type addArgs struct {
		Path          string   `json:"path" jsonschema:"Absolute directory on the daemon's host, within allowed_roots." schema:"minLength=1"`
		Drive         string   `json:"drive,omitempty" jsonschema:"Another drive for its items; default disk."`
		Exclude       []string `json:"exclude,omitempty" jsonschema:"Globs to leave out, beside .gitignore rules; max limits.max_watch_excludes (64)."`
		IncludeHidden bool     `json:"include_hidden,omitempty" jsonschema:"Include hidden files and directories."`
		Tags          []string `json:"tags,omitempty" jsonschema:"Tags for every item; max 64."`
		DebounceMs    int64    `json:"debounce_ms,omitempty" jsonschema:"Milliseconds a file's events coalesce; 0 is 200." schema:"minimum=0,maximum=60000"`
		DeleteMissing bool     `json:"delete_missing,omitempty" jsonschema:"Delete the item of a vanished file instead of keeping it."`
	}
	register(Tool{
		Name:  "context_watch_add",
		Title: "Keep a directory tree in step",
		Description: "Ingest a directory tree and keep its items in step with it from now on, across daemon restarts; a watched path returns its watch. " +
			"Returns the watch and where it stands.",
		Annotations: Annotations{Idempotent: true, OpenWorld: true}, Scopes: ingestScope,
	}, func(ctx context.Context, b Backend, in *addArgs) (any, error) {
		return b.Watch.AddWatch(ctx, &ctxdv1.AddWatchRequest{Path: in.Path, Drive: in.Drive, Exclude: in.Exclude, IncludeHidden: in.IncludeHidden,
			Tags: in.Tags, DebounceMs: in.DebounceMs, DeleteMissing: in.DeleteMissing})
	})

	register(Tool{
		Name:        "context_watch_list",
		Title:       "List watched trees",
		Description: "List the watched trees (context_watch_add) with where each stands: mode (events, or scanning and why), files, last event and reconcile, lag, errors.",
		Annotations: Annotations{Idempotent: true, OpenWorld: true}, Scopes: ingestScope,
	}, func(ctx context.Context, b Backend, _ *struct{}) (any, error) {
		return b.Watch.ListWatches(ctx, &ctxdv1.ListWatchesRequest{})
	})

	type removeArgs struct {
		Watch string `json:"watch" jsonschema:"The watch's id or path." schema:"minLength=1"`
	}
	register(Tool{
		Name:        "context_watch_remove",
		Title:       "Stop watching a tree",
		Description: "Stop keeping a watched tree (context_watch_list) in step with its items; the items stay, as they are.",
		Annotations: Annotations{Idempotent: true, OpenWorld: true}, Scopes: ingestScope,
	}, func(ctx context.Context, b Backend, in *removeArgs) (any, error) {
		return b.Watch.RemoveWatch(ctx, &ctxdv1.RemoveWatchRequest{Watch: in.Watch})
	})
}
