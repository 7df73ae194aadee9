package lexical

import (
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTrigrams(t *testing.T) {
	key := func(g string) uint64 {
		var k uint64
		for _, r := range g {
			k = k<<21 | uint64(r)
		}
		return k
	}
	for w, grams := range map[string][]string{
		"abcde": {"abc", "bcd", "cde"},
		"abc":   {"abc"},
		"ab":    nil,
		"ärger": {"ärg", "rge", "ger"},
		"aaaa":  {"aaa", "aaa"},
		"":      nil,
	} {
		var want []uint64
		for _, g := range grams {
			want = append(want, key(g))
		}
		if got := slices.Collect(trigrams([]byte(w))); !slices.Equal(got, want) {
			t.Errorf("trigrams(%q) = %x, want %x (%q)", w, got, want, grams)
		}
	}
}

// wordTerms returns the words with the term "t:" + word, or the given term
// after a '=' ("counters=counter").
func wordTerms(words ...string) []wordTerm {
	out := make([]wordTerm, len(words))
	for i, w := range words {
		word, term, ok := strings.Cut(w, "=")
		if !ok {
			term = "t:" + word
		}
		out[i] = wordTerm{[]byte(word), []byte(term)}
	}
	return out
}

func TestVocabulary_TermsContaining(t *testing.T) {
	v := newVocabulary()
	var filler []string
	for i := range 5000 {
		filler = append(filler, fmt.Sprintf("w%04d", i))
	}
	mustAddWords(t, v, wordTerms(filler...)...)
	mustAddWords(t, v, wordTerms("useeffectevent", "useeffect", "effect", "useeffect", "reuseeff",
		"aaaa", "ärger", "counters=counter", "counter=counter")...)
	tests := []struct {
		frag  string
		limit int
		want  []string
	}{
		{"useeff", 10, []string{"t:reuseeff", "t:useeffect", "t:useeffectevent"}},
		{"useeff", 2, []string{"t:reuseeff", "t:useeffect"}},
		{"effect", 10, []string{"t:effect", "t:useeffect", "t:useeffectevent"}},
		{"w0012", 10, []string{"t:w0012"}},
		{"w001", 3, []string{"t:w0010", "t:w0011", "t:w0012"}},
		{"aaa", 10, []string{"t:aaaa"}},
		{"rge", 10, []string{"t:ärger"}},
		{"counte", 10, []string{"counter"}}, // two words, one term
		{"aaaaa", 10, nil},                  // every gram known, the fragment in no word
		{"xyz", 10, nil},
	}
	for _, tc := range tests {
		if got := v.termsContaining([]byte(tc.frag), tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("termsContaining(%q, %d) = %v, want %v", tc.frag, tc.limit, got, tc.want)
		}
	}
	if !v.has([]byte("effect")) || v.has([]byte("effec")) {
		t.Error("has: effect should be known and effec not")
	}
	if term, ok := v.termOf([]byte("counters")); !ok || term != "counter" {
		t.Errorf("termOf(counters) = %q, %v; want counter, true", term, ok)
	}
}

func mustAddWords(t *testing.T, v *vocabulary, words ...wordTerm) {
	t.Helper()
	if err := v.add(words); err != nil {
		t.Fatal(err)
	}
}

func TestIndex_SearchSubstring_AfterReopen(t *testing.T) {
	dir := t.TempDir()
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, x, []Doc{
		{ID: "hook", Text: "useEffect(() => {})"},
		{ID: "head", Text: "body", Heading: "getServerSideProps"},
	}, nil, 1)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = mustOpen(t, dir)
	for q, want := range map[string][]string{"useEff": {"hook"}, "SideProp": {"head"}} {
		if got := ids(mustSubstring(t, x, q, Filter{}, 10)); !slices.Equal(got, want) {
			t.Errorf("after reopen, substring %q = %v, want %v", q, got, want)
		}
	}
	// Words written after the reopen are found too.
	mustApply(t, x, []Doc{{ID: "new", Text: "useLayoutEffect"}}, nil, 2)
	if got := ids(mustSubstring(t, x, "LayoutEff", Filter{}, 10)); !slices.Equal(got, []string{"new"}) {
		t.Errorf("substring LayoutEff = %v, want [new]", got)
	}
}

// A fragment in more than MaxSubstringWords words stands for the shortest,
// then the alphabetically first.
func TestIndex_SearchSubstring_ExpansionLimit(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	var docs []Doc
	for i := range MaxSubstringWords + 1 {
		// Words of one length: the alphabetically first are kept.
		docs = append(docs, Doc{ID: fmt.Sprintf("d%03d", i), Text: fmt.Sprintf("zqx%03d", i)})
	}
	docs = append(docs, Doc{ID: "long", Text: "zqx" + strings.Repeat("y", 10)})
	mustApply(t, x, docs, nil, 1)
	got := ids(mustSubstring(t, x, "zqx", Filter{}, 2*MaxSubstringWords))
	if len(got) != MaxSubstringWords || slices.Contains(got, fmt.Sprintf("d%03d", MaxSubstringWords)) || slices.Contains(got, "long") {
		t.Errorf("substring zqx found %d docs %v, want the %d with the shortest, then alphabetically first, words", len(got), got, MaxSubstringWords)
	}
	// Every fragment must match: one unknown fragment finds nothing.
	if got := ids(mustSubstring(t, x, "zqx nosuchword", Filter{}, 10)); len(got) != 0 {
		t.Errorf("substring with an unknown fragment = %v, want none", got)
	}
}

