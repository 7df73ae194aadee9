package session

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// SearchParams is one search over sessions. Its filters are AND-ed, and run
// inside every leg of the search.
type SearchParams struct {
	Query      string
	Project    string   // "" searches every project
	SessionIDs []string // only these sessions (in Project, or any)
	Kinds      []Kind   // only these kinds; KindSummary includes digests
	// After and Before bound the events' times: [After, Before).
	After, Before time.Time
	// Search carries the engine options: Mode, Limit (events, over all
	// sessions), EmbedQuery, CountTokens, Within and the rest. Its Queries,
	// Filter and GroupBy are set here.
	Search search.Request
}

// Hit is one event (or digest) a search found.
type Hit struct {
	Result search.Result
	Event  Event // a digest's Kind is KindSummary, its Text the digest
}

// Group holds the hits of one session, best first.
type Group struct {
	Session Session
	Hits    []Hit
	Score   float64 // the best hit's
}

// Found is what a search over sessions found.
type Found struct {
	Groups     []Group // the session of the best hit first
	Mode       search.Mode
	ModeReason string
	Stale      string // search.Response.Stale
}

// Search finds events and digests with the search engine, each item once
// (its best chunk), and groups them by session.
func (s *Sessions) Search(ctx context.Context, p SearchParams) (Found, error) {
	f := lexical.Filter{Drives: []string{Drive}, After: p.After, Before: p.Before}
	if p.Project != "" {
		if err := checkProject(p.Project); err != nil {
			return Found{}, err
		}
	}
	switch {
	case len(p.SessionIDs) > 0:
		for _, id := range p.SessionIDs {
			if err := checkID(id); err != nil {
				return Found{}, err
			}
			k, ok, err := s.find(ctx, p.Project, id)
			if err != nil {
				return Found{}, err
			}
			if ok {
				f.PathPrefixes = append(f.PathPrefixes, k.ref().String())
			}
		}
		if len(f.PathPrefixes) == 0 {
			return Found{Mode: p.Search.Mode}, nil // none of the sessions exists
		}
	case p.Project != "":
		f.PathPrefixes = []string{Drive + ":/" + p.Project}
	}
	for _, k := range p.Kinds {
		if !k.Valid() {
			return Found{}, invalid("the kind %q is not one of prompt, tool_use, decision, error, note, file_change, summary", k)
		}
		f.AnyTags = append(f.AnyTags, kindTag+string(k))
	}
	if len(f.AnyTags) == 0 {
		f.AnyTags = []string{eventTag, digestTag}
	}
	req := p.Search
	req.Queries = []search.Query{{Text: p.Query}}
	req.Filter, req.GroupBy = f, search.GroupItem
	resp, err := s.engine.Search(ctx, req)
	if err != nil {
		return Found{}, err
	}
	out := Found{Mode: resp.Mode, ModeReason: resp.ModeReason, Stale: resp.Stale}
	pctx, release, err := s.store.Pin(ctx)
	if err != nil {
		return Found{}, err
	}
	defer release()
	at := map[sessionKey]int{} // index of a session's group in out.Groups
	for _, r := range resp.Results {
		project, dir, rest, ok := parsePath(r.Path)
		if !ok {
			continue
		}
		k := sessionKey{project, dir}
		i, seen := at[k]
		if !seen {
			sess, err := s.read(pctx, k)
			if errors.Is(err, vfs.ErrNotFound) {
				continue // deleted since the search
			}
			if err != nil {
				return Found{}, err
			}
			i = len(out.Groups)
			at[k] = i
			out.Groups = append(out.Groups, Group{Session: sess, Score: r.Score})
		}
		ev, err := s.hitEvent(pctx, r, rest)
		if errors.Is(err, vfs.ErrNotFound) {
			continue
		}
		if err != nil {
			return Found{}, err
		}
		out.Groups[i].Hits = append(out.Groups[i].Hits, Hit{Result: r, Event: ev})
	}
	return out, nil
}

// hitEvent reads the event (or digest) a search result is a chunk of.
func (s *Sessions) hitEvent(ctx context.Context, r search.Result, rest string) (Event, error) {
	it, content, err := s.store.ReadRaw(ctx, vfs.Ref{ID: r.ItemID})
	if err != nil {
		return Event{}, err
	}
	if rest == digestName {
		_, body := vfs.SplitFrontmatter(content)
		return Event{Ref: it.Ref(), Time: it.UpdatedAt, Kind: KindSummary, Text: strings.TrimSuffix(string(body), "\n")}, nil
	}
	return decodeEvent(it, content)
}
