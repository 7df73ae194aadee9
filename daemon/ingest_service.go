package daemon

import (
	"time"

	"google.golang.org/grpc"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

// reembedPoll is how often Reembed reports progress while the queue drains.
const reembedPoll = 250 * time.Millisecond

// ingestService adapts IngestService. Add and Refresh are in unimplemented.go.
type ingestService struct {
	ctxdv1.UnimplementedIngestServiceServer
	b *backend
}

// Reembed queues the chunks of the selected items for embedding again and
// streams progress until the embedding queue is empty.
func (s *ingestService) Reembed(req *ctxdv1.ReembedRequest, stream grpc.ServerStreamingServer[ctxdv1.ReembedResponse]) error {
	ctx := stream.Context()
	if _, ok, reason, _ := s.b.ix.status(); !ok {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, "embedding is unavailable: "+reason,
			"Install the model and ONNX Runtime (make setup), check `ctxd status`, then retry.")
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
	queued, err := s.b.store.Reembed(ctx, refs, req.GetAll())
	if err != nil {
		return err
	}
	tick := time.NewTicker(reembedPoll)
	defer tick.Stop()
	for {
		st, err := s.b.store.EmbedStats(ctx)
		if err != nil {
			return err
		}
		done := max(queued-st.PendingEmbed, 0)
		elapsed := time.Since(start).Seconds()
		p := &ctxdv1.IngestProgress{Phase: "embedding", ItemsDone: done, ItemsTotal: queued, ChunksDone: done}
		if elapsed > 0 && done > 0 {
			p.ItemsPerSecond = float64(done) / elapsed
			p.EtaSeconds = float64(queued-done) / p.ItemsPerSecond
		}
		if err := stream.Send(&ctxdv1.ReembedResponse{Event: &ctxdv1.ReembedResponse_Progress{Progress: p}}); err != nil {
			return err
		}
		if st.PendingEmbed == 0 {
			return stream.Send(&ctxdv1.ReembedResponse{Event: &ctxdv1.ReembedResponse_Summary{Summary: &ctxdv1.IngestSummary{
				ChunksEmbedded: queued, Seconds: time.Since(start).Seconds(),
			}}})
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
