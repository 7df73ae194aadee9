package standing

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// benchText is an ordinary paragraph, about 1 KB.
const benchText = `The committee reviewed the quarterly budget and found that spending on
infrastructure had risen faster than expected, mostly because of the new data
centre and the migration of the billing system. Several members asked whether
the delays in the procurement process could be avoided next year; the finance
team proposed a shared calendar of deadlines and a single approval step for
purchases under a fixed amount. The report also notes that the number of
support tickets fell after the documentation was rewritten, and that customer
satisfaction rose in every region except the north, where the outage in March
still weighs on the figures. Training for the new staff starts in the autumn.`

// BenchmarkMatcher_Chunk is the matcher's cost per changed chunk of about
// 1 KB with 1,000 standing queries of 3 words registered (lexical leg),
// about a fifth of which the chunk matches.
func BenchmarkMatcher_Chunk(b *testing.B) {
	words := strings.Fields("budget outage billing migration calendar tickets training autumn region finance procurement report customer documentation approval deadline centre spending committee members " +
		"quasar heliotrope turbine glacier lantern orchard piano harbour meadow canyon falcon velvet cobalt saffron tundra prism ember willow granite")
	subs := make([]*Sub, 1000)
	for i := range subs {
		q := Query{Texts: []string{fmt.Sprintf("%s %s %s", words[i%len(words)], words[(i*7+3)%len(words)], words[(i*13+5)%len(words)])}, Mode: search.BM25}
		s, err := (&Hub{opts: Options{}}).compile(b.Context(), q)
		if err != nil {
			b.Fatal(err)
		}
		subs[i] = s
	}
	m := newMatcher(subs, map[string]float64{})
	d := &vfs.IndexDoc{Exists: true, Drive: "notes", Path: "/r.md", Title: "Quarterly review", Chunks: []vfs.IndexChunk{{Text: benchText}}}
	matched := 0
	b.ResetTimer()
	for b.Loop() {
		if err := m.match(d, true, func(hit) { matched++ }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(matched)/float64(b.N), "matches/chunk")
}
