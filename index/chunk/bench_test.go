package chunk

import (
	"bytes"
	"fmt"
	"testing"
)

// fieldCounter counts whitespace-separated fields: nearly free, so a
// benchmark with it measures Split's own cost.
type fieldCounter struct{}

func (fieldCounter) Count(text string) int {
	n, in := 0, false
	for i := 0; i < len(text); i++ {
		sp := text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'
		if !sp && !in {
			n++
		}
		in = !sp
	}
	return n
}

// BenchmarkSplit measures Split's throughput (MB/s via b.SetBytes) on
// markdown, plain text and JSON of growing size, with a nearly free counter
// (Split's own cost), the unit tests' counter and the real WordPiece
// tokenizer.
func BenchmarkSplit(b *testing.B) {
	tk := mustLoadTokenizer(b)
	json := mustReadInput(b, "k8s-deployment.json")
	counters := []struct {
		name string
		c    Counter
	}{{"counter=fields", fieldCounter{}}, {"counter=word", wordCounter{}}, {"counter=wordpiece", tk}}
	for _, size := range []int{64 << 10, 1 << 20, 5 << 20} {
		md := largeMarkdown(b, size)
		inputs := []struct {
			kind, path string
			content    []byte
		}{
			{"markdown", "b.md", md},
			{"text", "b.txt", md},
			{"json", "b.json", jsonArray(json, size)},
		}
		for _, c := range counters {
			for _, in := range inputs {
				b.Run(fmt.Sprintf("%s/kind=%s/size=%dKiB", c.name, in.kind, size>>10), func(b *testing.B) {
					b.SetBytes(int64(len(in.content)))
					b.ReportAllocs()
					for b.Loop() {
						Split(in.content, "", in.path, c.c, realWindow)
					}
				})
			}
		}
	}
}

// jsonArray repeats a JSON document as the elements of an array of about
// size bytes.
func jsonArray(doc []byte, size int) []byte {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for buf.Len() < size {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.Write(doc)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}
