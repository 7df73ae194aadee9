package assemble

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/index/tokenize"
	"github.com/ctxd/ctxd/vfs"
)

// Options configure a Builder.
type Options struct {
	// Tokenizer returns the embedding model's tokenizer, or nil while none
	// is loaded (indexer.Indexer.Tokenizer); then, or when Tokenizer is
	// nil, tokens are estimated at one per 4 bytes and Result says so.
	Tokenizer func() *tokenize.Tokenizer
	// Limits are the search engine's limits. Build uses MaxTokenBudget for
	// the budget, MaxQueryBytes for the task, MaxFilterValues for the roots
	// and MaxLimit for the chunks it asks for; zero fields take
	// search.DefaultLimits.
	Limits search.Limits
	// Roots are the context roots of a request that names none; empty
	// means vfs.DefaultContextRoots.
	Roots []string
}

// Builder assembles the context of a task from a store's context files and
// its search engine. It is safe for concurrent use.
type Builder struct {
	store  *vfs.Store
	engine *search.Engine
	opts   Options
}

// NewBuilder returns a Builder over store and engine.
func NewBuilder(store *vfs.Store, engine *search.Engine, opts Options) *Builder {
	opts.Limits = withDefaults(opts.Limits)
	if len(opts.Roots) == 0 {
		opts.Roots = vfs.DefaultContextRoots
	}
	return &Builder{store: store, engine: engine, opts: opts}
}

// wellKnown orders the always files Init creates before any other.
var wellKnown = map[string]int{"soul.md": 0, "beliefs.md": 1, "goals.md": 2, "capabilities.md": 3}

// file is one context file read from the store.
type file struct {
	item vfs.Item
	body string
}

// Build assembles the context of req.Task within req.Budget tokens of the
// rendered Markdown, group headers included. It fills the budget in order:
// every always file under the roots (soul, beliefs, goals, capabilities,
// then by ref), the contextual files the task matches (by BM25 score, see
// the package doc), then the chunk search's results (best first, without
// chunks of context files: those are included whole or not at all, by
// their loading rule). A section that does not fit is
// left out whole and listed in Result.Omitted with the tokens it needed,
// and later, smaller ones are still tried: nothing is cut. A request over
// the Limits is refused with a *LimitError; search errors (a bad filter,
// a limit over the engine's) come back as the engine returns them.
func (b *Builder) Build(ctx context.Context, req Request) (Result, error) {
	if err := check(req, b.opts.Limits); err != nil {
		return Result{}, err
	}
	res := Result{Budget: cmp.Or(req.Budget, DefaultBudget)}
	count := estimateTokens
	if tok := b.tokenizer(); tok != nil {
		count = tok.Count
	} else {
		res.Warnings = append(res.Warnings, "no embedding model tokenizer is loaded, so tokens are estimated at one per 4 bytes of text and may differ from the model's count; leave room in the budget")
	}
	roots := req.Roots
	if len(roots) == 0 {
		roots = b.opts.Roots
	}
	files, warnings, err := b.contextFiles(ctx, roots)
	if err != nil {
		return Result{}, err
	}
	res.Warnings = append(res.Warnings, warnings...)
	a := assembler{res: &res, count: count, whole: map[string]bool{}, context: map[string]bool{}}
	for _, f := range files {
		a.context[f.item.ID] = true
	}

	var always, contextual []file
	for _, f := range files {
		switch {
		case f.item.Loading == vfs.LoadingAlways:
			always = append(always, f)
		case f.item.Loading == vfs.LoadingContextual:
			contextual = append(contextual, f)
		}
	}
	slices.SortFunc(always, func(x, y file) int {
		return cmp.Or(cmp.Compare(rankOf(x), rankOf(y)), strings.Compare(x.item.Ref(), y.item.Ref()))
	})
	// The search runs first: a long task is matched against the
	// contextual files by the key terms it reduced the task to.
	var chunks []Section
	match := req.Task
	if strings.TrimSpace(req.Task) != "" {
		if chunks, match, err = b.searchChunks(ctx, &a, req); err != nil {
			return Result{}, err
		}
	}
	if !req.SkipAlways {
		for _, f := range always {
			a.addFile(Section{Kind: KindAlways, Ref: f.item.Ref(), Heading: f.item.Title, Text: f.body, Item: f.item})
		}
	}
	for _, s := range req.Extra {
		a.add(s)
	}
	if len(contextual) > 0 || req.MatchChunks && len(chunks) > 0 {
		w, err := b.weigh(ctx, &a, match, req.MatchChunks, req.StatsExcept)
		if err != nil {
			return Result{}, err
		}
		if err := addContextual(ctx, &a, w, contextual); err != nil {
			return Result{}, err
		}
		if req.MatchChunks {
			if chunks, err = matchingChunks(ctx, &a, w, chunks); err != nil {
				return Result{}, err
			}
		}
	}
	for _, s := range chunks {
		switch {
		case a.whole[s.Item.ID]:
			a.omit(KindChunk, s.Ref, s.Heading, ReasonWholeFile+": the chunk's file is already in the context", a.count(render(s)))
		case a.context[s.Item.ID]:
			a.omit(KindChunk, s.Ref, s.Heading, ReasonContextFile+": the chunk's file is a context file left out above, and a context file is included whole or not at all", a.count(render(s)))
		default:
			a.add(s)
		}
	}
	res.Markdown = strings.TrimRight(a.md.String(), "\n") + "\n"
	if len(res.Sections) == 0 {
		res.Markdown = ""
	}
	return res, nil
}

