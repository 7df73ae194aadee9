package embed_test

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"os"

	"github.com/ctxd/ctxd/index/embed"
)

// The daemon opens one Model, hands it to one Worker and shares the Worker:
// documents at ingest, queries at search.
func ExampleWorker() {
	dir := cmp.Or(os.Getenv("CTXD_MODEL_DIR"), "../../.cache/models/all-MiniLM-L6-v2")
	lib := cmp.Or(os.Getenv("CTXD_ORT_LIB"), "../../.cache/onnxruntime/libonnxruntime.so")
	m, err := embed.Open(dir, embed.Options{LibraryPath: lib})
	if err != nil {
		log.Fatal(err) // run make setup
	}
	w := embed.NewWorker(m)
	defer w.Close()

	ctx := context.Background()
	docs, err := w.Embed(ctx, []string{
		"The cat sat on the mat all afternoon.",
		"Raft elects a leader when a majority of servers vote for a candidate.",
	}, false)
	if err != nil {
		log.Fatal(err)
	}
	q, err := w.Embed(ctx, []string{"how does leader election work"}, true)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(q[0]), embed.Cosine(q[0], docs[1]) > embed.Cosine(q[0], docs[0]))
	// Output: 384 true
}
