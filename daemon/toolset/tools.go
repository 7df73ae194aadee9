package toolset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// The tools, in the order Tools lists them: discovery, reading, writing,
// search and context, ingest, history. Argument names follow the seed:
// drive + path, where path may also be a full "drive:/path" ref or an item id.

var (
	readOnly    = Annotations{ReadOnly: true, Idempotent: true}
	readScope   = []string{"read"}
	writeScope  = []string{"write"}
	ingestScope = []string{"write", "ingest"}
)

// itemArgs names one item: the seed's drive + path.
type itemArgs struct {
	Drive string `json:"drive,omitempty" jsonschema:"Drive holding the item, e.g. \"agent\" (what agents write), \"disk\" (ingested files), \"url\", \"github\", \"self\" (the agent's persistent context). Default \"agent\"." schema:"default=agent"`
	Path  string `json:"path" jsonschema:"Path of the item in the drive, e.g. \"/notes/todo.md\". May instead be a full ref \"drive:/path\" (e.g. \"agent:/notes/todo.md\") or an item id (UUID); then drive is ignored."`
}

func (a itemArgs) ref() string { return makeRef(a.Drive, a.Path) }

// makeRef joins drive and path into the API's ref, passing a full ref or an
// item id through. A relative path is taken from the drive root.
func makeRef(drive, path string) string {
	switch {
	case path == "":
		return drive + ":/"
	case strings.HasPrefix(path, "/"):
		return drive + ":" + path
	case strings.Contains(path, ":"):
		return path
	case len(path) == 36 && uuid.Validate(path) == nil:
		return path
	}
	return drive + ":/" + path
}

// onConflict and searchMode map the tools' words, which the schema's enums
// restrict, to the API's enums.
func onConflict(s string) ctxdv1.OnConflict {
	return ctxdv1.OnConflict(ctxdv1.OnConflict_value["ON_CONFLICT_"+strings.ToUpper(s)])
}

func searchMode(s string) ctxdv1.SearchMode {
	return ctxdv1.SearchMode(ctxdv1.SearchMode_value["SEARCH_MODE_"+strings.ToUpper(s)])
}

// lower turns an enum value name into the word the tools use ("SEARCH_MODE_BM25" -> "bm25").
func lower(name, prefix string) string { return strings.ToLower(strings.TrimPrefix(name, prefix)) }

// filterArgs restricts search candidates.
type filterArgs struct {
	Drives       []string `json:"drives,omitempty" jsonschema:"Only items on these drives, e.g. [\"agent\", \"disk\"]."`
	PathPrefixes []string `json:"path_prefixes,omitempty" jsonschema:"Only items under these directory refs, e.g. [\"disk:/home/me/project/\"]."`
	MimeTypes    []string `json:"mime_types,omitempty" jsonschema:"Only these MIME types; wildcards like \"text/*\" allowed."`
	Tags         []string `json:"tags,omitempty" jsonschema:"Only items carrying all of these tags."`
}

func (f *filterArgs) proto() *ctxdv1.SearchFilter {
	if f == nil {
		return nil
	}
	return &ctxdv1.SearchFilter{Drives: f.Drives, PathPrefixes: f.PathPrefixes, MimeTypes: f.MimeTypes, Tags: f.Tags}
}

