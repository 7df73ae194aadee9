package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func (c *cli) statusCommand() *cobra.Command {
	req := &ctxdv1.StatusRequest{}
	cmd := &cobra.Command{
		Use: "status", Short: "Show the daemon's status", Args: exactArgs(0),
		RunE: run(c, func(ctx context.Context, cl *clients) (*ctxdv1.StatusResponse, error) {
			return cl.admin.Status(ctx, req)
		}, func(r *ctxdv1.StatusResponse) {
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			row := func(k string, v any) { fmt.Fprintf(tw, "%s:\t%v\n", k, v) }
			row("version", r.Version)
			row("up since", r.StartedAt.AsTime().Local().Format(time.RFC3339))
			row("data dir", r.DataDir)
			storeRows(row, r.GetStore())
			// Figures read from the store are zero while it is out of reach.
			known := r.GetStore() == nil || r.GetStore().GetReachable()
			if known {
				row("items", r.ItemCount)
				row("content bytes", r.SizeBytes)
				row("store file bytes", r.StoreFileBytes)
			}
			e := r.GetEmbedding()
			row("embedding", availability(e.GetAvailable(), e.GetLoading(), e.GetUnavailableReason()))
			if e.GetModelId() != "" {
				row("model", fmt.Sprintf("%s (%d dimensions)", e.GetModelId(), e.GetDimensions()))
			}
			if e.GetEndpoint() != "" {
				row("embedding endpoint", e.GetEndpoint())
			}
			if h := e.GetTextSentTo(); h != "" {
				row("privacy", "item text is sent to "+h+" to be embedded")
			}
			if pe := e.GetProviderError(); pe != "" {
				row("embedding degraded", pe+" (searches run in BM25 mode; the backlog waits)")
			}
			if known {
				row("chunks", r.GetIndex().GetChunkCount())
				row("embedded chunks", e.GetEmbeddedChunks())
				row("pending chunks", e.GetPendingChunks())
			}
			if e.GetPendingItems() > 0 {
				row("items waiting for a chunker", e.GetPendingItems())
			}
			if r.GetStore().GetShared() {
				row("embedded here", fmt.Sprintf("%d chunks since start (each replica embeds its share)", e.GetEmbeddedHere()))
			}
			if e.GetChunksPerSecond() > 0 {
				row("embedding rate", fmt.Sprintf("%.0f chunks/s", e.GetChunksPerSecond()))
			}
			if e.GetChunksWithQuestions() > 0 || e.GetPendingQuestions() > 0 {
				row("question vectors", fmt.Sprintf("%d chunks with, %d without; %d questions pending",
					e.GetChunksWithQuestions(), e.GetChunksWithoutQuestions(), e.GetPendingQuestions()))
			}
			if en := e.GetEnricher(); en != nil {
				row("question enricher", fmt.Sprintf("%s at %s: %d chunks to ask about, %d enriched, %d calls failed",
					en.GetModel(), en.GetEndpoint(), en.GetPendingChunks(), en.GetEnrichedChunks(), en.GetFailedCalls()))
				if en.GetLastError() != "" {
					row("enricher last error", fmt.Sprintf("%s (%s)", en.GetLastError(), en.GetLastErrorAt().AsTime().Local().Format(time.RFC3339)))
				}
			}
			row("search index", availability(r.Index.GetAvailable(), false, r.Index.GetUnavailableReason()))
			if n := r.GetIndex().GetLexicalSegments(); n > 0 {
				segs := fmt.Sprintf("%d segments", n)
				if n == 1 {
					segs = "1 segment"
				}
				if r.GetIndex().GetCompacting() {
					segs += ", compacting"
				}
				row("lexical index", segs)
			}
			if sc := r.GetSubscriptions(); sc.GetDurable()+sc.GetStreams()+sc.GetCutOff() > 0 {
				row("standing queries", fmt.Sprintf("%d durable, %d streams open, %d cut off as slow", sc.GetDurable(), sc.GetStreams(), sc.GetCutOff()))
			}
			row("activity", fmt.Sprintf("%.2f writes/s, %.2f searches/s over the last minute", r.GetWritesPerSecond(), r.GetSearchesPerSecond()))
			row("last doctor", doctorRow(r.GetLastDoctor()))
			if len(r.Disk) > 0 {
				chunks := max(r.GetIndex().GetChunkCount(), 1)
				fmt.Fprintf(tw, "\ndisk\tbytes\tper chunk\tpages full\tkeys\n")
				for _, d := range r.Disk {
					if d.Bytes == 0 {
						continue // an empty or inline bucket
					}
					full, keys := "", ""
					if d.UsedBytes > 0 {
						full = fmt.Sprintf("%.0f%%", 100*float64(d.UsedBytes)/float64(d.Bytes))
					}
					if d.Keys > 0 {
						keys = strconv.FormatInt(d.Keys, 10)
					}
					fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", d.Name, d.Bytes, d.Bytes/chunks, full, keys)
				}
			}
			replicaTable(tw, r.GetStore())
			if len(r.GetWatches()) > 0 {
				fmt.Fprintln(tw)
				watchTable(tw, r.GetWatches())
			}
			tw.Flush()
		}),
	}
	cmd.Flags().BoolVar(&req.Disk, "disk", false, "also break disk use down by component (reads the whole store file once)")
	return cmd
}

