package lexical

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/ctxd/ctxd/internal/runes"
)

// MappingVersion identifies the analyzers and field layout of the index.
// Bump it whenever buildMapping changes; Open refuses an index written
// with another version (ErrMappingMismatch) so the caller can rebuild it.
const MappingVersion = "ctxd-lexical-v7"

// Field boosts: the weight of an occurrence in a field, against one in
// the text, in SearchBM25's BM25F (see bm25fQuery), and the heading's
// weight in SearchSubstring. 2 and 2 scored best on the eval's titled
// collection (cranfield, title as the H1 or as the item title).
const (
	TextBoost    = 1.0
	HeadingBoost = 2.0
	TitleBoost   = 2.0
)

// Internal (non-document) keys stored in the Bleve index.
var (
	keyMappingVersion = []byte("ctxd/mapping_version")
	keyAppliedSeq     = []byte("ctxd/applied_seq")
)

// Field names in the Bleve document.
const (
	fieldText      = "text"
	fieldHeading   = "heading"
	fieldTitle     = "title"
	fieldStopWords = "stop_words"
	fieldDrive     = "drive"
	fieldDirs      = "dirs"
	fieldMime      = "mime"
	fieldTags      = "tags"
	fieldTime      = "time"
	fieldLengths   = "lengths"
)

// Sentinel errors.
var (
	// ErrMappingMismatch is returned by Open when the index on disk was
	// built with a different MappingVersion (or scoring model); the caller
	// should delete the directory and rebuild from the store.
	ErrMappingMismatch = errors.New("lexical: index mapping version mismatch")
	// ErrInvalidFilter is returned when a Filter value cannot be used.
	ErrInvalidFilter = errors.New("lexical: invalid filter")
	// ErrInvalidDoc is returned by Apply for a document without an ID.
	ErrInvalidDoc = errors.New("lexical: invalid document")
	// ErrClosed is returned by methods called after Close.
	ErrClosed = errors.New("lexical: index closed")
)

// Doc is one chunk as indexed by both lexical legs.
type Doc struct {
	ID          string   // chunk id (opaque string from the caller)
	Text        string   // chunk text
	Heading     string   // heading breadcrumb, boosted
	Title       string   // item title, boosted
	Description string   // item description, indexed in the title field (boosted like it; see MaxTitleBytes)
	Drive       string   // drive name, keyword
	Path        string   // item path, e.g. "/notes/a/b.md"; every ancestor dir is indexed
	Mime        string   // mime type, keyword
	Tags        []string // item tags, keywords
	// Time is when the item last changed; Filter.After and Before select
	// by it (at millisecond precision). A zero Time is not indexed, so such
	// a document matches no time range.
	Time time.Time
}

// MaxTitleBytes bounds the title field of one document: the item's title
// and description repeat in every chunk of the item, so a long description
// would multiply the index. Text past it is not searched.
const MaxTitleBytes = 1 << 10

// titleField is what the title field indexes: the title and the
// description, cut to MaxTitleBytes at a rune boundary.
func titleField(title, description string) string {
	return runes.Cut(strings.TrimSpace(title+"\n"+description), MaxTitleBytes)
}

// Filter restricts a search. Values are OR-ed within a field and the
// fields are AND-ed; every listed tag must be carried by the item, and at
// least one of AnyTags. A mime type "major/*" matches every subtype. An
// empty Filter matches everything.
//
// PathPrefixes accepts two forms: "/dir" (any drive; combine with Drives to
// scope it) and "drive:/dir" (that drive only). A prefix matches whole path
// segments: "/a" matches "/a" and "/a/x" but not "/ab". A trailing slash is
// ignored and "/" matches every item.
//
// After and Before select documents whose Time is in [After, Before), at
// millisecond precision; a zero bound is open.
type Filter struct {
	Drives       []string
	PathPrefixes []string
	Mimes        []string
	Tags         []string
	AnyTags      []string
	After        time.Time
	Before       time.Time
}

// TimeKey is how a Doc's Time is indexed and compared: Unix milliseconds.
func TimeKey(t time.Time) int64 { return t.UnixMilli() }

// Hit is one search result.
type Hit struct {
	ID    string
	Score float64
}

// Index is a disk-backed Bleve index over chunks. It is safe for
// concurrent use.
type Index struct {
	mu  sync.RWMutex
	idx bleve.Index // nil once closed
	// applyMu serialises Applies: each reads the field length sums and the
	// lengths of the documents it replaces before its batch writes them.
	applyMu sync.Mutex
	vocab   *vocabulary // the words of the text and heading fields, for SearchSubstring
}