func init() {
	register(Tool{
		Name:  "context_list_drives",
		Title: "List drives",
		Description: "List every drive that holds items, with item counts and sizes. A good first call when you do not know what is stored. " +
			"Drives name where content came from: agent (written by agents), disk (files ingested from the host), url, github, self (the agent's persistent context: soul, beliefs, goals).",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, _ *struct{}) (any, error) {
		resp, err := b.Vfs.ListDrives(ctx, &ctxdv1.ListDrivesRequest{})
		if err != nil {
			return nil, err
		}
		type drive struct {
			Name      string `json:"name"`
			ItemCount int64  `json:"item_count"`
			SizeBytes int64  `json:"size_bytes"`
		}
		out := struct {
			Drives []drive `json:"drives"`
		}{[]drive{}}
		for _, d := range resp.Drives {
			out.Drives = append(out.Drives, drive{d.Name, d.ItemCount, d.SizeBytes})
		}
		return out, nil
	})

	type treeArgs struct {
		Drive       string `json:"drive,omitempty" jsonschema:"Drive to render, e.g. \"agent\". Omit (with path) to list every drive instead."`
		Path        string `json:"path,omitempty" jsonschema:"Directory path in the drive, e.g. \"/notes\"; empty is the drive root. May instead be a full ref \"drive:/dir\"."`
		MaxDepth    int    `json:"max_depth,omitempty" jsonschema:"Levels below the directory to expand; default 3, at most the daemon's limits.max_tree_depth (default 16)." schema:"minimum=0"`
		ItemsPerDir int    `json:"items_per_dir,omitempty" jsonschema:"Entries listed per directory before the rest are only counted; default 50, at most limits.max_tree_items_per_dir (default 1000)." schema:"minimum=0"`
	}
	register(Tool{
		Name:  "context_tree",
		Title: "Show a directory tree",
		Description: "Render a directory of a drive as an indented tree (files with sizes, directories, counts of what was omitted): the bird's-eye view before reading. " +
			"With no drive and no path it lists every drive. Example: {\"drive\":\"agent\",\"path\":\"/notes\"}.",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *treeArgs) (any, error) {
		req := &ctxdv1.TreeRequest{MaxDepth: int32(in.MaxDepth), ItemsPerDir: int32(in.ItemsPerDir)}
		if in.Drive != "" || in.Path != "" {
			req.Ref = makeRef(cmp.Or(in.Drive, "agent"), in.Path)
		}
		resp, err := b.Vfs.Tree(ctx, req)
		if err != nil {
			return nil, err
		}
		return struct {
			Ref  string `json:"ref,omitempty"`
			Tree string `json:"tree"`
		}{resp.GetRoot().GetRef(), resp.Rendered}, nil
	})

	type readArgs struct {
		itemArgs
		Offset int `json:"offset,omitempty" jsonschema:"Lines to skip from the start (0-based); default 0. Past the end is out_of_range." schema:"minimum=0"`
		Limit  int `json:"limit,omitempty" jsonschema:"Maximum lines to return; default 0 means all remaining lines. Use with offset to page through a long item (has_more tells whether lines follow)." schema:"minimum=0"`
	}
	register(Tool{
		Name:  "context_read",
		Title: "Read an item",
		Description: "Read a text item's content, optionally a window of lines (offset, limit). Returns the content with its 1-based start_line and end_line, total_lines, has_more, and the content_hash to pass as expected_hash to context_edit or context_write. " +
			"A missing item is error not_found whose hint names nearby items; a binary item is no_text_content. Example: {\"path\":\"agent:/notes/todo.md\",\"offset\":40,\"limit\":20}.",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *readArgs) (any, error) {
		resp, err := b.Vfs.Read(ctx, &ctxdv1.ReadRequest{Ref: in.ref(), LineOffset: int64(in.Offset), LineLimit: int64(in.Limit)})
		if err != nil {
			return nil, err
		}
		it := resp.GetItem()
		return struct {
			Ref         string `json:"ref"`
			Content     string `json:"content"`
			StartLine   int64  `json:"start_line"`
			EndLine     int64  `json:"end_line"`
			TotalLines  int64  `json:"total_lines"`
			HasMore     bool   `json:"has_more"`
			MimeType    string `json:"mime_type,omitempty"`
			ContentHash string `json:"content_hash,omitempty"`
		}{it.GetRef(), resp.Content, resp.StartLine, resp.EndLine, resp.TotalLines, resp.HasMore, it.GetMimeType(), it.GetContentHash()}, nil
	})

	type writeArgs struct {
		itemArgs
		Content      string   `json:"content" jsonschema:"The full text content (UTF-8, no NUL bytes), at most the daemon's max_content_bytes."`
		OnConflict   string   `json:"on_conflict,omitempty" jsonschema:"What to do when the item exists: \"error\" (fail with path_conflict), \"overwrite\" (replace it, keeping its id and history), \"skip\" (leave it). Default \"error\"." schema:"default=error,enum=error|overwrite|skip"`
		Title        string   `json:"title,omitempty" jsonschema:"Title; default the last path segment."`
		Description  string   `json:"description,omitempty" jsonschema:"A one-line description of the item."`
		Tags         []string `json:"tags,omitempty" jsonschema:"Tags, usable as a search filter."`
		MimeType     string   `json:"mime_type,omitempty" jsonschema:"MIME type; default detected from the content and the path."`
		ExpectedHash string   `json:"expected_hash,omitempty" jsonschema:"With on_conflict \"overwrite\": fail with content_changed unless the stored content still has this content_hash (from context_read), so you do not overwrite someone else's change."`
		Questions    []string `json:"questions,omitempty" jsonschema:"Questions the content answers, phrased as someone would ask them (at most 32 by default, each at most 512 bytes); a search phrased like one finds the passage that answers it. They replace the item's earlier questions; leaving them out removes those."`
	}
	register(Tool{
		Name:  "context_write",
		Title: "Write an item",
		Description: "Create an item, or replace one (on_conflict \"overwrite\"), with text content; it is indexed for search right away. Drive defaults to \"agent\", your own drive. " +
			"Returns the stored item's ref, created/skipped, size and content_hash, and a tree of its directory after the write. " +
			"To change part of an existing item prefer context_edit. Example: {\"path\":\"/notes/todo.md\",\"content\":\"# Todo\\n- ship\\n\"}.",
		Annotations: Annotations{Destructive: true}, Scopes: writeScope,
	}, func(ctx context.Context, b Backend, in *writeArgs) (any, error) {
		resp, err := b.Vfs.Write(ctx, &ctxdv1.WriteRequest{
			Ref: in.ref(), Body: &ctxdv1.WriteRequest_Content{Content: in.Content}, OnConflict: onConflict(in.OnConflict),
			Title: in.Title, Description: in.Description, Tags: in.Tags, MimeType: in.MimeType, ExpectedContentHash: in.ExpectedHash,
			Questions: in.Questions,
		})
		if err != nil {
			return nil, err
		}
		it := resp.GetItem()
		return struct {
			Ref         string   `json:"ref"`
			Created     bool     `json:"created"`
			Skipped     bool     `json:"skipped,omitempty"`
			SizeBytes   int64    `json:"size_bytes"`
			ContentHash string   `json:"content_hash"`
			Tree        string   `json:"tree"`
			Warnings    []string `json:"warnings,omitempty"`
		}{it.GetRef(), resp.Created, resp.Skipped, it.GetSizeBytes(), it.GetContentHash(), resp.GetTree().GetRendered(), resp.Warnings}, nil
	})

	type patchArgs struct {
		StartLine int    `json:"start_line" jsonschema:"First line affected, 1-based. With end_line 0 it may be one past the last line, to append." schema:"minimum=1"`
		EndLine   int    `json:"end_line" jsonschema:"Last line replaced, 1-based and inclusive; 0 inserts content before start_line without replacing anything." schema:"minimum=0"`
		Content   string `json:"content" jsonschema:"Replacement text; a final newline is optional; empty deletes the line range."`
	}
	type editArgs struct {
		itemArgs
		Patches      []patchArgs `json:"patches" jsonschema:"Line-range patches, all numbered against the current content (read it first); they must not overlap and are applied bottom-up, so their order does not matter." schema:"minItems=1"`
		ExpectedHash string      `json:"expected_hash,omitempty" jsonschema:"Fail with content_changed unless the stored content still has this content_hash (from context_read); recommended."`
	}
	register(Tool{
		Name:  "context_edit",
		Title: "Edit lines of an item",
		Description: "Apply git-style line-range patches to a text item atomically: replace lines start_line..end_line (1-based, inclusive) with content, insert with end_line 0, delete with empty content. " +
			"Read the item first (context_read) to get line numbers and its content_hash. Returns the line counts before and after and the new content_hash. " +
			"Example: {\"path\":\"/notes/todo.md\",\"patches\":[{\"start_line\":2,\"end_line\":2,\"content\":\"- shipped\"}]}.",
		Annotations: Annotations{Destructive: true}, Scopes: writeScope,
	}, func(ctx context.Context, b Backend, in *editArgs) (any, error) {
		req := &ctxdv1.EditRequest{Ref: in.ref(), ExpectedContentHash: in.ExpectedHash}
		for _, p := range in.Patches {
			req.Patches = append(req.Patches, &ctxdv1.Patch{StartLine: int64(p.StartLine), EndLine: int64(p.EndLine), Content: p.Content})
		}
		resp, err := b.Vfs.Edit(ctx, req)
		if err != nil {
			return nil, err
		}
		return struct {
			Ref         string   `json:"ref"`
			LinesBefore int64    `json:"lines_before"`
			LinesAfter  int64    `json:"lines_after"`
			ContentHash string   `json:"content_hash"`
			Warnings    []string `json:"warnings,omitempty"`
		}{resp.GetItem().GetRef(), resp.LinesBefore, resp.LinesAfter, resp.GetItem().GetContentHash(), resp.Warnings}, nil
	})

	type deleteArgs struct {
		itemArgs
		Recursive bool `json:"recursive,omitempty" jsonschema:"Required to delete a directory that has items below it: deletes everything below. Default false."`
	}
	register(Tool{
		Name:  "context_delete",
		Title: "Delete an item or directory",
		Description: "Delete an item, or a directory with everything below it (recursive true). Every deletion is recorded in history: context_history on the ref lists it and context_revert restores it. " +
			"Returns how many items were deleted. Example: {\"path\":\"/scratch\",\"recursive\":true}.",
		Annotations: Annotations{Destructive: true, Idempotent: true}, Scopes: writeScope,
	}, func(ctx context.Context, b Backend, in *deleteArgs) (any, error) {
		resp, err := b.Vfs.Delete(ctx, &ctxdv1.DeleteRequest{Ref: in.ref(), Recursive: in.Recursive})
		if err != nil {
			return nil, err
		}
		return struct {
			Ref          string `json:"ref"`
			DeletedCount int64  `json:"deleted_count"`
		}{in.ref(), resp.DeletedCount}, nil
	})

	type copyArgs struct {
		itemArgs
		ToDrive    string `json:"to_drive,omitempty" jsonschema:"Destination drive; default the source's drive argument (\"agent\" when omitted)."`
		ToPath     string `json:"to_path" jsonschema:"Destination path, e.g. \"/archive/todo.md\", or a full ref \"drive:/path\"; for a directory, the new directory's path."`
		Recursive  bool   `json:"recursive,omitempty" jsonschema:"Required to copy a directory with everything below it. Default false."`
		OnConflict string `json:"on_conflict,omitempty" jsonschema:"What to do with destination items that exist, checked for every item before anything is written: \"error\" (fail with path_conflict), \"overwrite\", \"skip\". Default \"error\"." schema:"default=error,enum=error|overwrite|skip"`
	}
	register(Tool{
		Name:  "context_copy",
		Title: "Copy an item or directory",
		Description: "Duplicate an item (or a directory with recursive true) to a new drive and path; the copy gets a new id. Returns the counts copied and skipped. " +
			"Example: {\"path\":\"/notes/todo.md\",\"to_path\":\"/archive/todo.md\"}.",
		Annotations: Annotations{Destructive: true}, Scopes: writeScope,
	}, func(ctx context.Context, b Backend, in *copyArgs) (any, error) {
		resp, err := b.Vfs.Copy(ctx, &ctxdv1.CopyRequest{SourceRef: in.ref(), DestinationRef: makeRef(cmp.Or(in.ToDrive, in.Drive), in.ToPath),
			Recursive: in.Recursive, OnConflict: onConflict(in.OnConflict)})
		if err != nil {
			return nil, err
		}
		return struct {
			DestinationRef string `json:"destination_ref"`
			CopiedCount    int64  `json:"copied_count"`
			SkippedCount   int64  `json:"skipped_count"`
		}{resp.DestinationRef, resp.CopiedCount, resp.SkippedCount}, nil
	})

	type moveArgs struct {
		itemArgs
		ToDrive    string `json:"to_drive,omitempty" jsonschema:"Destination drive; default the source's drive argument (\"agent\" when omitted)."`
		ToPath     string `json:"to_path" jsonschema:"Destination path, e.g. \"/done/todo.md\", or a full ref \"drive:/path\"."`
		OnConflict string `json:"on_conflict,omitempty" jsonschema:"What to do with destination items that exist, checked for every item before anything is moved: \"error\" (fail with path_conflict), \"overwrite\", \"skip\" (those stay at the source). Default \"error\"." schema:"default=error,enum=error|overwrite|skip"`
	}
	register(Tool{
		Name:  "context_move",
		Title: "Move or rename an item or directory",
		Description: "Rename or relocate an item, or a directory with everything below it, possibly to another drive; ids and history are kept. Returns the counts moved and skipped. " +
			"Example: {\"path\":\"/notes/todo.md\",\"to_path\":\"/done/todo.md\"}.",
		Annotations: Annotations{Destructive: true}, Scopes: writeScope,
	}, func(ctx context.Context, b Backend, in *moveArgs) (any, error) {
		resp, err := b.Vfs.Move(ctx, &ctxdv1.MoveRequest{SourceRef: in.ref(), DestinationRef: makeRef(cmp.Or(in.ToDrive, in.Drive), in.ToPath),
			OnConflict: onConflict(in.OnConflict)})
		if err != nil {
			return nil, err
		}
		return struct {
			DestinationRef string `json:"destination_ref"`
			MovedCount     int64  `json:"moved_count"`
			SkippedCount   int64  `json:"skipped_count"`
		}{resp.DestinationRef, resp.MovedCount, resp.SkippedCount}, nil
	})

	register(Tool{
		Name:  "context_info",
		Title: "Show an item's metadata",
		Description: "Return an item's metadata without its content: ref, id, title, MIME type, size, line count, content_hash, tags, source URL, created/updated/indexed times; for a directory, the item count and total size below it. " +
			"A missing item is error not_found whose hint names nearby items.",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *itemArgs) (any, error) {
		resp, err := b.Vfs.Info(ctx, &ctxdv1.InfoRequest{Ref: in.ref()})
		if err != nil {
			return nil, err
		}
		return newItemInfo(resp), nil
	})

	register(Tool{
		Name:        "context_exists",
		Title:       "Check whether an item exists",
		Description: "Report whether an item or directory exists at a drive and path (exists, is_dir). Never fails for a missing item, so use it to test before writing.",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *itemArgs) (any, error) {
		resp, err := b.Vfs.Exists(ctx, &ctxdv1.ExistsRequest{Ref: in.ref()})
		if err != nil {
			return nil, err
		}
		return struct {
			Ref    string `json:"ref"`
			Exists bool   `json:"exists"`
			IsDir  bool   `json:"is_dir"`
		}{in.ref(), resp.Exists, resp.IsDir}, nil
	})

	register(Tool{
		Name:        "context_count_lines",
		Title:       "Count an item's lines",
		Description: "Count the lines of a text item (newline-terminated lines plus a final unterminated one), e.g. to plan context_read windows on a long item.",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *itemArgs) (any, error) {
		resp, err := b.Vfs.CountLines(ctx, &ctxdv1.CountLinesRequest{Ref: in.ref()})
		if err != nil {
			return nil, err
		}
		return struct {
			Ref   string `json:"ref"`
			Lines int64  `json:"lines"`
		}{in.ref(), resp.Lines}, nil
	})

	register(Tool{
		Name:  "context_create_dir",
		Title: "Create a directory",
		Description: "Create an explicit, empty directory (writing an item creates its directories implicitly, so this is only needed for an empty one). Drive defaults to \"agent\". " +
			"Idempotent: created is false when it already existed.",
		Annotations: Annotations{Idempotent: true}, Scopes: writeScope,
	}, func(ctx context.Context, b Backend, in *itemArgs) (any, error) {
		resp, err := b.Vfs.MakeDir(ctx, &ctxdv1.MakeDirRequest{Ref: in.ref()})
		if err != nil {
			return nil, err
		}
		return struct {
			Ref     string `json:"ref"`
			Created bool   `json:"created"`
		}{resp.Ref, resp.Created}, nil
	})

	type dirArgs struct {
		Drive string `json:"drive,omitempty" jsonschema:"Drive, e.g. \"agent\" or \"disk\". Default \"agent\"." schema:"default=agent"`
		Path  string `json:"path,omitempty" jsonschema:"Directory path in the drive, e.g. \"/notes\"; empty is the whole drive. May instead be a full ref \"drive:/dir\"."`
	}
	register(Tool{
		Name:        "context_dir_size",
		Title:       "Measure a directory",
		Description: "Sum the content bytes and count the items below a directory, or a whole drive when path is empty.",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *dirArgs) (any, error) {
		ref := makeRef(in.Drive, in.Path)
		resp, err := b.Vfs.DirSize(ctx, &ctxdv1.DirSizeRequest{Ref: ref})
		if err != nil {
			return nil, err
		}
		return struct {
			Ref       string `json:"ref"`
			SizeBytes int64  `json:"size_bytes"`
			ItemCount int64  `json:"item_count"`
		}{ref, resp.SizeBytes, resp.ItemCount}, nil
	})
}

