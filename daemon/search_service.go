package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/indexer"
	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/index/session"
	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/internal/runes"
	"github.com/ctxd/ctxd/vfs"
)

// searchService answers SearchService calls with the engine.
type searchService struct {
	ctxdv1.UnimplementedSearchServiceServer
	b *backend
}

var (
	modesToProto = map[search.Mode]ctxdv1.SearchMode{
		search.Hybrid: ctxdv1.SearchMode_SEARCH_MODE_HYBRID,
		search.BM25:   ctxdv1.SearchMode_SEARCH_MODE_BM25,
		search.Vector: ctxdv1.SearchMode_SEARCH_MODE_VECTOR,
	}
	legsToProto = map[search.Leg]ctxdv1.SearchLeg{
		search.LegBM25:      ctxdv1.SearchLeg_SEARCH_LEG_BM25,
		search.LegSubstring: ctxdv1.SearchLeg_SEARCH_LEG_SUBSTRING,
		search.LegVector:    ctxdv1.SearchLeg_SEARCH_LEG_VECTOR,
	}
)

// windowBytesPerToken is a generous bound on the bytes of text one token of
// the model's window stands for (English averages 4 to 5): a query cut at
// MaxTokens times it still fills the window unless it is mostly whitespace.
const windowBytesPerToken = 32

func invalidSearch(msg, hint string) error {
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, msg, hint)
}

// searchError gives the engine's request errors their API error types.
func searchError(err error) error {
	if lerr, ok := searchLimitError(err); ok {
		return lerr
	}
	if errors.Is(err, search.ErrMinScore) {
		return invalidSearch(err.Error(), "pass a min_score between 0 and 1 (`ctxd search --min-score`), or 0 to keep every result; see SearchRequest.min_score for the scale of scores in each mode")
	}
	if errors.Is(err, search.ErrRecency) {
		return invalidSearch(err.Error(), "use the default recency or turn it off (SearchRequest.recency)")
	}
	if errors.Is(err, search.ErrPriorWeight) {
		return invalidSearch(err.Error(), "pass importance_weight and usage_weight between 0 and 1 (`ctxd search --importance-weight`, `--usage-weight`), or 0 to leave that prior off")
	}
	if errors.Is(err, search.ErrInvalidQuery) {
		return invalidSearch(err.Error(), "fix the request: see the SearchRequest field docs; 0 means the default for every number")
	}
	return err
}

func (s *searchService) Search(ctx context.Context, req *ctxdv1.SearchRequest) (*ctxdv1.SearchResponse, error) {
	r, err := s.b.searchRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := s.b.engine.Search(ctx, r)
	if err != nil {
		return nil, searchError(err)
	}
	out := &ctxdv1.SearchResponse{
		ModeUsed:   modesToProto[resp.Mode],
		ModeReason: resp.ModeReason,
		TokensUsed: int32(resp.TokensUsed),
		Stale:      resp.Stale != "", StaleReason: resp.Stale,
	}
	if resp.Mode == search.Vector && !vfs.AccessFrom(ctx).Limited() { // the note counts the whole store's chunks
		out.ModeReason = s.b.ix.WithPendingNote(ctx, out.ModeReason)
	}
	if resp.Mode != r.Mode { // fell back to BM25: say so when it is only for now
		if st := s.b.ix.Status(); st.Loading {
			out.ModeReason = "the embedding model is still loading (" + st.Reason + "), so the search ran in BM25 mode; `ctxd status` says when it is available"
		}
	}
	for i, q := range resp.Queries {
		out.Queries = append(out.Queries, &ctxdv1.QueryReport{
			Text: req.GetQueries()[i].GetText(), CorrectedText: q.Corrected, ReducedText: q.Reduced,
			CandidateCount: int32(q.Candidates),
		})
	}
	ids := make([]string, 0, len(resp.Results))
	var fetched []string
	for _, res := range resp.Results {
		pr := searchResultToProto(&res)
		out.Results = append(out.Results, pr)
		ids = append(ids, res.ItemID)
		if ingest.IsURL(res.SourceURL) {
			fetched = append(fetched, res.ItemID)
		}
	}
	s.b.usage.Record(ids)
	s.b.fresh.Notice(fetched)
	return out, nil
}

