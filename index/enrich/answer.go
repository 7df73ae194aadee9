package enrich

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/ctxd/ctxd/vfs"
)

// parseQuestions reads the questions out of a model's answer: a JSON array
// of strings (or of {"question": ...} objects, or an object holding such an
// array), possibly inside a code fence or after a <think> block; else one
// question per line, numbered or bulleted, ending with "?". Questions are
// trimmed, deduplicated ignoring case, valid for the store (vfs.CleanQuestions:
// at most vfs.MaxQuestionBytes, no control characters), at most n. An
// answer with none returns an empty list.
func parseQuestions(answer string, n int) []string {
	if i := strings.LastIndex(answer, "</think>"); i >= 0 {
		answer = answer[i+len("</think>"):]
	}
	candidates, ok := jsonQuestions(answer)
	if !ok {
		candidates = lineQuestions(answer)
	}
	out := []string{}
	seen := map[string]bool{}
	for _, q := range candidates {
		q = strings.Join(strings.Fields(q), " ")
		if _, err := vfs.CleanQuestions("", []string{q}, 1); err != nil {
			continue
		}
		if key := strings.ToLower(q); !seen[key] {
			seen[key] = true
			out = append(out, q)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// jsonQuestions reads the outermost JSON array or object in s; ok is false
// when there is none.
func jsonQuestions(s string) (questions []string, ok bool) {
	if i, j := strings.IndexByte(s, '['), strings.LastIndexByte(s, ']'); i >= 0 && j > i {
		var items []json.RawMessage
		if json.Unmarshal([]byte(s[i:j+1]), &items) == nil {
			return jsonStrings(items), true
		}
	}
	if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i >= 0 && j > i {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(s[i:j+1]), &obj) == nil {
			for _, v := range obj {
				var items []json.RawMessage
				if json.Unmarshal(v, &items) == nil {
					questions = append(questions, jsonStrings(items)...)
				}
			}
			return questions, true
		}
	}
	return nil, false
}

// jsonStrings returns the strings, and the "question" of the objects, in items.
func jsonStrings(items []json.RawMessage) []string {
	var out []string
	for _, it := range items {
		var s string
		var obj struct {
			Question string `json:"question"`
		}
		switch {
		case json.Unmarshal(it, &s) == nil:
			out = append(out, s)
		case json.Unmarshal(it, &obj) == nil && obj.Question != "":
			out = append(out, obj.Question)
		}
	}
	return out
}

// listMarker matches a bullet or a number ("1.", "2)", "(3)", "Q4:",
// "Question 5:") at the start of a line.
var listMarker = regexp.MustCompile(`^(?:[-*•+]+|\(?\d+[.):]|(?i:q(?:uestion)?)\s*\d*\s*[.):])\s*`)

// lineQuestions returns the lines of s that are questions, list markers,
// quotes and emphasis removed.
func lineQuestions(s string) []string {
	var out []string
	for line := range strings.Lines(s) {
		q := strings.TrimSpace(line)
		q = listMarker.ReplaceAllString(q, "")
		q = strings.Trim(q, "\"'`*_, \t\r\n")
		if strings.HasSuffix(q, "?") {
			out = append(out, q)
		}
	}
	return out
}
