package session

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"github.com/ctxd/ctxd/index/assemble"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// Recall defaults and bounds.
const (
	// DefaultRecallBudget is the token budget of a recall that sets none.
	DefaultRecallBudget = 2000
	// DefaultRecallDigests and MaxRecallDigests bound the earlier sessions'
	// digests a session's start recalls.
	DefaultRecallDigests = 3
	MaxRecallDigests     = 20
	// DefaultRecallChunks is how many memory chunks a prompt may add.
	DefaultRecallChunks = 5
	// recallScan bounds the earlier sessions looked at for digests.
	recallScan = 50
)

// RecallParams describe what an agent is about to do.
type RecallParams struct {
	Project string // "" derives it from Cwd
	Cwd     string
	// SessionID is the session asking: its own events and digest are not
	// recalled.
	SessionID string
	// Prompt is the user's prompt; "" recalls what a session's start needs.
	Prompt string
	Budget int // tokens; 0 means DefaultRecallBudget
	// Digests is how many earlier sessions' digests a start recalls; 0
	// means DefaultRecallDigests, at most MaxRecallDigests.
	Digests int
	Roots   []string // context roots; empty means the builder's
	// Search carries the chunk search's options for a prompt (EmbedQuery,
	// Within, Mode: BM25 unless set otherwise, Limit: DefaultRecallChunks).
	Search search.Request
}

// Recall assembles what an agent should know for a project within a
// budget. Without a prompt (a session's start): the always-loaded context
// files, the open goals the latest earlier session left, and the digests of
// the last earlier sessions, newest first. With a prompt: the contextual
// files and the memory chunks (notes, files, this project's earlier events
// and digests) that match the prompt by BuildContext's relevance rule, and
// nothing when nothing does. It returns the project recalled.
func (s *Sessions) Recall(ctx context.Context, p RecallParams) (assemble.Result, string, error) {
	project, err := resolveProject(p.Project, p.Cwd)
	if err != nil {
		return assemble.Result{}, "", err
	}
	if p.Digests < 0 || p.Digests > MaxRecallDigests {
		return assemble.Result{}, "", invalid("%d digests; a recall takes 0 to %d", p.Digests, MaxRecallDigests)
	}
	if p.SessionID != "" {
		if err := checkID(p.SessionID); err != nil {
			return assemble.Result{}, "", err
		}
	}
	req := assemble.Request{Budget: cmp.Or(p.Budget, DefaultRecallBudget), Roots: p.Roots}
	if strings.TrimSpace(p.Prompt) == "" {
		if req.Extra, err = s.earlier(ctx, project, p.SessionID, cmp.Or(p.Digests, DefaultRecallDigests)); err != nil {
			return assemble.Result{}, "", err
		}
	} else {
		req.Task, req.SkipAlways, req.MatchChunks = p.Prompt, true, true
		req.Search = p.Search
		if req.Search.Mode == search.Hybrid && req.Search.EmbedQuery == nil {
			req.Search.Mode = search.BM25
		}
		req.Search.Limit = cmp.Or(req.Search.Limit, DefaultRecallChunks)
		if req.Search.Weights == nil {
			// A chunk must hold the prompt's own (stemmed) words to be kept
			// (MatchChunks), so partial-word matches only cost time: this
			// runs before every prompt a host sends.
			req.Search.Weights = map[search.Leg]float64{search.LegSubstring: 0}
		}
		req.Exclude = func(drive, path string) bool {
			if drive != Drive {
				return false
			}
			proj, dir, _, ok := parsePath(path)
			if !ok || proj != project {
				return true // another project's, or not a session's
			}
			_, id, _ := splitDir(dir)
			return id == p.SessionID
		}
		if p.SessionID != "" {
			// The session's own events are left out of the statistics too:
			// the prompt, recorded as the host recalls for it, would
			// otherwise count as a document holding every word of it.
			req.StatsExcept = func(ctx context.Context) (string, error) {
				k, ok, err := s.find(ctx, project, p.SessionID)
				if err != nil || !ok {
					return "", err
				}
				return k.ref().String(), nil
			}
		}
	}
	res, err := s.builder.Build(ctx, req)
	return res, project, err
}

// earlier returns the sections of what earlier sessions of the project
// leave to a new one: the open goals of the latest one's digest, then the
// digests of the last n sessions other than current, newest first.
func (s *Sessions) earlier(ctx context.Context, project, current string, n int) ([]assemble.Section, error) {
	names, err := s.sessionDirs(ctx, project)
	if err != nil {
		return nil, err
	}
	var goals *assemble.Section
	var digests []assemble.Section
	for i, looked := len(names)-1, 0; i >= 0 && looked < recallScan && len(digests) < n; i-- {
		if _, id, _ := splitDir(names[i]); id == current {
			continue
		}
		looked++
		k := sessionKey{project, names[i]}
		it, meta, body, err := s.readDigestItem(ctx, k)
		if errors.Is(err, vfs.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ref := child(k.ref(), digestName).String()
		if len(digests) == 0 && len(meta.OpenGoals) > 0 {
			var b strings.Builder
			for _, g := range meta.OpenGoals {
				b.WriteString("- [ ] " + g + "\n")
			}
			goals = &assemble.Section{Kind: assemble.KindGoals, Ref: ref, Heading: "Open goals of session " + meta.Session, Text: b.String(), Item: it}
		}
		digests = append(digests, assemble.Section{Kind: assemble.KindDigest, Ref: ref, Heading: meta.Title, Text: body, Item: it})
	}
	if goals != nil {
		digests = append([]assemble.Section{*goals}, digests...)
	}
	return digests, nil
}