func init() {
	type searchArgs struct {
		Queries          []string    `json:"queries" jsonschema:"One or more queries, searched together and de-duplicated: several phrasings or sub-questions of what you need. At most limits.max_queries (default 32); all together at most limits.max_query_bytes (default 1 MiB)." schema:"minItems=1"`
		Mode             string      `json:"mode,omitempty" jsonschema:"\"hybrid\" (words and meaning fused; default), \"bm25\" (exact words and identifiers), \"vector\" (meaning only). Falls back to bm25 when no embedding model is loaded (mode_reason says why)." schema:"default=hybrid,enum=hybrid|bm25|vector"`
		Filter           *filterArgs `json:"filter,omitempty" jsonschema:"Restricts candidates before ranking. Each list holds at most limits.max_filter_values entries (default 64)."`
		Limit            int         `json:"limit,omitempty" jsonschema:"Maximum results; default 10, at most limits.max_search_limit (default 1000)." schema:"minimum=0"`
		TokenBudget      int         `json:"token_budget,omitempty" jsonschema:"Stop adding results once their snippets would exceed this many model tokens; default 0 means no budget; at most limits.max_token_budget (default 100000)." schema:"minimum=0"`
		SnippetLength    int         `json:"snippet_length,omitempty" jsonschema:"Snippet length in characters; default 300, at most limits.max_snippet_length (default 4000)." schema:"minimum=0"`
		GroupBy          string      `json:"group_by,omitempty" jsonschema:"\"chunk\" (default): each result is one chunk, up to 3 per item. \"item\": each result is one item (limit counts items), ranked by where the legs found any of its chunks, with its best chunk's snippet and lines and up to 2 more chunks in more_chunks; use it to find which notes or files matter." schema:"default=chunk,enum=chunk|item"`
		MinScore         float64     `json:"min_score,omitempty" jsonschema:"Drop results whose score is below this; default 0 keeps all. Scores come from ranks, not from similarity: 1 means first in every search leg, a result one leg of three ranks first scores about 0.33, so a threshold like 0.5 keeps results two legs agree on (in hybrid mode)." schema:"minimum=0,maximum=1"`
		ImportanceWeight float64     `json:"importance_weight,omitempty" jsonschema:"Favour items with a high importance (frontmatter importance, 0 to 1): 0 (default) is off, 1 lets an item of importance 1 score up to twice one of importance 0. Use it when what you marked important should win close calls." schema:"minimum=0,maximum=1"`
		UsageWeight      float64     `json:"usage_weight,omitempty" jsonschema:"Favour items that searches returned often before: 0 (default) is off, 1 the strongest. The signal saturates (an item returned 5 times gets half of it)." schema:"minimum=0,maximum=1"`
	}
	register(Tool{
		Name:  "context_search",
		Title: "Search stored content",
		Description: "Search every stored item (notes, ingested files and web pages) by words and meaning, with a batch of queries. " +
			"Returns the best chunks first, each with its item's ref, title, heading, a snippet, a score in [0,1], the lines it spans (read more with context_read offset=start_line-1) and where each search leg ranked it (bm25, substring, vector). " +
			"Use it before answering from memory, then context_read the refs that matter. Example: {\"queries\":[\"deploy steps\",\"release checklist\"],\"filter\":{\"drives\":[\"disk\"]},\"limit\":5}.",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *searchArgs) (any, error) {
		req := &ctxdv1.SearchRequest{Mode: searchMode(in.Mode), Filter: in.Filter.proto(), Limit: int32(in.Limit),
			TokenBudget: int32(in.TokenBudget), SnippetLength: int32(in.SnippetLength), MinScore: in.MinScore,
			ImportanceWeight: in.ImportanceWeight, UsageWeight: in.UsageWeight,
			GroupBy: ctxdv1.SearchGroupBy(ctxdv1.SearchGroupBy_value["SEARCH_GROUP_BY_"+strings.ToUpper(in.GroupBy)])}
		for _, q := range in.Queries {
			req.Queries = append(req.Queries, &ctxdv1.SearchQuery{Text: q})
		}
		resp, err := b.Search.Search(ctx, req)
		if err != nil {
			return nil, err
		}
		return searchResult(resp), nil
	})
}