// bleveDoc is one document's fields as the index mapping names them (its
// json tags); analyzeDoc builds the Bleve document from it.
type bleveDoc struct {
	Text    string   `json:"text"`
	Heading string   `json:"heading"`
	Title   string   `json:"title"`
	Drive   string   `json:"drive"`
	Dirs    []string `json:"dirs"`
	Mime    string   `json:"mime"`
	Tags    []string `json:"tags"`
	Time    *float64 `json:"time"` // TimeKey; nil when not indexed
	Lengths string   `json:"lengths"`
}

// buildMapping returns the index mapping. Changing it requires bumping
// MappingVersion.
func buildMapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring // Bleve's default is tf-idf.
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false
	im.DefaultAnalyzer = en.AnalyzerName

	text := func(name, analyzer string) *mapping.FieldMapping {
		fm := mapping.NewTextFieldMapping()
		fm.Name = name
		fm.Analyzer = analyzer
		fm.Store = false
		fm.IncludeInAll = false
		fm.IncludeTermVectors = false // match spans come from MatchSpans
		fm.DocValues = false
		return fm
	}
	kw := func() *mapping.FieldMapping {
		fm := mapping.NewKeywordFieldMapping()
		fm.Store = false
		fm.IncludeInAll = false
		fm.IncludeTermVectors = false
		fm.DocValues = false
		return fm
	}

	dm := mapping.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldText, text(fieldText, en.AnalyzerName))
	dm.AddFieldMappingsAt(fieldHeading, text(fieldHeading, en.AnalyzerName))
	dm.AddFieldMappingsAt(fieldTitle, text(fieldTitle, en.AnalyzerName))
	// Filled by analyzeDoc (stopWordStream); the analyzer is never run.
	dm.AddFieldMappingsAt(fieldStopWords, text(fieldStopWords, keyword.Name))
	dm.AddFieldMappingsAt(fieldDrive, kw())
	dm.AddFieldMappingsAt(fieldDirs, kw())
	dm.AddFieldMappingsAt(fieldMime, kw())
	dm.AddFieldMappingsAt(fieldTags, kw())
	tm := mapping.NewNumericFieldMapping()
	tm.Store, tm.IncludeInAll, tm.DocValues = false, false, false
	dm.AddFieldMappingsAt(fieldTime, tm)
	// Stored, not indexed: what Apply subtracts when it replaces or deletes
	// the document.
	lengths := kw()
	lengths.Index, lengths.Store = false, true
	dm.AddFieldMappingsAt(fieldLengths, lengths)
	// No composite _all field: every query names its fields.
	dm.AddSubDocumentMapping("_all", mapping.NewDocumentDisabledMapping())
	im.DefaultMapping = dm
	if err := im.Validate(); err != nil {
		return nil, err
	}
	return im, nil
}

// Open opens the index in dir, creating it if dir holds no index. An index
// built with another MappingVersion is refused with ErrMappingMismatch.
func Open(dir string) (*Index, error) {
	if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err == nil {
		bi, err := bleve.Open(dir)
		if err != nil {
			return nil, fmt.Errorf("open lexical index %s: %w", dir, err)
		}
		if err := checkMapping(bi); err != nil {
			_ = bi.Close()
			return nil, fmt.Errorf("open lexical index %s: %w", dir, err)
		}
		vocab, err := openVocabulary(filepath.Join(dir, vocabularyFile), false)
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("%w: %w", ErrMappingMismatch, err) // an index of this version always has one
		}
		if err != nil {
			_ = bi.Close()
			return nil, fmt.Errorf("open lexical index %s: %w", dir, err)
		}
		return &Index{idx: bi, vocab: vocab}, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("open lexical index %s: %w", dir, err)
	}

	im, err := buildMapping()
	if err != nil {
		return nil, fmt.Errorf("build lexical mapping: %w", err)
	}
	bi, err := bleve.New(dir, im)
	if err != nil {
		return nil, fmt.Errorf("create lexical index %s: %w", dir, err)
	}
	if err := bi.SetInternal(keyMappingVersion, []byte(MappingVersion)); err != nil {
		_ = bi.Close()
		return nil, fmt.Errorf("create lexical index %s: record mapping version: %w", dir, err)
	}
	vocab, err := openVocabulary(filepath.Join(dir, vocabularyFile), true)
	if err != nil {
		_ = bi.Close()
		return nil, fmt.Errorf("create lexical index %s: %w", dir, err)
	}
	return &Index{idx: bi, vocab: vocab}, nil
}

