package daemon

import (
	"context"
	"fmt"
	"math"
	"strings"

	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// Depth and width of the directory snapshot returned by Write.
const (
	snapshotDepth  = 1
	snapshotPerDir = 20
)

// vfsService adapts VfsService calls onto the item store: decode, call, encode.
// Errors are returned as they come; the error interceptor maps them.
type vfsService struct {
	ctxdv1.UnimplementedVfsServiceServer
	b *backend
}

func (s *vfsService) ListDrives(ctx context.Context, _ *ctxdv1.ListDrivesRequest) (*ctxdv1.ListDrivesResponse, error) {
	ds, err := s.b.store.ListDrives(ctx)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.ListDrivesResponse{Drives: DrivesToProto(ds)}, nil
}

func (s *vfsService) Tree(ctx context.Context, req *ctxdv1.TreeRequest) (*ctxdv1.TreeResponse, error) {
	if d, l := int(req.GetMaxDepth()), s.b.limits.MaxTreeDepth; d > l {
		return nil, overLimit("max_tree_depth", fmt.Sprintf("The tree depth %d is over the limit of %d.", d, l))
	}
	if n, l := int(req.GetItemsPerDir()), s.b.limits.MaxTreeItemsPerDir; n > l {
		return nil, overLimit("max_tree_items_per_dir", fmt.Sprintf("The items per directory %d are over the limit of %d.", n, l))
	}
	var dir vfs.Ref
	if req.GetRef() != "" {
		var err error
		if dir, err = vfs.ParseRef(req.GetRef()); err != nil {
			return nil, err
		}
	}
	return s.tree(ctx, dir, int(req.GetMaxDepth()), int(req.GetItemsPerDir()))
}

func (s *vfsService) tree(ctx context.Context, dir vfs.Ref, depth, perDir int) (*ctxdv1.TreeResponse, error) {
	root, err := s.b.store.Tree(ctx, dir, depth, perDir)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.TreeResponse{Root: TreeToProto(root), Rendered: vfs.RenderTree(root)}, nil
}

func (s *vfsService) List(ctx context.Context, req *ctxdv1.ListRequest) (*ctxdv1.ListResponse, error) {
	if n, l := int(req.GetLimit()), s.b.limits.MaxListLimit; n > l {
		return nil, overLimit("max_list_limit", fmt.Sprintf("The list limit %d is over the limit of %d.", n, l))
	}
	dir, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	entries, next, err := s.b.store.List(ctx, dir, req.GetRecursive(), int(req.GetLimit()), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	resp := &ctxdv1.ListResponse{NextPageToken: next, Entries: make([]*ctxdv1.ListEntry, len(entries))}
	for i := range entries {
		resp.Entries[i] = EntryToProto(&entries[i])
	}
	return resp, nil
}

func (s *vfsService) Read(ctx context.Context, req *ctxdv1.ReadRequest) (*ctxdv1.ReadResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	if req.GetRaw() {
		it, data, err := s.b.store.ReadRaw(ctx, ref)
		if err != nil {
			return nil, err
		}
		return &ctxdv1.ReadResponse{Item: ItemToProto(&it), Data: data, TotalLines: it.LineCount}, nil
	}
	r, err := s.b.store.Read(ctx, ref, req.GetLineOffset(), req.GetLineLimit())
	if err != nil {
		return nil, err
	}
	return &ctxdv1.ReadResponse{
		Item:       ItemToProto(&r.Item),
		Content:    string(r.Content),
		StartLine:  r.StartLine,
		EndLine:    r.EndLine,
		TotalLines: r.TotalLines,
		HasMore:    r.HasMore,
	}, nil
}

func (s *vfsService) Write(ctx context.Context, req *ctxdv1.WriteRequest) (*ctxdv1.WriteResponse, error) {
	p, err := s.writeParams(req)
	if err != nil {
		return nil, err
	}
	res, err := s.b.store.Write(ctx, p)
	if err != nil {
		return nil, err
	}
	dir := vfs.Ref{Drive: res.Item.Drive, Path: parentPath(res.Item.Path)}
	tree, err := s.b.snapshots.get(ctx, dir, func(ctx context.Context) (*ctxdv1.TreeResponse, error) {
		return s.tree(ctx, dir, snapshotDepth, snapshotPerDir)
	})
	if err != nil {
		return nil, err
	}
	out := writeResponse(&res)
	out.Tree = tree
	return out, nil
}

func (s *vfsService) WriteBatch(ctx context.Context, req *ctxdv1.WriteBatchRequest) (*ctxdv1.WriteBatchResponse, error) {
	items := req.GetItems()
	if n, l := len(items), s.b.limits.MaxBatchItems; n > l {
		return nil, overLimit("max_batch_items", fmt.Sprintf("The batch has %d items; the limit is %d.", n, l))
	}
	ps := make([]vfs.WriteParams, len(items))
	for i, it := range items {
		p, err := s.writeParams(it)
		if err != nil {
			return nil, batchItemError(i, it.GetRef(), err)
		}
		ps[i] = p
	}
	res, err := s.b.store.WriteBatch(ctx, ps)
	if err != nil {
		return nil, err
	}
	out := &ctxdv1.WriteBatchResponse{Results: make([]*ctxdv1.WriteResponse, len(res))}
	for i := range res {
		out.Results[i] = writeResponse(&res[i])
	}
	return out, nil
}

// batchItemError names the batch item a request error is about.
func batchItemError(i int, ref string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return vfs.BatchItemError(i, ref, err)
	}
	p := st.Proto()
	p.Message = fmt.Sprintf("items[%d] (%s): %s", i, ref, p.Message)
	return status.ErrorProto(p)
}

func writeResponse(res *vfs.WriteResult) *ctxdv1.WriteResponse {
	return &ctxdv1.WriteResponse{Item: ItemToProto(&res.Item), Created: res.Created, Skipped: res.Skipped, Warnings: res.Warnings}
}

// writeParams checks what the store cannot (limits, embeddings against the
// loaded model) and converts the request.
func (s *vfsService) writeParams(req *ctxdv1.WriteRequest) (vfs.WriteParams, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return vfs.WriteParams{}, err
	}
	p := vfs.WriteParams{
		Ref:          ref,
		MimeType:     req.GetMimeType(),
		Title:        req.GetTitle(),
		Description:  req.GetDescription(),
		SourceURL:    req.GetSourceUrl(),
		Tags:         req.GetTags(),
		Importance:   req.GetImportance(),
		OnConflict:   OnConflictFromProto(req.GetOnConflict(), vfs.ConflictError),
		ExpectedHash: req.GetExpectedContentHash(),
		Questions:    req.GetQuestions(),
		ID:           req.GetId(),
	}
	if n, l := len(p.Questions), s.b.limits.MaxQuestionsPerItem; n > l {
		return vfs.WriteParams{}, overLimit("max_questions_per_item", fmt.Sprintf("%d questions were given; the limit is %d.", n, l))
	}
	if body, ok := req.GetBody().(*ctxdv1.WriteRequest_Data); ok {
		p.Content = body.Data
	} else {
		p.Content, p.IsText = []byte(req.GetContent()), true
	}
	if p.Embeddings, err = s.embeddings(req); err != nil {
		return vfs.WriteParams{}, err
	}
	return p, nil
}