func init() {
	type findSimilarArgs struct {
		Drive     string      `json:"drive,omitempty" jsonschema:"Drive of the stored item to compare (with path). Default \"agent\"." schema:"default=agent"`
		Path      string      `json:"path,omitempty" jsonschema:"A stored item to compare, e.g. \"/notes/deploy.md\", a full ref \"drive:/path\" or an item id; it is never among its own results. Give path or text."`
		Text      string      `json:"text,omitempty" jsonschema:"A text to compare instead, such as a memory you are about to write; at most limits.max_similar_text_bytes (default 64 KiB)."`
		Threshold float64     `json:"threshold,omitempty" jsonschema:"Cosine similarity a chunk pair must reach; default 0.9 (rewordings and small edits of a passage stay above it)." schema:"minimum=0,maximum=1"`
		Limit     int         `json:"limit,omitempty" jsonschema:"Maximum items; default 10, at most limits.max_search_limit (default 1000)." schema:"minimum=0"`
		Filter    *filterArgs `json:"filter,omitempty" jsonschema:"Only compare with these items. Each list holds at most limits.max_filter_values entries (default 64)."`
	}
	register(Tool{
		Name:  "context_find_similar",
		Title: "Find near-duplicates of an item or a text",
		Description: "Find the stored items that already say what an item or a text says, by the meaning of their chunks (embedding similarity), so that you update a memory instead of writing it twice. " +
			"Returns the items most similar first, each with its ref, title, similarity (cosine in [0,1] of its best matching chunk), coverage (the share of the target's chunks it matches; 1 means all of it is already there) and that chunk's snippet. " +
			"Needs the embedding model. Example: {\"text\":\"The deploy runs a canary in staging first.\"}.",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *findSimilarArgs) (any, error) {
		req := &ctxdv1.FindSimilarRequest{Threshold: in.Threshold, Limit: int32(in.Limit), Filter: in.Filter.proto()}
		switch {
		case (in.Path == "") == (in.Text == ""):
			return nil, &argError{"invalid arguments for context_find_similar: give path or text, not both",
				`Call context_find_similar with "path" (a stored item) or "text" (what you are about to write).`}
		case in.Path != "":
			req.Target = &ctxdv1.FindSimilarRequest_Ref{Ref: makeRef(cmp.Or(in.Drive, "agent"), in.Path)}
		default:
			req.Target = &ctxdv1.FindSimilarRequest_Text{Text: in.Text}
		}
		resp, err := b.Search.FindSimilar(ctx, req)
		if err != nil {
			return nil, err
		}
		type similar struct {
			Ref        string  `json:"ref"`
			Title      string  `json:"title,omitempty"`
			Similarity float64 `json:"similarity"`
			Coverage   float64 `json:"coverage"`
			Snippet    string  `json:"snippet"`
		}
		out := struct {
			Items        []similar `json:"items"`
			TargetChunks int32     `json:"target_chunks"`
			Stale        string    `json:"stale,omitempty"`
		}{Items: []similar{}, TargetChunks: resp.TargetChunks, Stale: resp.StaleReason}
		for _, it := range resp.Items {
			out.Items = append(out.Items, similar{it.Ref, it.Title, it.Similarity, it.Coverage, it.Snippet})
		}
		return out, nil
	})
}

