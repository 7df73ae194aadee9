package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/session"
	"github.com/ctxd/ctxd/vfs"
	"github.com/ctxd/ctxd/vfs/boltstore"
)

// adminService reports on the daemon.
type adminService struct {
	ctxdv1.UnimplementedAdminServiceServer
	b *backend
}

func (s *adminService) Status(ctx context.Context, req *ctxdv1.StatusRequest) (*ctxdv1.StatusResponse, error) {
	if a := vfs.AccessFrom(ctx); a.Limited() {
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED,
			"status reports on the whole store, and this token is limited to "+a.String(),
			"Call list_drives (`ctxd drives`) or tree for what the token may see, or ask for status with a token without drives or paths (tokens[].drives, tokens[].paths in the daemon config).")
	}
	emb := s.b.ix.Status()
	is := s.b.engine.State()
	resp := &ctxdv1.StatusResponse{
		Version:   Version,
		StartedAt: timestamppb.New(s.b.started),
		DataDir:   s.b.dataDir,
		Embedding: &ctxdv1.EmbeddingStatus{
			Available:         emb.Available,
			Loading:           emb.Loading,
			UnavailableReason: emb.Reason,
			ModelId:           emb.Spec.ID,
			Dimensions:        int32(emb.Spec.Dimensions),
			ChunksPerSecond:   emb.Rate,
			EmbeddedHere:      emb.Embedded,
			Enricher:          enricherStatus(s.b.enricher),
			Provider:          s.b.embedder.kind,
			Endpoint:          s.b.embedder.endpoint,
			TextSentTo:        s.b.embedder.remote,
			ProviderError:     emb.Health,
		},
		Index: &ctxdv1.IndexStatus{Available: true, AppliedSequence: is.AppliedSeq, LexicalSegments: int32(is.LexicalSegments), Compacting: is.Compacting},
		Store: &ctxdv1.StoreStatus{
			Location: s.b.storeInfo.location, Shared: s.b.storeInfo.shared, Reachable: true, ReplicaId: s.b.replicaID,
		},
		Subscriptions:     s.b.subscriptionCounts(),
		LastDoctor:        s.b.lastDoctor.Load(),
		WritesPerSecond:   s.b.metrics.Writes.PerSecond(),
		SearchesPerSecond: s.b.metrics.Searches.PerSecond(),
	}
	// While the probe finds the store out of reach, its reads get the
	// probe's bound rather than the caller's deadline: status answers.
	down, _, _ := s.b.storeHealth.state()
	sctx := ctx
	if down {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, storeProbeTimeout)
		defer cancel()
	}
	err := s.fromStore(sctx, req, resp, is.AppliedSeq)
	_, unavailable := unreachable(err)
	if unavailable || down && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		if unavailable {
			s.b.storeHealth.failed(err)
		}
		_, reason, since := s.b.storeHealth.state()
		if reason == "" {
			reason = s.b.storeInfo.scrub(err.Error())
		}
		resp.Store.Reachable, resp.Store.UnreachableReason = false, reason
		if !since.IsZero() {
			resp.Store.UnreachableSince = timestamppb.New(since)
		}
		return resp, nil
	}
	return resp, err
}

// fromStore fills in what Status reads from the store. applied is this
// daemon's live index position: its replica row shows that rather than its
// last report.
func (s *adminService) fromStore(ctx context.Context, req *ctxdv1.StatusRequest, resp *ctxdv1.StatusResponse, applied uint64) error {
	st, err := s.b.store.Stats(ctx)
	if err != nil {
		return err
	}
	es, err := s.b.store.EmbedStats(ctx)
	if err != nil {
		return err
	}
	withQ, withoutQ, pendingQ, err := s.b.store.QuestionStats(ctx)
	if err != nil {
		return err
	}
	replicas, err := s.replicas(ctx, applied)
	if err != nil {
		return err
	}
	if req.GetDisk() {
		if resp.Disk, err = diskUsage(ctx, s.b.store, s.b.dataDir); err != nil {
			return err
		}
	}
	resp.ItemCount, resp.SizeBytes, resp.StoreFileBytes = st.ItemCount, st.Size, st.FileSize
	resp.Drives = DrivesToProto(st.Drives)
	e := resp.Embedding
	e.EmbeddedChunks, e.PendingChunks, e.PendingItems = es.Vectors, es.PendingEmbed, es.PendingChunking
	e.ChunksWithQuestions, e.ChunksWithoutQuestions, e.PendingQuestions = withQ, withoutQ, pendingQ
	resp.Index.ChunkCount = es.Chunks
	resp.Index.OutboxSequence, resp.Store.OutboxSequence = replicas.head, replicas.head
	resp.Store.Replicas = replicas.rows
	resp.Watches, err = (&watchService{b: s.b}).watches(ctx)
	return err
}

// replicaRows is the store's replica table as Status shows it.
type replicaRows struct {
	head uint64
	rows []*ctxdv1.ReplicaStatus
}

