package lexical

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// analyzerWords is the registered name of the substring leg's analyzer.
// It is recorded in the persisted mapping: changing what it emits requires
// a new name and a MappingVersion bump.
const analyzerWords = "ctxd_words_v1"

// minSubstringRunes is the shortest word the words fields hold and the
// shortest query fragment the substring leg looks for.
const minSubstringRunes = 3

// MaxSubstringWords bounds how many indexed words one query fragment
// expands to in the substring leg: the shortest words containing it, then
// the alphabetically first. "the" is in tens of thousands of words; the
// closest ones are the likeliest meant and each costs a posting list.
const MaxSubstringWords = 64

// wordsAnalyzer splits text into words (maximal runs of letters, digits and
// '_'), lowercases them and emits every distinct word of minSubstringRunes
// or more runes once per field value, unstemmed. Words over maxTermBytes
// (encoded data) are left out: they would fill the vocabulary.
//
// The substring leg finds the indexed words that contain a query fragment
// in the vocabulary and searches for those. It replaced a field of every
// word's trigrams, which cost 40% of indexing time and 44% of the index
// for the same answers: a document holds a few dozen distinct words but
// hundreds of distinct trigrams.
type wordsAnalyzer struct{}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Analyze implements analysis.Analyzer.
func (wordsAnalyzer) Analyze(input []byte) analysis.TokenStream {
	var (
		lb        = make([]byte, 0, len(input)) // lowercased words; terms alias it
		out       = make(analysis.TokenStream, 0, len(input)/8)
		buf       []analysis.Token
		seen      = make(map[string]struct{}, len(input)/8)
		wordStart = -1 // in input
		termStart = 0  // in lb
		runes     = 0
	)
	flush := func(end int) {
		if wordStart < 0 {
			return
		}
		w := lb[termStart:len(lb):len(lb)]
		if _, dup := seen[string(w)]; runes >= minSubstringRunes && len(w) <= maxTermBytes && !dup {
			seen[string(w)] = struct{}{}
			if len(buf) == cap(buf) {
				buf = make([]analysis.Token, 0, 64)
			}
			buf = append(buf, analysis.Token{
				Start: wordStart, End: end, Term: w,
				Position: len(out) + 1, Type: analysis.AlphaNumeric,
			})
			out = append(out, &buf[len(buf)-1])
		}
		wordStart, termStart, runes = -1, len(lb), 0
	}
	for i := 0; i < len(input); {
		c := input[i]
		if c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' {
				if wordStart < 0 {
					wordStart = i
				}
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				lb = append(lb, c)
				runes++
			} else {
				flush(i)
			}
			i++
			continue
		}
		r, sz := utf8.DecodeRune(input[i:])
		if isWordRune(r) {
			if wordStart < 0 {
				wordStart = i
			}
			lb = utf8.AppendRune(lb, unicode.ToLower(r))
			runes++
		} else {
			flush(i)
		}
		i += sz
	}
	flush(len(input))
	return out
}

func init() {
	err := registry.RegisterAnalyzer(analyzerWords,
		func(map[string]interface{}, *registry.Cache) (analysis.Analyzer, error) {
			return wordsAnalyzer{}, nil
		})
	if err != nil {
		panic(err)
	}
}

// vocabulary holds every distinct word of the words fields, for the
// substring leg to find the words that contain a fragment: a trigram index
// over the words (a k-gram index, Manning et al. §3.2.2) gives the
// candidates, which are then checked for the whole fragment. The words of
// deleted documents stay until the index is reopened; they only cost a
// term lookup that finds nothing.
//
// Hundreds of thousands of words are held without a pointer each (the
// garbage collector would scan them all on every cycle): the words sit back
// to back in one byte slice, found by a hash of their bytes.
type vocabulary struct {
	mu       sync.RWMutex
	text     []byte   // the words, back to back
	ends     []uint32 // ends[id] is where word id ends in text
	seed     maphash.Seed
	byHash   map[uint64]uint32   // hash of a word -> its id
	collided map[string]uint32   // words whose hash another word had first
	grams    map[uint64][]uint32 // trigram key (see trigrams) -> ids of the words holding it, ascending
}

func newVocabulary() *vocabulary {
	return &vocabulary{seed: maphash.MakeSeed(), byHash: map[uint64]uint32{}, collided: map[string]uint32{}, grams: map[uint64][]uint32{}}
}

