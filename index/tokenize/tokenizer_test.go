package tokenize

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// goldenPath is the reference output of the HuggingFace `tokenizers`
// package on tricky strings, written by `make setup`.
var goldenPath = "../../testdata/golden/tokenizer.jsonl"

// modelDir returns the directory of the installed embedding model:
// $CTXD_MODEL_DIR, or the one `make setup` installs.
func modelDir() string {
	if d := os.Getenv("CTXD_MODEL_DIR"); d != "" {
		return d
	}
	return "../../.cache/models/all-MiniLM-L6-v2"
}

// mustLoadModel loads the real model's tokenizer, failing (not skipping)
// when it is not installed.
func mustLoadModel(tb testing.TB) *Tokenizer {
	tb.Helper()
	dir := modelDir()
	if _, err := os.Stat(filepath.Join(dir, TokenizerFile)); err != nil {
		tb.Fatalf("model tokenizer missing (%v): run `make setup` to install it", err)
	}
	tk, err := Load(dir)
	if err != nil {
		tb.Fatalf("Load(%s): %v", dir, err)
	}
	return tk
}

// mustLoadTiny loads the small vocab.txt-only tokenizer in testdata.
func mustLoadTiny(tb testing.TB) *Tokenizer {
	tb.Helper()
	tk, err := Load("testdata")
	if err != nil {
		tb.Fatalf("Load(testdata): %v", err)
	}
	return tk
}

// goldenRecord is one line of the golden file.
type goldenRecord struct {
	Text              string   `json:"text"`
	IDs               []int64  `json:"ids"`
	Tokens            []string `json:"tokens"`
	IDsUntruncatedLen int      `json:"ids_untruncated_len"`
}

func TestTokenizer_Golden(t *testing.T) {
	f, err := os.Open(goldenPath)
	if err != nil {
		t.Fatalf("golden file missing (%v): run `make setup` to generate it", err)
	}
	defer f.Close()
	tk := mustLoadModel(t)

	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		n++
		var rec goldenRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		if got := tk.Encode(rec.Text, 256); !slices.Equal(got, rec.IDs) {
			t.Errorf("record %d Encode(%q, 256)\n got %v\nwant %v", n, rec.Text, got, rec.IDs)
		}
		if got, want := tk.Count(rec.Text), rec.IDsUntruncatedLen-2; got != want {
			t.Errorf("record %d Count(%q) = %d, want %d", n, rec.Text, got, want)
		}
		got := tk.Tokens(rec.Text)
		var want []string
		switch len(rec.Tokens) {
		case len(rec.IDs): // with [CLS]/[SEP], truncated like ids
			got = append(append([]string{"[CLS]"}, got[:min(len(got), len(rec.IDs)-2)]...), "[SEP]")
			want = rec.Tokens
		case rec.IDsUntruncatedLen - 2: // no specials, untruncated
			want = rec.Tokens
		case len(rec.IDs) - 2: // no specials, truncated
			got, want = got[:min(len(got), len(rec.IDs)-2)], rec.Tokens
		default:
			t.Fatalf("record %d: %d tokens fit neither ids (%d) nor ids_untruncated_len (%d)",
				n, len(rec.Tokens), len(rec.IDs), rec.IDsUntruncatedLen)
		}
		if !slices.Equal(got, want) {
			t.Errorf("record %d Tokens(%q)\n got %q\nwant %q", n, rec.Text, got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("%s has no records: run `make setup` to regenerate it", goldenPath)
	}
}

func TestLoad_VocabTxt(t *testing.T) {
	tk := mustLoadTiny(t)
	tests := []struct {
		name string
		text string
		want []int64
	}{
		{"empty", "", []int64{2, 3}},
		{"words and punctuation", "Hello, world!", []int64{2, 5, 7, 6, 8, 3}},
		{"wordpiece continuation", "unaffable", []int64{2, 9, 10, 11, 3}},
		{"accents stripped", "Naïve CAFÉ", []int64{2, 13, 12, 3}},
		{"unmatched piece makes the word unk", "unaffablex hello", []int64{2, 1, 5, 3}},
		{"cjk split", "日本", []int64{2, 14, 15, 3}},
		{"special tokens kept", "hello[MASK] [SEP]", []int64{2, 5, 4, 3, 3}},
		{"special tokens are case sensitive", "[mask]", []int64{2, 1, 1, 1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tk.Encode(tt.text, 64); !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
			}
			if got, want := tk.Count(tt.text), len(tt.want)-2; got != want {
				t.Errorf("Count(%q) = %d, want %d", tt.text, got, want)
			}
		})
	}
	if got := tk.PadID(); got != 0 {
		t.Errorf("PadID() = %d, want 0", got)
	}
}

