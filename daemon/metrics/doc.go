// Package metrics is the daemon's Prometheus instrumentation: the metric
// families it exposes at /metrics, the events the daemon reports into them
// (RPCs, searches and their legs, history pruning, Doctor runs, item writes)
// and the state read from the daemon at each scrape (queues, outbox lag,
// counts, store size).
//
// Each daemon has its own registry, never the process's global one, so
// tests may start many daemons in one process. Gauges of state are read at
// scrape time from a Source (a pull-time collector), so they cost nothing
// between scrapes and are never stale; events feed counters and histograms.
// Every label takes values from a fixed set (RPC method names, status
// codes, legs, modes, parts, states): no item, path or token ever becomes a
// label.
//
// Rate counts events per second over the last minute for the Status RPC
// (writes_per_second, searches_per_second), which needs no scraper.
package metrics