func rankOf(f file) int {
	if r, ok := wellKnown[path.Base(f.item.Path)]; ok {
		return r
	}
	return len(wellKnown)
}

func (b *Builder) tokenizer() *tokenize.Tokenizer {
	if b.opts.Tokenizer == nil {
		return nil
	}
	return b.opts.Tokenizer()
}

// estimateTokens is the token count without a model: one per 4 bytes, as
// the search engine estimates it.
func estimateTokens(s string) int { return (len(s) + 3) / 4 }

// contextFiles reads every item with loading set under the roots, each
// once, from one snapshot of the store.
func (b *Builder) contextFiles(ctx context.Context, roots []string) ([]file, []string, error) {
	pctx, release, err := b.store.Pin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	var files []file
	var warnings []string
	seen := map[string]bool{}
	for _, root := range roots {
		dir, err := rootRef(root)
		if err != nil {
			return nil, nil, err
		}
		found := 0
		for page := ""; ; {
			entries, next, err := b.store.List(pctx, dir, true, 0, page)
			if errors.Is(err, vfs.ErrNotFound) {
				break
			}
			if err != nil {
				return nil, nil, fmt.Errorf("context root %s: %w", root, err)
			}
			for _, e := range entries {
				if e.Item == nil || e.Item.IsDir || e.Item.Loading == "" {
					continue
				}
				found++
				if seen[e.Item.ID] {
					continue
				}
				seen[e.Item.ID] = true
				// Only text items have frontmatter, so loading is set on text only.
				_, content, err := b.store.ReadRaw(pctx, vfs.Ref{ID: e.Item.ID})
				if err != nil {
					return nil, nil, fmt.Errorf("read context file %s: %w", e.Item.Ref(), err)
				}
				files = append(files, file{item: *e.Item, body: string(content[min(e.Item.FrontmatterLen, int64(len(content))):])})
			}
			if next == "" {
				break
			}
			page = next
		}
		if a := vfs.AccessFrom(ctx); found == 0 && !a.Allows(dir.Drive, dir.Path) {
			warnings = append(warnings, fmt.Sprintf("the context root %s is not wholly within what this token may read (%s), and no context files were found in what it may", dir, a))
		} else if found == 0 {
			warnings = append(warnings, fmt.Sprintf("the context root %s holds no context files (text items whose frontmatter sets loading: always or contextual); `ctxd init` creates soul.md, beliefs.md, goals.md and capabilities.md there", dir))
		}
	}
	return files, warnings, nil
}

// weights are the task's analysed terms and the store's statistics of
// them, which decide what matches the task (see the package doc).
type weights struct {
	an analysis.Analyzer
	q  []queryTerm
	st *lexical.TermStats // nil while the index cannot say: the documents ranked weigh the terms
	// unseen counts the task's words nothing holds in its weight (a
	// prompt's, with Request.MatchChunks: see rank).
	unseen bool
}