// searchHit is one search result as the tools show it.
type searchHit struct {
	Ref       string           `json:"ref,omitempty"` // empty in more_chunks
	Title     string           `json:"title,omitempty"`
	Heading   string           `json:"heading,omitempty"`
	Snippet   string           `json:"snippet"`
	Score     float64          `json:"score"`
	StartLine int64            `json:"start_line,omitempty"`
	EndLine   int64            `json:"end_line,omitempty"`
	Ranks     map[string]int32 `json:"ranks,omitempty"`
	Queries   []int32          `json:"queries,omitempty"`
	// MoreChunks are an item result's next best chunks (group_by "item").
	MoreChunks []searchHit `json:"more_chunks,omitempty"`
}

// toolRanks flattens per-leg ranks to {"bm25":1,...}; nil when none.
func toolRanks(lrs []*ctxdv1.LegRank) map[string]int32 {
	var out map[string]int32
	for _, lr := range lrs {
		if out == nil {
			out = map[string]int32{}
		}
		out[lower(lr.Leg.String(), "SEARCH_LEG_")] = lr.Rank
	}
	return out
}

// searchResult flattens a SearchResponse: per-leg ranks as {"bm25":1,...},
// query reports only where they say something (a correction, a reduction).
func searchResult(resp *ctxdv1.SearchResponse) any {
	type report struct {
		Query      string `json:"query"`
		Corrected  string `json:"corrected,omitempty"`
		ReducedTo  string `json:"reduced_to,omitempty"`
		Candidates int32  `json:"candidates"`
	}
	out := struct {
		Results    []searchHit `json:"results"`
		ModeUsed   string      `json:"mode_used"`
		ModeReason string      `json:"mode_reason,omitempty"`
		TokensUsed int32       `json:"tokens_used,omitempty"`
		Queries    []report    `json:"queries"`
		Stale      string      `json:"stale,omitempty"` // why the results may miss the latest writes
	}{Results: []searchHit{}, ModeUsed: lower(resp.ModeUsed.String(), "SEARCH_MODE_"), ModeReason: resp.ModeReason, TokensUsed: resp.TokensUsed,
		Stale: resp.StaleReason}
	for _, r := range resp.Results {
		h := searchHit{Ref: r.Ref, Title: r.Title, Heading: r.Heading, Snippet: r.Snippet, Score: r.Score,
			StartLine: r.StartLine, EndLine: r.EndLine, Ranks: toolRanks(r.LegRanks), Queries: r.QueryIndexes}
		for _, m := range r.MoreChunks {
			h.MoreChunks = append(h.MoreChunks, searchHit{Heading: m.Heading, Snippet: m.Snippet, Score: m.Score,
				StartLine: m.StartLine, EndLine: m.EndLine, Ranks: toolRanks(m.LegRanks)})
		}
		out.Results = append(out.Results, h)
	}
	for _, q := range resp.Queries {
		out.Queries = append(out.Queries, report{q.Text, q.CorrectedText, q.ReducedText, q.CandidateCount})
	}
	return out
}