// storeRows adds what status says of the store: where it is, whether
// replicas share it, and whether it answers.
func storeRows(row func(string, any), st *ctxdv1.StoreStatus) {
	if st == nil {
		return
	}
	kind := "bbolt"
	if st.GetShared() {
		kind = "PostgreSQL, shared by replicas"
	}
	row("store", fmt.Sprintf("%s (%s)", st.GetLocation(), kind))
	if !st.GetReachable() {
		since := ""
		if st.GetUnreachableSince() != nil {
			since = " since " + st.GetUnreachableSince().AsTime().Local().Format(time.RFC3339)
		}
		row("store reachable", fmt.Sprintf("NO%s: %s; health reports NOT_SERVING and the daemon serves again by itself once the store answers", since, st.GetUnreachableReason()))
	}
	if st.GetShared() {
		row("replica id", st.GetReplicaId())
	}
}

// replicaTable lists the replicas of a shared store: where each one's
// indexes stand and how far they trail the outbox.
func replicaTable(tw *tabwriter.Writer, st *ctxdv1.StoreStatus) {
	if !st.GetShared() || len(st.GetReplicas()) == 0 {
		return
	}
	fmt.Fprintf(tw, "\nreplica\thost\tapplied\tlag (changes)\tlag\treported\tstate\n")
	for _, r := range st.GetReplicas() {
		state, reported := "live", "-"
		switch {
		case r.GetSelf():
			state = "this daemon"
		case r.GetGone():
			state = "gone (silent over an hour)"
		}
		if r.GetReportedAt() != nil {
			reported = r.GetReportedAt().AsTime().Local().Format(time.RFC3339)
		}
		lag := time.Duration(r.GetLagSeconds() * float64(time.Second)).Round(time.Millisecond)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", r.GetId(), r.GetHost(), r.GetAppliedSequence(),
			r.GetLagChanges(), lag, reported, state)
	}
}

// doctorRow says how the last Doctor run since the daemon started went.
func doctorRow(run *ctxdv1.DoctorRun) string {
	if run == nil {
		return "none since start (`ctxd doctor` runs one)"
	}
	verdict := "ok"
	if n := len(run.GetResult().GetProblems()); n > 0 {
		verdict = fmt.Sprintf("%d problems (`ctxd doctor` lists them)", n)
	}
	return fmt.Sprintf("%s at %s, took %s", verdict, run.GetFinishedAt().AsTime().Local().Format(time.RFC3339),
		time.Duration(run.GetSeconds()*float64(time.Second)).Round(time.Millisecond))
}