// searchResultToProto converts one search result.
func searchResultToProto(res *search.Result) *ctxdv1.SearchResult {
	pr := &ctxdv1.SearchResult{
		Ref: vfs.FormatRef(res.Drive, res.Path), ItemId: res.ItemID, ChunkId: res.ChunkID,
		Title: res.Title, Heading: res.Heading, Snippet: res.Snippet,
		Span:      &ctxdv1.ByteSpan{Start: int64(res.Start), End: int64(res.End)},
		StartLine: int64(res.StartLine), EndLine: int64(res.EndLine),
		Score: res.Score, MimeType: res.Mime, TokenCount: int32(res.Tokens),
		LegRanks:    legRanksToProto(res.Ranks),
		Explanation: explanationToProto(res.Explanation),
	}
	for _, qi := range res.QueryIndexes {
		pr.QueryIndexes = append(pr.QueryIndexes, int32(qi))
	}
	for _, m := range res.More {
		pr.MoreChunks = append(pr.MoreChunks, &ctxdv1.ChunkHit{
			ChunkId: m.ChunkID, Heading: m.Heading, Snippet: m.Snippet,
			Span:      &ctxdv1.ByteSpan{Start: int64(m.Start), End: int64(m.End)},
			StartLine: int64(m.StartLine), EndLine: int64(m.EndLine),
			Score: m.Score, LegRanks: legRanksToProto(m.Ranks), TokenCount: int32(m.Tokens),
		})
	}
	return pr
}

// legRanksToProto converts where the legs ranked a result or chunk.
func legRanksToProto(ranks []search.LegRank) []*ctxdv1.LegRank {
	var out []*ctxdv1.LegRank
	for _, lr := range ranks {
		out = append(out, &ctxdv1.LegRank{Leg: legsToProto[lr.Leg], Rank: int32(lr.Rank), Score: lr.Score})
	}
	return out
}

// explanationToProto converts a result's explanation; nil stays nil.
func explanationToProto(x *search.Explanation) *ctxdv1.SearchExplanation {
	if x == nil {
		return nil
	}
	out := &ctxdv1.SearchExplanation{
		RrfK: x.RRFK, Fused: x.Fused, FusedMax: x.FusedMax,
		MatchedTerms: x.Matched, MissingTerms: x.Missing, MatchedQuestion: x.Question,
		QueryIndex: int32(x.Query),
	}
	for _, l := range x.Legs {
		out.Legs = append(out.Legs, &ctxdv1.LegContribution{
			Leg: legsToProto[l.Leg], Rank: int32(l.Rank), Score: l.Score, Weight: l.Weight, Contribution: l.Contribution,
		})
	}
	for _, f := range x.Factors {
		out.Factors = append(out.Factors, &ctxdv1.ScoreFactor{Name: f.Name, Factor: f.Value, Detail: f.Detail})
	}
	return out
}

