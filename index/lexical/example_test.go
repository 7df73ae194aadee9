package lexical_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/ctxd/ctxd/index/lexical"
)

func Example() {
	dir, err := os.MkdirTemp("", "lexical-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	x, err := lexical.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()

	err = x.Apply([]lexical.Doc{
		{ID: "c1", Text: "The hook runs useEffect after render.", Heading: "Hooks", Drive: "notes", Path: "/react/hooks.md", Tags: []string{"react"}},
		{ID: "c2", Text: "Running a marathon takes training.", Drive: "notes", Path: "/sport/run.md"},
	}, nil, 1)
	if err != nil {
		log.Fatal(err)
	}

	hits, _ := x.SearchBM25(context.Background(), "running", lexical.Filter{PathPrefixes: []string{"notes:/react"}}, 10)
	terms, _ := x.Terms("running")
	for _, h := range hits {
		spans, _ := x.MatchSpans("The hook runs useEffect after render.", terms)
		fmt.Println("bm25:", h.ID, spans)
	}
	hits, _ = x.SearchSubstring(context.Background(), "useEff", lexical.Filter{Tags: []string{"react"}}, 10)
	for _, h := range hits {
		fmt.Println("substring:", h.ID)
	}
	seq, _ := x.AppliedSeq()
	fmt.Println("applied seq:", seq)
	// Output:
	// bm25: c1 [[9 13]]
	// substring: c1
	// applied seq: 1
}
