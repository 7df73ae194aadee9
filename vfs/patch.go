package vfs

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"time"
)

// CountLines counts newline-terminated lines plus a final unterminated one;
// empty content has 0 lines.
func CountLines(content []byte) int64 {
	n := int64(bytes.Count(content, []byte{'\n'}))
	if len(content) > 0 && content[len(content)-1] != '\n' {
		n++
	}
	return n
}

const patchHint = "patches use 1-based inclusive line numbers of the original content: " +
	"{start, end, content} replaces lines start..end (empty content deletes them), " +
	"{start, end: 0, content} inserts before line start (start may be line count + 1 to append); ranges must not overlap"

func patchError(format string, args ...any) *Error {
	return newError(ErrInvalidPatch, "", patchHint, format, args...)
}

// ApplyPatches applies line patches numbered against the original content.
// Every patch is validated before anything is applied: the list must be
// non-empty, replacements need 1 <= start <= end <= lines, inserts (end 0)
// need 1 <= start <= lines+1 and content, ranges must not overlap, two inserts
// may not share a line, and an insert may not point inside a replaced range.
// Patch content gets a trailing newline; if the original did not end with one,
// the result does not either (unless its last line is empty, which a missing
// final newline cannot express).
func ApplyPatches(content []byte, patches []Patch) ([]byte, error) {
	if len(patches) == 0 {
		return nil, patchError("No patches given.")
	}
	lines := CountLines(content)
	for i, p := range patches {
		switch {
		case p.StartLine < 0 || p.EndLine < 0:
			return nil, patchError("patches[%d]: line numbers must not be negative (start %d, end %d).", i, p.StartLine, p.EndLine)
		case p.EndLine == 0 && (p.StartLine < 1 || p.StartLine > lines+1):
			return nil, patchError("patches[%d]: insert position %d is outside 1..%d (the content has %d lines).", i, p.StartLine, lines+1, lines)
		case p.EndLine == 0 && p.Content == "":
			return nil, patchError("patches[%d]: an insert (end 0) needs content.", i)
		case p.EndLine != 0 && (p.StartLine < 1 || p.StartLine > p.EndLine || p.EndLine > lines):
			return nil, patchError("patches[%d]: line range %d-%d is outside 1..%d or reversed (the content has %d lines).", i, p.StartLine, p.EndLine, lines, lines)
		}
	}
	// Sort by start line, a replacement before inserts at the same line, so
	// every clash shows up against the nearest preceding patch.
	order := make([]int, len(patches))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		pa, pb := patches[a], patches[b]
		if pa.StartLine != pb.StartLine {
			return cmpInt(pa.StartLine, pb.StartLine)
		}
		return cmpInt(min(pb.EndLine, 1), min(pa.EndLine, 1))
	})
	lastEnd, lastRange := int64(0), -1 // end and index of the previous replacement
	lastInsert, lastInsertIdx := int64(0), -1
	for _, i := range order {
		p := patches[i]
		if p.EndLine == 0 {
			if lastInsertIdx >= 0 && lastInsert == p.StartLine {
				return nil, patchError("patches[%d] and patches[%d] both insert before line %d; combine them into one insert.", lastInsertIdx, i, p.StartLine)
			}
			if lastRange >= 0 && p.StartLine <= lastEnd {
				return nil, patchError("patches[%d] inserts before line %d, inside lines %d-%d replaced by patches[%d]; put the new text in that replacement instead.", i, p.StartLine, patches[lastRange].StartLine, lastEnd, lastRange)
			}
			lastInsert, lastInsertIdx = p.StartLine, i
			continue
		}
		if lastRange >= 0 && p.StartLine <= lastEnd {
			return nil, patchError("patches[%d] (lines %d-%d) overlaps patches[%d], which ends at line %d.", i, p.StartLine, p.EndLine, lastRange, lastEnd)
		}
		lastEnd, lastRange = p.EndLine, i
	}

	// Applying in ascending order against the original lines gives exactly
	// what applying bottom-up would, in one pass.
	out := make([]byte, 0, len(content)+patchBytes(patches)+1)
	rest := content
	line := int64(1)                // number of the first line in rest
	copyLines := func(upTo int64) { // copy original lines up to, not including, upTo
		n := lineStart(rest, upTo-line)
		out = appendLine(out, rest[:n])
		rest, line = rest[n:], upTo
	}
	for _, i := range order {
		p := patches[i]
		copyLines(p.StartLine)
		out = appendText(out, p.Content)
		if p.EndLine != 0 {
			n := lineStart(rest, p.EndLine-line+1)
			rest, line = rest[n:], p.EndLine+1
		}
	}
	out = appendLine(out, rest)
	if len(content) > 0 && content[len(content)-1] != '\n' &&
		len(out) > 0 && !bytes.HasSuffix(out, []byte("\n\n")) && !bytes.Equal(out, []byte("\n")) {
		out = out[:len(out)-1]
	}
	return out, nil
}

// appendLine appends original lines, terminating an unterminated last line so
// that later text starts on a new line; ApplyPatches strips it again at the end.
func appendLine(out, lines []byte) []byte {
	if len(lines) == 0 {
		return out
	}
	out = append(out, lines...)
	if lines[len(lines)-1] != '\n' {
		out = append(out, '\n')
	}
	return out
}

// appendText appends patch content, adding a final newline when missing.
func appendText(out []byte, s string) []byte {
	if s == "" {
		return out
	}
	out = append(out, s...)
	if !strings.HasSuffix(s, "\n") {
		out = append(out, '\n')
	}
	return out
}

func patchBytes(patches []Patch) int {
	n := 0
	for _, p := range patches {
		n += len(p.Content) + 1
	}
	return n
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Edit applies patches to a text item. With expectedHash set, the stored
// content must still have that hash. Nothing is written if any patch is invalid.
func (s *Store) Edit(ctx context.Context, ref Ref, patches []Patch, expectedHash string) (EditResult, error) {
	var res EditResult
	limit := s.maxContent
	err := s.update(ctx, func(t *txn) error {
		t.op = OpEdit
		res = EditResult{}
		n, pv, err := t.resolveText(ref)
		if err != nil {
			return err
		}
		r := n.ref()
		it, err := t.item(pv.id)
		if err != nil {
			return err
		}
		if expectedHash != "" && expectedHash != it.ContentHash {
			return changedError(r, expectedHash, it.ContentHash)
		}
		out, err := ApplyPatches(t.content.Get(pv.id), patches)
		if err != nil {
			err.(*Error).Ref = r
			return err
		}
		if int64(len(out)) > limit {
			return tooLarge(r, int64(len(out)), limit)
		}
		res.LinesBefore = it.LineCount
		it.Size, it.ContentHash, it.LineCount, it.UpdatedAt = int64(len(out)), HashContent(out), CountLines(out), t.now
		it.IndexedAt = time.Time{} // the new content needs indexing again
		if w := applyFrontmatter(&it, out, editCallerFields(&it)); w != "" {
			res.Warnings = []string{w}
		}
		res.Item, res.LinesAfter = it, it.LineCount
		return t.putItem(&it, out, n.val, nil)
	})
	return res, err
}
