package lexical

import (
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// analyzerTrigram is the registered name of the substring leg's analyzer.
// It is recorded in the persisted mapping: changing what it emits requires
// a new name and a MappingVersion bump.
const analyzerTrigram = "ctxd_trigram_v1"

// trigramAnalyzer splits text into words (maximal runs of letters, digits
// and '_'), lowercases them and emits every distinct 3-rune gram of every
// word once per field value. Grams never span two words.
//
// It replaces Bleve's unicode tokenizer + lowercase + ngram chain, which
// emits every occurrence, allocates per gram and halved ingest throughput.
// The substring leg only asks "does this field contain the gram", so
// repeats are dropped: a gram's term frequency in the trigram fields is
// always 1, and token spans are those of the first word that produced it.
type trigramAnalyzer struct{}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Analyze implements analysis.Analyzer.
func (trigramAnalyzer) Analyze(input []byte) analysis.TokenStream {
	var (
		lb        = make([]byte, 0, len(input)) // lowercased words; grams alias it
		starts    []int                         // rune starts in lb for the current word, then its end
		out       = make(analysis.TokenStream, 0, len(input))
		buf       []analysis.Token
		seen      = make(map[string]struct{}, len(input))
		wordStart = -1
	)
	flush := func(end int) {
		if wordStart < 0 {
			return
		}
		starts = append(starts, len(lb))
		for j := 0; j+3 < len(starts); j++ {
			g := lb[starts[j]:starts[j+3]:starts[j+3]]
			if _, dup := seen[string(g)]; dup {
				continue
			}
			seen[string(g)] = struct{}{}
			if len(buf) == cap(buf) {
				buf = make([]analysis.Token, 0, 256)
			}
			buf = append(buf, analysis.Token{
				Start: wordStart, End: end, Term: g,
				Position: len(out) + 1, Type: analysis.AlphaNumeric,
			})
			out = append(out, &buf[len(buf)-1])
		}
		wordStart = -1
		starts = starts[:0]
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
				starts = append(starts, len(lb))
				lb = append(lb, c)
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
			starts = append(starts, len(lb))
			lb = utf8.AppendRune(lb, unicode.ToLower(r))
		} else {
			flush(i)
		}
		i += sz
	}
	flush(len(input))
	return out
}

func init() {
	err := registry.RegisterAnalyzer(analyzerTrigram,
		func(map[string]interface{}, *registry.Cache) (analysis.Analyzer, error) {
			return trigramAnalyzer{}, nil
		})
	if err != nil {
		panic(err)
	}
}