// word returns word id; the caller holds v.mu.
func (v *vocabulary) word(id uint32) []byte {
	start := uint32(0)
	if id > 0 {
		start = v.ends[id-1]
	}
	return v.text[start:v.ends[id]]
}

// lookup reports whether w is in the vocabulary; the caller holds v.mu.
func (v *vocabulary) lookup(w []byte, h uint64) bool {
	if id, ok := v.byHash[h]; ok && bytes.Equal(v.word(id), w) {
		return true
	}
	_, ok := v.collided[string(w)]
	return ok
}

// has reports whether w is in the vocabulary.
func (v *vocabulary) has(w []byte) bool {
	h := maphash.Bytes(v.seed, w)
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.lookup(w, h)
}

// add adds the words not yet in the vocabulary.
func (v *vocabulary) add(words ...[]byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, w := range words {
		h := maphash.Bytes(v.seed, w)
		if v.lookup(w, h) {
			continue
		}
		id := uint32(len(v.ends))
		if _, taken := v.byHash[h]; taken {
			v.collided[string(w)] = id
		} else {
			v.byHash[h] = id
		}
		v.text = append(v.text, w...)
		v.ends = append(v.ends, uint32(len(v.text)))
		for g := range trigrams(w) {
			if l := v.grams[g]; len(l) == 0 || l[len(l)-1] != id { // a gram repeated in w
				v.grams[g] = append(l, id)
			}
		}
	}
}

// trigrams yields the key of every 3-rune substring of w, repeats
// included: the three runes packed in 21 bits each.
func trigrams(w []byte) func(func(uint64) bool) {
	return func(yield func(uint64) bool) {
		var key uint64
		n := 0
		for len(w) > 0 {
			r, sz := utf8.DecodeRune(w)
			w = w[sz:]
			key = (key<<21 | uint64(r)) & (1<<63 - 1)
			if n++; n >= 3 && !yield(key) {
				return
			}
		}
	}
}

// containing returns up to limit words that contain frag (of 3 or more
// runes), shortest first, then in byte order.
func (v *vocabulary) containing(frag []byte, limit int) []string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var cands []uint32
	for g := range trigrams(frag) {
		l, ok := v.grams[g]
		if !ok {
			return nil
		}
		if cands == nil || len(l) < len(cands) {
			cands = l
		}
	}
	var found []uint32
	for _, id := range cands {
		if bytes.Contains(v.word(id), frag) {
			found = append(found, id)
		}
	}
	size := func(id uint32) int { return min(len(v.word(id)), 255) }
	if len(found) > limit {
		// Keep the words up to the limit-th shortest length, then sort only those.
		var perLen [256]int
		for _, id := range found {
			perLen[size(id)]++
		}
		cut, n := 0, 0
		for cut = range perLen {
			if n += perLen[cut]; n >= limit {
				break
			}
		}
		found = slices.DeleteFunc(found, func(id uint32) bool { return size(id) > cut })
	}
	slices.SortFunc(found, func(a, b uint32) int {
		wa, wb := v.word(a), v.word(b)
		if c := cmp.Compare(len(wa), len(wb)); c != 0 {
			return c
		}
		return bytes.Compare(wa, wb)
	})
	out := make([]string, 0, min(len(found), limit))
	for _, id := range found[:min(len(found), limit)] {
		out = append(out, string(v.word(id)))
	}
	return out
}

// loadVocabulary reads the words fields' terms from bi.
func loadVocabulary(bi bleve.Index) (*vocabulary, error) {
	v := newVocabulary()
	for _, field := range [...]string{fieldTextWords, fieldHeadingWords} {
		d, err := bi.FieldDict(field)
		if err != nil {
			return nil, fmt.Errorf("read vocabulary of %s: %w", field, err)
		}
		for {
			e, err := d.Next()
			if err != nil {
				_ = d.Close()
				return nil, fmt.Errorf("read vocabulary of %s: %w", field, err)
			}
			if e == nil {
				break
			}
			v.add([]byte(e.Term))
		}
		if err := d.Close(); err != nil {
			return nil, fmt.Errorf("read vocabulary of %s: %w", field, err)
		}
	}
	return v, nil
}
