package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/vfs/backend"
)

// checkQuestions verifies the question state: the chunk hash index holds
// exactly the chunk records, every question record belongs to an item or a
// chunk text that exists, queue entries name records with their hash, and
// the queue counter matches.
func checkQuestions(t *txn) error {
	var n int
	err := t.chunks.ForEach(func(k, v []byte) error {
		n++
		if t.chunkhash.Get(waitKey(v[20:52], k)) == nil {
			return fmt.Errorf("chunk %x missing from the hash index", k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if got := t.chunkhash.Stats().Keys; got != int64(n) {
		return fmt.Errorf("chunk hash index holds %d entries for %d chunks", got, n)
	}
	err = t.questions.ForEach(func(k, v []byte) error {
		switch k[0] {
		case questionItem:
			if t.items.Get(k[1:17]) == nil {
				return fmt.Errorf("questions of missing item %x", k[1:17])
			}
		case questionGenerated:
			if !hasPrefix(t.chunkhash, k[1:33]) {
				return fmt.Errorf("generated questions of text %x, which no chunk has", k[1:33])
			}
			if len(k) == 33 {
				return nil
			}
		default:
			return fmt.Errorf("question key %x of unknown kind", k)
		}
		if h := sha256.Sum256(v[32:]); !bytes.Equal(h[:], v[:32]) {
			return fmt.Errorf("question %x: hash does not match its text", k)
		}
		if t.model != "" && t.questionVector(v[:32]) == nil && t.qembedq.Get(k) == nil {
			return fmt.Errorf("question %x has neither a vector nor a queue entry", k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var queued int64
	err = t.qembedq.ForEach(func(k, v []byte) error {
		queued++
		if rec := t.questions.Get(k); rec == nil || !bytes.Equal(rec[:32], v) {
			return fmt.Errorf("queued question %x has no record with its hash", k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if got := t.counter(counterQEmbedQ); got != queued {
		return fmt.Errorf("question queue counter %d, actual %d", got, queued)
	}
	return nil
}

// vecFunc makes fake embeddings from text, so that tests decide which
// question is close to which chunk.
type vecFunc func(text string) []float32

// embedQuestions drains the question queue with vectors from f and returns
// how many were computed.
func embedQuestions(t *testing.T, s *Store, model string, f vecFunc) int {
	t.Helper()
	ctx := context.Background()
	computed := 0
	for {
		pending, err := s.PendingQuestions(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) == 0 {
			return computed
		}
		vecs := make([][]float32, len(pending))
		for i, p := range pending {
			if !p.Have {
				vecs[i] = f(p.Text)
				computed++
			}
		}
		if err := s.SaveQuestionVectors(ctx, model, pending, vecs); err != nil {
			t.Fatal(err)
		}
	}
}

func constVec(string) []float32 { return []float32{1, 1} }

func mustQuestions(t *testing.T, s *Store, ref string) []string {
	t.Helper()
	qs, err := s.Questions(context.Background(), mustRef(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

func writeQ(t *testing.T, s *Store, ref, content string, questions ...string) Item {
	t.Helper()
	res, err := s.Write(context.Background(), WriteParams{Ref: mustRef(t, ref), Content: []byte(content), IsText: true,
		OnConflict: ConflictOverwrite, Questions: questions})
	if err != nil {
		t.Fatal(err)
	}
	return res.Item
}

// TestStore_ItemQuestions: caller questions belong to the item: a write
// replaces them (and one without removes them), an edit keeps them, a move
// keeps them, a copy carries them, a delete removes them.
func TestStore_ItemQuestions(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	const ref = "notes:/a.md"
	writeQ(t, s, ref, "alpha\n\nbeta\n", "  What is alpha? ", "What is beta?", "What is alpha?")
	if got, want := mustQuestions(t, s, ref), []string{"What is alpha?", "What is beta?"}; !slices.Equal(got, want) {
		t.Fatalf("after write: %q, want %q (trimmed, duplicates dropped)", got, want)
	}
	if _, _, pending, err := s.QuestionStats(ctx); err != nil || pending != 2 {
		t.Fatalf("pending questions = %d, %v; want 2", pending, err)
	}
	writeQ(t, s, ref, "alpha\n\nbeta\n", "Why gamma?")
	if got := mustQuestions(t, s, ref); !slices.Equal(got, []string{"Why gamma?"}) {
		t.Fatalf("after rewrite: %q, want the new questions only", got)
	}
	if _, err := s.Edit(ctx, mustRef(t, ref), []Patch{{StartLine: 1, EndLine: 1, Content: "alpha two\n"}}, ""); err != nil {
		t.Fatal(err)
	}
	if got := mustQuestions(t, s, ref); !slices.Equal(got, []string{"Why gamma?"}) {
		t.Fatalf("after edit: %q, want them kept", got)
	}
	if _, err := s.Move(ctx, mustRef(t, ref), mustRef(t, "notes:/b.md"), ConflictError); err != nil {
		t.Fatal(err)
	}
	if got := mustQuestions(t, s, "notes:/b.md"); !slices.Equal(got, []string{"Why gamma?"}) {
		t.Fatalf("after move: %q, want them kept", got)
	}
	if _, err := s.Copy(ctx, mustRef(t, "notes:/b.md"), mustRef(t, "notes:/c.md"), false, ConflictError); err != nil {
		t.Fatal(err)
	}
	if got := mustQuestions(t, s, "notes:/c.md"); !slices.Equal(got, []string{"Why gamma?"}) {
		t.Fatalf("copy: %q, want the source's questions", got)
	}
	writeQ(t, s, "notes:/c.md", "other\n")
	if got := mustQuestions(t, s, "notes:/c.md"); len(got) != 0 {
		t.Fatalf("after a write without questions: %q, want none", got)
	}
	if got := mustQuestions(t, s, "notes:/b.md"); !slices.Equal(got, []string{"Why gamma?"}) {
		t.Fatalf("the copy's change touched the source: %q", got)
	}
	if _, err := s.Delete(ctx, mustRef(t, "notes:/b.md"), false); err != nil {
		t.Fatal(err)
	}
	if _, _, pending, err := s.QuestionStats(ctx); err != nil || pending != 0 {
		t.Fatalf("after deleting every item with questions: %d pending, %v; want 0", pending, err)
	}
	// checkQuestions (store cleanup) finds no record of the deleted item.
}

// TestStore_ItemQuestions_Limits: too many, too long, empty or control
// characters are refused with ErrInvalid, and nothing is written.
func TestStore_ItemQuestions_Limits(t *testing.T) {
	s := mustOpenStore(t)
	many := make([]string, MaxQuestionsPerItem+1)
	for i := range many {
		many[i] = fmt.Sprintf("question %d?", i)
	}
	for name, qs := range map[string][]string{
		"too many": many,
		"too long": {strings.Repeat("x", MaxQuestionBytes+1)},
		"empty":    {"  "},
		"newline":  {"one?\ntwo?"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Write(context.Background(), WriteParams{Ref: mustRef(t, "notes:/x.md"), Content: []byte("x"), IsText: true, Questions: qs})
			wantErr(t, err, ErrInvalid)
		})
	}
	if got := paths(t, s); len(got) != 0 {
		t.Fatalf("refused writes stored %q", got)
	}
	// The limit is inclusive.
	writeQ(t, s, "notes:/ok.md", "x", many[:MaxQuestionsPerItem]...)
	writeQ(t, s, "notes:/long.md", "x", strings.Repeat("y", MaxQuestionBytes))
}

// TestStore_GeneratedQuestions: generated questions are keyed by chunk text:
// every chunk with that text carries them, a chunk whose text changes has
// none (and is asked about again), and they go once no chunk has the text.
func TestStore_GeneratedQuestions(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	a := writeQ(t, s, "notes:/a.md", "shared text\n\nonly in a\n")
	b := writeQ(t, s, "notes:/b.md", "shared text\n\nonly in a\n")
	embedAll(t, s, "m1")

	// One at a time, the cursor walks every chunk; a text shared by several
	// chunks comes once per call.
	if tasks := allTasks(t, s, 1); len(tasks) != 4 {
		t.Fatalf("one task a call: %d tasks, want every chunk (4)", len(tasks))
	}
	tasks := allTasks(t, s, 10)
	if len(tasks) != 2 {
		t.Fatalf("tasks = %+v, want the two distinct chunk texts once each", tasks)
	}
	shared := tasks[0]
	if shared.ItemID != a.ID || shared.Chunk != 0 || string(shared.Text) != "shared text" || shared.Ref != "notes:/a.md" {
		t.Fatalf("first task = %+v, want chunk 0 of notes:/a.md", shared)
	}
	if err := s.SetGeneratedQuestions(ctx, shared.Hash, []string{"What is shared?", "Which text is shared?"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetGeneratedQuestions(ctx, tasks[1].Hash, nil); err != nil { // asked, nothing usable
		t.Fatal(err)
	}
	if left := allTasks(t, s, 5); len(left) != 0 {
		t.Fatalf("after answering every text: tasks %+v, want none", left)
	}
	with, without, pending, err := s.QuestionStats(ctx)
	if err != nil || with != 0 || without != 4 || pending != 2 {
		t.Fatalf("before question vectors: with %d without %d pending %d (%v); want 0, 4, 2", with, without, pending, err)
	}
	before, _ := s.OutboxSeq(ctx)
	if n := embedQuestions(t, s, "m1", constVec); n != 2 {
		t.Fatalf("computed %d question vectors, want 2", n)
	}
	if got := changedItems(t, s, before); !got[a.ID] || !got[b.ID] {
		t.Fatalf("outbox after question vectors names %v, want both items with the shared text", got)
	}
	with, without, pending, err = s.QuestionStats(ctx)
	if err != nil || with != 2 || without != 2 || pending != 0 {
		t.Fatalf("with question vectors: with %d without %d pending %d (%v); want 2, 2, 0", with, without, pending, err)
	}
	docs, err := s.IndexDocs(ctx, []IndexRead{{ItemID: a.ID}, {ItemID: b.ID}}, true, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if q := docs[0].Chunks[0].Questions; len(q) != 2 || q[0].Hash != sha256.Sum256([]byte("What is shared?")) {
		t.Fatalf("a's shared chunk carries %+v, want both generated questions", q)
	}
	if q := docs[0].Chunks[1].Questions; len(q) != 0 {
		t.Fatalf("a's other chunk carries %+v, want none", q)
	}
	if q := docs[1].Chunks[0].Questions; len(q) != 2 {
		t.Fatalf("b's chunk with the same text carries %d questions, want 2", len(q))
	}

	// b's text changes: its new chunk has none and is asked about; a keeps them.
	writeQ(t, s, "notes:/b.md", "changed text\n")
	embedAll(t, s, "m1")
	if tasks := allTasks(t, s, 5); len(tasks) != 1 || tasks[0].ItemID != b.ID {
		t.Fatalf("after b changed: tasks %+v, want b's new chunk", tasks)
	}
	if qs, asked, _ := s.GeneratedQuestions(ctx, shared.Hash); !asked || len(qs) != 2 {
		t.Fatalf("a still has the shared text, but its questions are %q (asked %v)", qs, asked)
	}
	// The last chunk with the text goes: so do its questions.
	if _, err := s.Delete(ctx, mustRef(t, "notes:/a.md"), false); err != nil {
		t.Fatal(err)
	}
	if qs, asked, _ := s.GeneratedQuestions(ctx, shared.Hash); asked || len(qs) != 0 {
		t.Fatalf("no chunk has the text any more, but it keeps questions %q (asked %v)", qs, asked)
	}
	// A hash no chunk has is ignored.
	if err := s.SetGeneratedQuestions(ctx, shared.Hash, []string{"Late?"}); err != nil {
		t.Fatal(err)
	}
	if _, asked, _ := s.GeneratedQuestions(ctx, shared.Hash); asked {
		t.Fatal("questions were stored for a text no chunk has")
	}
	// A model's odd answer loses the questions that are unusable, not the rest.
	bChunks, err := s.Chunks(ctx, mustRef(t, "notes:/b.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetGeneratedQuestions(ctx, bChunks[0].Hash, []string{strings.Repeat("z", MaxQuestionBytes+1), "\t", "a\tb?", " Kept? ", "Kept?"}); err != nil {
		t.Fatal(err)
	}
	if qs, asked, _ := s.GeneratedQuestions(ctx, bChunks[0].Hash); !asked || !slices.Equal(qs, []string{"Kept?"}) {
		t.Fatalf("after an answer with unusable questions: %q (asked %v), want only %q", qs, asked, "Kept?")
	}
}

// TestStore_GeneratedQuestions_SurviveRewrite: rewriting an item with the
// same text drops and re-adds its chunk records in one transaction; the
// questions of that text must survive it.
func TestStore_GeneratedQuestions_SurviveRewrite(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	writeQ(t, s, "notes:/a.md", "same text\n")
	tasks := allTasks(t, s, 5)
	if err := s.SetGeneratedQuestions(ctx, tasks[0].Hash, []string{"Same?"}); err != nil {
		t.Fatal(err)
	}
	writeQ(t, s, "notes:/a.md", "same text\n")
	if qs, _, _ := s.GeneratedQuestions(ctx, tasks[0].Hash); !slices.Equal(qs, []string{"Same?"}) {
		t.Fatalf("after rewriting the same text: %q, want the questions kept", qs)
	}
}

// TestStore_ItemQuestions_AttachToMostSimilarChunk: a caller question's
// vector belongs to the chunk whose text vector is closest to it, and moves
// when that changes.
func TestStore_ItemQuestions_AttachToMostSimilarChunk(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	it := writeQ(t, s, "notes:/a.md", "cats purr\n\ndogs bark\n", "Which animal barks?", "Which animal purrs?")
	chunkVec := func(text string) []float32 {
		if strings.Contains(text, "dogs") || strings.Contains(text, "bark") {
			return []float32{0, 1}
		}
		return []float32{1, 0}
	}
	embedChunks(t, s, "m1", func(p PendingChunk) []float32 { return chunkVec(string(p.Text)) })
	embedQuestions(t, s, "m1", chunkVec)
	docs, err := s.IndexDocs(ctx, []IndexRead{{ItemID: it.ID}}, true, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	purr, bark := sha256.Sum256([]byte("Which animal purrs?")), sha256.Sum256([]byte("Which animal barks?"))
	if q := docs[0].Chunks[0].Questions; len(q) != 1 || q[0].Hash != purr {
		t.Fatalf("chunk 0 (cats) carries %+v, want the purr question", q)
	}
	if q := docs[0].Chunks[1].Questions; len(q) != 1 || q[0].Hash != bark {
		t.Fatalf("chunk 1 (dogs) carries %+v, want the bark question", q)
	}
	if with, without, _, _ := s.QuestionStats(ctx); with != 2 || without != 0 {
		t.Fatalf("stats with %d without %d, want 2, 0", with, without)
	}
	// The edit swaps the paragraphs: the questions follow their text.
	before, _ := s.OutboxSeq(ctx)
	if _, err := s.Edit(ctx, mustRef(t, "notes:/a.md"), []Patch{{StartLine: 1, EndLine: 3, Content: "dogs bark\n\ncats purr\n"}}, ""); err != nil {
		t.Fatal(err)
	}
	if !changedItems(t, s, before)[it.ID] {
		t.Fatal("the edit appended no outbox entry")
	}
	embedChunks(t, s, "m1", func(p PendingChunk) []float32 { return chunkVec(string(p.Text)) })
	docs, err = s.IndexDocs(ctx, []IndexRead{{ItemID: it.ID}}, true, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if q := docs[0].Chunks[0].Questions; len(q) != 1 || q[0].Hash != bark {
		t.Fatalf("after the swap chunk 0 (dogs) carries %+v, want the bark question", q)
	}
}

// TestStore_QuestionVectors_NewModel: a new model has none of the old
// model's question vectors, so every question is queued again.
func TestStore_QuestionVectors_NewModel(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	writeQ(t, s, "notes:/a.md", "text\n", "One?", "Two?")
	embedQuestions(t, s, "m1", constVec)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m2")
	if _, _, pending, err := s.QuestionStats(ctx); err != nil || pending != 2 {
		t.Fatalf("after the model changed: %d pending (%v), want 2", pending, err)
	}
	// Vectors from the old model are not saved under the new one.
	pending, _ := s.PendingQuestions(ctx, 10)
	if err := s.SaveQuestionVectors(ctx, "m1", pending, [][]float32{{1}, {1}}); err != nil {
		t.Fatal(err)
	}
	if _, _, n, _ := s.QuestionStats(ctx); n != 2 {
		t.Fatalf("a stale model's vectors cleared the queue: %d pending, want 2", n)
	}
}

// TestStore_Reembed_QuestionsToo: Reembed queues the item's questions and
// those generated for its chunks' texts to be embedded again, though
// vectors exist, and the new vectors replace the old; questions of other
// items stay as they are.
func TestStore_Reembed_QuestionsToo(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	writeQ(t, s, "notes:/a.md", "text of a\n", "Asked of a?")
	writeQ(t, s, "notes:/b.md", "text of b\n", "Asked of b?")
	embedAll(t, s, "m1")
	tasks := allTasks(t, s, 10)
	for _, task := range tasks {
		if task.Ref == "notes:/a.md" {
			if err := s.SetGeneratedQuestions(ctx, task.Hash, []string{"Generated for a?"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := embedQuestions(t, s, "m1", constVec); n != 3 {
		t.Fatalf("computed %d question vectors, want 3", n)
	}
	if _, _, err := s.Reembed(ctx, []Ref{mustRef(t, "notes:/a.md")}, false); err != nil {
		t.Fatal(err)
	}
	pending, err := s.PendingQuestions(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, p := range pending {
		if p.Have {
			t.Errorf("%q queued as having a vector: it would not be embedded again", p.Text)
		}
		texts = append(texts, p.Text)
	}
	slices.Sort(texts)
	if want := []string{"Asked of a?", "Generated for a?"}; !slices.Equal(texts, want) {
		t.Fatalf("queued after reembed: %q, want %q", texts, want)
	}
	newVec := func(string) []float32 { return []float32{2, 0} }
	if n := embedQuestions(t, s, "m1", newVec); n != 2 {
		t.Fatalf("computed %d question vectors again, want 2", n)
	}
	hash := func(q string) [32]byte { return sha256.Sum256([]byte(q)) }
	vecs, err := s.QuestionVectors(ctx, [][32]byte{hash("Asked of a?"), hash("Generated for a?"), hash("Asked of b?")})
	if err != nil {
		t.Fatal(err)
	}
	if !sameDirection(vecs[0], []float32{2, 0}) || !sameDirection(vecs[1], []float32{2, 0}) || !sameDirection(vecs[2], []float32{1, 1}) {
		t.Fatalf("vectors after reembed: %v", vecs)
	}
	if _, _, n, _ := s.QuestionStats(ctx); n != 0 {
		t.Fatalf("%d questions still pending", n)
	}
}

func allTasks(t *testing.T, s *Store, batch int) []QuestionTask {
	t.Helper()
	var out []QuestionTask
	after := ""
	for {
		tasks, next, err := s.QuestionTasks(context.Background(), after, batch)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tasks...)
		if next == "" {
			return out
		}
		if next == after {
			t.Fatalf("cursor %q did not advance", next)
		}
		after = next
	}
}

func changedItems(t *testing.T, s *Store, after uint64) map[string]bool {
	t.Helper()
	cs, _, err := s.Changes(context.Background(), after, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, c := range cs {
		out[c.ItemID] = true
	}
	return out
}

// BenchmarkStore_QuestionStats measures Status's question counts after a
// change (cached=false: the memo is dropped before every call, so the count
// reads the question records and the chunks carrying them) and while nothing
// changes (cached=true): one item per 10 chunks, a tenth of the items with a
// caller question, and (enriched) every chunk text with a generated
// question, the worst case.
func BenchmarkStore_QuestionStats(b *testing.B) {
	for _, bc := range []struct {
		n        int
		enriched bool
		cached   bool
	}{{1_000, false, false}, {10_000, false, false}, {1_000, true, false}, {10_000, true, false}, {10_000, true, true}} {
		n := bc.n
		b.Run(fmt.Sprintf("chunks=%d/enriched=%v/cached=%v", n, bc.enriched, bc.cached), func(b *testing.B) {
			s := mustOpenStore(b)
			if _, err := s.SetIndexing(context.Background(), paragraphChunker{"p1"}, "m1"); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for i := range n / 10 {
				var text strings.Builder
				for j := range 10 {
					fmt.Fprintf(&text, "item %d paragraph %d\n\n", i, j)
				}
				var qs []string
				if i%10 == 0 {
					qs = []string{fmt.Sprintf("What is item %d?", i)}
				}
				if _, err := s.Write(ctx, WriteParams{Ref: Ref{Drive: "bench", Path: fmt.Sprintf("/i%05d.md", i)}, Content: []byte(text.String()),
					IsText: true, Questions: qs}); err != nil {
					b.Fatal(err)
				}
			}
			drainBench(b, s, bc.enriched)
			b.ResetTimer()
			for b.Loop() {
				if !bc.cached {
					s.questionsWith.set(questionCountKey{}, 0)
				}
				if with, _, _, err := s.QuestionStats(ctx); err != nil || with == 0 {
					b.Fatalf("with %d, %v", with, err)
				}
			}
		})
	}
}

// drainBench gives every chunk and question a vector and, when enriched,
// every chunk text one generated question.
func drainBench(b *testing.B, s *Store, enriched bool) {
	ctx := context.Background()
	for {
		pending, err := s.PendingEmbeddings(ctx, 1000)
		if err != nil || len(pending) == 0 {
			break
		}
		vecs := make([][]float32, len(pending))
		for i, p := range pending {
			vecs[i] = []float32{float32(p.Hash[0]), 1}
		}
		if err := s.SaveEmbeddings(ctx, "m1", pending, vecs); err != nil {
			b.Fatal(err)
		}
	}
	for after := ""; enriched; {
		tasks, next, err := s.QuestionTasks(ctx, after, 500)
		if err != nil {
			b.Fatal(err)
		}
		for _, task := range tasks {
			if err := s.SetGeneratedQuestions(ctx, task.Hash, []string{"Generated " + task.Ref + "?"}); err != nil {
				b.Fatal(err)
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	for {
		pending, err := s.PendingQuestions(ctx, 1000)
		if err != nil || len(pending) == 0 {
			return
		}
		vecs := make([][]float32, len(pending))
		for i := range pending {
			vecs[i] = []float32{1, 1}
		}
		if err := s.SaveQuestionVectors(ctx, "m1", pending, vecs); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStore_ItemQuestions_VectorOfAnyChunkRecordsTheItem: the chunk a
// writer's question attaches to depends on every chunk's vector, so a new
// vector for one chunk of an item with questions records all its chunks
// in the outbox, not that chunk alone.
func TestStore_ItemQuestions_VectorOfAnyChunkRecordsTheItem(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	it := writeQ(t, s, "notes:/a.md", "one\n\ntwo\n\nthree\n", "Which number?")
	embedQuestions(t, s, "m1", constVec)
	pending, err := s.PendingEmbeddings(ctx, 10)
	if err != nil || len(pending) != 3 {
		t.Fatalf("pending = %d, %v; want 3 chunks", len(pending), err)
	}
	before, _ := s.OutboxSeq(ctx)
	if err := s.SaveEmbeddings(ctx, "m1", pending[2:], [][]float32{{1, 0}}); err != nil {
		t.Fatal(err)
	}
	cs, _, err := s.Changes(ctx, before, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].ItemID != it.ID || !cs[0].VectorsOnly || cs[0].VectorsFrom != 0 || cs[0].VectorsTo != 3 {
		t.Fatalf("outbox after chunk 2's vector: %+v, want one vectors-only entry for chunks [0, 3)", cs)
	}
}

// TestOpen_IndexesChunkHashesOfAnOlderStore: a store written before the
// chunk hash index existed gets it at Open, so generated questions find the
// chunks they belong to.
func TestOpen_IndexesChunkHashesOfAnOlderStore(t *testing.T) {
	path := newLocation(t)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetIndexing(context.Background(), paragraphChunker{"p1"}, "m1"); err != nil {
		t.Fatal(err)
	}
	writeQ(t, s, "notes:/a.md", "one\n\ntwo\n")
	if err := s.db.Update(ctx, func(tx backend.Tx) error { return tx.DeleteBucket([]byte(bucketChunkHash)) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
	tasks := allTasks(t, s, 10)
	if len(tasks) != 2 {
		t.Fatalf("tasks = %d, want 2", len(tasks))
	}
	if err := s.SetGeneratedQuestions(context.Background(), tasks[0].Hash, []string{"One?"}); err != nil {
		t.Fatal(err)
	}
	if _, asked, _ := s.GeneratedQuestions(context.Background(), tasks[0].Hash); !asked {
		t.Fatal("the questions of a chunk of the older store were ignored")
	}
}