func init() {
	type refreshArgs struct {
		Refs  []string `json:"refs,omitempty" jsonschema:"Refs to refresh: items (\"disk:/home/me/notes.md\"), item ids, or directories (\"url:/\", \"disk:/home/me/project\") for everything below. Give refs or all."`
		All   bool     `json:"all,omitempty" jsonschema:"Refresh every item on every refreshable drive (not agent, which has no source). Default false."`
		Force bool     `json:"force,omitempty" jsonschema:"Re-read sources even when size, modification time or HTTP validators say they are unchanged. Default false."`
	}
	register(Tool{
		Name:  "context_refresh",
		Title: "Refresh ingested items from their sources",
		Description: "Re-read the host files and URLs that ingested items came from and update the items whose source changed (changed chunks are re-embedded). Items on the agent drive have no source and are skipped. " +
			"Returns a summary (added, updated, unchanged, skipped, missing, failed), the changed refs and the failures, each list capped at " + fmt.Sprint(maxListed) + " entries with a count of the rest. " +
			"Example: {\"refs\":[\"disk:/home/me/project\"]}.",
		Annotations: Annotations{Destructive: true, Idempotent: true, OpenWorld: true}, Scopes: ingestScope,
	}, func(ctx context.Context, b Backend, in *refreshArgs) (any, error) {
		if len(in.Refs) == 0 && !in.All {
			return nil, &argError{"invalid arguments for context_refresh: give refs or all",
				`Call context_refresh with "refs" (items or directories to refresh) or "all": true.`}
		}
		stream, err := b.Ingest.Refresh(ctx, &ctxdv1.RefreshRequest{Refs: in.Refs, All: in.All, Force: in.Force})
		if err != nil {
			return nil, err
		}
		return ingestResult(stream.Recv)
	})

	type addArgs struct {
		Sources       []string `json:"sources" jsonschema:"Absolute file or directory paths on the daemon's host (within its allowed_roots), or http(s) URLs. Files go to the disk drive under their absolute path, URLs to the url drive, GitHub file URLs to the github drive." schema:"minItems=1"`
		Drive         string   `json:"drive,omitempty" jsonschema:"Store under this drive instead of the source's natural one (disk, url, github)."`
		Tags          []string `json:"tags,omitempty" jsonschema:"Tags added to every ingested item."`
		Exclude       []string `json:"exclude,omitempty" jsonschema:"Glob patterns of paths to leave out, in addition to .gitignore rules."`
		IncludeHidden bool     `json:"include_hidden,omitempty" jsonschema:"Descend into hidden files and directories. Default false."`
		Dedupe        float64  `json:"dedupe,omitempty" jsonschema:"Skip a new text source whose every chunk already has a match in one stored item (or one this add wrote before it) at or above this cosine similarity (e.g. 0.9), reporting it as skipped with duplicate_of. Needs the embedding model. Default 0: no de-duplication." schema:"minimum=0,maximum=1"`
	}
	register(Tool{
		Name:  "context_add",
		Title: "Ingest files or URLs",
		Description: "Ingest files, directory trees or web pages from the daemon's host into the store, where they become readable and searchable. Items that already exist are left alone (use context_refresh to update them). " +
			"Secrets, paths outside the daemon's allowed roots and private network addresses are refused (source_refused). " +
			"Returns a summary (added, skipped, failed, ...), the added refs and the failures, each list capped at " + fmt.Sprint(maxListed) + " entries with a count of the rest. " +
			"Example: {\"sources\":[\"/home/me/project/docs\",\"https://example.com/guide\"]}.",
		Annotations: Annotations{Idempotent: true, OpenWorld: true}, Scopes: ingestScope,
	}, func(ctx context.Context, b Backend, in *addArgs) (any, error) {
		stream, err := b.Ingest.Add(ctx, &ctxdv1.AddRequest{Sources: in.Sources, Drive: in.Drive, Tags: in.Tags,
			Exclude: in.Exclude, IncludeHidden: in.IncludeHidden, DedupeThreshold: in.Dedupe})
		if err != nil {
			return nil, err
		}
		return ingestResult(stream.Recv)
	})

	type buildArgs struct {
		Task   string      `json:"task,omitempty" jsonschema:"The task, in words: it selects the contextual context files and is the search query for the chunks. Empty: only the always-loaded files (soul, beliefs, goals, capabilities)."`
		Budget int         `json:"budget,omitempty" jsonschema:"Token budget of the whole context; default 4000, at most limits.max_token_budget (default 100000). Nothing is cut silently: what did not fit is listed in omitted." schema:"minimum=0"`
		Roots  []string    `json:"roots,omitempty" jsonschema:"Context roots whose files take part, as directory refs (\"self:/\", \"self:/researcher/\"); default the daemon's context_roots (\"self:/\"). At most limits.max_filter_values entries (default 64)."`
		Filter *filterArgs `json:"filter,omitempty" jsonschema:"Restricts the search chunks (not the context files). Each list holds at most limits.max_filter_values entries (default 64)."`
		Limit  int         `json:"limit,omitempty" jsonschema:"Maximum search chunks; default 10, at most limits.max_search_limit (default 1000)." schema:"minimum=0"`
		Mode   string      `json:"mode,omitempty" jsonschema:"Search mode for the chunks: \"hybrid\" (default), \"bm25\" or \"vector\"." schema:"default=hybrid,enum=hybrid|bm25|vector"`
	}
	register(Tool{
		Name:  "build_context",
		Title: "Assemble the context for a task",
		Description: "Assemble, within a token budget, everything you should know for one task: your always-loaded context files (soul, beliefs, goals, capabilities) verbatim, the contextual files the task matches, then the best search chunks for the task. " +
			"Returns it as one markdown block, with tokens_used, the budget, the sections (kind, ref, heading, tokens) and what was omitted and why. Call it at the start of a task.",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *buildArgs) (any, error) {
		resp, err := b.Context.BuildContext(ctx, &ctxdv1.BuildContextRequest{Task: in.Task, Budget: int32(in.Budget), Roots: in.Roots,
			Filter: in.Filter.proto(), Limit: int32(in.Limit), Mode: searchMode(in.Mode)})
		if err != nil {
			return nil, err
		}
		type section struct {
			Kind    string `json:"kind"`
			Ref     string `json:"ref"`
			Heading string `json:"heading,omitempty"`
			Tokens  int32  `json:"tokens"`
		}
		type omission struct {
			Kind    string `json:"kind"`
			Ref     string `json:"ref"`
			Heading string `json:"heading,omitempty"`
			Reason  string `json:"reason"`
			Tokens  int32  `json:"tokens"`
		}
		out := struct {
			Markdown   string     `json:"markdown"`
			TokensUsed int32      `json:"tokens_used"`
			Budget     int32      `json:"budget"`
			Sections   []section  `json:"sections"`
			Omitted    []omission `json:"omitted,omitempty"`
			Warnings   []string   `json:"warnings,omitempty"`
			Stale      string     `json:"stale,omitempty"`
		}{Markdown: resp.Markdown, TokensUsed: resp.TokensUsed, Budget: resp.Budget, Sections: []section{}, Warnings: resp.Warnings,
			Stale: resp.StaleReason}
		for _, s := range resp.Sections {
			out.Sections = append(out.Sections, section{s.Kind, s.Ref, s.Heading, s.Tokens})
		}
		for _, o := range resp.Omitted {
			out.Omitted = append(out.Omitted, omission{o.Kind, o.Ref, o.Heading, o.Reason, o.Tokens})
		}
		return out, nil
	})

	type updateArgs struct {
		Body         string `json:"body" jsonschema:"The new body: the whole text after the frontmatter block, which is kept as it is. Replaces the previous body, so include what should stay."`
		Root         string `json:"root,omitempty" jsonschema:"Context root holding the file, as a directory ref; default \"self:/\" (the daemon's default context root)." schema:"default=self:/"`
		ExpectedHash string `json:"expected_hash,omitempty" jsonschema:"Fail with content_changed unless the stored file still has this content_hash (from context_read); recommended."`
	}
	for _, f := range []struct{ tool, file, what string }{
		{"update_beliefs", "beliefs.md", "what you believe to be true about the user, the project and the world"},
		{"update_goals", "goals.md", "the goals you are working towards"},
	} {
		register(Tool{
			Name:  f.tool,
			Title: "Update " + f.file,
			Description: "Replace the body of " + f.file + " in your context root: " + f.what + ". Its frontmatter is kept byte for byte, and it is loaded into every build_context. " +
				"Read it first (context_read path \"self:/" + f.file + "\") and send the whole new body. Fails with read_only if its frontmatter does not allow agents to modify it, and not_found if the context root was never initialised (`ctxd context init`).",
			Annotations: Annotations{Destructive: true, Idempotent: true}, Scopes: writeScope,
		}, func(ctx context.Context, b Backend, in *updateArgs) (any, error) {
			resp, err := b.Context.Update(ctx, &ctxdv1.UpdateRequest{Ref: strings.TrimSuffix(in.Root, "/") + "/" + f.file,
				Body: in.Body, ExpectedContentHash: in.ExpectedHash})
			if err != nil {
				return nil, err
			}
			return struct {
				Ref         string   `json:"ref"`
				ContentHash string   `json:"content_hash"`
				SizeBytes   int64    `json:"size_bytes"`
				Warnings    []string `json:"warnings,omitempty"`
			}{resp.GetItem().GetRef(), resp.GetItem().GetContentHash(), resp.GetItem().GetSizeBytes(), resp.Warnings}, nil
		})
	}

	type historyArgs struct {
		itemArgs
		Limit     int `json:"limit,omitempty" jsonschema:"Maximum revisions to return; default 50, at most 1000." schema:"minimum=0,maximum=1000"`
		BeforeRev int `json:"before_rev,omitempty" jsonschema:"Only revisions older than this rev; default 0 means from the newest. Pass the last returned rev to page." schema:"minimum=0"`
	}
	register(Tool{
		Name:  "context_history",
		Title: "List an item's revisions",
		Description: "List an item's revisions, newest first: rev, time, actor (who changed it), op (write, edit, delete, move, copy, revert, context_update, refresh), content_hash and size. " +
			"Works for a deleted item's last path too. Use it to see what changed, then context_revert to go back.",
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *historyArgs) (any, error) {
		resp, err := b.Vfs.History(ctx, &ctxdv1.HistoryRequest{Ref: in.ref(), Limit: int32(in.Limit), BeforeRev: int64(in.BeforeRev)})
		if err != nil {
			return nil, err
		}
		type revision struct {
			Rev         int64  `json:"rev"`
			Time        string `json:"time"`
			Actor       string `json:"actor,omitempty"`
			Op          string `json:"op"`
			Ref         string `json:"ref"`
			ContentHash string `json:"content_hash,omitempty"`
			SizeBytes   int64  `json:"size_bytes"`
			Deleted     bool   `json:"deleted,omitempty"`
		}
		out := struct {
			Revisions []revision `json:"revisions"`
		}{[]revision{}}
		for _, r := range resp.Revisions {
			out.Revisions = append(out.Revisions, revision{r.Rev, timeText(r.GetTime()), r.Actor, r.Op, r.Ref,
				r.ContentHash, r.SizeBytes, r.Deleted})
		}
		return out, nil
	})

	type revertArgs struct {
		itemArgs
		Rev int `json:"rev" jsonschema:"The revision (rev from context_history) whose content and metadata become current again." schema:"minimum=1"`
	}
	register(Tool{
		Name:  "context_revert",
		Title: "Revert an item to a revision",
		Description: "Make an earlier revision of an item current again, recorded as a new revision (so it can itself be undone); for a deleted item it restores the item, with its id, where it was deleted. " +
			"Find the rev with context_history. Example: {\"path\":\"/notes/todo.md\",\"rev\":3}.",
		Annotations: Annotations{Destructive: true}, Scopes: writeScope,
	}, func(ctx context.Context, b Backend, in *revertArgs) (any, error) {
		resp, err := b.Vfs.Revert(ctx, &ctxdv1.RevertRequest{Ref: in.ref(), Rev: int64(in.Rev)})
		if err != nil {
			return nil, err
		}
		return struct {
			Ref         string   `json:"ref"`
			Restored    bool     `json:"restored"`
			ContentHash string   `json:"content_hash"`
			Warnings    []string `json:"warnings,omitempty"`
		}{resp.GetItem().GetRef(), resp.Created, resp.GetItem().GetContentHash(), resp.Warnings}, nil
	})
}