// embeddings checks precomputed chunk embeddings against the loaded model;
// the store checks their count against its chunks.
func (s *vfsService) embeddings(req *ctxdv1.WriteRequest) (*vfs.Embeddings, error) {
	if len(req.GetChunkEmbeddings()) == 0 {
		return nil, nil
	}
	invalid := func(msg, hint string) error {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, msg, hint)
	}
	spec := s.b.ix.Status().Spec
	switch {
	case spec.ID == "":
		return nil, invalid("No embedding model is loaded, so chunk embeddings cannot be checked or stored.",
			"wait until Status reports the embedding model, or write without embeddings")
	case req.GetEmbeddingModel() == "":
		return nil, invalid("chunk_embeddings need embedding_model, the model they come from.",
			"set embedding_model to Status.embedding.model_id")
	}
	e := &vfs.Embeddings{Model: req.GetEmbeddingModel()}
	for i, v := range req.GetChunkEmbeddings() {
		vals := v.GetValues()
		if len(vals) != spec.Dimensions {
			return nil, invalid(fmt.Sprintf("Chunk embedding %d has %d dimensions; model %s has %d.", i, len(vals), spec.ID, spec.Dimensions),
				"embed with the store's model")
		}
		var norm float64
		for _, x := range vals {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, invalid(fmt.Sprintf("Chunk embedding %d has a non-finite component.", i), "send finite values")
			}
			norm += float64(x) * float64(x)
		}
		if norm == 0 {
			return nil, invalid(fmt.Sprintf("Chunk embedding %d is all zeros.", i), "send the model's vector")
		}
		e.Vectors = append(e.Vectors, vals)
	}
	return e, nil
}

