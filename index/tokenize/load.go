package tokenize

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// File names Load looks for in a model directory.
const (
	TokenizerFile = "tokenizer.json"
	VocabFile     = "vocab.txt"
)

// ErrUnsupported is returned by Load for a tokenizer.json whose pipeline is
// not the BERT WordPiece one this package reproduces exactly.
var ErrUnsupported = errors.New("unsupported tokenizer")

// BERT-uncased defaults, used for vocab.txt and for fields tokenizer.json
// leaves out.
const (
	defaultUnk             = "[UNK]"
	defaultCLS             = "[CLS]"
	defaultSEP             = "[SEP]"
	defaultPad             = "[PAD]"
	defaultMask            = "[MASK]"
	defaultPrefix          = "##"
	defaultMaxCharsPerWord = 100
)

// Load reads dir/tokenizer.json (preferred: vocab, [UNK]/[CLS]/[SEP]/[PAD]
// ids, normalizer flags lowercase/strip_accents/clean_text/
// handle_chinese_chars, wordpiece continuing prefix "##",
// max_input_chars_per_word) or falls back to dir/vocab.txt with BERT-uncased
// defaults.
func Load(dir string) (*Tokenizer, error) {
	path := filepath.Join(dir, TokenizerFile)
	data, err := os.ReadFile(path)
	if err == nil {
		t, err := parseTokenizerJSON(data)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", path, err)
		}
		return t, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	path = filepath.Join(dir, VocabFile)
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	t, err := parseVocabTxt(data)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return t, nil
}