func TestLoad_Errors(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		wantErr error
	}{
		{"no files", nil, os.ErrNotExist},
		{"not wordpiece", map[string]string{TokenizerFile: `{"model":{"type":"BPE","vocab":{"a":0}},"normalizer":{"type":"BertNormalizer"},"pre_tokenizer":{"type":"BertPreTokenizer"}}`}, ErrUnsupported},
		{"other normalizer", map[string]string{TokenizerFile: `{"model":{"type":"WordPiece","vocab":{"a":0}},"normalizer":{"type":"NFKC"},"pre_tokenizer":{"type":"BertPreTokenizer"}}`}, ErrUnsupported},
		{"missing unk", map[string]string{VocabFile: "a\nb\n"}, nil},
		{"bad json", map[string]string{TokenizerFile: `{`, VocabFile: "[UNK]\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(dir)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Load error = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestLoad_TokenizerJSONFlags(t *testing.T) {
	// A cased model: no lowercasing and, following it, no accent stripping.
	body := `{
	  "added_tokens": [{"id": 0, "content": "[UNK]"}, {"id": 1, "content": "[CLS]"}, {"id": 2, "content": "[SEP]"}, {"id": 3, "content": "[PAD]"}],
	  "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": false},
	  "pre_tokenizer": {"type": "BertPreTokenizer"},
	  "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
	  "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 5,
	            "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3, "Café": 4, "cafe": 5, "abcdef": 6, "ab": 7, "##cd": 8}}
	}`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, TokenizerFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []int64
	}{
		{"Café", []int64{1, 4, 2}},
		{"cafe", []int64{1, 5, 2}},
		{"CAFE", []int64{1, 0, 2}},
		{"abcd", []int64{1, 7, 8, 2}},
		{"abcdef", []int64{1, 0, 2}}, // longer than max_input_chars_per_word
	}
	for _, tt := range tests {
		if got := tk.Encode(tt.text, 16); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
	if got := tk.PadID(); got != 3 {
		t.Errorf("PadID() = %d, want 3", got)
	}
}

func TestTokenizer_EncodeTruncates(t *testing.T) {
	tk := mustLoadTiny(t)
	text := strings.Repeat("hello world ", 10) // 20 tokens
	tests := []struct {
		maxLen int
		want   []int64
	}{
		{0, []int64{2, 3}},
		{2, []int64{2, 3}},
		{3, []int64{2, 5, 3}},
		{5, []int64{2, 5, 6, 5, 3}},
		{22, append(append([]int64{2}, slices.Repeat([]int64{5, 6}, 10)...), 3)},
		{100, append(append([]int64{2}, slices.Repeat([]int64{5, 6}, 10)...), 3)},
	}
	for _, tt := range tests {
		if got := tk.Encode(text, tt.maxLen); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(_, %d) = %v, want %v", tt.maxLen, got, tt.want)
		}
	}
	// Truncation never splits a word's pieces differently from the full run.
	if got := tk.Encode("unaffable", 4); !slices.Equal(got, []int64{2, 9, 10, 3}) {
		t.Errorf("Encode(unaffable, 4) = %v", got)
	}
	if got := tk.Encode("hello [SEP] world", 3); !slices.Equal(got, []int64{2, 5, 3}) {
		t.Errorf("Encode with special, 3 = %v", got)
	}
}

func TestTokenizer_Tokens(t *testing.T) {
	tk := mustLoadTiny(t)
	got := tk.Tokens("Unaffable, [CLS] xyz")
	want := []string{"un", "##aff", "##able", ",", "[CLS]", "[UNK]"}
	if !slices.Equal(got, want) {
		t.Errorf("Tokens = %q, want %q", got, want)
	}
	if got := tk.Tokens(""); got == nil || len(got) != 0 {
		t.Errorf("Tokens(\"\") = %#v, want empty non-nil", got)
	}
}

func TestTokenizer_Concurrent(t *testing.T) {
	tk := mustLoadTiny(t)
	texts := []string{"Hello, world!", "unaffable café", "日本 hello [MASK]", strings.Repeat("the. ", 50)}
	want := make([][]int64, len(texts))
	for i, s := range texts {
		want[i] = tk.Encode(s, 512)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := (g + i) % len(texts)
				if got := tk.Encode(texts[k], 512); !slices.Equal(got, want[k]) {
					t.Errorf("concurrent Encode(%q) = %v, want %v", texts[k], got, want[k])
					return
				}
				if got := tk.Count(texts[k]); got != len(want[k])-2 {
					t.Errorf("concurrent Count(%q) = %d", texts[k], got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestTokenizer_CountAllocs(t *testing.T) {
	tk := mustLoadTiny(t)
	text := strings.Repeat("Hello, wörld! unaffable 日本 [SEP] ", 20)
	tk.Count(text) // grow the scratch buffers
	n := testing.AllocsPerRun(100, func() { tk.Count(text) })
	if raceEnabled {
		t.Logf("Count allocates %.1f times per call (race detector on: not checked)", n)
		return
	}
	if n > 0 {
		t.Errorf("Count allocates %.1f times per call, want 0", n)
	}
}