func (s *vfsService) Edit(ctx context.Context, req *ctxdv1.EditRequest) (*ctxdv1.EditResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	r, err := s.b.store.Edit(ctx, ref, PatchesFromProto(req.GetPatches()), req.GetExpectedContentHash())
	if err != nil {
		return nil, err
	}
	return &ctxdv1.EditResponse{Item: ItemToProto(&r.Item), LinesBefore: r.LinesBefore, LinesAfter: r.LinesAfter, Warnings: r.Warnings}, nil
}

func (s *vfsService) Delete(ctx context.Context, req *ctxdv1.DeleteRequest) (*ctxdv1.DeleteResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	n, err := s.b.store.Delete(ctx, ref, req.GetRecursive())
	if err != nil {
		return nil, err
	}
	return &ctxdv1.DeleteResponse{DeletedCount: n}, nil
}

// parentPath returns the directory holding p. It cuts at the last "/" rather
// than using path.Dir, which would clean the "//" of url-drive paths.
func parentPath(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "/"
}

// parseRefPair parses a source and a destination ref.
func parseRefPair(src, dst string) (vfs.Ref, vfs.Ref, error) {
	s, err := vfs.ParseRef(src)
	if err != nil {
		return vfs.Ref{}, vfs.Ref{}, err
	}
	d, err := vfs.ParseRef(dst)
	return s, d, err
}

func (s *vfsService) Copy(ctx context.Context, req *ctxdv1.CopyRequest) (*ctxdv1.CopyResponse, error) {
	src, dst, err := parseRefPair(req.GetSourceRef(), req.GetDestinationRef())
	if err != nil {
		return nil, err
	}
	r, err := s.b.store.Copy(ctx, src, dst, req.GetRecursive(), OnConflictFromProto(req.GetOnConflict(), vfs.ConflictError))
	if err != nil {
		return nil, err
	}
	return &ctxdv1.CopyResponse{CopiedCount: r.Count, SkippedCount: r.Skipped, DestinationRef: r.Destination}, nil
}

func (s *vfsService) Move(ctx context.Context, req *ctxdv1.MoveRequest) (*ctxdv1.MoveResponse, error) {
	src, dst, err := parseRefPair(req.GetSourceRef(), req.GetDestinationRef())
	if err != nil {
		return nil, err
	}
	r, err := s.b.store.Move(ctx, src, dst, OnConflictFromProto(req.GetOnConflict(), vfs.ConflictError))
	if err != nil {
		return nil, err
	}
	return &ctxdv1.MoveResponse{MovedCount: r.Count, SkippedCount: r.Skipped, DestinationRef: r.Destination}, nil
}