// tokenizerJSON is the part of a HuggingFace tokenizer.json that matters
// for a BERT WordPiece tokenizer.
type tokenizerJSON struct {
	AddedTokens []struct {
		ID         int32  `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens"`
	Normalizer *struct {
		Type               string `json:"type"`
		CleanText          *bool  `json:"clean_text"`
		HandleChineseChars *bool  `json:"handle_chinese_chars"`
		StripAccents       *bool  `json:"strip_accents"`
		Lowercase          *bool  `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	PostProcessor *struct {
		Type string `json:"type"`
		// BertProcessing: ["[SEP]", 102].
		Sep []json.RawMessage `json:"sep"`
		Cls []json.RawMessage `json:"cls"`
		// TemplateProcessing.
		SpecialTokens map[string]struct {
			IDs []int32 `json:"ids"`
		} `json:"special_tokens"`
	} `json:"post_processor"`
	Padding *struct {
		PadID    *int32 `json:"pad_id"`
		PadToken string `json:"pad_token"`
	} `json:"padding"`
	Model struct {
		Type                    string           `json:"type"`
		UnkToken                string           `json:"unk_token"`
		ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    *int             `json:"max_input_chars_per_word"`
		Vocab                   map[string]int32 `json:"vocab"`
	} `json:"model"`
}

// parseTokenizerJSON builds a Tokenizer from tokenizer.json contents.
func parseTokenizerJSON(data []byte) (*Tokenizer, error) {
	var j tokenizerJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if j.Model.Type != "" && j.Model.Type != "WordPiece" {
		return nil, fmt.Errorf("model type %q: %w", j.Model.Type, ErrUnsupported)
	}
	if len(j.Model.Vocab) == 0 {
		return nil, fmt.Errorf("model.vocab is empty: %w", ErrUnsupported)
	}
	if j.Normalizer == nil || j.Normalizer.Type != "BertNormalizer" {
		return nil, fmt.Errorf("normalizer is not BertNormalizer: %w", ErrUnsupported)
	}
	if j.PreTokenizer == nil || j.PreTokenizer.Type != "BertPreTokenizer" {
		return nil, fmt.Errorf("pre_tokenizer is not BertPreTokenizer: %w", ErrUnsupported)
	}
	// BertNormalizer defaults: everything on; strip_accents follows lowercase.
	n := normalizer{cleanText: true, handleCJK: true, lowercase: true}
	if p := j.Normalizer.CleanText; p != nil {
		n.cleanText = *p
	}
	if p := j.Normalizer.HandleChineseChars; p != nil {
		n.handleCJK = *p
	}
	if p := j.Normalizer.Lowercase; p != nil {
		n.lowercase = *p
	}
	n.stripAccents = n.lowercase
	if p := j.Normalizer.StripAccents; p != nil {
		n.stripAccents = *p
	}

	b := builder{
		norm:            n,
		unk:             defaultUnk,
		prefix:          defaultPrefix,
		maxCharsPerWord: defaultMaxCharsPerWord,
		vocab:           j.Model.Vocab,
	}
	if j.Model.UnkToken != "" {
		b.unk = j.Model.UnkToken
	}
	if p := j.Model.ContinuingSubwordPrefix; p != nil {
		b.prefix = *p
	}
	if p := j.Model.MaxInputCharsPerWord; p != nil {
		b.maxCharsPerWord = *p
	}
	for _, a := range j.AddedTokens {
		if a.SingleWord || a.Normalized {
			// Matching these needs word boundaries or the normalized
			// text; BERT tokenizers have none.
			return nil, fmt.Errorf("added token %q with single_word or normalized set: %w", a.Content, ErrUnsupported)
		}
		b.added = append(b.added, addedToken{content: a.Content, id: a.ID})
	}
	b.cls, b.sep = int32(-1), int32(-1)
	if pp := j.PostProcessor; pp != nil {
		switch pp.Type {
		case "TemplateProcessing":
			if st, ok := pp.SpecialTokens[defaultCLS]; ok && len(st.IDs) == 1 {
				b.cls = st.IDs[0]
			}
			if st, ok := pp.SpecialTokens[defaultSEP]; ok && len(st.IDs) == 1 {
				b.sep = st.IDs[0]
			}
		case "BertProcessing":
			b.cls = processingID(pp.Cls)
			b.sep = processingID(pp.Sep)
		default:
			return nil, fmt.Errorf("post_processor %q: %w", pp.Type, ErrUnsupported)
		}
	}
	b.pad = -1
	if p := j.Padding; p != nil && p.PadID != nil {
		b.pad = *p.PadID
	}
	return b.build()
}

// processingID decodes the id of a BertProcessing ["[SEP]", 102] pair.
func processingID(pair []json.RawMessage) int32 {
	if len(pair) != 2 {
		return -1
	}
	var id int32
	if err := json.Unmarshal(pair[1], &id); err != nil {
		return -1
	}
	return id
}

// parseVocabTxt builds a BERT-uncased Tokenizer from vocab.txt contents:
// one token per line, the id being the line number.
func parseVocabTxt(data []byte) (*Tokenizer, error) {
	vocab := make(map[string]int32)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var id int32
	for sc.Scan() {
		tok := strings.TrimRight(sc.Text(), "\r")
		// Like the reference's vocab loader, a repeated token keeps its
		// last id.
		vocab[tok] = id
		id++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	b := builder{
		norm:            normalizer{cleanText: true, handleCJK: true, stripAccents: true, lowercase: true},
		unk:             defaultUnk,
		prefix:          defaultPrefix,
		maxCharsPerWord: defaultMaxCharsPerWord,
		vocab:           vocab,
		cls:             -1,
		sep:             -1,
		pad:             -1,
	}
	for _, s := range []string{defaultPad, defaultUnk, defaultCLS, defaultSEP, defaultMask} {
		if v, ok := vocab[s]; ok {
			b.added = append(b.added, addedToken{content: s, id: v})
		}
	}
	return b.build()
}

// builder collects the settings of a Tokenizer before validation.
type builder struct {
	norm            normalizer
	vocab           map[string]int32
	unk, prefix     string
	maxCharsPerWord int
	added           []addedToken
	cls, sep, pad   int32 // -1: look up the default token in the vocabulary
}

// build validates the settings and builds the lookup tables.
func (b *builder) build() (*Tokenizer, error) {
	if len(b.vocab) == 0 {
		return nil, errors.New("empty vocabulary")
	}
	t := &Tokenizer{
		norm:            b.norm,
		vocab:           make(map[string]int32, len(b.vocab)),
		cont:            make(map[string]int32),
		maxCharsPerWord: b.maxCharsPerWord,
	}
	maxID := int32(0)
	for tok, id := range b.vocab {
		if id < 0 {
			return nil, fmt.Errorf("token %q has negative id %d", tok, id)
		}
		maxID = max(maxID, id)
	}
	for _, a := range b.added {
		if a.content == "" {
			return nil, errors.New("empty added token")
		}
		maxID = max(maxID, a.id)
	}
	t.tokens = make([]string, maxID+1)
	for tok, id := range b.vocab {
		t.tokens[id] = tok
		t.vocab[tok] = id
		t.maxVocabBytes = max(t.maxVocabBytes, len(tok))
		if b.prefix != "" && strings.HasPrefix(tok, b.prefix) {
			rest := tok[len(b.prefix):]
			t.cont[rest] = id
			t.maxContBytes = max(t.maxContBytes, len(rest))
		}
	}
	if b.prefix == "" {
		// Without a prefix, continuation pieces are plain vocabulary pieces.
		t.cont, t.maxContBytes = t.vocab, t.maxVocabBytes
	}
	for _, a := range b.added {
		if a.id < 0 {
			return nil, fmt.Errorf("added token %q has negative id %d", a.content, a.id)
		}
		if t.tokens[a.id] == "" {
			t.tokens[a.id] = a.content
		}
		t.added = append(t.added, a)
		t.addedFirst[a.content[0]] = true
	}
	var err error
	lookup := func(name string, id int32, def string) int32 {
		if id >= 0 {
			if int(id) >= len(t.tokens) {
				err = errors.Join(err, fmt.Errorf("%s id %d is outside the vocabulary", name, id))
			}
			return id
		}
		v, ok := b.vocab[def]
		if !ok {
			for _, a := range b.added {
				if a.content == def {
					return a.id
				}
			}
			err = errors.Join(err, fmt.Errorf("%s token %q is not in the vocabulary", name, def))
		}
		return v
	}
	t.unkID = lookup("unk", -1, b.unk)
	t.clsID = lookup("cls", b.cls, defaultCLS)
	t.sepID = lookup("sep", b.sep, defaultSEP)
	t.padID = lookup("pad", b.pad, defaultPad)
	if b.maxCharsPerWord <= 0 {
		err = errors.Join(err, fmt.Errorf("max_input_chars_per_word %d is not positive", b.maxCharsPerWord))
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}
