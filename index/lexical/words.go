package lexical

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
)

// minSubstringRunes is the shortest query fragment the substring leg looks
// for, and the shortest word the vocabulary keeps.
const minSubstringRunes = 3

// MaxSubstringWords bounds how many indexed words one query fragment
// expands to in the substring leg: the shortest words containing it, then
// the alphabetically first. "the" is in tens of thousands of words; the
// closest ones are the likeliest meant and each costs a posting list, in
// the text and the heading field. 64 cost bm25 searches over 100k
// wikipedia chunks 17% more at p99 than 16, for no nDCG@10 that make eval
// could tell apart (identical on cranfield, cacm and vaswani; tldr within
// 0.001).
const MaxSubstringWords = 16

// wordsAnalyzer splits a substring query into its fragments: maximal runs
// of letters, digits and '_', lowercased, each distinct one of
// minSubstringRunes or more runes once, unstemmed. Words over maxTermBytes
// (encoded data) are left out.
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

// vocabulary holds every distinct word of the indexed texts and headings
// with the term the stemmed fields hold for it, for the substring leg to
// find the terms of the words that contain a fragment: a trigram index over
// the words (a k-gram index, Manning et al. §3.2.2) gives the candidates,
// which are then checked for the whole fragment. A word is an "en" token as
// written, lowercased: "logo.png", "useeffect", "counters" (term
// "counter"). Stop words have no term and are not kept. The words of
// deleted documents stay; they only cost a term lookup that finds nothing.
//
// The words used to be indexed in fields of their own, which held as many
// postings as the stemmed fields and took a third of indexing time. Here
// they cost a log beside the index (openVocabulary) and their memory.
//
// Hundreds of thousands of words are held without a pointer each (the
// garbage collector would scan them all on every cycle): each word and its
// term sit back to back in one byte slice, found by a hash of the word.
type vocabulary struct {
	mu       sync.RWMutex
	text     []byte   // word 0, term 0, word 1, term 1, ...
	ends     []uint32 // ends[2*id] is where word id ends in text, ends[2*id+1] where its term does
	seed     maphash.Seed
	byHash   map[uint64]uint32   // hash of a word -> its id
	collided map[string]uint32   // words whose hash another word had first
	grams    map[uint64][]uint32 // trigram key (see trigrams) -> ids of the words holding it, ascending

	logMu sync.Mutex // serialises appends to log
	log   *os.File   // nil: the vocabulary is not persisted
}

// wordTerm is a word and the term the stemmed fields hold for it.
type wordTerm struct{ word, term []byte }

func newVocabulary() *vocabulary {
	return &vocabulary{seed: maphash.MakeSeed(), byHash: map[uint64]uint32{}, collided: map[string]uint32{}, grams: map[uint64][]uint32{}}
}

// word returns word id; the caller holds v.mu.
func (v *vocabulary) word(id uint32) []byte {
	start := uint32(0)
	if id > 0 {
		start = v.ends[2*id-1]
	}
	return v.text[start:v.ends[2*id]]
}

// term returns the term of word id; the caller holds v.mu.
func (v *vocabulary) term(id uint32) []byte { return v.text[v.ends[2*id]:v.ends[2*id+1]] }

// find returns the id of w; the caller holds v.mu.
func (v *vocabulary) find(w []byte, h uint64) (uint32, bool) {
	if id, ok := v.byHash[h]; ok && bytes.Equal(v.word(id), w) {
		return id, true
	}
	id, ok := v.collided[string(w)]
	return id, ok
}

// has reports whether w is in the vocabulary. Apply asks it of every
// token, so unlike termOf it allocates nothing.
func (v *vocabulary) has(w []byte) bool {
	h := maphash.Bytes(v.seed, w)
	v.mu.RLock()
	defer v.mu.RUnlock()
	_, ok := v.find(w, h)
	return ok
}

// termOf returns the term of word w, if w is in the vocabulary.
func (v *vocabulary) termOf(w []byte) (string, bool) {
	h := maphash.Bytes(v.seed, w)
	v.mu.RLock()
	defer v.mu.RUnlock()
	id, ok := v.find(w, h)
	if !ok {
		return "", false
	}
	return string(v.term(id)), true
}

