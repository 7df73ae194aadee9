package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/vfs"
)

// reembedPoll is how often Reembed of all items looks at the queue.
const reembedPoll = 250 * time.Millisecond

// ingestService adapts IngestService.
type ingestService struct {
	ctxdv1.UnimplementedIngestServiceServer
	b   *backend
	log *slog.Logger
}

// Add ingests files, trees and URLs, streaming progress and per-item results,
// and ends with the summary once everything written is searchable. With
// watch set it then streams the trees' changes until the call is cancelled.
func (s *ingestService) Add(req *ctxdv1.AddRequest, stream grpc.ServerStreamingServer[ctxdv1.AddResponse]) error {
	ctx := stream.Context()
	if req.GetTtlSeconds() < 0 {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, "ttl_seconds is negative", "Pass a positive TTL, or 0 for the daemon's default.")
	}
	o := ingest.AddOptions{
		Sources: req.GetSources(), Drive: req.GetDrive(), OnConflict: OnConflictFromProto(req.GetOnConflict(), vfs.ConflictSkip),
		Exclude: req.GetExclude(), IncludeHidden: req.GetIncludeHidden(), Tags: req.GetTags(),
		TTL: time.Duration(req.GetTtlSeconds()) * time.Second,
	}
	if t := req.GetDedupeThreshold(); t != 0 {
		if !(t > 0 && t <= 1) { // NaN too
			return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, fmt.Sprintf("dedupe_threshold %v is not in (0, 1].", t),
				"Pass a cosine similarity such as 0.95 (`ctxd add --dedupe=0.95`), or 0 to add without de-duplication.")
		}
		if st := s.b.ix.Status(); !st.Available {
			return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, "de-duplication compares embeddings, and embedding is unavailable: "+st.Reason,
				embeddingUnavailableHint+" Or add without --dedupe.")
		}
		o.Dedupe = &deduper{b: s.b, threshold: t}
	}
	send := func(r *ctxdv1.AddResponse) { s.undelivered(stream.Send(r)) }
	sink := ingest.Sink{
		Progress: func(p ingest.Progress) {
			send(&ctxdv1.AddResponse{Event: &ctxdv1.AddResponse_Progress{Progress: progressToProto(p)}})
		},
		Item: func(r ingest.ItemResult) {
			send(&ctxdv1.AddResponse{Event: &ctxdv1.AddResponse_Item{Item: s.itemToProto(r)}})
		},
	}
	sum, err := s.b.ingest.Add(ctx, o, sink)
	if err == nil {
		err = s.waitSearchable(ctx)
	}
	if err != nil {
		return toStatus(s.log, s.b.storeInfo, "Add", err)
	}
	if err := stream.Send(&ctxdv1.AddResponse{Event: &ctxdv1.AddResponse_Summary{Summary: summaryToProto(sum)}}); err != nil {
		return err
	}
	if !req.GetWatch() {
		return nil
	}
	err = s.b.ingest.Watch(ctx, o, ingest.Sink{Item: sink.Item}, nil)
	if ctx.Err() != nil {
		return nil // the caller stopped watching
	}
	return toStatus(s.log, s.b.storeInfo, "Add", err)
}

// Refresh re-reads the sources of the selected items and ends with the
// summary once what changed is searchable.
func (s *ingestService) Refresh(req *ctxdv1.RefreshRequest, stream grpc.ServerStreamingServer[ctxdv1.RefreshResponse]) error {
	ctx := stream.Context()
	o := ingest.RefreshOptions{All: req.GetAll(), Force: req.GetForce(), StaleOnly: req.GetStaleOnly()}
	for _, r := range req.GetRefs() {
		ref, err := vfs.ParseRef(r)
		if err != nil {
			return toStatus(s.log, s.b.storeInfo, "Refresh", err)
		}
		o.Refs = append(o.Refs, ref)
	}
	send := func(r *ctxdv1.RefreshResponse) { s.undelivered(stream.Send(r)) }
	sum, err := s.b.ingest.Refresh(ctx, o, ingest.Sink{
		Progress: func(p ingest.Progress) {
			send(&ctxdv1.RefreshResponse{Event: &ctxdv1.RefreshResponse_Progress{Progress: progressToProto(p)}})
		},
		Item: func(r ingest.ItemResult) {
			if r.Action != ingest.Unchanged || len(o.Refs) > 0 && !o.All {
				send(&ctxdv1.RefreshResponse{Event: &ctxdv1.RefreshResponse_Item{Item: s.itemToProto(r)}})
			}
		},
	})
	if err == nil {
		err = s.waitSearchable(ctx)
	}
	if err != nil {
		return toStatus(s.log, s.b.storeInfo, "Refresh", err)
	}
	return stream.Send(&ctxdv1.RefreshResponse{Event: &ctxdv1.RefreshResponse_Summary{Summary: summaryToProto(sum)}})
}