// searchRequest converts a SearchRequest (for Search, and the chunk search
// of BuildContext) and gives it the embedding model and tokenizer, and the
// caller's access as the bound of what it may find.
func (b *backend) searchRequest(ctx context.Context, req *ctxdv1.SearchRequest) (search.Request, error) {
	// The engine checks values; this only converts.
	r := search.Request{
		Limit:        int(req.GetLimit()),
		TokenBudget:  int(req.GetTokenBudget()),
		SnippetChars: int(req.GetSnippetLength()),
		MaxPerItem:   int(req.GetMaxChunksPerItem()),
		RRFK:         int(req.GetRrfK()),
		MinScore:     req.GetMinScore(),
		Priors:       search.Priors{Importance: req.GetImportanceWeight(), Usage: req.GetUsageWeight()},
		Explain:      req.GetExplain(),
	}
	switch req.GetProximity() {
	case ctxdv1.SearchToggle_SEARCH_TOGGLE_UNSPECIFIED:
		r.Proximity = search.ToggleDefault
	case ctxdv1.SearchToggle_SEARCH_TOGGLE_ON:
		r.Proximity = search.ToggleOn
	case ctxdv1.SearchToggle_SEARCH_TOGGLE_OFF:
		r.Proximity = search.ToggleOff
	default:
		return r, invalidSearch("Unknown proximity toggle.", "use ON or OFF, or leave it unset for the default (`ctxd search --proximity on|off`)")
	}
	switch req.GetRecency() {
	case ctxdv1.SearchToggle_SEARCH_TOGGLE_UNSPECIFIED, ctxdv1.SearchToggle_SEARCH_TOGGLE_ON:
		r.Recency = eventRecency
	case ctxdv1.SearchToggle_SEARCH_TOGGLE_OFF:
	default:
		return r, invalidSearch("Unknown recency toggle.", "use ON or OFF, or leave it unset for the default (`ctxd search --recency on|off`)")
	}
	switch req.GetGroupBy() {
	case ctxdv1.SearchGroupBy_SEARCH_GROUP_BY_UNSPECIFIED, ctxdv1.SearchGroupBy_SEARCH_GROUP_BY_CHUNK:
		r.GroupBy = search.GroupChunk
	case ctxdv1.SearchGroupBy_SEARCH_GROUP_BY_ITEM:
		r.GroupBy = search.GroupItem
	default:
		return r, invalidSearch("Unknown group_by.", "use CHUNK or ITEM (`ctxd search --items`)")
	}
	switch req.GetMode() {
	case ctxdv1.SearchMode_SEARCH_MODE_UNSPECIFIED, ctxdv1.SearchMode_SEARCH_MODE_HYBRID:
		r.Mode = search.Hybrid
	case ctxdv1.SearchMode_SEARCH_MODE_BM25:
		r.Mode = search.BM25
	case ctxdv1.SearchMode_SEARCH_MODE_VECTOR:
		r.Mode = search.Vector
	default:
		return r, invalidSearch("Unknown search mode.", "use HYBRID, BM25 or VECTOR")
	}
	for _, q := range req.GetQueries() {
		r.Queries = append(r.Queries, search.Query{Text: q.GetText(), Vector: q.GetVector()})
	}
	r.Filter = filterFromProto(req.GetFilter())
	if a := vfs.AccessFrom(ctx); a.Limited() {
		r.Within = a.Prefixes()
	}
	for _, lw := range req.GetLegWeights() {
		var leg search.Leg
		switch lw.GetLeg() {
		case ctxdv1.SearchLeg_SEARCH_LEG_BM25:
			leg = search.LegBM25
		case ctxdv1.SearchLeg_SEARCH_LEG_SUBSTRING:
			leg = search.LegSubstring
		case ctxdv1.SearchLeg_SEARCH_LEG_VECTOR:
			leg = search.LegVector
		default:
			return r, invalidSearch("A leg weight names no leg.", "set leg to BM25, SUBSTRING or VECTOR")
		}
		if r.Weights == nil {
			r.Weights = map[search.Leg]float64{}
		}
		r.Weights[leg] = lw.GetWeight()
	}
	if w := b.ix.Available(); w != nil {
		// The model reads only its window: a pasted page is cut first so that
		// tokenising it costs no more than the window does.
		window := w.Spec().MaxTokens * windowBytesPerToken
		r.EmbedQuery = func(ctx context.Context, text string) ([]float32, error) {
			v, err := w.EmbedAt(ctx, []string{runes.Cut(text, window)}, embed.Query)
			if err != nil {
				return nil, err
			}
			return v[0], nil
		}
	}
	if tok := b.ix.Tokenizer(); tok != nil {
		r.CountTokens = tok.Count
	}
	return r, nil
}

// eventRecency ages session events (SearchRequest.recency): a week's
// half-life, as the events of an agent's work keep their use for days, not
// months; a floor of 0.5, so a months-old event that matches clearly better
// (in more legs, or far higher) still outranks a fresh weak one, and one
// that matches as well does not.
var eventRecency = search.Recency{HalfLife: 7 * 24 * time.Hour, Floor: 0.5, Applies: session.IsEvent}

// filterFromProto converts a SearchFilter; nil is no filter.
func filterFromProto(f *ctxdv1.SearchFilter) lexical.Filter {
	if f == nil {
		return lexical.Filter{}
	}
	return lexical.Filter{Drives: f.GetDrives(), PathPrefixes: f.GetPathPrefixes(), Mimes: f.GetMimeTypes(), Tags: f.GetTags()}
}

// similarTextMime is how a FindSimilar text is chunked: agents write their
// memories as markdown.
const similarTextMime = "text/markdown"

