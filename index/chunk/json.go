package chunk

import (
	"encoding/json"
	"strconv"
	"strings"
)

// json chunks valid JSON: the whole document if it fits the window, else the
// members of the root (recursively, see jsonValue).
func (s *splitter) json() {
	a, b := s.trim(0, len(s.src))
	bd := s.budgetFor("", 0)
	if tok := s.countFit(a, b); s.fits(a, b, tok, bd.window) {
		s.emitCounted(a, b, bd, tok)
		return
	}
	s.jsonValue(a, b, a, nil, 0)
}

// jsonKid is one member of an object or element of an array.
type jsonKid struct {
	start int    // start of the member's key, or of the element
	value int    // start of the value
	seg   string // path segment: ".key", "[\"odd key\"]" or "[3]"
}

// jsonValue chunks the span [a,b), which holds the value starting at v plus
// the glue around it (its key, the parent's opening bracket, a trailing
// comma or closing bracket). The span is partitioned among the value's
// members: member i gets [start_i, start_i+1), the first from a and the last
// up to b, so every bracket and comma lands in some chunk. Members that fit
// the window are packed under the value's path (parts); a member that does
// not is descended into. Scalars, empty containers and values deeper than
// maxJSONDepth are split as text.
func (s *splitter) jsonValue(a, b, v int, parts []string, depth int) {
	bd := s.budget(parts, "")
	var kids []jsonKid
	if depth < maxJSONDepth {
		kids = jsonKids(s.src, v, len(parts) == 0)
	}
	if len(kids) == 0 {
		s.pack(s.textUnits(nil, a, b, bd, -1), bd)
		return
	}
	var us []unit
	for i, k := range kids {
		ka, kb := k.start, b
		if i == 0 {
			ka = a
		}
		if i+1 < len(kids) {
			kb = kids[i+1].start
		}
		ta, tb := s.trim(ka, kb)
		if tok := s.countFit(ta, tb); s.fits(ta, tb, tok, bd.window) {
			us = append(us, unit{a: ta, b: tb, tok: tok})
			continue
		}
		s.pack(us, bd)
		us = us[:0]
		child := append(parts[:len(parts):len(parts)], k.seg)
		s.jsonValue(ka, kb, k.value, child, depth+1)
	}
	s.pack(us, bd)
}

// jsonKids lists the members of the object or array starting at v in valid
// JSON src (nil for a scalar or an empty container). root tells whether the
// container is the document root, whose keys get no leading dot.
func jsonKids(src string, v int, root bool) []jsonKid {
	if v >= len(src) || (src[v] != '{' && src[v] != '[') {
		return nil
	}
	obj := src[v] == '{'
	var kids []jsonKid
	i := v + 1
	for n := 0; ; n++ {
		i = skipJSONSpace(src, i)
		if i >= len(src) || src[i] == '}' || src[i] == ']' {
			return kids
		}
		k := jsonKid{start: i}
		if obj {
			end := skipJSONString(src, i)
			k.seg = keySegment(jsonKey(src[i:end]), root)
			i = skipJSONSpace(src, end)
			if i >= len(src) || src[i] != ':' {
				return kids
			}
			i = skipJSONSpace(src, i+1)
		} else {
			k.seg = "[" + strconv.Itoa(n) + "]"
		}
		k.value = i
		kids = append(kids, k)
		i = skipJSONSpace(src, skipJSONValue(src, i))
		if i >= len(src) || src[i] != ',' {
			return kids
		}
		i++
	}
}

// jsonKey decodes a quoted JSON key.
func jsonKey(quoted string) string {
	if !strings.Contains(quoted, `\`) {
		return strings.Trim(quoted, `"`)
	}
	var k string
	if err := json.Unmarshal([]byte(quoted), &k); err != nil {
		return strings.Trim(quoted, `"`)
	}
	return k
}

// keySegment renders a key as a path segment: ".key" (just "key" at the
// root) when it has no dots, brackets, quotes, whitespace or control
// characters, else ["key"] quoted.
func keySegment(key string, root bool) string {
	plain := key != "" && !strings.ContainsFunc(key, func(r rune) bool {
		return r <= ' ' || r == '.' || r == '[' || r == ']' || r == '"' || r == 0x7f ||
			r == 0x85 || r == 0xa0 || r == 0x2028 || r == 0x2029
	})
	switch {
	case !plain:
		return "[" + strconv.Quote(key) + "]"
	case root:
		return key
	default:
		return "." + key
	}
}

func skipJSONSpace(src string, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	return i
}

// skipJSONString returns the index just past the string starting at i.
func skipJSONString(src string, i int) int {
	for i++; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(src)
}

// skipJSONValue returns the index just past the value starting at i.
func skipJSONValue(src string, i int) int {
	if i >= len(src) {
		return i
	}
	switch src[i] {
	case '"':
		return skipJSONString(src, i)
	case '{', '[':
		depth := 0
		for ; i < len(src); i++ {
			switch src[i] {
			case '"':
				i = skipJSONString(src, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(src)
	default:
		for i < len(src) && !strings.ContainsRune(",]} \t\r\n", rune(src[i])) {
			i++
		}
		return i
	}
}
