// Package embed turns text chunks and queries into vectors with a local
// sentence-embedding model run by ONNX Runtime (github.com/yalue/onnxruntime_go,
// which needs the ONNX Runtime >= 1.24 shared library).
//
// # What it owns
//
// A model directory holds model.onnx (a BERT-family graph taking input_ids,
// attention_mask and, if declared, token_type_ids as int64 [batch, seq] and
// returning last_hidden_state float32 [batch, seq, dims]), its weights in
// model.onnx.data when they are kept beside it (mapped, not copied: see
// ModelDataFile), the tokenizer files
// read by index/tokenize, and ctxd-model.json, loaded as a Spec: dimensions,
// pooling ("mean" over the attention mask for all-MiniLM-L6-v2, "cls" for
// bge-*), L2 normalisation, the window MaxTokens and the query/document
// prefixes. Pooling and normalisation are not in the graph: embed does them
// in Go from the Spec, so a CLS model is never mean-pooled by accident.
//
// Model is one ONNX Runtime session plus the tokenizer. Model.Embed adds the
// prefix, tokenizes with truncation at MaxTokens ([CLS] and [SEP] included:
// a chunk longer than the window is cut, so chunkers must bound chunks with
// Model.Tokenizer), and runs batches of at most Options.MaxBatch texts and
// Options.MaxBatchTokens padded tokens (texts × longest), each run padded
// only to its longest input, then pools and normalises.
//
// Open checks the graph: its inputs and output names and types, the output
// width against Spec.Dimensions (with a warm-up run), and whether a text's
// vector depends on what it is batched with. Float graphs do not (cosine
// 1 - 1e-7). Graphs quantized dynamically to int8 do: DynamicQuantizeLinear
// takes one scale over the whole activation tensor, other texts and padding
// included, so the same text's vector moves with its batch (cosine 0.996
// between alone and batched in Open's probe). For such a graph Open sets
// MaxBatch to 1 (see Model.Options): its vectors are then reproducible and
// equal to the Python reference, and int8 at batch 1 is still about as fast
// as fp32 batched on two cores.
//
// Worker is the one goroutine that owns a Model; the daemon opens one Model
// per process and shares one Worker among all callers. Worker.Embed accepts
// any number of texts from any goroutine. The caller tokenizes its texts a
// window of 8×MaxBatch at a time (the next window while the worker runs
// this one) and sorts the window by token length, so inputs of similar
// length share a batch and padding stays small; the worker only batches and
// runs. It keeps one queue per Priority and, at every batch boundary, runs
// the highest one with texts waiting: Query (search queries, batched
// together), then Prompt (documents a caller waits for, such as an explicit
// re-embed), then Background (the ingest backlog).
//
// Queries go first, but not always: a daemon searched without pause would
// otherwise never finish embedding. The worker measures how long each run
// takes; while documents wait, a query run earns them 45% / 55% of its
// time as credit, and at a boundary where queries and documents both wait
// and the documents have credit, one document run (Prompt first) goes
// before the next query batch and its time is paid from the credit. While
// queries wait at every boundary, documents thus get 45% of the worker's
// time (documentShare), never two runs in a row; at a boundary where no
// query waits they run as before, uncharged, so between bursts of queries
// they get more. The credit resets whenever no document waits.
//
// So a query waits for at most the run in flight, then one document run,
// then the query batches queued before it. MaxBatchTokens bounds each of
// these runs: Spec.MaxTokens padded tokens by default, one 256-token chunk
// of MiniLM, about 40 ms on two busy cores. When queries come faster than
// the worker embeds them (many clients searching back to back on two
// cores), they wait mostly for each other, and the documents' share makes
// the query runs' share 55%.
//
// Small runs embed about 7% fewer texts a second than runs of 1024 tokens
// (two AMD EPYC cores, 128-token texts), so while no query has come for 5
// seconds the Background backlog runs in batches of up to
// Options.BulkBatchTokens (4 windows by default). A query arriving during
// such a bulk run stops it through ORT's terminate flag (checked between
// kernels); the query runs next, and the stopped run's texts go back ahead
// of the backlog, to run in small batches. A request whose caller has gone
// (its context ended) is dropped before it runs.
//
// Embedder is what the indexer and the daemon hold: the Worker, or a
// remote provider (index/embed/openai) that satisfies the same interface;
// ErrUnavailable marks the errors of one that cannot embed for now, so
// that searches fall back to BM25 and the backlog waits.
//
// Worker.Stats counts the texts run at each priority and how long each
// query request took from submission to its vectors (the daemon's
// ctxd_embedding_texts_total and ctxd_query_embedding_seconds).
//
// # Threads and memory
//
// The ONNX Runtime environment is process-wide: the first Open loads the
// library and it stays loaded; a later Open naming a different library file
// fails. Each session uses Options.Threads intra-op threads (default
// min(2, NumCPU)), one inter-op thread, and has spinning disabled
// (session.intra_op.allow_spinning and session.inter_op.allow_spinning = 0),
// because the daemon shares the machine's few cores with the session: an
// idle worker costs no CPU.
//
// A Model allocates its input and output buffers once, for
// max(min(MaxBatch × MaxTokens, BulkBatchTokens), MaxTokens) tokens (1.5 MB
// of float32 output for MiniLM by default: 1024 × 384), and ORT reads and
// writes them in place; ORT's own activations scale with the same bound.
// Each caller holds at most two windows of token ids (8×MaxBatch × MaxTokens
// int64s each) besides its result vectors (dims float32s per text).
//
// # Caveats
//
//   - Model.Embed is not safe for concurrent use; use a Worker.
//   - Vectors from different Spec.IDs, or from the fp32 and int8 variants of
//     one model, are not interchangeable: re-embed when the model changes.
//   - Truncation is silent here; detecting over-long chunks is the
//     chunker's job (tokenize.Count).
//   - Cancelling a Worker.Embed context skips its texts not yet run; a graph
//     run in progress is not interrupted, and Close waits for it.
//   - Under continuous queries documents get 45% of the worker's time, not
//     45% of their quiet rate: their runs are small, and the searches
//     themselves take CPU from the session.
//   - Padding changes a vector by float rounding only (cosine > 0.9999 with
//     the same text run alone), so vectors are not bit-reproducible across
//     batch compositions.
package embed
