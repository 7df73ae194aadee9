package embed

import (
	"context"
	"errors"
)

// ErrUnavailable is wrapped by the errors of an Embedder that cannot embed
// now but may later (a remote endpoint that keeps failing): the caller
// should fall back (a search to BM25) or try again later (the backlog),
// not treat it as a fault of its texts.
var ErrUnavailable = errors.New("embedder unavailable")

// Embedder computes vectors: the local model's Worker, or a remote
// provider (index/embed/openai). The indexer and the daemon hold one per
// process; every method is safe for concurrent use.
type Embedder interface {
	// Spec describes the vectors: ID names the model (and, for a remote
	// provider, the provider and the dimensions), so that a change of
	// model re-embeds; Dimensions is every vector's length; MaxTokens the
	// window chunks are bounded by.
	Spec() Spec
	// EmbedAt returns one unit vector per text, in order, at priority p:
	// texts are documents unless p is Query. It honours ctx.
	EmbedAt(ctx context.Context, texts []string, p Priority) ([][]float32, error)
	// Health is "" while the embedder takes work, else why it does not
	// (a remote endpoint failing, with what failed); its EmbedAt calls
	// then fail fast with ErrUnavailable.
	Health() string
	// Stats counts the texts embedded at each priority and how long query
	// embeddings took (the daemon's metrics).
	Stats() Stats
	// Close stops the embedder; calls made after it fail with ErrClosed.
	Close() error
}

// Health is always "": the local model runs in the process.
func (w *Worker) Health() string { return "" }

var _ Embedder = (*Worker)(nil)
