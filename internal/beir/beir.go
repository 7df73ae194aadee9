package beir

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Doc is one corpus document.
type Doc struct {
	ID     string `json:"_id"`
	Title  string `json:"title"`
	Text   string `json:"text"`
	Source string `json:"source"` // docs-corpus only
	Format string `json:"format"` // docs-corpus only
}

// Query is one query.
type Query struct {
	ID   string `json:"_id"`
	Text string `json:"text"`
}

// Qrels maps a query id to its judged documents and their grades (> 0 is relevant).
type Qrels map[string]map[string]int

// LoadCorpus reads up to limit documents (0: all) of a corpus.jsonl.gz.
func LoadCorpus(name string, limit int) ([]Doc, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var docs []Doc
	var bad error
	err = eachLine(zr, func(line []byte) bool {
		var d Doc
		if bad = json.Unmarshal(line, &d); bad != nil {
			return false
		}
		docs = append(docs, d)
		return limit == 0 || len(docs) < limit
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return docs, nil
}

// LoadQueries reads a queries.jsonl.
func LoadQueries(name string) ([]Query, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []Query
	var bad error
	err = eachLine(f, func(line []byte) bool {
		var q Query
		if bad = json.Unmarshal(line, &q); bad != nil {
			return false
		}
		qs = append(qs, q)
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return qs, nil
}

// LoadQrels reads a qrels.tsv.
func LoadQrels(name string) (Qrels, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	out := Qrels{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if i == 0 && len(f) > 0 && f[0] == "query-id" {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: want 3 tab-separated fields, got %d", name, i+1, len(f))
		}
		grade, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: score: %w", name, i+1, err)
		}
		if out[f[0]] == nil {
			out[f[0]] = map[string]int{}
		}
		out[f[0]][f[1]] = grade
	}
	return out, nil
}

// eachLine calls fn with every non-empty line of r until fn returns false.
func eachLine(r io.Reader, fn func([]byte) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if !fn(sc.Bytes()) {
			break
		}
	}
	return sc.Err()
}
