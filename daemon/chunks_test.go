package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestChunks reports an item's chunks with their line spans, headings and
// whether their vectors exist, and its questions: before the model has
// embedded them (no daemon model) and after (the real model).
func TestChunks(t *testing.T) {
	content := "---\ntags: [ops]\n---\n# Deploy\n\nRun the canary first.\n\n## Rollback\n\nRevert the release tag.\n"
	write := func(t *testing.T, c ctxdv1.VfsServiceClient) {
		t.Helper()
		if _, err := c.Write(context.Background(), &ctxdv1.WriteRequest{Ref: "notes:/deploy.md", Body: &ctxdv1.WriteRequest_Content{Content: content},
			Questions: []string{"How do I roll back a release?"}}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T, c ctxdv1.VfsServiceClient, embedded bool) {
		t.Helper()
		resp, err := c.Chunks(context.Background(), &ctxdv1.ChunksRequest{Ref: "notes:/deploy.md"})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Chunks) == 0 {
			t.Fatal("no chunks")
		}
		lines := strings.Split(content, "\n")
		var headings []string
		for _, ch := range resp.Chunks {
			headings = append(headings, ch.Heading)
			text := content[ch.StartByte:ch.EndByte]
			if ch.StartLine < 4 || ch.EndLine < ch.StartLine || !strings.HasPrefix(text, lines[ch.StartLine-1]) ||
				!strings.HasSuffix(strings.TrimRight(text, "\n"), lines[ch.EndLine-1]) {
				t.Errorf("chunk %q: lines %d-%d do not hold bytes %d-%d", text, ch.StartLine, ch.EndLine, ch.StartByte, ch.EndByte)
			}
			if ch.Embedded != embedded || ch.Tokens <= 0 {
				t.Errorf("chunk %q: embedded %v (want %v), tokens %d", text, ch.Embedded, embedded, ch.Tokens)
			}
		}
		if !strings.Contains(strings.Join(headings, "|"), "Deploy") {
			t.Errorf("headings %v", headings)
		}
		if len(resp.Questions) != 1 || resp.Questions[0].Text != "How do I roll back a release?" || resp.Questions[0].Embedded != embedded {
			t.Errorf("questions %v, want one, embedded %v", resp.Questions, embedded)
		}
	}
	t.Run("without a model", func(t *testing.T) {
		d := mustStart(t, testConfig(t))
		c := d.vfsClient(t)
		write(t, c)
		check(t, c, false)
		_, err := c.Chunks(context.Background(), &ctxdv1.ChunksRequest{Ref: "notes:/"})
		if code, _ := errorDetail(t, err); code != codes.InvalidArgument && code != codes.FailedPrecondition {
			t.Errorf("chunks of a directory: %v", err)
		}
		_, err = c.Chunks(context.Background(), &ctxdv1.ChunksRequest{Ref: "notes:/nothing.md"})
		if code, _ := errorDetail(t, err); code != codes.NotFound {
			t.Errorf("chunks of nothing: %v", err)
		}
	})
	t.Run("embedded", func(t *testing.T) {
		d := mustStart(t, withModel(t, testConfig(t)))
		conn := dial(t, "unix://"+d.cfg.Socket)
		c := ctxdv1.NewVfsServiceClient(conn)
		write(t, c)
		waitStatus(t, ctxdv1.NewAdminServiceClient(conn), 2*time.Minute, "the item and its question to be embedded", func(st *ctxdv1.StatusResponse) bool {
			e := st.Embedding
			return e.Available && e.PendingChunks == 0 && e.PendingItems == 0 && e.PendingQuestions == 0
		})
		check(t, c, true)
	})
}
