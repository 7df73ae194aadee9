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
	Drive string `json:"drive,omitempty" jsonschema:"agent (default: your notes), self (your context files), disk, url, github, ..." schema:"default=agent"`
	Path  string `json:"path" jsonschema:"Path in the drive, e.g. \"/notes/todo.md\"; or a full ref \"drive:/path\" or an item id, which ignore drive."`
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
	Drives       []string `json:"drives,omitempty" jsonschema:"Only these drives."`
	PathPrefixes []string `json:"path_prefixes,omitempty" jsonschema:"Only under these directory refs, e.g. \"disk:/home/me/proj/\"."`
	MimeTypes    []string `json:"mime_types,omitempty" jsonschema:"Only these MIME types; \"text/*\" works."`
	Tags         []string `json:"tags,omitempty" jsonschema:"Only items with all these tags."`
}

func (f *filterArgs) proto() *ctxdv1.SearchFilter {
	if f == nil {
		return nil
	}
	return &ctxdv1.SearchFilter{Drives: f.Drives, PathPrefixes: f.PathPrefixes, MimeTypes: f.MimeTypes, Tags: f.Tags}
}

func init() {
	register(Tool{
		Name:        "context_list_drives",
		Title:       "List drives",
		Description: "List the drives (agent: your notes, self: your context files, disk/url/github: ingested) with item counts and sizes. Call it first when you do not know what is stored.",
		Annotations: readOnly, Scopes: readScope, core: true,
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
		Drive       string `json:"drive,omitempty" jsonschema:"Drive, e.g. \"agent\"; omit with path for every drive."`
		Path        string `json:"path,omitempty" jsonschema:"Directory, e.g. \"/notes\" (default the root), or a ref \"drive:/dir\"."`
		MaxDepth    int    `json:"max_depth,omitempty" jsonschema:"Levels to expand; default 3, max limits.max_tree_depth (16)." schema:"minimum=0"`
		ItemsPerDir int    `json:"items_per_dir,omitempty" jsonschema:"Entries per directory before the rest are counted; default 50, max limits.max_tree_items_per_dir (1000)." schema:"minimum=0"`
	}
	register(Tool{
		Name:        "context_tree",
		Title:       "Show a directory tree",
		Description: "Show a directory as an indented tree with sizes: the overview before you read. Example: {\"drive\":\"agent\",\"path\":\"/notes\"}.",
		Annotations: readOnly, Scopes: readScope, core: true,
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
		Offset int `json:"offset,omitempty" jsonschema:"Lines to skip; default 0." schema:"minimum=0"`
		Limit  int `json:"limit,omitempty" jsonschema:"Lines to return; default 0: all." schema:"minimum=0"`
	}
	register(Tool{
		Name:  "context_read",
		Title: "Read an item",
		Description: "Read a text item, whole or a window of lines. Returns content, start_line/end_line (1-based), total_lines, has_more and content_hash (the expected_hash of an edit). " +
			"A missing item fails with not_found, its hint naming nearby items.",
		Annotations: readOnly, Scopes: readScope, core: true,
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
		Content      string   `json:"content" jsonschema:"Text, at most max_content_bytes (64 MiB)."`
		OnConflict   string   `json:"on_conflict,omitempty" jsonschema:"If it exists: error (path_conflict), overwrite (same id, history kept), skip." schema:"default=error,enum=error|overwrite|skip"`
		Title        string   `json:"title,omitempty" jsonschema:"Default the file name."`
		Description  string   `json:"description,omitempty" jsonschema:"One line about the item."`
		Tags         []string `json:"tags,omitempty" jsonschema:"Tags, a search filter."`
		MimeType     string   `json:"mime_type,omitempty" jsonschema:"Default detected."`
		ExpectedHash string   `json:"expected_hash,omitempty" jsonschema:"With overwrite: fail with content_changed unless the item still has this content_hash."`
		Questions    []string `json:"questions,omitempty" jsonschema:"Questions the content answers, as a user would ask them, so searches find it; max limits.max_questions_per_item (32), each max 512 bytes. Replace the earlier ones."`
	}
	register(Tool{
		Name:  "context_write",
		Title: "Write an item",
		Description: "Create a text item (a note, a document) or, with on_conflict overwrite, replace one; it is searchable right away. " +
			"Returns its ref, content_hash and its directory's tree. To change part of an item use context_edit.",
		Annotations: Annotations{Destructive: true}, Scopes: writeScope, core: true,
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
		StartLine int    `json:"start_line" jsonschema:"First line, 1-based; last line + 1 with end_line 0 appends." schema:"minimum=1"`
		EndLine   int    `json:"end_line" jsonschema:"Last line replaced, inclusive; 0 inserts before start_line." schema:"minimum=0"`
		Content   string `json:"content" jsonschema:"New text; empty deletes the lines."`
	}
	type editArgs struct {
		itemArgs
		Patches      []patchArgs `json:"patches" jsonschema:"Non-overlapping patches, numbered against the content as read." schema:"minItems=1"`
		ExpectedHash string      `json:"expected_hash,omitempty" jsonschema:"Fail with content_changed unless the item still has this content_hash."`
	}
	register(Tool{
		Name:  "context_edit",
		Title: "Edit lines of an item",
		Description: "Replace, insert or delete line ranges of a text item, atomically. context_read it first for line numbers and content_hash. " +
			"Example: {\"path\":\"/notes/todo.md\",\"patches\":[{\"start_line\":2,\"end_line\":2,\"content\":\"- shipped\"}]}.",
		Annotations: Annotations{Destructive: true}, Scopes: writeScope, core: true,
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
		Recursive bool `json:"recursive,omitempty" jsonschema:"Needed for a directory with items: deletes them all."`
	}
	register(Tool{
		Name:  "context_delete",
		Title: "Delete an item or directory",
		Description: "Delete an item, or a directory with everything below it. context_revert restores what was deleted (find the rev with context_history). " +
			"Example: {\"path\":\"/scratch\",\"recursive\":true}.",
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
		ToDrive    string `json:"to_drive,omitempty" jsonschema:"Default the drive argument."`
		ToPath     string `json:"to_path" jsonschema:"Destination path or ref \"drive:/path\"; for a directory, the new directory."`
		Recursive  bool   `json:"recursive,omitempty" jsonschema:"Needed to copy a directory with its items."`
		OnConflict string `json:"on_conflict,omitempty" jsonschema:"For destination items that exist, checked before anything is written: error (path_conflict), overwrite, skip." schema:"default=error,enum=error|overwrite|skip"`
	}
	register(Tool{
		Name:  "context_copy",
		Title: "Copy an item or directory",
		Description: "Copy an item, or a directory, to another path or drive; the copy gets a new id. " +
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
		ToDrive    string `json:"to_drive,omitempty" jsonschema:"Default the drive argument."`
		ToPath     string `json:"to_path" jsonschema:"Destination path or ref \"drive:/path\"."`
		OnConflict string `json:"on_conflict,omitempty" jsonschema:"For destination items that exist, checked before anything moves: error (path_conflict), overwrite, skip (they stay)." schema:"default=error,enum=error|overwrite|skip"`
	}
	register(Tool{
		Name:  "context_move",
		Title: "Move or rename an item or directory",
		Description: "Rename or move an item, or a directory with everything below it, also across drives; ids and history stay. " +
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
		Description: "An item's metadata without its content: title, MIME type, size, line_count, content_hash, tags, source, times; for a directory or a drive (path \"/\") its item_count and size. " +
			"Use it to check that an item exists (else not_found, naming nearby items) or to plan context_read windows.",
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
		Annotations: readOnly, Scopes: readScope, replacedBy: "context_info",
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
		Annotations: readOnly, Scopes: readScope, replacedBy: "context_info",
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
		Name:        "context_create_dir",
		Title:       "Create a directory",
		Description: "Create an empty directory; only needed for an empty one, as writing an item creates its directories. created is false if it existed.",
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
		Annotations: readOnly, Scopes: readScope, replacedBy: "context_info",
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
		Queries          []string    `json:"queries" jsonschema:"Phrasings or sub-questions, searched together; max limits.max_queries (32) and max_query_bytes (1 MiB) in all." schema:"minItems=1"`
		Mode             string      `json:"mode,omitempty" jsonschema:"hybrid: words and meaning; bm25: exact words, identifiers; vector: meaning." schema:"default=hybrid,enum=hybrid|bm25|vector"`
		Filter           *filterArgs `json:"filter,omitempty" jsonschema:"Narrows the candidates; each list max limits.max_filter_values (64)."`
		Limit            int         `json:"limit,omitempty" jsonschema:"Default 10, max limits.max_search_limit (1000)." schema:"minimum=0"`
		TokenBudget      int         `json:"token_budget,omitempty" jsonschema:"Stop before the snippets pass this many tokens; default 0: none; max limits.max_token_budget (100000)." schema:"minimum=0"`
		SnippetLength    int         `json:"snippet_length,omitempty" jsonschema:"Characters; default 300, max limits.max_snippet_length (4000)." schema:"minimum=0"`
		GroupBy          string      `json:"group_by,omitempty" jsonschema:"chunk: up to 3 chunks per item; item: one result per item, 2 more chunks in more_chunks (which notes matter)." schema:"default=chunk,enum=chunk|item"`
		MinScore         float64     `json:"min_score,omitempty" jsonschema:"Drop results below this rank-based score: 1 is first in every leg, 0.5 keeps what two of three legs agree on." schema:"minimum=0,maximum=1"`
		ImportanceWeight float64     `json:"importance_weight,omitempty" jsonschema:"Favour items of high frontmatter importance; 0 is off." schema:"minimum=0,maximum=1"`
		UsageWeight      float64     `json:"usage_weight,omitempty" jsonschema:"Favour items searches returned often; 0 is off." schema:"minimum=0,maximum=1"`
	}
	register(Tool{
		Name:  "context_search",
		Title: "Search stored content",
		Description: "Search notes, files and pages by words and meaning. Returns the best chunks with ref, snippet, score and lines (read on with context_read offset=start_line-1). " +
			"Search before answering from memory. Example: {\"queries\":[\"deploy steps\",\"release checklist\"],\"limit\":5}.",
		Annotations: readOnly, Scopes: readScope, core: true,
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
		Drive     string      `json:"drive,omitempty" jsonschema:"Drive of path." schema:"default=agent"`
		Path      string      `json:"path,omitempty" jsonschema:"A stored item to compare (path, ref or id). Give path or text."`
		Text      string      `json:"text,omitempty" jsonschema:"A text to compare, such as a note you are about to write; max limits.max_similar_text_bytes (64 KiB)."`
		Threshold float64     `json:"threshold,omitempty" jsonschema:"Cosine a chunk pair must reach; default 0.9 (rewordings stay above)." schema:"minimum=0,maximum=1"`
		Limit     int         `json:"limit,omitempty" jsonschema:"Items; default 10, max limits.max_search_limit (1000)." schema:"minimum=0"`
		Filter    *filterArgs `json:"filter,omitempty" jsonschema:"Only compare with these; each list max limits.max_filter_values (64)."`
	}
	register(Tool{
		Name:  "context_find_similar",
		Title: "Find near-duplicates of an item or a text",
		Description: "Before writing a note, find the stored items that already say the same (by embedding similarity), to update one instead of writing it twice. " +
			"Returns items with similarity and coverage (1: all of it is already stored). Needs the embedding model.",
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
		Refs  []string `json:"refs,omitempty" jsonschema:"Items, ids or directories (\"disk:/home/me/proj\", \"url:/\"). Give refs or all."`
		All   bool     `json:"all,omitempty" jsonschema:"Every item that has a source."`
		Force bool     `json:"force,omitempty" jsonschema:"Re-read sources even when size, mtime or HTTP validators say unchanged."`
	}
	register(Tool{
		Name:  "context_refresh",
		Title: "Refresh ingested items from their sources",
		Description: "Re-read the files and URLs ingested items came from and update what changed. " +
			"Returns a summary and the changed refs and failures, each list at most " + fmt.Sprint(maxListed) + " with a count of the rest.",
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
		Sources       []string `json:"sources" jsonschema:"Absolute paths on the daemon's host (within allowed_roots) or http(s) URLs; they go to the disk, url or github drive." schema:"minItems=1"`
		Drive         string   `json:"drive,omitempty" jsonschema:"Another drive to store them under."`
		Tags          []string `json:"tags,omitempty" jsonschema:"Tags for every item."`
		Exclude       []string `json:"exclude,omitempty" jsonschema:"Globs to leave out, beside .gitignore rules."`
		IncludeHidden bool     `json:"include_hidden,omitempty" jsonschema:"Descend into hidden files and directories."`
		Dedupe        float64  `json:"dedupe,omitempty" jsonschema:"Skip a text source whose every chunk matches one stored item at this cosine (e.g. 0.9; needs the embedding model); 0 is off." schema:"minimum=0,maximum=1"`
	}
	register(Tool{
		Name:  "context_add",
		Title: "Ingest files or URLs",
		Description: "Ingest files, directory trees or web pages into the store to read and search them; existing items stay (context_refresh updates them). " +
			"Returns a summary and the added refs and failures, each list at most " + fmt.Sprint(maxListed) + " with a count of the rest. " +
			"Example: {\"sources\":[\"/home/me/proj/docs\",\"https://example.com/guide\"]}.",
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
		Task   string      `json:"task,omitempty" jsonschema:"The task in words; empty: only the always-loaded files."`
		Budget int         `json:"budget,omitempty" jsonschema:"Tokens; default 4000, max limits.max_token_budget (100000)." schema:"minimum=0"`
		Roots  []string    `json:"roots,omitempty" jsonschema:"Context roots, e.g. \"self:/\" (the default); max limits.max_filter_values (64)."`
		Filter *filterArgs `json:"filter,omitempty" jsonschema:"For the search chunks; each list max limits.max_filter_values (64)."`
		Limit  int         `json:"limit,omitempty" jsonschema:"Search chunks; default 10, max limits.max_search_limit (1000)." schema:"minimum=0"`
		Mode   string      `json:"mode,omitempty" jsonschema:"Search mode of the chunks." schema:"default=hybrid,enum=hybrid|bm25|vector"`
	}
	register(Tool{
		Name:  "build_context",
		Title: "Assemble the context for a task",
		Description: "Call it at the start of a task: your context files (soul, beliefs, goals), the notes the task matches and the best search chunks, " +
			"as one markdown block within a token budget, with what was omitted.",
		Annotations: readOnly, Scopes: readScope, core: true,
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
		Body         string `json:"body" jsonschema:"The whole new text after the frontmatter, which stays; include what should remain."`
		Root         string `json:"root,omitempty" jsonschema:"Context root, a directory ref." schema:"default=self:/"`
		ExpectedHash string `json:"expected_hash,omitempty" jsonschema:"Fail with content_changed unless the file still has this content_hash."`
	}
	for _, f := range []struct{ tool, file, what string }{
		{"update_beliefs", "beliefs.md", "what you believe to be true about the user, the project and the world"},
		{"update_goals", "goals.md", "the goals you are working towards"},
	} {
		register(Tool{
			Name:  f.tool,
			Title: "Update " + f.file,
			Description: "Replace the body of " + f.file + ", " + f.what + ", which every build_context loads; its frontmatter stays. " +
				"context_read \"self:/" + f.file + "\" first and send the whole new body. read_only if its frontmatter forbids agents.",
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
		Limit     int `json:"limit,omitempty" jsonschema:"Default 50." schema:"minimum=0,maximum=1000"`
		BeforeRev int `json:"before_rev,omitempty" jsonschema:"Only older revisions; pass the last rev returned to page." schema:"minimum=0"`
	}
	register(Tool{
		Name:        "context_history",
		Title:       "List an item's revisions",
		Description: "List an item's revisions, newest first (rev, time, actor, op), deleted items too: see what changed and who changed it, then context_revert to go back.",
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
		Rev int `json:"rev" jsonschema:"The rev, from context_history, to make current." schema:"minimum=1"`
	}
	register(Tool{
		Name:  "context_revert",
		Title: "Revert an item to a revision",
		Description: "Make an earlier revision of an item current again, or restore a deleted item, as a new revision. " +
			"Example: {\"path\":\"/notes/todo.md\",\"rev\":3}.",
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