// undelivered logs a failed stream send. It means the client has gone; the
// operation notices through its cancelled context, so nothing else is done.
func (s *ingestService) undelivered(err error) {
	if err != nil {
		s.log.Debug("ingest event not delivered", "err", err)
	}
}

// waitSearchable returns once the search indexes have applied every change
// written so far, so that a search right after Add or Refresh sees it.
func (s *ingestService) waitSearchable(ctx context.Context) error {
	seq, err := s.b.store.OutboxSeq(ctx)
	if err != nil {
		return err
	}
	tick := time.NewTicker(searchablePoll)
	defer tick.Stop()
	for s.b.engine.State().AppliedSeq < seq {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// searchablePoll is how often waitSearchable looks at the index.
const searchablePoll = 20 * time.Millisecond

var actionsToProto = map[ingest.Action]ctxdv1.IngestAction{
	ingest.Added:     ctxdv1.IngestAction_INGEST_ACTION_ADDED,
	ingest.Updated:   ctxdv1.IngestAction_INGEST_ACTION_UPDATED,
	ingest.Unchanged: ctxdv1.IngestAction_INGEST_ACTION_UNCHANGED,
	ingest.Skipped:   ctxdv1.IngestAction_INGEST_ACTION_SKIPPED,
	ingest.Missing:   ctxdv1.IngestAction_INGEST_ACTION_MISSING,
	ingest.Failed:    ctxdv1.IngestAction_INGEST_ACTION_FAILED,
}

func (s *ingestService) itemToProto(r ingest.ItemResult) *ctxdv1.IngestItemResult {
	out := &ctxdv1.IngestItemResult{
		Ref: r.Ref, Source: r.Source, Action: actionsToProto[r.Action],
		ChunksQueued: int64(r.ChunksQueued), ChunksReused: int64(r.ChunksReused), DuplicateOf: r.DuplicateOf,
	}
	if r.Err != nil {
		st, _ := status.FromError(toStatus(s.log, s.b.storeInfo, "ingest item", r.Err))
		out.ErrorMessage = st.Message()
		for _, d := range st.Details() {
			if ed, ok := d.(*ctxdv1.ErrorDetail); ok {
				out.Error = ed
			}
		}
	}
	return out
}

func progressToProto(p ingest.Progress) *ctxdv1.IngestProgress {
	out := &ctxdv1.IngestProgress{
		Phase: p.Phase, ItemsDone: p.ItemsDone, ItemsTotal: p.ItemsTotal,
		ChunksDone: p.ChunksDone, BytesDone: p.BytesDone, BytesTotal: p.BytesTotal,
	}
	if secs := p.Elapsed.Seconds(); secs > 0 && p.ItemsDone > 0 {
		out.ItemsPerSecond = float64(p.ItemsDone) / secs
		if p.ItemsTotal > p.ItemsDone {
			out.EtaSeconds = float64(p.ItemsTotal-p.ItemsDone) / out.ItemsPerSecond
		}
	}
	return out
}

func summaryToProto(s ingest.Summary) *ctxdv1.IngestSummary {
	return &ctxdv1.IngestSummary{
		Added: s.Added, Updated: s.Updated, Unchanged: s.Unchanged, Skipped: s.Skipped,
		Missing: s.Missing, Failed: s.Failed, ChunksQueued: s.ChunksQueued,
		ChunksReused: s.ChunksReused, Bytes: s.Bytes, Seconds: s.Elapsed.Seconds(),
	}
}

// Reembed queues the chunks of the selected items for embedding again and
// streams progress, one event per change, until they are embedded: chunks
// of the named refs ahead of the background backlog, all chunks by waiting
// for the whole queue to drain.
func (s *ingestService) Reembed(req *ctxdv1.ReembedRequest, stream grpc.ServerStreamingServer[ctxdv1.ReembedResponse]) error {
	ctx := stream.Context()
	w := s.b.ix.Available()
	if w == nil {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, "embedding is unavailable: "+s.b.ix.Status().Reason, embeddingUnavailableHint)
	}
	if !req.GetAll() && len(req.GetRefs()) == 0 {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, "Reembed needs refs or all",
			"Pass item or directory refs, or set all to re-embed everything.")
	}
	refs := make([]vfs.Ref, len(req.GetRefs()))
	for i, r := range req.GetRefs() {
		ref, err := vfs.ParseRef(r)
		if err != nil {
			return err
		}
		refs[i] = ref
	}
	start := time.Now()
	queued, items, err := s.b.store.Reembed(ctx, refs, req.GetAll())
	if err != nil {
		return err
	}
	sent := int64(-1)
	progress := func(left int64) error {
		done := max(queued-left, 0)
		if done == sent {
			return nil
		}
		sent = done
		return stream.Send(&ctxdv1.ReembedResponse{Event: &ctxdv1.ReembedResponse_Progress{Progress: reembedProgress(done, queued, time.Since(start))}})
	}
	if req.GetAll() {
		err = s.waitEmbedQueue(ctx, progress)
	} else {
		err = s.b.ix.EmbedNow(ctx, w, items, progress)
	}
	if err != nil {
		return err
	}
	return stream.Send(&ctxdv1.ReembedResponse{Event: &ctxdv1.ReembedResponse_Summary{Summary: &ctxdv1.IngestSummary{
		ChunksQueued: queued, Seconds: time.Since(start).Seconds(),
	}}})
}

