package daemon

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/assemble"
	"github.com/ctxd/ctxd/index/session"
	"github.com/ctxd/ctxd/ingest/watcher"
	"github.com/ctxd/ctxd/vfs"
)

// This file holds every conversion between domain types (vfs, assemble) and
// API messages.

func timeToProto(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func timeFromProto(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

// ItemToProto converts an item's metadata.
func ItemToProto(it *vfs.Item) *ctxdv1.Item {
	return &ctxdv1.Item{
		Id:                it.ID,
		Ref:               it.Ref(),
		Drive:             it.Drive,
		Path:              it.Path,
		Title:             it.Title,
		Description:       it.Description,
		MimeType:          it.MimeType,
		IsText:            it.IsText,
		IsDir:             it.IsDir,
		SizeBytes:         it.Size,
		ContentHash:       it.ContentHash,
		SourceUrl:         it.SourceURL,
		Tags:              it.Tags,
		Importance:        it.Importance,
		CreatedAt:         timeToProto(it.CreatedAt),
		UpdatedAt:         timeToProto(it.UpdatedAt),
		IndexedAt:         timeToProto(it.IndexedAt),
		RetrievalCount:    it.RetrievalCount,
		LastRetrievedAt:   timeToProto(it.LastRetrievedAt),
		LineCount:         it.LineCount,
		Origin:            originToProto(it.Origin),
		Loading:           it.Loading,
		AgentModification: it.AgentModification,
	}
}

func originToProto(o vfs.Origin) *ctxdv1.ItemOrigin {
	if o == (vfs.Origin{}) {
		return nil
	}
	return &ctxdv1.ItemOrigin{
		ModifiedAt:   timeToProto(o.ModTime),
		SizeBytes:    o.Size,
		Etag:         o.ETag,
		LastModified: o.LastModified,
		CheckedAt:    timeToProto(o.CheckedAt),
		TtlSeconds:   int64(o.TTL / time.Second),
		Title:        o.Title,
	}
}

// ItemFromProto is the inverse of ItemToProto (the ref is derived, not read;
// FrontmatterLen and FrontmatterFields, internal to the store, stay zero).
func ItemFromProto(p *ctxdv1.Item) vfs.Item {
	return vfs.Item{
		ID:                p.GetId(),
		Drive:             p.GetDrive(),
		Path:              p.GetPath(),
		Title:             p.GetTitle(),
		Description:       p.GetDescription(),
		MimeType:          p.GetMimeType(),
		IsText:            p.GetIsText(),
		IsDir:             p.GetIsDir(),
		Size:              p.GetSizeBytes(),
		ContentHash:       p.GetContentHash(),
		SourceURL:         p.GetSourceUrl(),
		Tags:              p.GetTags(),
		Importance:        p.GetImportance(),
		CreatedAt:         timeFromProto(p.GetCreatedAt()),
		UpdatedAt:         timeFromProto(p.GetUpdatedAt()),
		IndexedAt:         timeFromProto(p.GetIndexedAt()),
		RetrievalCount:    p.GetRetrievalCount(),
		LastRetrievedAt:   timeFromProto(p.GetLastRetrievedAt()),
		LineCount:         p.GetLineCount(),
		Origin:            originFromProto(p.GetOrigin()),
		Loading:           p.GetLoading(),
		AgentModification: p.GetAgentModification(),
	}
}

func originFromProto(p *ctxdv1.ItemOrigin) vfs.Origin {
	if p == nil {
		return vfs.Origin{}
	}
	return vfs.Origin{
		ModTime:      timeFromProto(p.GetModifiedAt()),
		Size:         p.GetSizeBytes(),
		ETag:         p.GetEtag(),
		LastModified: p.GetLastModified(),
		CheckedAt:    timeFromProto(p.GetCheckedAt()),
		TTL:          time.Duration(p.GetTtlSeconds()) * time.Second,
		Title:        p.GetTitle(),
	}
}

// TreeToProto converts a tree recursively.
func TreeToProto(n *vfs.TreeNode) *ctxdv1.TreeNode {
	if n == nil {
		return nil
	}
	p := &ctxdv1.TreeNode{
		Name:            n.Name,
		Ref:             n.Ref(),
		IsDir:           n.IsDir,
		SizeBytes:       n.Size,
		MimeType:        n.MimeType,
		OmittedChildren: int32(n.OmittedChildren),
		DepthTruncated:  n.DepthTruncated,
	}
	for _, c := range n.Children {
		p.Children = append(p.Children, TreeToProto(c))
	}
	return p
}

// DrivesToProto converts drive summaries.
func DrivesToProto(ds []vfs.DriveInfo) []*ctxdv1.DriveInfo {
	out := make([]*ctxdv1.DriveInfo, len(ds))
	for i, d := range ds {
		out[i] = &ctxdv1.DriveInfo{Name: d.Name, ItemCount: d.ItemCount, SizeBytes: d.Size}
	}
	return out
}

// EntryToProto converts one listing entry.
func EntryToProto(e *vfs.Entry) *ctxdv1.ListEntry {
	p := &ctxdv1.ListEntry{Ref: e.Ref(), Name: e.Name, IsDir: e.IsDir}
	if e.Item != nil {
		p.Item = ItemToProto(e.Item)
	}
	return p
}

var watchModesToProto = map[watcher.Mode]ctxdv1.WatchMode{
	watcher.ModeStarting: ctxdv1.WatchMode_WATCH_MODE_STARTING,
	watcher.ModeEvents:   ctxdv1.WatchMode_WATCH_MODE_EVENTS,
	watcher.ModeScanning: ctxdv1.WatchMode_WATCH_MODE_SCANNING,
	watcher.ModeRemote:   ctxdv1.WatchMode_WATCH_MODE_REMOTE,
	watcher.ModeFailed:   ctxdv1.WatchMode_WATCH_MODE_FAILED,
}

// WatchToProto converts a watch and its status.
func WatchToProto(st watcher.State) *ctxdv1.Watch {
	w, s := st.Watch, st.Status
	return &ctxdv1.Watch{
		Id: w.ID, Path: w.Path, Drive: w.Drive, Exclude: w.Exclude, IncludeHidden: w.IncludeHidden, Tags: w.Tags,
		DebounceMs: w.Debounce.Milliseconds(), DeleteMissing: w.DeleteMissing, ReplicaId: w.ReplicaID, CreatedAt: timeToProto(w.CreatedAt),
		Status: &ctxdv1.WatchStatus{
			Mode: watchModesToProto[s.Mode], Reason: s.Reason, Files: s.Files,
			LastEventAt: timeToProto(s.LastEventAt), LastReconcileAt: timeToProto(s.LastReconcileAt),
			LastReconcileMs: s.LastReconcileTook.Milliseconds(),
			LastReconcile: &ctxdv1.WatchReconcile{
				Added: s.LastReconcile.Added, Updated: s.LastReconcile.Updated, Moved: s.LastReconcile.Moved,
				Missing: s.LastReconcile.Missing, Unchanged: s.LastReconcile.Unchanged, Failed: s.LastReconcile.Failed,
			},
			LagMs: s.Lag.Milliseconds(), Pending: s.Pending, ErrorCount: s.Errors, LastError: s.LastError,
			LastErrorAt: timeToProto(s.LastErrorAt), WatchedDirs: s.WatchedDirs,
		},
	}
}

// OnConflictFromProto converts a conflict policy, substituting def for UNSPECIFIED.
func OnConflictFromProto(oc ctxdv1.OnConflict, def vfs.OnConflict) vfs.OnConflict {
	switch oc {
	case ctxdv1.OnConflict_ON_CONFLICT_ERROR:
		return vfs.ConflictError
	case ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE:
		return vfs.ConflictOverwrite
	case ctxdv1.OnConflict_ON_CONFLICT_SKIP:
		return vfs.ConflictSkip
	}
	return def
}

// PatchesFromProto converts edit patches.
func PatchesFromProto(ps []*ctxdv1.Patch) []vfs.Patch {
	out := make([]vfs.Patch, len(ps))
	for i, p := range ps {
		out[i] = vfs.Patch{StartLine: p.GetStartLine(), EndLine: p.GetEndLine(), Content: p.GetContent()}
	}
	return out
}

// RevisionToProto converts one recorded revision.
func RevisionToProto(r *vfs.Revision) *ctxdv1.Revision {
	return &ctxdv1.Revision{
		ItemId: r.ItemID, Ref: r.Ref, Rev: r.Rev, Time: timeToProto(r.Time), Actor: r.Actor, Op: r.Op,
		ContentHash: r.Hash, SizeBytes: r.Size, Deleted: r.Deleted, Item: ItemToProto(&r.Item),
	}
}

// RevisionsToProto converts a list of revisions.
func RevisionsToProto(rs []vfs.Revision) []*ctxdv1.Revision {
	out := make([]*ctxdv1.Revision, len(rs))
	for i := range rs {
		out[i] = RevisionToProto(&rs[i])
	}
	return out
}

// ContextToProto converts an assembled context.
func ContextToProto(r *assemble.Result) *ctxdv1.BuildContextResponse {
	out := &ctxdv1.BuildContextResponse{
		Markdown: r.Markdown, TokensUsed: int32(r.TokensUsed), Budget: int32(r.Budget), Warnings: r.Warnings,
		Stale: r.Stale != "", StaleReason: r.Stale,
		Sections: make([]*ctxdv1.ContextSection, len(r.Sections)),
		Omitted:  make([]*ctxdv1.ContextOmission, len(r.Omitted)),
	}
	for i := range r.Sections {
		sec := &r.Sections[i]
		out.Sections[i] = &ctxdv1.ContextSection{
			Kind: string(sec.Kind), Ref: sec.Ref, Heading: sec.Heading, Text: sec.Text, Tokens: int32(sec.Tokens),
			MatchedTerms: sec.MatchedTerms, Score: sec.Score,
			StartLine: int64(sec.StartLine), EndLine: int64(sec.EndLine),
		}
		if sec.Item.ID != "" { // the sections a caller supplies (digests, goals) carry none
			out.Sections[i].Item = ItemToProto(&sec.Item)
		}
	}
	for i, o := range r.Omitted {
		out.Omitted[i] = &ctxdv1.ContextOmission{Ref: o.Ref, Kind: string(o.Kind), Reason: o.Reason, Tokens: int32(o.Tokens), Heading: o.Heading}
	}
	return out
}

var (
	kindsFromProto = map[ctxdv1.SessionEventKind]session.Kind{
		ctxdv1.SessionEventKind_SESSION_EVENT_KIND_PROMPT:      session.KindPrompt,
		ctxdv1.SessionEventKind_SESSION_EVENT_KIND_TOOL_USE:    session.KindToolUse,
		ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION:    session.KindDecision,
		ctxdv1.SessionEventKind_SESSION_EVENT_KIND_ERROR:       session.KindError,
		ctxdv1.SessionEventKind_SESSION_EVENT_KIND_NOTE:        session.KindNote,
		ctxdv1.SessionEventKind_SESSION_EVENT_KIND_FILE_CHANGE: session.KindFileChange,
		ctxdv1.SessionEventKind_SESSION_EVENT_KIND_SUMMARY:     session.KindSummary,
	}
	kindsToProto = func() map[session.Kind]ctxdv1.SessionEventKind {
		out := map[session.Kind]ctxdv1.SessionEventKind{}
		for p, k := range kindsFromProto {
			out[k] = p
		}
		return out
	}()
)

// SessionToProto converts a session.
func SessionToProto(s *session.Session) *ctxdv1.Session {
	return &ctxdv1.Session{
		Id: s.ID, Project: s.Project, Actor: s.Actor, Cwd: s.Cwd,
		StartedAt: timeToProto(s.StartedAt), EndedAt: timeToProto(s.EndedAt),
		EventCount: s.EventCount, DigestRef: s.DigestRef, Ref: s.Ref,
	}
}

// SessionEventToProto converts an event.
func SessionEventToProto(e *session.Event) *ctxdv1.SessionEvent {
	return &ctxdv1.SessionEvent{Ref: e.Ref, Time: timeToProto(e.Time), Kind: kindsToProto[e.Kind], Text: e.Text, Refs: e.Refs, Tool: e.Tool, Truncated: e.Truncated}
}

// SessionEventFromProto converts an event a caller gives: the daemon sets
// its ref and time. An unknown kind stays unset, which Append refuses.
func SessionEventFromProto(p *ctxdv1.SessionEvent) session.Event {
	return session.Event{Kind: kindsFromProto[p.GetKind()], Text: p.GetText(), Refs: p.GetRefs(), Tool: p.GetTool(), Truncated: p.GetTruncated()}
}

// DigestToProto converts a digest.
func DigestToProto(d *session.Digest) *ctxdv1.SessionDigest {
	return &ctxdv1.SessionDigest{Ref: d.Ref, Markdown: d.Markdown, Method: d.Method, EventCount: d.EventCount,
		EnricherError: d.EnricherError, EnricherPending: d.EnricherPending}
}
