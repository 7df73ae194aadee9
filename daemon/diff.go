package daemon

import (
	"context"
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/vfs"
)

const (
	defaultDiffContext = 3
	maxDiffContext     = 100
)

// diffSide is one side of a Diff: a revision's label and text.
type diffSide struct {
	rev    int64
	label  string // "drive:/path@rev", or "/dev/null" for no content
	text   string
	binary bool
}

// Diff compares two revisions line by line. The diff itself is
// go-difflib's (a port of Python's difflib): a well-kept sequence matcher
// that writes unified hunks; the daemon only picks the two texts, counts
// and cuts.
func (s *vfsService) Diff(ctx context.Context, req *ctxdv1.DiffRequest) (*ctxdv1.DiffResponse, error) {
	ref, err := vfs.ParseRef(req.GetRef())
	if err != nil {
		return nil, err
	}
	ctxLines := int(req.GetContextLines())
	switch {
	case ctxLines < 0 || ctxLines > maxDiffContext:
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT,
			fmt.Sprintf("context_lines %d is outside 0..%d", ctxLines, maxDiffContext),
			fmt.Sprintf("Pass 0 (3 lines) up to %d (`ctxd diff --context`); read the revision for the whole text (`ctxd read REF --rev N`).", maxDiffContext))
	case ctxLines == 0:
		ctxLines = defaultDiffContext
	}
	if req.GetFromRev() < 0 || req.GetToRev() < 0 {
		return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, "revisions are numbered from 1",
			"Pass revision numbers as history lists them (`ctxd history REF`), or 0 for the defaults.")
	}
	to, err := s.diffTo(ctx, ref, req.GetToRev())
	if err != nil {
		return nil, err
	}
	from, err := s.diffFrom(ctx, ref, req.GetFromRev(), to.rev)
	if err != nil {
		return nil, err
	}
	resp := &ctxdv1.DiffResponse{FromRev: from.rev, ToRev: req.GetToRev()}
	if from.binary || to.binary {
		resp.Binary = true
		return resp, nil
	}
	if req.GetToRev() == 0 {
		to.label = to.label[:strings.LastIndexByte(to.label, '@')+1] + "current"
	}
	resp.Unified, resp.Added, resp.Removed, resp.Truncated, err = unifiedDiff(from, to, ctxLines, s.b.limits.MaxDiffLines)
	return resp, err
}

// diffTo reads the newer side: revision rev, or the latest when rev is 0
// (the current content; nothing for a deleted item).
func (s *vfsService) diffTo(ctx context.Context, ref vfs.Ref, rev int64) (diffSide, error) {
	if rev == 0 {
		revs, err := s.b.store.History(ctx, ref, 1, 0)
		if err != nil {
			return diffSide{}, err
		}
		if len(revs) == 0 {
			return diffSide{}, apiError(ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND, fmt.Sprintf("%s has no revision you may read", ref),
				"Call history to list the revisions (`ctxd history REF`).")
		}
		rev = revs[0].Rev
	}
	return s.diffSide(ctx, ref, rev)
}

// diffFrom reads the older side: revision rev, or when rev is 0 the one
// before toRev (nothing when toRev is the first kept).
func (s *vfsService) diffFrom(ctx context.Context, ref vfs.Ref, rev, toRev int64) (diffSide, error) {
	if rev == 0 {
		revs, err := s.b.store.History(ctx, ref, 1, toRev)
		if err != nil {
			return diffSide{}, err
		}
		if len(revs) == 0 {
			return diffSide{label: "/dev/null"}, nil
		}
		rev = revs[0].Rev
	}
	return s.diffSide(ctx, ref, rev)
}

func (s *vfsService) diffSide(ctx context.Context, ref vfs.Ref, rev int64) (diffSide, error) {
	r, content, err := s.b.store.ReadRevision(ctx, ref, rev)
	if err != nil {
		return diffSide{}, err
	}
	side := diffSide{rev: r.Rev, label: fmt.Sprintf("%s@%d", r.Ref, r.Rev)}
	switch {
	case r.Deleted: // the item no longer exists at this revision
	case !r.Item.IsText && len(content) > 0:
		side.binary = true
	default:
		side.text = string(content)
	}
	return side, nil
}

// unifiedDiff writes the unified diff of from and to with ctxLines of
// context, cut after maxLines lines; added and removed count every line.
func unifiedDiff(from, to diffSide, ctxLines, maxLines int) (unified string, added, removed int32, truncated bool, err error) {
	if from.text == to.text {
		return "", 0, 0, false, nil
	}
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: diffLines(from.text), B: diffLines(to.text),
		FromFile: from.label, ToFile: to.label, Context: ctxLines,
	})
	if err != nil {
		return "", 0, 0, false, fmt.Errorf("diff: %w", err)
	}
	var b strings.Builder
	lines := strings.SplitAfter(out, "\n")
	for i, line := range lines {
		if i >= 2 { // past the --- and +++ headers
			switch {
			case strings.HasPrefix(line, "+"):
				added++
			case strings.HasPrefix(line, "-"):
				removed++
			}
		}
		if i < maxLines {
			b.WriteString(line)
		} else if line != "" {
			truncated = true
		}
	}
	return b.String(), added, removed, truncated, nil
}

// noNewline marks a last line without a newline, as diff and git do.
const noNewline = "\n\\ No newline at end of file\n"

// diffLines splits text into lines that each end in a newline: none for
// empty text, and a last line without one carries the noNewline marker, so
// that it differs from the same line with one (difflib.SplitLines would add
// an empty last line instead).
func diffLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if last := lines[len(lines)-1]; last == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] = last + noNewline
	}
	return lines
}