// maxListed caps the per-item lists of an ingest result; the summary still
// counts everything.
const maxListed = 20

// ingestEvent is one event of an Add or Refresh stream.
type ingestEvent interface {
	GetItem() *ctxdv1.IngestItemResult
	GetSummary() *ctxdv1.IngestSummary
}

// ingestResult drains an ingest stream into its summary, keeping at most
// maxListed changed items and failures (and counts of the rest) so a large
// ingest does not grow the result without bound. Progress events are dropped.
func ingestResult[E ingestEvent](recv func() (E, error)) (any, error) {
	type changed struct {
		Ref    string `json:"ref"`
		Action string `json:"action"`
	}
	type duplicate struct {
		Ref         string `json:"ref"`
		DuplicateOf string `json:"duplicate_of"`
	}
	type failure struct {
		Ref       string `json:"ref,omitempty"`
		Source    string `json:"source,omitempty"`
		Action    string `json:"action"`
		ErrorType string `json:"error_type,omitempty"`
		Message   string `json:"message"`
	}
	type summary struct {
		Added        int64   `json:"added"`
		Updated      int64   `json:"updated"`
		Unchanged    int64   `json:"unchanged"`
		Skipped      int64   `json:"skipped"`
		Missing      int64   `json:"missing"`
		Failed       int64   `json:"failed"`
		ChunksQueued int64   `json:"chunks_queued"`
		Bytes        int64   `json:"bytes"`
		Seconds      float64 `json:"seconds"`
	}
	out := struct {
		Summary     summary   `json:"summary"`
		Changed     []changed `json:"changed"`
		MoreChanged int       `json:"more_changed,omitempty"`
		// Duplicates are the sources dedupe skipped, with the stored item each repeats.
		Duplicates     []duplicate `json:"duplicates,omitempty"`
		MoreDuplicates int         `json:"more_duplicates,omitempty"`
		Failures       []failure   `json:"failures,omitempty"`
		MoreFailures   int         `json:"more_failures,omitempty"`
	}{Changed: []changed{}}
	for {
		ev, err := recv()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("ingest stream ended without its summary")
		}
		if err != nil {
			return nil, err
		}
		if s := ev.GetSummary(); s != nil {
			out.Summary = summary{s.Added, s.Updated, s.Unchanged, s.Skipped, s.Missing, s.Failed, s.ChunksQueued, s.Bytes, s.Seconds}
			return out, nil
		}
		it := ev.GetItem()
		if it == nil {
			continue
		}
		action := lower(it.Action.String(), "INGEST_ACTION_")
		switch it.Action {
		case ctxdv1.IngestAction_INGEST_ACTION_ADDED, ctxdv1.IngestAction_INGEST_ACTION_UPDATED:
			if len(out.Changed) < maxListed {
				out.Changed = append(out.Changed, changed{it.Ref, action})
			} else {
				out.MoreChanged++
			}
		case ctxdv1.IngestAction_INGEST_ACTION_SKIPPED:
			if it.DuplicateOf == "" {
				break
			}
			if len(out.Duplicates) < maxListed {
				out.Duplicates = append(out.Duplicates, duplicate{it.Ref, it.DuplicateOf})
			} else {
				out.MoreDuplicates++
			}
		case ctxdv1.IngestAction_INGEST_ACTION_FAILED, ctxdv1.IngestAction_INGEST_ACTION_MISSING:
			if len(out.Failures) < maxListed {
				f := failure{Ref: it.Ref, Source: it.Source, Action: action, Message: it.ErrorMessage}
				if it.Error != nil && it.Error.Type != ctxdv1.ErrorType_ERROR_TYPE_UNSPECIFIED {
					f.ErrorType = lower(it.Error.Type.String(), "ERROR_TYPE_")
				}
				out.Failures = append(out.Failures, f)
			} else {
				out.MoreFailures++
			}
		}
	}
}

