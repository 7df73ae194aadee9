package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestDaemon_WriteQuestions: WriteRequest.questions reach the store, are
// embedded in the background and counted by Status; a vector search phrased
// like a question finds the chunk that carries it; the limits are refused
// with hints naming the flag and the config key.
func TestDaemon_WriteQuestions(t *testing.T) {
	cfg := withModel(t, testConfig(t))
	cfg.Limits.MaxQuestionsPerItem = 2
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)
	ctx := context.Background()
	admin := ctxdv1.NewAdminServiceClient(conn)

	writeText(t, c, "notes:/talks.md", "Lunch and learn talks are held in the large meeting room on the first Friday of every month.")
	if _, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: "notes:/kitchen.md",
		Body:      &ctxdv1.WriteRequest_Content{Content: "The kitchen on the third floor opens at half past eleven and closes at two, Monday to Friday."},
		Questions: []string{"What time does the kitchen serve lunch?"}}); err != nil {
		t.Fatal(err)
	}
	st := waitStatus(t, admin, time.Minute, "the question to be embedded", func(st *ctxdv1.StatusResponse) bool {
		e := st.Embedding
		return e.Available && e.PendingChunks == 0 && e.PendingQuestions == 0 && st.Index.AppliedSequence == st.Index.OutboxSequence
	})
	if e := st.Embedding; e.ChunksWithQuestions != 1 || e.ChunksWithoutQuestions != 1 {
		t.Fatalf("status counts %d chunks with questions and %d without, want 1 and 1", e.ChunksWithQuestions, e.ChunksWithoutQuestions)
	}
	resp, err := ctxdv1.NewSearchServiceClient(conn).Search(ctx, &ctxdv1.SearchRequest{
		Queries: []*ctxdv1.SearchQuery{{Text: "When is lunch served?"}}, Mode: ctxdv1.SearchMode_SEARCH_MODE_VECTOR, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || resp.Results[0].Ref != "notes:/kitchen.md" {
		t.Fatalf("vector search ranks %v, want notes:/kitchen.md first (its question)", resp.Results)
	}

	for name, qs := range map[string][]string{
		"over the limit": {"One?", "Two?", "Three?"},
		"too long":       {strings.Repeat("x", 513)},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: "notes:/q.md", Body: &ctxdv1.WriteRequest_Content{Content: "x"}, Questions: qs})
			code, det := errorDetail(t, err)
			if code != codes.InvalidArgument || det.GetType() != ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT {
				t.Fatalf("got %v %v, want INVALID_ARGUMENT", code, det)
			}
			if name == "over the limit" && (!strings.Contains(det.GetNextActionHint(), "--question") || !strings.Contains(det.GetNextActionHint(), "limits.max_questions_per_item")) {
				t.Fatalf("hint %q names neither the flag nor the config key", det.GetNextActionHint())
			}
			if name == "too long" && !strings.Contains(err.Error(), "512") {
				t.Fatalf("error %q does not give the limit", err)
			}
		})
	}
}