// FindSimilar compares the chunks of a stored item, or of a text chunked
// and embedded the way a written item would be, with every other item's.
func (s *searchService) FindSimilar(ctx context.Context, req *ctxdv1.FindSimilarRequest) (*ctxdv1.FindSimilarResponse, error) {
	r := search.SimilarRequest{Threshold: req.GetThreshold(), Limit: int(req.GetLimit()), Filter: filterFromProto(req.GetFilter())}
	if a := vfs.AccessFrom(ctx); a.Limited() {
		r.Within = a.Prefixes()
	}
	switch t := req.GetTarget().(type) {
	case *ctxdv1.FindSimilarRequest_Ref:
		ref, err := vfs.ParseRef(t.Ref)
		if err != nil {
			return nil, err
		}
		info, err := s.b.store.Info(ctx, ref)
		if err != nil {
			return nil, err
		}
		if info.Item.IsDir {
			return nil, apiError(ctxdv1.ErrorType_ERROR_TYPE_IS_DIRECTORY, t.Ref+" is a directory, not an item.", "pass an item ref")
		}
		r.ItemID = info.Item.ID
	case *ctxdv1.FindSimilarRequest_Text:
		if n, l := len(t.Text), s.b.limits.MaxSimilarTextBytes; n > l {
			return nil, overLimit("max_similar_text_bytes", fmt.Sprintf("The text is %d bytes; at most %d are compared.", n, l))
		}
		if strings.TrimSpace(t.Text) == "" {
			return nil, invalidSearch("The text is empty.", "pass the text to compare (`ctxd similar --text`), or a ref")
		}
		var err error
		if r.Vectors, err = s.b.ix.EmbedText(ctx, []byte(t.Text), similarTextMime, "", "", search.MaxSimilarChunks); err != nil {
			return nil, similarError(err)
		}
	default:
		return nil, invalidSearch("FindSimilar needs a ref or a text.", "set ref to a stored item (`ctxd similar REF`) or text (`ctxd similar --text`)")
	}
	resp, err := s.b.engine.FindSimilar(ctx, r)
	if err != nil {
		return nil, similarError(err)
	}
	out := &ctxdv1.FindSimilarResponse{TargetChunks: int32(resp.TargetChunks), Stale: resp.Stale != "", StaleReason: resp.Stale}
	for _, it := range resp.Items {
		out.Items = append(out.Items, &ctxdv1.SimilarItem{
			Ref: vfs.FormatRef(it.Drive, it.Path), ItemId: it.ItemID, Title: it.Title,
			Similarity: it.Similarity, ChunkId: it.ChunkID, Snippet: it.Snippet, Coverage: it.Coverage,
		})
	}
	return out, nil
}

// embeddingUnavailableHint is what to do while no embedding model runs.
const embeddingUnavailableHint = "Install the model and ONNX Runtime (make setup-run), check `ctxd status`, then retry."

// similarError gives FindSimilar's errors (and those of embedding its
// text) their API error types.
func similarError(err error) error {
	switch {
	case errors.Is(err, indexer.ErrUnavailable), errors.Is(err, search.ErrNoModel):
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, "FindSimilar compares embeddings, and "+err.Error()+".", embeddingUnavailableHint)
	case errors.Is(err, search.ErrNotEmbedded):
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, err.Error()+".",
			"Retry once `ctxd status` shows no chunks pending embedding (an item is embedded shortly after it is written), or compare its text (`ctxd similar --text`).")
	case errors.Is(err, search.ErrNoChunks):
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_NO_TEXT_CONTENT, err.Error()+".", "compare an item with text content, or pass a text")
	case errors.Is(err, search.ErrThreshold):
		return invalidSearch(err.Error()+".", "pass a threshold between 0 and 1 (`ctxd similar --threshold`), or 0 for the default")
	case errors.Is(err, search.ErrTooManyChunks):
		return invalidSearch(err.Error()+".", fmt.Sprintf("compare a part of it of at most %d chunks (a few hundred KiB): pass that text (`ctxd similar --text`)", search.MaxSimilarChunks))
	}
	var le *search.LimitError
	if errors.As(err, &le) && le.Limit == search.LimitResults {
		return limitError(searchLimitKeys[le.Limit], le.Error(), "ask for fewer items (limit, `ctxd similar --limit`)")
	}
	return searchError(err)
}