// itemInfo is context_info's result: the item's metadata with numbers as
// JSON numbers (protojson writes 64-bit integers as strings) and times as
// RFC 3339, leaving out what is unset.
type itemInfo struct {
	Ref               string   `json:"ref"`
	ID                string   `json:"id,omitempty"`
	Title             string   `json:"title,omitempty"`
	Description       string   `json:"description,omitempty"`
	MimeType          string   `json:"mime_type,omitempty"`
	IsText            bool     `json:"is_text"`
	IsDir             bool     `json:"is_dir"`
	SizeBytes         int64    `json:"size_bytes"`
	LineCount         int64    `json:"line_count"`
	ItemCount         int64    `json:"item_count,omitempty"`
	ContentHash       string   `json:"content_hash,omitempty"`
	Tags              []string `json:"tags,omitempty"`
	Importance        float64  `json:"importance,omitempty"`
	SourceURL         string   `json:"source_url,omitempty"`
	Loading           string   `json:"loading,omitempty"`
	AgentModification bool     `json:"agent_modification"`
	CreatedAt         string   `json:"created_at,omitempty"`
	UpdatedAt         string   `json:"updated_at,omitempty"`
	IndexedAt         string   `json:"indexed_at,omitempty"`
	RetrievalCount    int64    `json:"retrieval_count,omitempty"`
	LastRetrievedAt   string   `json:"last_retrieved_at,omitempty"`
}

func newItemInfo(resp *ctxdv1.InfoResponse) itemInfo {
	it := resp.GetItem()
	return itemInfo{
		Ref: it.GetRef(), ID: it.GetId(), Title: it.GetTitle(), Description: it.GetDescription(),
		MimeType: it.GetMimeType(), IsText: it.GetIsText(), IsDir: it.GetIsDir(),
		SizeBytes: it.GetSizeBytes(), LineCount: it.GetLineCount(), ItemCount: resp.GetItemCount(),
		ContentHash: it.GetContentHash(), Tags: it.GetTags(), Importance: it.GetImportance(),
		SourceURL: it.GetSourceUrl(), Loading: it.GetLoading(), AgentModification: it.GetAgentModification(),
		CreatedAt: timeText(it.GetCreatedAt()), UpdatedAt: timeText(it.GetUpdatedAt()), IndexedAt: timeText(it.GetIndexedAt()),
		RetrievalCount: it.GetRetrievalCount(), LastRetrievedAt: timeText(it.GetLastRetrievedAt()),
	}
}

// timeText is t in RFC 3339, or "" when unset.
func timeText(t *timestamppb.Timestamp) string {
	if t == nil {
		return ""
	}
	return t.AsTime().UTC().Format(time.RFC3339Nano)
}