// waitEmbedQueue calls progress with the length of the embedding queue
// every reembedPoll until the queue is empty.
func (s *ingestService) waitEmbedQueue(ctx context.Context, progress func(queued int64) error) error {
	tick := time.NewTicker(reembedPoll)
	defer tick.Stop()
	for {
		st, err := s.b.store.EmbedStats(ctx)
		if err != nil {
			return err
		}
		if err := progress(st.PendingEmbed); err != nil || st.PendingEmbed == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// reembedProgress describes done of total chunks after elapsed; the rate
// and ETA only once both mean something (a second in, a chunk done).
func reembedProgress(done, total int64, elapsed time.Duration) *ctxdv1.IngestProgress {
	p := &ctxdv1.IngestProgress{Phase: "embedding", ItemsDone: done, ItemsTotal: total, ChunksDone: done}
	if elapsed >= time.Second && done > 0 {
		p.ItemsPerSecond = float64(done) / elapsed.Seconds()
		p.EtaSeconds = float64(total-done) / p.ItemsPerSecond
	}
	return p
}

// dedupeCandidates is how many near-duplicates of a new source are looked
// at for one that covers all of it.
const dedupeCandidates = 20

// maxDedupeVectors bounds the chunk vectors of the sources of one Add a
// deduper remembers (about 30 MB at 384 dimensions): each is compared with
// every later source's.
const maxDedupeVectors = 20_000

// deduper answers ingest's de-duplication with FindSimilar: a new source
// duplicates the item that matches every one of its chunks at or above
// threshold. FindSimilar sees only items already embedded and indexed, so
// the deduper also remembers the vectors of the latest sources of its Add
// that it let through (up to maxDedupeVectors): of two identical new files
// in one Add, one is added.
type deduper struct {
	b         *backend
	threshold float64

	mu      sync.Mutex
	added   []addedSource // oldest first
	vectors int           // in added
}

// addedSource is a source a deduper let through, with its chunk vectors.
type addedSource struct {
	ref  string
	vecs [][]float32
}

func (d *deduper) DuplicateOf(ctx context.Context, ref vfs.Ref, content []byte, mt, title string) (string, error) {
	vecs, err := d.b.ix.EmbedText(ctx, content, mt, ref.Path, title, search.MaxSimilarChunks)
	if errors.Is(err, search.ErrTooManyChunks) {
		return "", nil // too large to compare: added
	}
	if err != nil {
		return "", similarError(err)
	}
	if len(vecs) == 0 {
		return "", nil // no text: nothing to compare
	}
	// Not waiting for the index: the Add's own writes keep it behind, and
	// the sources it let through are compared below.
	r := search.SimilarRequest{Vectors: vecs, Threshold: d.threshold, Limit: dedupeCandidates, NoWait: true}
	if a := vfs.AccessFrom(ctx); a.Limited() {
		r.Within = a.Prefixes()
	}
	resp, err := d.b.engine.FindSimilar(ctx, r)
	if err != nil {
		return "", similarError(err)
	}
	for _, it := range resp.Items {
		if it.Coverage == 1 {
			return vfs.FormatRef(it.Drive, it.Path), nil
		}
	}
	// Checked and recorded under one lock: of two identical sources in
	// flight at once, the second sees the first.
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, a := range d.added {
		if search.Covers(vecs, a.vecs, d.threshold) {
			return a.ref, nil
		}
	}
	for len(d.added) > 0 && d.vectors+len(vecs) > maxDedupeVectors {
		d.vectors -= len(d.added[0].vecs)
		d.added = slices.Delete(d.added, 0, 1)
	}
	d.added = append(d.added, addedSource{ref: vfs.FormatRef(ref.Drive, ref.Path), vecs: vecs})
	d.vectors += len(vecs)
	return "", nil
}
