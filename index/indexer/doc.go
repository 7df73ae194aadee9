// Package indexer keeps what the store derives from items current in the
// background: it installs the chunker of the configured model (or a
// byte-estimating one without a model, so BM25 works at once), chunks items
// stored before a chunker was installed, and embeds queued chunks with the one
// embedding worker, at background priority, or at prompt priority for a caller
// that waits (EmbedNow). Once no chunk waits, it embeds the questions chunks
// carry (vfs.Store.PendingQuestions) the way queries are embedded.
//
// The embedder is the local model's Worker or, with NewRemote, a remote
// provider (index/embed/openai): both are an embed.Embedder. A remote one
// bounds chunks by its configured window, counted with the tokenizer in the
// model directory when there is one (else estimated from bytes), and its
// model id is known once its dimensions are (configured, or learned by a
// probe request that is repeated every 30 s until it answers). While the
// remote endpoint fails (its Health is not empty) the backlog stays queued
// in the store and the passes look again every second.
//
// It degrades instead of failing: without a model or ONNX Runtime the store
// keeps queueing, the reason is reported by Status, and the model is looked
// for again every 30 s. Embedding waits while the search indexes trail the
// store, so text becomes searchable by its words first, then by meaning.
package indexer