// weigh analyses task and reads the store's statistics of its terms
// (Engine.TermStats), less the chunks under the prefix except names; while
// the index cannot give them it warns that the documents ranked weigh the
// terms themselves.
func (b *Builder) weigh(ctx context.Context, a *assembler, task string, chunks bool, except func(context.Context) (string, error)) (weights, error) {
	an, err := analyzer()
	if err != nil {
		return weights{}, err
	}
	w := weights{an: an, q: analyzeTerms(an, task), unseen: chunks}
	if len(w.q) == 0 {
		return w, nil
	}
	terms := make([]string, len(w.q))
	for i, qt := range w.q {
		terms[i] = qt.term
	}
	prefix := ""
	if except != nil {
		if prefix, err = except(ctx); err != nil {
			return weights{}, err
		}
	}
	stats, err := b.engine.TermStats(ctx, terms, prefix)
	why := ""
	switch {
	case ctx.Err() != nil:
		return weights{}, ctx.Err()
	case err != nil:
		why = err.Error()
	case stats.Docs == 0:
		why = "it holds no chunks yet"
	default:
		w.st = &stats
	}
	if why != "" {
		what := "contextual files"
		if chunks {
			what = "contextual files and chunks"
		}
		a.res.Warnings = append(a.res.Warnings, "the "+what+" were weighed by their own words, not the store's (search index: "+why+"), so a word common in the store but rare among them can make one match")
	}
	return w, nil
}

// addContextual adds the contextual files the task matches substantively
// (match.relevant), best first, and lists the others.
func addContextual(ctx context.Context, a *assembler, w weights, files []file) error {
	if len(files) == 0 {
		return nil
	}
	docs := make([]doc, len(files))
	for i, f := range files {
		docs[i] = newDoc(w.an, f.item.Title, f.item.Description, f.body)
	}
	ms, total, err := rank(ctx, w.q, docs, w.st, w.unseen)
	if err != nil {
		return err
	}
	for _, i := range byScore(ms, func(i int) string { return files[i].item.Ref() }) {
		f, m := files[i], ms[i]
		s := Section{Kind: KindContextual, Ref: f.item.Ref(), Heading: f.item.Title, Text: f.body, Item: f.item,
			Score: m.score, MatchedTerms: m.terms}
		if why := m.miss(total, "title, description or body"); why != "" {
			a.omit(KindContextual, s.Ref, "", why, a.count(render(s)))
			continue
		}
		a.addFile(s)
	}
	return nil
}

// matchingChunks returns the chunks the task matches as a contextual file
// must (Request.MatchChunks), in their search order, and lists the others.
func matchingChunks(ctx context.Context, a *assembler, w weights, chunks []Section) ([]Section, error) {
	docs := make([]doc, len(chunks))
	for i, c := range chunks {
		docs[i] = newDoc(w.an, c.Item.Title, c.Item.Description, c.Heading, c.Text)
	}
	ms, total, err := rank(ctx, w.q, docs, w.st, w.unseen)
	if err != nil {
		return nil, err
	}
	var out []Section
	for i, c := range chunks {
		if why := ms[i].miss(total, "title, description, heading or text"); why != "" {
			a.omit(KindChunk, c.Ref, c.Heading, why, a.count(render(c)))
			continue
		}
		c.MatchedTerms = ms[i].terms
		out = append(out, c)
	}
	return out, nil
}

