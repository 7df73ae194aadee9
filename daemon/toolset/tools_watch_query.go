package toolset

import (
	"context"
	"strings"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// The standing-query tools: an agent keeps a query standing (a durable
// subscription) and reads what newly matched it later; an MCP host that
// supports resource subscriptions subscribes to its resource instead.

type watchQueryArgs struct {
	Name     string      `json:"name" jsonschema:"1-64 of A-Za-z0-9._-; calling again with the same name replaces the query and keeps what matched." schema:"minLength=1"`
	Queries  []string    `json:"queries" jsonschema:"What to watch for; an item matching any of them matches; max limits.max_subscription_queries (8), each max limits.max_query_terms (32) words." schema:"minItems=1"`
	Mode     string      `json:"mode,omitempty" jsonschema:"bm25: every word of a query must be there; hybrid: or close in meaning; vector: meaning only." schema:"default=bm25,enum=bm25|hybrid|vector"`
	MinScore float64     `json:"min_score,omitempty" jsonschema:"Least score of a match in (0, 1]; default 1 for words (all of them, weighed by rarity), 0.5 cosine for meaning." schema:"minimum=0,maximum=1"`
	Filter   *filterArgs `json:"filter,omitempty" jsonschema:"Only items the filter selects."`
}

type readSubscriptionArgs struct {
	Name  string `json:"name" jsonschema:"The name given to context_watch_query." schema:"minLength=1"`
	Limit int    `json:"limit,omitempty" jsonschema:"Default 100, max 1000." schema:"minimum=0,maximum=1000"`
	Peek  bool   `json:"peek,omitempty" jsonschema:"Leave what is returned to be read again; by default it is acknowledged."`
}

// subscriptionInfo is a durable subscription as the tools show it.
type subscriptionInfo struct {
	Name        string `json:"name"`
	ResourceURI string `json:"resource_uri"`
	Pending     int64  `json:"pending"`
	Dropped     int64  `json:"dropped,omitempty"`
}

// matchHit is a push as the tools show it.
type matchHit struct {
	searchHit
	Change string `json:"change"` // write, edit, refresh, ingest, ...
	Actor  string `json:"actor,omitempty"`
}

func init() {
	register(Tool{
		Name:  "context_watch_query",
		Title: "Watch for new matches of a query",
		Description: "Keep a query standing: from now on every item written, edited, refreshed or ingested that matches it is kept for you, across restarts, " +
			"until you read it with context_read_subscription (or, in a host with resource subscriptions, as the resource resource_uri, which notifies on each match). " +
			"Use it instead of searching again and again for what a teammate or a refresh may bring. Example: {\"name\":\"deploy-notes\",\"queries\":[\"deploy rollback\"]}.",
		// Read-only as MCP means it: no item changes; what it keeps is the
		// caller's own standing query, which the read scope may hold.
		Annotations: readOnly, Scopes: readScope,
	}, func(ctx context.Context, b Backend, in *watchQueryArgs) (any, error) {
		mode := searchMode(in.Mode)
		if in.Mode == "" {
			mode = ctxdv1.SearchMode_SEARCH_MODE_BM25
		}
		q := &ctxdv1.StandingQuery{Filter: in.Filter.proto(), Mode: mode, MinScore: in.MinScore}
		for _, t := range in.Queries {
			q.Queries = append(q.Queries, &ctxdv1.SearchQuery{Text: t})
		}
		resp, err := b.Subscription.CreateSubscription(ctx, &ctxdv1.CreateSubscriptionRequest{Name: in.Name, Query: q, Replace: true})
		if err != nil {
			return nil, err
		}
		s := resp.GetSubscription()
		return subscriptionInfo{Name: s.GetName(), ResourceURI: s.GetResourceUri(), Pending: s.GetPending(), Dropped: s.GetDropped()}, nil
	})

	register(Tool{
		Name:  "context_read_subscription",
		Title: "Read what newly matched a watched query",
		Description: "Return the items that newly matched a query kept with context_watch_query since the last read, oldest first, each with its best chunk and the change that caused it; " +
			"what is returned is acknowledged unless peek. remaining says how many more wait.",
		Annotations: readOnly, Scopes: readScope, // acknowledging changes no item
	}, func(ctx context.Context, b Backend, in *readSubscriptionArgs) (any, error) {
		resp, err := b.Subscription.ReadSubscription(ctx, &ctxdv1.ReadSubscriptionRequest{Name: in.Name, Limit: int32(in.Limit), Peek: in.Peek})
		if err != nil {
			return nil, err
		}
		return readSubscriptionResult(resp), nil
	})
}

// readSubscriptionResult flattens a ReadSubscriptionResponse.
func readSubscriptionResult(resp *ctxdv1.ReadSubscriptionResponse) any {
	out := struct {
		Matches   []matchHit `json:"matches"`
		Remaining int64      `json:"remaining"`
		Gap       string     `json:"gap,omitempty"`
	}{Matches: []matchHit{}, Remaining: resp.GetRemaining(), Gap: resp.GetGap().GetReason()}
	for _, m := range resp.GetMatches() {
		r := m.GetResult()
		out.Matches = append(out.Matches, matchHit{
			searchHit: searchHit{Ref: r.Ref, Title: r.Title, Heading: r.Heading, Snippet: r.Snippet, Score: r.Score,
				StartLine: r.StartLine, EndLine: r.EndLine, Ranks: toolRanks(r.LegRanks), Queries: r.QueryIndexes},
			Change: strings.ToLower(strings.TrimPrefix(m.GetChange().GetKind().String(), "CHANGE_KIND_")),
			Actor:  m.GetChange().GetActor(),
		})
	}
	return out
}

// ReadSubscriptionText is the JSON text of a durable subscription's pending
// matches, as context_read_subscription returns it (the MCP resource's
// contents).
func ReadSubscriptionText(resp *ctxdv1.ReadSubscriptionResponse) (string, error) {
	b, err := marshal(readSubscriptionResult(resp), "")
	return string(b), err
}