func checkMapping(bi bleve.Index) error {
	v, err := bi.GetInternal(keyMappingVersion)
	if err != nil {
		return fmt.Errorf("read mapping version: %w", err)
	}
	if string(v) != MappingVersion {
		return fmt.Errorf("%w: on disk %q, want %q", ErrMappingMismatch, v, MappingVersion)
	}
	im, ok := bi.Mapping().(*mapping.IndexMappingImpl)
	if !ok || im.ScoringModel != index.BM25Scoring {
		return fmt.Errorf("%w: scoring model is not %s", ErrMappingMismatch, index.BM25Scoring)
	}
	return nil
}

func (x *Index) get() (bleve.Index, func(), error) {
	x.mu.RLock()
	if x.idx == nil {
		x.mu.RUnlock()
		return nil, nil, ErrClosed
	}
	return x.idx, x.mu.RUnlock, nil
}

// Apply indexes upserts (replacing any document with the same ID), then
// removes deletes (so an ID present in both ends up deleted), and records
// seq as the applied sequence, all in one Bleve batch: a reader or a
// restart sees either all of it or none of it. The same batch updates the
// sums of the field lengths (keyFieldLengths) by the lengths it adds and
// removes, so searches need not recount them. Apply returns once the
// batch is persisted (Scorch's default safe batches). seq is stored as
// given; ordering is the caller's business.
func (x *Index) Apply(upserts []Doc, deletes []string, seq uint64) error {
	bi, done, err := x.get()
	if err != nil {
		return err
	}
	defer done()
	x.applyMu.Lock()
	defer x.applyMu.Unlock()

	an, kw := bi.Mapping().AnalyzerNamed(en.AnalyzerName), bi.Mapping().AnalyzerNamed(keyword.Name)
	if an == nil || kw == nil {
		return fmt.Errorf("apply: analyzer %s or %s missing", en.AnalyzerName, keyword.Name)
	}
	analyzed, fresh, err := x.analyzeAll(an, kw, upserts)
	if err != nil {
		return err
	}
	adv, err := bi.Advanced()
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return fmt.Errorf("apply: open reader: %w", err)
	}
	defer r.Close()
	raw, err := r.GetInternal(keyFieldLengths)
	if err != nil {
		return fmt.Errorf("apply: read field lengths: %w", err)
	}
	sums, err := decodeLengthSums(raw)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	// touched holds the lengths of the ids this batch already wrote (nil
	// once deleted): a later op on one replaces that, not what r holds.
	touched := map[string]*lengthSums{}
	drop := func(id string) error {
		if l, ok := touched[id]; ok {
			if l != nil {
				sums.sub(*l)
			}
			return nil
		}
		l, ok, err := storedLengths(r, id)
		if err != nil {
			return fmt.Errorf("apply: lengths of %s: %w", id, err)
		}
		if ok {
			sums.sub(l)
		}
		return nil
	}
	b := bi.NewBatch()
	for i := range upserts {
		id, a := upserts[i].ID, &analyzed[i]
		if err := drop(id); err != nil {
			return err
		}
		sums.add(a.lengths)
		touched[id] = &a.lengths
		if err := b.IndexAdvanced(a.doc); err != nil {
			return fmt.Errorf("apply: index %s: %w", id, err)
		}
	}
	for _, id := range deletes {
		if err := drop(id); err != nil {
			return err
		}
		touched[id] = nil
		b.Delete(id)
	}
	// Before the batch: searches see its documents as soon as Scorch
	// introduces them, and SearchSubstring must know their words by then;
	// and the log must hold them before the batch is persisted. Words of a
	// batch that fails stay, like those of deleted documents.
	if err := x.vocab.add(fresh); err != nil {
		return fmt.Errorf("apply (seq %d): %w", seq, err)
	}
	b.SetInternal(keyFieldLengths, sums.encode())
	var sb [8]byte
	binary.BigEndian.PutUint64(sb[:], seq)
	b.SetInternal(keyAppliedSeq, sb[:])
	if err := bi.Batch(b); err != nil {
		return fmt.Errorf("apply batch (seq %d): %w", seq, err)
	}
	return nil
}

// analyzedDoc is one upsert analysed for the batch.
type analyzedDoc struct {
	doc     *document.Document
	lengths lengthSums
}