// A stop word in a substring query matches only itself, not the words
// that contain it ("other", "theory").
func TestIndex_SearchSubstring_StopWordIsAWord(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "word", Text: "the useEffect hook"},
		{ID: "inside", Text: "other useEffect hooks"},
		{ID: "head", Text: "theory", Heading: "what the useEffect hook does"},
	}, nil, 1)
	for q, want := range map[string][]string{
		"the useEff":  {"head", "word"},
		"hook useEff": {"head", "inside", "word"},
		"the":         {"head", "word"},
		"what does":   {"head"},
		"the nosuch":  nil,
	} {
		got := ids(mustSubstring(t, x, q, Filter{}, 10))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("substring %q = %v, want %v", q, got, want)
		}
	}
}

// A query word matches the words containing it and its stem: "counters"
// finds a document that only says "counter", as BM25 does, a partial word
// still finds only the words it is part of, and a word inside a term the
// stemmed field keeps whole ("logo.png") is still found.
func TestIndex_SearchSubstring_MatchesStems(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	mustApply(t, x, []Doc{
		{ID: "plural", Text: "fast transistor counters"},
		{ID: "singular", Text: "a fast counter made of transistors"},
		{ID: "other", Text: "a fast adder made of transistors"},
		{ID: "file", Text: "see logo.png"},
	}, nil, 1)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"fast transistor counters", []string{"plural", "singular"}},
		{"counter", []string{"plural", "singular"}},
		{"transist add", []string{"other"}},
		{"logo", []string{"file"}},
	} {
		got := ids(mustSubstring(t, x, tc.q, Filter{}, 10))
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("substring %q = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// Two words with one hash (made here by hand; 64-bit hashes of real words
// practically never collide) are both kept.
func TestVocabulary_HashCollision(t *testing.T) {
	v := newVocabulary()
	mustAddWords(t, v, wordTerms("alpha")...)
	v.byHash[maphash.Bytes(v.seed, []byte("beta"))] = 0 // alpha's id under beta's hash
	mustAddWords(t, v, wordTerms("beta", "beta")...)
	if !v.has([]byte("alpha")) || !v.has([]byte("beta")) || v.has([]byte("gamma")) {
		t.Fatal("has: want alpha and beta, not gamma")
	}
	if got := v.termsContaining([]byte("bet"), 10); !slices.Equal(got, []string{"t:beta"}) {
		t.Errorf("termsContaining(bet) = %v, want [t:beta]", got)
	}
	if len(v.ends) != 4 {
		t.Errorf("%d words stored, want 2", len(v.ends)/2)
	}
}

// The vocabulary's log survives a crash in the middle of an append: the
// torn record is cut off, the words before it are kept, and words logged
// after the cut are read back on the next open.
func TestIndex_VocabularyLog_CutsTornRecord(t *testing.T) {
	dir := t.TempDir()
	x := mustOpen(t, dir)
	mustApply(t, x, []Doc{{ID: "a", Text: "useEffect hooks"}}, nil, 1)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, vocabularyFile)
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{20, 'u', 's', 'e'}); err != nil { // 20 bytes announced, 3 written
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	x = mustOpen(t, dir)
	mustApply(t, x, []Doc{{ID: "b", Text: "useLayoutEffect"}}, nil, 2)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = mustOpen(t, dir)
	for q, want := range map[string][]string{"Effect": {"a", "b"}, "LayoutEff": {"b"}, "hook": {"a"}} {
		got := ids(mustSubstring(t, x, q, Filter{}, 10))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("after the torn record, substring %q = %v, want %v", q, got, want)
		}
	}
}

// An index of this mapping version without its vocabulary log (lost to a
// crash while it was created) is refused as a mismatch, so it is rebuilt.
func TestOpen_RefusesIndexWithoutVocabulary(t *testing.T) {
	dir := t.TempDir()
	x := mustOpen(t, dir)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, vocabularyFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); !errors.Is(err, ErrMappingMismatch) {
		t.Fatalf("Open without the vocabulary log: %v, want ErrMappingMismatch", err)
	}
}

// A document BM25 can find is found by the substring leg too: its words are
// in the vocabulary before the batch that adds it is searchable.
func TestIndex_SearchSubstring_SeesWhatBM25Sees(t *testing.T) {
	x := mustOpen(t, t.TempDir())
	const n = 100
	applied := make(chan error, 1)
	go func() {
		for i := range n {
			if err := x.Apply([]Doc{{ID: fmt.Sprintf("d%d", i), Text: fmt.Sprintf("zqword%d", i)}}, nil, uint64(i+1)); err != nil {
				applied <- err
				return
			}
		}
		applied <- nil
	}()
	defer func() {
		if err := <-applied; err != nil {
			t.Error(err)
		}
	}()
	for i := 0; i < n; {
		q := fmt.Sprintf("zqword%d", i)
		if len(mustBM25(t, x, q, Filter{}, 1)) == 0 {
			continue
		}
		if got := mustSubstring(t, x, q, Filter{}, 1); len(got) == 0 {
			t.Errorf("BM25 finds %s but the substring leg does not", q)
			return
		}
		i++
	}
}