func (s *vfsService) Info(ctx context.Context, req *ctxdv1.InfoRequest) (*ctxdv1.InfoResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	info, err := s.b.store.Info(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.InfoResponse{Item: ItemToProto(&info.Item), ItemCount: info.ItemCount}, nil
}

func (s *vfsService) Exists(ctx context.Context, req *ctxdv1.ExistsRequest) (*ctxdv1.ExistsResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	exists, isDir, err := s.b.store.Exists(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.ExistsResponse{Exists: exists, IsDir: isDir}, nil
}

func (s *vfsService) MakeDir(ctx context.Context, req *ctxdv1.MakeDirRequest) (*ctxdv1.MakeDirResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	created, err := s.b.store.MakeDirID(ctx, ref, req.GetId())
	if err != nil {
		return nil, err
	}
	return &ctxdv1.MakeDirResponse{Created: created, Ref: ref.String()}, nil
}

func (s *vfsService) DirSize(ctx context.Context, req *ctxdv1.DirSizeRequest) (*ctxdv1.DirSizeResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	size, count, err := s.b.store.DirSize(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.DirSizeResponse{SizeBytes: size, ItemCount: count}, nil
}

func (s *vfsService) CountLines(ctx context.Context, req *ctxdv1.CountLinesRequest) (*ctxdv1.CountLinesResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	n, err := s.b.store.CountLines(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.CountLinesResponse{Lines: n}, nil
}

func (s *vfsService) History(ctx context.Context, req *ctxdv1.HistoryRequest) (*ctxdv1.HistoryResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	revs, err := s.b.store.History(ctx, ref, int(req.GetLimit()), req.GetBeforeRev())
	if err != nil {
		return nil, err
	}
	return &ctxdv1.HistoryResponse{Revisions: RevisionsToProto(revs)}, nil
}

func (s *vfsService) ReadRevision(ctx context.Context, req *ctxdv1.ReadRevisionRequest) (*ctxdv1.ReadRevisionResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	rev, content, err := s.b.store.ReadRevision(ctx, ref, req.GetRev())
	if err != nil {
		return nil, err
	}
	resp := &ctxdv1.ReadRevisionResponse{Revision: RevisionToProto(&rev)}
	switch {
	case req.GetRaw():
		resp.Data = content
	case rev.Item.IsText:
		resp.Content = string(content)
	case len(content) > 0:
		return nil, detailedStatus(&ctxdv1.ErrorDetail{Type: ctxdv1.ErrorType_ERROR_TYPE_NO_TEXT_CONTENT, Ref: rev.Ref,
			NextActionHint: fmt.Sprintf("set raw to get its bytes (`ctxd read %s --rev %d --raw`)", rev.Ref, rev.Rev)},
			fmt.Sprintf("Revision %d of %s is binary (%s, %d bytes) and has no text content.", rev.Rev, rev.Ref, rev.Item.MimeType, rev.Size))
	}
	return resp, nil
}

func (s *vfsService) Revert(ctx context.Context, req *ctxdv1.RevertRequest) (*ctxdv1.RevertResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	res, err := s.b.store.Revert(ctx, ref, req.GetRev())
	if err != nil {
		return nil, err
	}
	return &ctxdv1.RevertResponse{Item: ItemToProto(&res.Item), Created: res.Created, Warnings: res.Warnings}, nil
}

func (s *vfsService) ListDeleted(ctx context.Context, req *ctxdv1.ListDeletedRequest) (*ctxdv1.ListDeletedResponse, error) {
	var under vfs.Ref
	if req.GetRef() != "" {
		var err error
		if under, err = vfs.ParseRef(req.GetRef()); err != nil {
			return nil, err
		}
	}
	revs, err := s.b.store.Deleted(ctx, under, int(req.GetLimit()))
	if err != nil {
		return nil, err
	}
	return &ctxdv1.ListDeletedResponse{Revisions: RevisionsToProto(revs)}, nil
}

func (s *vfsService) Log(ctx context.Context, req *ctxdv1.LogRequest) (*ctxdv1.LogResponse, error) {
	revs, next, err := s.b.store.Log(ctx, vfs.LogQuery{
		Actor: req.GetActor(), Since: timeFromProto(req.GetSince()), Limit: int(req.GetLimit()), PageToken: req.GetPageToken(),
	})
	if err != nil {
		return nil, err
	}
	return &ctxdv1.LogResponse{Revisions: RevisionsToProto(revs), NextPageToken: next}, nil
}
