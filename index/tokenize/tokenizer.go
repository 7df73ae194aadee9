package tokenize

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Tokenizer is a BERT WordPiece tokenizer (uncased models: lowercase +
// accent stripping), safe for concurrent use.
//
// It reproduces the HuggingFace `tokenizers` pipeline for BERT models:
// added (special) tokens matched in the raw text, BertNormalizer,
// BertPreTokenizer, WordPiece, and the [CLS] … [SEP] template.
type Tokenizer struct {
	norm normalizer

	// vocab maps word-initial pieces to ids; cont maps continuation pieces,
	// stored without the continuing prefix, so lookups need no string
	// building.
	vocab map[string]int32
	cont  map[string]int32
	// maxVocabBytes and maxContBytes bound the greedy longest match: no
	// longer piece can be in the vocabulary.
	maxVocabBytes, maxContBytes int
	// tokens maps ids back to token strings (for Tokens).
	tokens []string

	unkID, clsID, sepID, padID int32
	maxCharsPerWord            int

	// added are the added tokens (the specials [CLS], [SEP], [MASK] …),
	// matched verbatim in the raw text before normalization, leftmost
	// longest first, each becoming its own id.
	added      []addedToken
	addedFirst [256]bool // first bytes of the added tokens

	pool sync.Pool // *scratch
}

// addedToken is one token matched verbatim in the raw text.
type addedToken struct {
	content string
	id      int32
}

// scratch is per-call working memory, recycled through Tokenizer.pool.
type scratch struct {
	normBuf, nfdBuf []byte
	decomposed      []decomposed
	pieces          []int32
}

// sink receives the ids of one encoding. A nil ids or toks slice is not
// collected; limit < 0 means no limit.
type sink struct {
	ids   []int64
	toks  []string
	n     int
	limit int
}

// full reports whether the sink has reached its limit.
func (s *sink) full() bool { return s.limit >= 0 && s.n >= s.limit }

// Encode returns [CLS] tokens [SEP], truncated so the total is at most
// maxLen (maxLen >= 2; smaller values are treated as 2).
func (t *Tokenizer) Encode(text string, maxLen int) []int64 {
	if maxLen < 2 {
		maxLen = 2
	}
	s := sink{ids: make([]int64, 0, min(maxLen, len(text)+2)), limit: maxLen - 2}
	s.ids = append(s.ids, int64(t.clsID))
	t.run(text, &s)
	s.ids = append(s.ids, int64(t.sepID))
	return s.ids
}

// Count returns the number of WordPiece tokens of text, without [CLS]/[SEP]
// and without truncation. It does not allocate once its scratch buffers
// have grown to the size of the input.
func (t *Tokenizer) Count(text string) int {
	s := sink{limit: -1}
	t.run(text, &s)
	return s.n
}

// SumsAtWhitespace marks the Tokenizer as a chunk.SumCounter: the BERT
// pre-tokenizer splits at whitespace before normalisation or WordPiece
// look at a word, so texts joined by whitespace count as the sum of their
// counts (FuzzTokenizer_Encode checks it).
func (*Tokenizer) SumsAtWhitespace() {}

// Tokens returns the WordPiece token strings (no specials), for debugging
// and tests.
func (t *Tokenizer) Tokens(text string) []string {
	s := sink{toks: []string{}, limit: -1}
	t.run(text, &s)
	return s.toks
}

// PadID returns the [PAD] id.
func (t *Tokenizer) PadID() int64 { return int64(t.padID) }

// emit adds one id to the sink.
func (t *Tokenizer) emit(s *sink, id int32) {
	if s.ids != nil {
		s.ids = append(s.ids, int64(id))
	}
	if s.toks != nil {
		s.toks = append(s.toks, t.tokens[id])
	}
	s.n++
}

// run tokenizes text into s: split on added tokens, then normalize,
// pre-tokenize and WordPiece each piece in between.
func (t *Tokenizer) run(text string, s *sink) {
	sc, _ := t.pool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	defer t.pool.Put(sc)
	for len(text) > 0 && !s.full() {
		at, tok := t.nextAdded(text)
		if at < 0 {
			t.runPlain(sc, text, s)
			return
		}
		if at > 0 {
			t.runPlain(sc, text[:at], s)
			if s.full() {
				return
			}
		}
		t.emit(s, tok.id)
		text = text[at+len(tok.content):]
	}
}

// nextAdded finds the leftmost added token in text, the longest one where
// several start at the same place. It returns -1 if there is none.
func (t *Tokenizer) nextAdded(text string) (int, *addedToken) {
	if len(t.added) == 0 {
		return -1, nil
	}
	for i := 0; i < len(text); i++ {
		if !t.addedFirst[text[i]] {
			continue
		}
		var best *addedToken
		for j := range t.added {
			a := &t.added[j]
			if (best == nil || len(a.content) > len(best.content)) && strings.HasPrefix(text[i:], a.content) {
				best = a
			}
		}
		if best != nil {
			return i, best
		}
	}
	return -1, nil
}

// runPlain normalizes, pre-tokenizes and WordPiece-encodes text, which holds
// no added token.
func (t *Tokenizer) runPlain(sc *scratch, text string, s *sink) {
	sc.normBuf, sc.nfdBuf = t.norm.normalize(sc.normBuf[:0], sc.nfdBuf, &sc.decomposed, text)
	preTokenize(sc.normBuf, func(word []byte) bool {
		t.wordPiece(sc, word, s)
		return !s.full()
	})
}

// preTokenize is BertPreTokenizer: it splits normalized text on whitespace
// (dropped) and isolates every punctuation character as a word of its own,
// calling yield for each non-empty word in order until yield returns false.
func preTokenize(buf []byte, yield func(word []byte) bool) {
	start := 0
	for i := 0; i < len(buf); {
		r, size := rune(buf[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(buf[i:])
		}
		switch {
		case isWhitespace(r):
			if start < i && !yield(buf[start:i]) {
				return
			}
			start = i + size
		case isPunct(r):
			if start < i && !yield(buf[start:i]) {
				return
			}
			if !yield(buf[i : i+size]) {
				return
			}
			start = i + size
		}
		i += size
	}
	if start < len(buf) {
		yield(buf[start:])
	}
}

// wordPiece encodes one pre-tokenized word: greedy longest-match-first
// against the vocabulary, continuation pieces carrying the prefix ("##").
// A word longer than maxCharsPerWord characters, or one with a part that
// matches nothing, becomes a single [UNK].
func (t *Tokenizer) wordPiece(sc *scratch, word []byte, s *sink) {
	if s.full() {
		return
	}
	if len(word) > t.maxCharsPerWord && utf8.RuneCount(word) > t.maxCharsPerWord {
		t.emit(s, t.unkID)
		return
	}
	pieces := sc.pieces[:0]
	for start := 0; start < len(word); {
		vocab, maxBytes := t.vocab, t.maxVocabBytes
		if start > 0 {
			vocab, maxBytes = t.cont, t.maxContBytes
		}
		end := len(word)
		if end-start > maxBytes {
			// No piece is longer than maxBytes: start from the longest
			// candidate that ends on a character boundary.
			end = start + maxBytes
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		id := int32(-1)
		for end > start {
			if v, ok := vocab[string(word[start:end])]; ok {
				id = v
				break
			}
			_, size := utf8.DecodeLastRune(word[start:end])
			end -= size
		}
		if id < 0 {
			sc.pieces = pieces
			t.emit(s, t.unkID)
			return
		}
		pieces = append(pieces, id)
		start = end
	}
	sc.pieces = pieces
	for _, id := range pieces {
		if s.full() {
			return
		}
		t.emit(s, id)
	}
}
