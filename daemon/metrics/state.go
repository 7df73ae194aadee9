package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// State is what a scrape reads of the daemon when it happens.
type State struct {
	// StoreUp is false while the store does not answer; the figures read
	// from the store are then left out of the scrape.
	StoreUp bool
	// Items and Chunks count the store's items and chunks.
	Items, Chunks int64
	// PendingEmbed counts chunks waiting for their embedding,
	// PendingChunking items waiting to be chunked.
	PendingEmbed, PendingChunking int64
	// EmbeddedChunks counts the chunk texts this daemon's model embedded
	// since it started.
	EmbeddedChunks int64
	// EmbeddedTexts counts the texts the embedding worker ran since it
	// started, by priority (query, prompt, background).
	EmbeddedTexts map[string]int64
	// QueryEmbedding is the time query embeddings took from submission to
	// the worker until their vector; nil leaves the family out.
	QueryEmbedding *Histogram
	// OutboxSeq is the store's outbox sequence: every change to what an
	// item contributes to the indexes takes the next number.
	OutboxSeq uint64
	// Applied is, by consumer (lexical, vector, standing), the outbox
	// sequence it has applied through.
	Applied map[string]uint64
	// StoreFileBytes is the store file's used size (0 for PostgreSQL).
	StoreFileBytes int64
	// StoreBytes is the store's size by part (content, history, vectors,
	// ...) as last measured, at StoreMeasured; nil before the first
	// measurement.
	StoreBytes    map[string]int64
	StoreMeasured time.Time
	// Watches counts the watches by state.
	Watches map[string]int
	// SubscriptionsDurable counts durable subscriptions, SubscriptionStreams
	// open streams, SubscriptionCutOffs streams cut off as slow consumers
	// since the daemon started.
	SubscriptionsDurable, SubscriptionStreams int
	SubscriptionCutOffs                       int64
}

// Histogram is a cumulative histogram in seconds, as Prometheus takes it.
type Histogram struct {
	Count   uint64
	Sum     float64
	Buckets map[float64]uint64 // upper bound -> observations at or below it
}

// Source reads the daemon's State; it must return by ctx's deadline with
// what it could read.
type Source func(ctx context.Context) State

// stateCollector turns a Source into metrics at each scrape.
type stateCollector struct {
	src Source

	up, items, chunks, pendingEmbed, pendingChunking, embedded *prometheus.Desc
	embeddedTexts, queryEmbedding                              *prometheus.Desc
	outboxSeq, outboxLag, fileBytes, storeBytes, measured      *prometheus.Desc
	watches, durable, streams, cutOffs                         *prometheus.Desc
}

func newStateCollector(src Source) *stateCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &stateCollector{
		src:             src,
		up:              d("ctxd_store_up", "1 while the store answers, 0 while it does not (the store's figures are then absent)."),
		items:           d("ctxd_items", "Items in the store, directories included."),
		chunks:          d("ctxd_chunks", "Chunks of items' text in the store."),
		pendingEmbed:    d("ctxd_embedding_queue_chunks", "Chunks waiting for their embedding."),
		pendingChunking: d("ctxd_chunking_queue_items", "Items waiting to be chunked."),
		embedded:        d("ctxd_embedded_chunks_total", "Chunk texts this daemon's embedding model embedded."),
		embeddedTexts:   d("ctxd_embedding_texts_total", "Texts embedded (by the local model or the endpoint), by priority: query, prompt (documents a caller waits for), background.", "priority"),
		queryEmbedding:  d("ctxd_query_embedding_seconds", "Query embeddings from submission to the embedding worker until their vector, the wait behind other runs included."),
		outboxSeq:       d("ctxd_outbox_sequence", "The store's outbox sequence: each change to what an item gives the indexes takes the next number."),
		outboxLag:       d("ctxd_outbox_lag_entries", "Outbox entries a consumer has not applied yet: lexical (BM25 and substring), vector, standing (standing queries).", "index"),
		fileBytes:       d("ctxd_store_file_bytes", "The store file's used size (0 for a PostgreSQL store)."),
		storeBytes:      d("ctxd_store_bytes", "The store's size by part, as last measured (see ctxd_store_bytes_measured_timestamp_seconds).", "part"),
		measured:        d("ctxd_store_bytes_measured_timestamp_seconds", "When ctxd_store_bytes was measured (Unix time)."),
		watches:         d("ctxd_watches", "Watches by state.", "state"),
		durable:         d("ctxd_subscriptions_durable", "Durable subscriptions stored."),
		streams:         d("ctxd_subscription_streams", "Subscription streams open, durable or inline."),
		cutOffs:         d("ctxd_subscription_cutoffs_total", "Subscription streams cut off as slow consumers."),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.items, c.chunks, c.pendingEmbed, c.pendingChunking, c.embedded, c.embeddedTexts, c.queryEmbedding, c.outboxSeq,
		c.outboxLag, c.fileBytes, c.storeBytes, c.measured, c.watches, c.durable, c.streams, c.cutOffs} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := scrapeContext()
	defer cancel()
	st := c.src(ctx)
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	counter(c.embedded, float64(st.EmbeddedChunks))
	for prio, n := range st.EmbeddedTexts {
		ch <- prometheus.MustNewConstMetric(c.embeddedTexts, prometheus.CounterValue, float64(n), prio)
	}
	if h := st.QueryEmbedding; h != nil {
		ch <- prometheus.MustNewConstHistogram(c.queryEmbedding, h.Count, h.Sum, h.Buckets)
	}
	gauge(c.durable, float64(st.SubscriptionsDurable))
	gauge(c.streams, float64(st.SubscriptionStreams))
	counter(c.cutOffs, float64(st.SubscriptionCutOffs))
	for state, n := range st.Watches {
		gauge(c.watches, float64(n), state)
	}
	if st.StoreBytes != nil {
		for part, n := range st.StoreBytes {
			gauge(c.storeBytes, float64(n), part)
		}
		gauge(c.measured, float64(st.StoreMeasured.UnixNano())/1e9)
	}
	if !st.StoreUp {
		gauge(c.up, 0)
		return
	}
	gauge(c.up, 1)
	gauge(c.items, float64(st.Items))
	gauge(c.chunks, float64(st.Chunks))
	gauge(c.pendingEmbed, float64(st.PendingEmbed))
	gauge(c.pendingChunking, float64(st.PendingChunking))
	gauge(c.outboxSeq, float64(st.OutboxSeq))
	gauge(c.fileBytes, float64(st.StoreFileBytes))
	for index, applied := range st.Applied {
		gauge(c.outboxLag, float64(st.OutboxSeq-min(applied, st.OutboxSeq)), index)
	}
}