// add adds the words not yet in the vocabulary, and appends them to its
// log, synced, before it returns. Words stay in memory if the log fails.
func (v *vocabulary) add(words []wordTerm) error {
	var rec []byte
	v.mu.Lock()
	for _, wt := range words {
		h := maphash.Bytes(v.seed, wt.word)
		if _, ok := v.find(wt.word, h); ok {
			continue
		}
		id := uint32(len(v.ends) / 2)
		if _, taken := v.byHash[h]; taken {
			v.collided[string(wt.word)] = id
		} else {
			v.byHash[h] = id
		}
		v.text = append(v.text, wt.word...)
		v.ends = append(v.ends, uint32(len(v.text)))
		v.text = append(v.text, wt.term...)
		v.ends = append(v.ends, uint32(len(v.text)))
		for g := range trigrams(wt.word) {
			if l := v.grams[g]; len(l) == 0 || l[len(l)-1] != id { // a gram repeated in the word
				v.grams[g] = append(l, id)
			}
		}
		if v.log != nil {
			rec = binary.AppendUvarint(rec, uint64(len(wt.word)))
			rec = append(rec, wt.word...)
			rec = binary.AppendUvarint(rec, uint64(len(wt.term)))
			rec = append(rec, wt.term...)
		}
	}
	v.mu.Unlock()
	if len(rec) == 0 {
		return nil
	}
	v.logMu.Lock()
	defer v.logMu.Unlock()
	if _, err := v.log.Write(rec); err != nil {
		return fmt.Errorf("log vocabulary: %w", err)
	}
	if err := v.log.Sync(); err != nil {
		return fmt.Errorf("log vocabulary: %w", err)
	}
	return nil
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

// termsContaining returns the terms of up to limit words that contain frag
// (of 3 or more runes), the shortest words first, then in byte order; each
// term once.
func (v *vocabulary) termsContaining(frag []byte, limit int) []string {
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
		if t := v.term(id); !slices.Contains(out, string(t)) {
			out = append(out, string(t))
		}
	}
	return out
}

// vocabularyFile is the vocabulary's log in the index directory: for each
// word, its length as a uvarint, the word, its term's length and the term.
// Apply appends the words a batch brings before it applies the batch, so
// the log holds every word the index does. A crash may leave a torn last
// record, which openVocabulary cuts off.
const vocabularyFile = "ctxd_vocabulary"

// openVocabulary loads the vocabulary logged in path and keeps the log
// open for add; with create set, it creates the log, which must not exist.
func openVocabulary(path string, create bool) (*vocabulary, error) {
	flag := os.O_RDWR | os.O_APPEND
	if create {
		flag |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open vocabulary: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("read vocabulary %s: %w", path, err)
	}
	var words []wordTerm
	whole := 0 // bytes of complete records
	for rest := data; len(rest) > 0; whole = len(data) - len(rest) {
		word, r, ok := readLogField(rest)
		if !ok {
			break
		}
		term, r, ok := readLogField(r)
		if !ok {
			break
		}
		words, rest = append(words, wordTerm{word, term}), r
	}
	if whole < len(data) {
		if err := f.Truncate(int64(whole)); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("cut torn end of vocabulary %s: %w", path, err)
		}
	}
	v := newVocabulary()
	if err := v.add(words); err != nil {
		_ = f.Close()
		return nil, err
	}
	v.log = f
	return v, nil
}

// readLogField reads one length-prefixed field of the vocabulary log.
func readLogField(b []byte) (field, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// close closes the vocabulary's log.
func (v *vocabulary) close() error {
	if v.log == nil {
		return nil
	}
	return v.log.Close()
}

// appendLower appends w lowercased, rune by rune, to dst.
func appendLower(dst, w []byte) []byte {
	for i := 0; i < len(w); {
		if c := w[i]; c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, sz := utf8.DecodeRune(w[i:])
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
		i += sz
	}
	return dst
}