// analyzeAll analyses upserts on every core (analysis is most of Apply's
// own work, and the rest of the batch waits for it) and returns them in
// order with the words the vocabulary lacks.
func (x *Index) analyzeAll(an, kw analysis.Analyzer, upserts []Doc) ([]analyzedDoc, []wordTerm, error) {
	out := make([]analyzedDoc, len(upserts))
	workers := min(runtime.GOMAXPROCS(0), (len(upserts)+analyzeShare-1)/analyzeShare)
	fresh := make([][]wordTerm, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var lower []byte
			seen := map[string]bool{} // fresh words of this worker
			newWord := func(written, term []byte) {
				if len(written) > maxTermBytes || utf8.RuneCount(written) < minSubstringRunes {
					return
				}
				lower = appendLower(lower[:0], written)
				if !seen[string(lower)] && !x.vocab.has(lower) {
					seen[string(lower)] = true
					fresh[w] = append(fresh[w], wordTerm{bytes.Clone(lower), bytes.Clone(term)})
				}
			}
			for i := w; i < len(upserts); i += workers {
				d := &upserts[i]
				if d.ID == "" {
					errs[w] = fmt.Errorf("apply: upsert %d: %w: empty id", i, ErrInvalidDoc)
					return
				}
				bd := bleveDoc{
					Text:    d.Text,
					Heading: d.Heading,
					Title:   titleField(d.Title, d.Description),
					Drive:   d.Drive,
					Dirs:    pathTerms(d.Drive, d.Path),
					Mime:    d.Mime,
					Tags:    d.Tags,
				}
				if !d.Time.IsZero() {
					t := float64(TimeKey(d.Time))
					bd.Time = &t
				}
				doc, l := analyzeDoc(an, kw, d.ID, &bd, newWord)
				out[i] = analyzedDoc{doc, l}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return out, slices.Concat(fresh...), nil
}

// analyzeShare is the fewest upserts worth a goroutine of their own.
const analyzeShare = 32

// pathTerms returns the keyword terms for path-prefix filtering: the
// root, every ancestor directory and the path itself, each plain ("/a")
// and drive-qualified ("disk:/a").
func pathTerms(drive, path string) []string {
	if path == "" {
		return nil
	}
	var plain []string
	if strings.HasPrefix(path, "/") {
		plain = append(plain, "/")
	}
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			plain = append(plain, path[:i])
		}
	}
	if p := strings.TrimSuffix(path, "/"); p != "" && (len(plain) == 0 || p != plain[len(plain)-1]) {
		plain = append(plain, p)
	}
	out := make([]string, 0, 2*len(plain))
	out = append(out, plain...)
	if drive != "" {
		for _, p := range plain {
			out = append(out, drive+":"+p)
		}
	}
	return out
}

