package vfs

import (
	"bytes"
	"context"
	"crypto/sha256"
)

// ChunkInfo is one chunk of an item as the inspector shows it.
type ChunkInfo struct {
	ChunkSpan
	StartLine, EndLine int  // 1-based, inclusive lines of the span
	Embedded           bool // the current model's vector exists
	Questions          []QuestionInfo
}

// QuestionInfo is a question and whether its vector exists.
type QuestionInfo struct {
	Text     string
	Embedded bool
}

// ChunkReport describes how the item at ref is cut for search: its chunks
// in order (with their generated questions), and its caller questions,
// each with whether the current model's vector exists. Chunks is empty
// while the item waits for the chunker, and for binary items.
type ChunkReport struct {
	Chunks    []ChunkInfo
	Questions []QuestionInfo
}

// ChunkReport reads the report of the item at ref in one transaction.
func (s *Store) ChunkReport(ctx context.Context, ref Ref) (ChunkReport, error) {
	var out ChunkReport
	err := s.view(ctx, func(t *txn) error {
		out = ChunkReport{}
		n, err := t.resolveItem(ref)
		if err != nil {
			return err
		}
		id := n.pv().id
		content := t.content.Get(id)
		vectors := openVectors(t.vectorBucket())
		for _, c := range t.chunksOf(id) {
			ci := ChunkInfo{ChunkSpan: c, Embedded: vectors.get(c.Hash[:]) != nil}
			if c.End <= len(content) && c.Start < c.End {
				ci.StartLine, ci.EndLine = lineOf(content, c.Start), lineOf(content, c.End-1)
			}
			prefix := generatedPrefix(c.Hash[:])
			cur := t.questions.Cursor()
			for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
				if len(k) > len(prefix) {
					ci.Questions = append(ci.Questions, QuestionInfo{Text: string(v[32:]), Embedded: t.questionVector(v[:32]) != nil})
				}
			}
			out.Chunks = append(out.Chunks, ci)
		}
		for _, q := range t.itemQuestions(id) {
			h := sha256.Sum256([]byte(q))
			out.Questions = append(out.Questions, QuestionInfo{Text: q, Embedded: t.questionVector(h[:]) != nil})
		}
		return nil
	})
	return out, err
}