// replicas lists every replica that reported to the store; this daemon's
// row (added if it has not reported yet) shows its live position applied.
func (s *adminService) replicas(ctx context.Context, applied uint64) (replicaRows, error) {
	_, reps, err := s.b.store.Replicas(ctx)
	if err != nil {
		return replicaRows{}, err
	}
	head, lag, wait, err := s.b.store.Lag(ctx, applied)
	if err != nil {
		return replicaRows{}, err
	}
	out := replicaRows{head: head}
	self := false
	for _, r := range reps {
		row := &ctxdv1.ReplicaStatus{Id: r.ID, Host: r.Host, AppliedSequence: r.Applied, LagChanges: r.Lag,
			LagSeconds: r.LagTime.Seconds(), ReportedAt: timeToProto(r.Reported), Gone: r.Gone}
		if r.ID == s.b.replicaID {
			self = true
			row.Self, row.Gone, row.AppliedSequence, row.LagChanges, row.LagSeconds = true, false, applied, lag, wait.Seconds()
		}
		out.rows = append(out.rows, row)
	}
	if !self {
		host, _ := os.Hostname()
		out.rows = append(out.rows, &ctxdv1.ReplicaStatus{Id: s.b.replicaID, Host: host, AppliedSequence: applied,
			LagChanges: lag, LagSeconds: wait.Seconds(), Self: true})
	}
	return out, nil
}

func (s *adminService) Reindex(ctx context.Context, _ *ctxdv1.ReindexRequest) (*ctxdv1.ReindexResponse, error) {
	r, err := s.b.engine.Reindex(ctx)
	if err != nil {
		return nil, err
	}
	return &ctxdv1.ReindexResponse{
		LexicalChunks: r.LexicalChunks, VectorChunks: r.VectorChunks,
		AppliedSequence: r.Seq, Seconds: r.Took.Seconds(),
	}, nil
}

func (s *adminService) Doctor(ctx context.Context, _ *ctxdv1.DoctorRequest) (*ctxdv1.DoctorResponse, error) {
	start := time.Now()
	r, err := s.b.engine.Doctor(ctx)
	if err != nil {
		s.b.recordDoctor(nil, time.Since(start), err)
		return nil, err
	}
	resp := &ctxdv1.DoctorResponse{
		Ok: len(r.Problems) == 0, Problems: r.Problems,
		StoreChunks: r.StoreChunks, LexicalChunks: r.LexicalChunks,
		StoreVectors: r.StoreVectors, VectorChunks: r.VectorChunks,
		OutboxSequence: r.OutboxSeq, AppliedSequence: r.AppliedSeq,
	}
	s.b.recordDoctor(resp, time.Since(start), nil)
	return resp, nil
}

func (s *adminService) Prune(ctx context.Context, req *ctxdv1.PruneRequest) (*ctxdv1.PruneResponse, error) {
	if n := int(req.GetLimit()); n < 0 || n > s.b.limits.MaxListLimit {
		return nil, limitError("max_list_limit", fmt.Sprintf("The limit %d is outside 0 to %d.", n, s.b.limits.MaxListLimit), "prune fewer items at a time (limit, `ctxd prune --limit`) and run it again")
	}
	if n, l := len(req.GetPathPrefixes()), s.b.limits.MaxFilterValues; n > l {
		return nil, overLimit("max_filter_values", fmt.Sprintf("The prune names %d directories; at most %d are allowed.", n, l))
	}
	q := vfs.PruneQuery{
		Before: time.Now().Add(-time.Duration(req.GetUnretrievedSeconds()) * time.Second),
		Limit:  int(req.GetLimit()), DryRun: req.GetDryRun(),
		// A session's record and digest are what stays of it.
		Keep: func(it vfs.Item) bool { return session.Keeps(it.Drive, it.Path) },
	}
	for _, p := range req.GetPathPrefixes() {
		ref, err := vfs.ParseRef(p)
		if err != nil {
			return nil, err
		}
		q.Under = append(q.Under, ref)
	}
	pruned, more, err := s.b.store.Prune(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &ctxdv1.PruneResponse{More: more, Deleted: !req.GetDryRun()}
	for _, p := range pruned {
		out.Items = append(out.Items, &ctxdv1.PrunedItem{Ref: p.Item.Ref(), LastRetrievedAt: timeToProto(p.Item.LastRetrievedAt),
			UpdatedAt: timeToProto(p.Item.UpdatedAt), Size: p.Item.Size, DeleteRev: p.DeleteRev})
	}
	return out, nil
}

// diskUsage breaks dataDir's disk use down: the store file by what its
// pages hold, everything else by path, a directory summed at two levels.
func diskUsage(ctx context.Context, store *vfs.Store, dataDir string) ([]*ctxdv1.DiskComponent, error) {
	u, err := store.DiskUsage(ctx)
	if err != nil {
		return nil, err
	}
	out := []*ctxdv1.DiskComponent{{Name: "store/(free pages)", Bytes: u.Free}, {Name: "store/(meta pages)", Bytes: u.Meta}}
	for _, b := range u.Buckets {
		out = append(out, &ctxdv1.DiskComponent{Name: "store/" + b.Name, Bytes: b.Bytes, UsedBytes: b.Used, Keys: b.Keys})
	}
	byPath := map[string]int64{}
	err = filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking: an index segment merged away
			}
			return err
		}
		if d.IsDir() {
			return ctx.Err()
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dataDir, path)
		if err != nil {
			return err
		}
		if rel == boltstore.FileName {
			byPath["store/(unused)"] = max(info.Size()-u.FileSize, 0)
			return nil
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		byPath[strings.Join(parts[:min(len(parts), 2)], "/")] += info.Size()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("disk usage of %s: %w", dataDir, err)
	}
	for name, n := range byPath {
		out = append(out, &ctxdv1.DiskComponent{Name: name, Bytes: n})
	}
	slices.SortFunc(out, func(a, b *ctxdv1.DiskComponent) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}