// AppliedSeq returns the seq recorded by the last Apply that reached this
// index, or 0 for a fresh index.
func (x *Index) AppliedSeq() (uint64, error) {
	bi, done, err := x.get()
	if err != nil {
		return 0, err
	}
	defer done()
	v, err := bi.GetInternal(keyAppliedSeq)
	if err != nil {
		return 0, fmt.Errorf("read applied seq: %w", err)
	}
	if len(v) == 0 {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("read applied seq: bad length %d", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Count returns the number of indexed chunks.
func (x *Index) Count() (uint64, error) {
	bi, done, err := x.get()
	if err != nil {
		return 0, err
	}
	defer done()
	n, err := bi.DocCount()
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return n, nil
}

// Close closes the index. Calling it again is a no-op.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		return nil
	}
	err := errors.Join(x.idx.Close(), x.vocab.close())
	x.idx = nil
	if err != nil {
		return fmt.Errorf("close lexical index: %w", err)
	}
	return nil
}

// SearchBM25 returns the top k chunks for query under BM25F with English
// analysis and stemming over text, heading (boost HeadingBoost) and title
// (boost TitleBoost), k1 BM25K1 and b BM25B; any query word may match, and
// a word repeated in the query counts as often. f is applied inside the
// query, before the top k are chosen. k <= 0 or a query without indexable
// words returns no hits. The search stops with ctx's error once ctx ends.
func (x *Index) SearchBM25(ctx context.Context, q string, f Filter, k int) ([]Hit, error) {
	if k <= 0 || strings.TrimSpace(q) == "" {
		return nil, nil
	}
	// A query that analyses to nothing (stop words, punctuation) must not
	// leave the filter alone in the boolean query: Bleve would then match
	// every filtered document.
	bi, done, err := x.get()
	if err != nil {
		return nil, err
	}
	an := bi.Mapping().AnalyzerNamed(en.AnalyzerName)
	done()
	if an == nil {
		return nil, fmt.Errorf("bm25: analyzer %s missing", en.AnalyzerName)
	}
	ts := an.Analyze([]byte(q))
	if len(ts) == 0 {
		return nil, nil
	}
	bq := &bm25fQuery{terms: make([]string, len(ts))}
	for i, t := range ts {
		bq.terms[i] = string(t.Term)
	}
	return x.search(ctx, "bm25", bq, f, k)
}

// SearchSubstring returns the top k chunks whose text or heading (boost
// HeadingBoost) holds, for every query word of 3 or more characters, a
// word that contains it or has its stem, case-insensitively; it finds
// identifiers and partial words ("useEff" finds "useEffect", "logo" finds
// "logo.png"). Query words are runs of letters, digits and '_'; indexed
// words are the "en" analyzer's tokens as written. A query word stands for
// the terms, in the stemmed fields, of at most MaxSubstringWords indexed
// words containing it (the shortest) and its own stem, and hits are ranked
// by BM25 over those terms. An English stop word stands only for itself,
// in a field of the stop words of text and heading together. A query with
// no word of 3+ characters returns no hits. The search stops with ctx's
// error once ctx ends.
//
// The query word's own stem makes the leg agree with BM25 on inflections:
// "counters" finds "counter" too, instead of voting in fusion only for the
// documents that spell the query's inflection.
func (x *Index) SearchSubstring(ctx context.Context, q string, f Filter, k int) ([]Hit, error) {
	if k <= 0 {
		return nil, nil
	}
	an, err := x.english()
	if err != nil {
		return nil, fmt.Errorf("substring: %w", err)
	}
	legs := [2][]query.Query{} // text, heading: one disjunction per fragment
	for _, frag := range (wordsAnalyzer{}).Analyze([]byte(q)) {
		stems := an.Analyze(frag.Term)
		if len(stems) == 0 {
			// A stop word stands for itself: "the" is in thousands of words,
			// each a long posting list, and meant as a word.
			for i := range legs {
				tq := bleve.NewTermQuery(string(frag.Term))
				tq.SetField(fieldStopWords)
				legs[i] = append(legs[i], tq)
			}
			continue
		}
		terms := x.vocab.termsContaining(frag.Term, MaxSubstringWords)
		for _, st := range stems {
			if !slices.Contains(terms, string(st.Term)) {
				terms = append(terms, string(st.Term))
			}
		}
		for i, field := range [2]string{fieldText, fieldHeading} {
			clause := make([]query.Query, len(terms))
			for j, term := range terms {
				tq := bleve.NewTermQuery(term)
				tq.SetField(field)
				clause[j] = tq
			}
			legs[i] = append(legs[i], bleve.NewDisjunctionQuery(clause...))
		}
	}
	if len(legs[0]) == 0 {
		return nil, nil
	}
	text, heading := bleve.NewConjunctionQuery(legs[0]...), bleve.NewConjunctionQuery(legs[1]...)
	text.SetBoost(TextBoost)
	heading.SetBoost(HeadingBoost)
	return x.search(ctx, "substring", bleve.NewDisjunctionQuery(text, heading), f, k)
}

func (x *Index) search(ctx context.Context, leg string, main query.Query, f Filter, k int) ([]Hit, error) {
	fq, err := filterQuery(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", leg, err)
	}
	var q query.Query = main
	if bq, ok := main.(*bm25fQuery); ok && fq == nil {
		bq.topK = k // the collector keeps the query's own best k
	}
	if fq != nil {
		bq := bleve.NewBooleanQuery()
		bq.AddMust(main)
		bq.AddFilter(fq) // non-scoring, evaluated per candidate before top-k
		q = bq
	}
	req := bleve.NewSearchRequestOptions(q, k, 0, false)
	bi, done, err := x.get()
	if err != nil {
		return nil, err
	}
	// Bleve's collector polls ctx every 1,024 candidates.
	res, err := bi.SearchInContext(ctx, req)
	done()
	if err != nil {
		return nil, fmt.Errorf("%s search: %w", leg, err)
	}
	hits := make([]Hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		hits = append(hits, Hit{ID: h.ID, Score: h.Score})
	}
	// Equal scores are common (duplicated text); order them by id so that
	// rankings do not depend on segment layout. (Asking Bleve to sort by _id
	// would load the id of every candidate, not just of the top k.)
	slices.SortStableFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return hits, nil
}

// filterQuery builds the non-scoring filter for f, or nil if f is empty.
func filterQuery(f Filter) (query.Query, error) {
	var conj []query.Query
	anyOf := func(field string, vals []string) {
		if len(vals) == 0 {
			return
		}
		var d []query.Query
		for _, v := range vals {
			tq := bleve.NewTermQuery(v)
			tq.SetField(field)
			d = append(d, tq)
		}
		conj = append(conj, bleve.NewDisjunctionQuery(d...))
	}
	anyOf(fieldDrive, f.Drives)
	if len(f.Mimes) > 0 {
		// "text/*" matches every subtype.
		var d []query.Query
		for _, m := range f.Mimes {
			if major, ok := strings.CutSuffix(m, "/*"); ok {
				pq := bleve.NewPrefixQuery(major + "/")
				pq.SetField(fieldMime)
				d = append(d, pq)
				continue
			}
			tq := bleve.NewTermQuery(m)
			tq.SetField(fieldMime)
			d = append(d, tq)
		}
		conj = append(conj, bleve.NewDisjunctionQuery(d...))
	}

	prefixes := make([]string, 0, len(f.PathPrefixes))
	for _, p := range f.PathPrefixes {
		t, err := prefixTerm(p)
		if err != nil {
			return nil, err
		}
		prefixes = append(prefixes, t)
	}
	anyOf(fieldDirs, prefixes)

	for _, t := range f.Tags {
		tq := bleve.NewTermQuery(t)
		tq.SetField(fieldTags)
		conj = append(conj, tq)
	}
	anyOf(fieldTags, f.AnyTags)
	if !f.After.IsZero() || !f.Before.IsZero() {
		var lo, hi *float64
		if !f.After.IsZero() {
			v := float64(TimeKey(f.After))
			lo = &v
		}
		if !f.Before.IsZero() {
			v := float64(TimeKey(f.Before))
			hi = &v
		}
		inclusive, exclusive := true, false
		rq := bleve.NewNumericRangeInclusiveQuery(lo, hi, &inclusive, &exclusive)
		rq.SetField(fieldTime)
		conj = append(conj, rq)
	}
	switch len(conj) {
	case 0:
		return nil, nil
	case 1:
		return conj[0], nil
	}
	return bleve.NewConjunctionQuery(conj...), nil
}

// ParsePathPrefix splits a Filter.PathPrefixes entry into its drive ("" for
// any drive) and its directory without a trailing slash ("/" for the root).
func ParsePathPrefix(p string) (drive, dir string, err error) {
	dir = p
	if !strings.HasPrefix(p, "/") {
		i := strings.Index(p, ":")
		if i <= 0 || !strings.HasPrefix(p[i+1:], "/") {
			return "", "", fmt.Errorf("%w: path prefix %q: want \"/dir\" or \"drive:/dir\"", ErrInvalidFilter, p)
		}
		drive, dir = p[:i], p[i+1:]
	}
	if len(dir) > 1 {
		dir = strings.TrimRight(dir, "/")
		if dir == "" {
			dir = "/"
		}
	}
	return drive, dir, nil
}

// Validate reports a Filter value that cannot be used (ErrInvalidFilter).
func (f Filter) Validate() error {
	if !f.After.IsZero() && !f.Before.IsZero() && !f.After.Before(f.Before) {
		return fmt.Errorf("%w: the time range is empty: after %s is not before %s", ErrInvalidFilter, f.After.Format(time.RFC3339Nano), f.Before.Format(time.RFC3339Nano))
	}
	for _, p := range f.PathPrefixes {
		if _, _, err := ParsePathPrefix(p); err != nil {
			return err
		}
	}
	return nil
}

// prefixTerm normalises a PathPrefixes entry to its dirs term.
func prefixTerm(p string) (string, error) {
	drive, dir, err := ParsePathPrefix(p)
	if err != nil || drive == "" {
		return dir, err
	}
	return drive + ":" + dir, nil
}

// Has reports whether a document with id is indexed.
func (x *Index) Has(id string) (bool, error) {
	bi, done, err := x.get()
	if err != nil {
		return false, err
	}
	defer done()
	d, err := bi.Document(id)
	if err != nil {
		return false, fmt.Errorf("lookup %s: %w", id, err)
	}
	return d != nil, nil
}