// searchChunks searches for the task and returns its first limit chunks of
// items other than context files, with the chunks of context files ranked
// among them, best first; and the text the contextual files are matched
// with: the key terms the search reduced a long task to, else the task.
func (b *Builder) searchChunks(ctx context.Context, a *assembler, req Request) ([]Section, string, error) {
	sr := req.Search
	sr.Queries = []search.Query{{Text: req.Task}}
	sr.TokenBudget, sr.CountTokens = 0, nil
	sr.SnippetChars = 1 // Build reads whole chunks; the snippet is unused
	limit := cmp.Or(sr.Limit, search.DefaultLimit)
	// Ask for enough that skipping the chunks of context files (at most
	// MaxPerItem each) still leaves limit chunks.
	sr.Limit = limit
	if extra := cmp.Or(sr.MaxPerItem, search.DefaultMaxPerItem) * len(a.context); limit > 0 && limit <= b.opts.Limits.MaxLimit {
		if req.Exclude != nil {
			extra += 2 * limit // the results excluded take places too
		}
		sr.Limit = min(limit+extra, b.opts.Limits.MaxLimit)
	}
	resp, err := b.engine.Search(ctx, sr)
	if err != nil {
		return nil, "", err
	}
	if resp.ModeReason != "" {
		a.res.Warnings = append(a.res.Warnings, "chunk search: "+resp.ModeReason)
	}
	a.res.Stale = resp.Stale
	reduced := resp.Queries[0].Reduced
	if reduced != "" {
		a.res.Warnings = append(a.res.Warnings, "the task is long, so the search and the contextual files used its most informative words only: "+reduced)
	}
	// The first limit results of other items, and the ones of context files
	// ranked among them, which are listed as left out.
	var refs []vfs.ChunkRef
	var hits []search.Result
	taken := 0
	for _, r := range resp.Results {
		if taken == limit {
			break
		}
		if req.Exclude != nil && req.Exclude(r.Drive, r.Path) {
			continue
		}
		if !a.context[r.ItemID] {
			taken++
		}
		item, i, ok := search.ParseChunkID(r.ChunkID)
		if !ok {
			return nil, "", fmt.Errorf("chunk id %q from the search engine", r.ChunkID)
		}
		refs, hits = append(refs, vfs.ChunkRef{ItemID: item, Index: i}), append(hits, r)
	}
	texts, err := b.store.ReadChunks(ctx, refs)
	if err != nil {
		return nil, "", err
	}
	var out []Section
	for i, t := range texts {
		if t.Found { // else deleted since the search found it
			out = append(out, Section{Kind: KindChunk, Ref: t.Item.Ref(), Heading: t.Heading, Text: t.Text, Score: hits[i].Score,
				Item: t.Item, StartLine: t.StartLine, EndLine: t.EndLine})
		}
	}
	return out, cmp.Or(reduced, req.Task), nil
}

// assembler fills the budget section by section.
type assembler struct {
	res     *Result
	count   func(string) int
	md      strings.Builder
	started map[Kind]bool
	whole   map[string]bool // ids of context files included whole
	context map[string]bool // ids of every context file of the request
}

// addFile adds a file section and records its item as included whole.
func (a *assembler) addFile(s Section) {
	if strings.TrimSpace(s.Text) == "" {
		a.omit(s.Kind, s.Ref, "", ReasonEmpty+": the file has no body after its frontmatter", 0)
		return
	}
	if a.add(s) {
		a.whole[s.Item.ID] = true
	}
}

// add renders s and adds it if it fits in what is left of the budget,
// with its group's header when it is the group's first section; else it
// lists it as omitted. It reports whether s was added.
func (a *assembler) add(s Section) bool {
	text := render(s)
	s.Tokens = a.count(text)
	cost := s.Tokens
	header := ""
	if !a.started[s.Kind] {
		header = groupHeaders[s.Kind]
		cost += a.count(header)
	}
	if left := a.res.Budget - a.res.TokensUsed; cost > left {
		a.omit(s.Kind, s.Ref, chunkHeading(s), fmt.Sprintf("%s: needs %d tokens, %d of %d left", ReasonBudget, cost, left, a.res.Budget), s.Tokens)
		return false
	}
	if a.started == nil {
		a.started = map[Kind]bool{}
	}
	a.started[s.Kind] = true
	a.md.WriteString(header)
	a.md.WriteString(text)
	a.res.TokensUsed += cost
	a.res.Sections = append(a.res.Sections, s)
	return true
}

func (a *assembler) omit(k Kind, ref, heading, reason string, tokens int) {
	a.res.Omitted = append(a.res.Omitted, Omission{Kind: k, Ref: ref, Heading: heading, Reason: reason, Tokens: tokens})
}

func chunkHeading(s Section) string {
	if s.Kind == KindChunk {
		return s.Heading
	}
	return ""
}
