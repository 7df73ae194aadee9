package assemble

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/ctxd/ctxd/vfs"
)

// Summarizer rewrites text as instructions ask, with a language model (the
// optional enricher, index/enrich); it bounds what it sends.
type Summarizer interface {
	// Summarize returns the model's answer to instructions about text.
	Summarize(ctx context.Context, instructions, text string) (string, error)
}

// DefaultCompactMinTokens is the size in model tokens over which a memory
// file counts as oversized: loaded whole into a context it would take half
// of the default BuildContext budget (4,000) twice over.
const DefaultCompactMinTokens = 8000

// Methods a compaction is made by.
const (
	CompactExtractive = "extractive"
	CompactEnricher   = "enricher"
)

// CompactRequest names the file to compact.
type CompactRequest struct {
	Ref vfs.Ref
	// MinTokens: a body of at most this many tokens is left alone; 0 means
	// DefaultCompactMinTokens.
	MinTokens int
	// TargetTokens is what the compacted body aims at; 0 means half of
	// MinTokens.
	TargetTokens int
	DryRun       bool
	ExpectedHash string // the content the caller read, if any
	// Count counts model tokens; nil estimates one per 4 bytes.
	Count func(string) int
	// Summarizer, when set, writes the compacted body; the extractive one
	// is its fallback, and is used when the model's is no shorter.
	Summarizer Summarizer
}

// CompactResult says what was (or would be) written.
type CompactResult struct {
	Compacted                 bool // false: the body was within MinTokens
	TokensBefore, TokensAfter int
	Body                      string
	Method                    string
	Item                      vfs.Item // after the write
	PreviousRev               int64    // the revision holding the content before
	EnricherError             string
}

// Compact rewrites an oversized memory file shorter and keeps the old
// version in its history (the Knowledge Hive's compaction of category
// notes, without requiring a model). The frontmatter is kept byte for
// byte. Extractive compaction splits the body into sections by heading
// and each section into blocks (paragraphs, list entries with their
// continuation lines, fenced code kept whole); it drops blocks that repeat
// an earlier one (the same words, or 80% of them), keeps every heading,
// and then, while the body is over the target, keeps the newest (last)
// blocks of each section within that section's share of the target and
// says in the section how many older entries were compacted and which
// revision holds them. The write is the caller's (the agent guard applies)
// with the operation vfs.OpCompact, and expects the content read.
func Compact(ctx context.Context, store *vfs.Store, req CompactRequest) (CompactResult, error) {
	it, content, err := store.ReadRaw(ctx, req.Ref)
	if err != nil {
		return CompactResult{}, err
	}
	at := it.Ref()
	if !it.IsText {
		return CompactResult{}, &vfs.Error{Kind: vfs.ErrNoText, Ref: at, Message: fmt.Sprintf("%s is not text, so it cannot be compacted.", at), Hint: "compact a text memory file"}
	}
	if req.ExpectedHash != "" && req.ExpectedHash != it.ContentHash {
		return CompactResult{}, &vfs.Error{Kind: vfs.ErrChanged, Ref: at,
			Message: fmt.Sprintf("%s changed: its content hash is %s, not the expected %s.", at, it.ContentHash, req.ExpectedHash),
			Hint:    "read it again and compact the current content"}
	}
	if req.MinTokens < 0 || req.TargetTokens < 0 {
		return CompactResult{}, &vfs.Error{Kind: vfs.ErrInvalid, Ref: at, Message: "min_tokens and target_tokens must not be negative.", Hint: "pass 0 for the defaults"}
	}
	count := req.Count
	if count == nil {
		count = estimateTokens
	}
	minTokens := cmp.Or(req.MinTokens, DefaultCompactMinTokens)
	target := cmp.Or(req.TargetTokens, minTokens/2)
	block, body := vfs.SplitFrontmatter(content)
	res := CompactResult{TokensBefore: count(string(body)), Body: string(body)}
	if res.TokensBefore <= minTokens {
		res.TokensAfter = res.TokensBefore
		return res, nil
	}
	latest, err := store.History(ctx, vfs.Ref{ID: it.ID}, 1, 0)
	if err != nil {
		return CompactResult{}, err
	}
	var rev int64
	if len(latest) == 1 {
		rev = latest[0].Rev
	}
	res.Compacted, res.PreviousRev = true, rev
	res.Body, res.Method = extractiveCompact(string(body), target, count, at, rev), CompactExtractive
	if req.Summarizer != nil {
		text, err := req.Summarizer.Summarize(ctx, fmt.Sprintf(compactInstructions, target*3/4), string(body))
		switch {
		case ctx.Err() != nil:
			return CompactResult{}, ctx.Err()
		case err != nil:
			res.EnricherError = err.Error()
		case strings.TrimSpace(text) == "" || count(text) >= res.TokensBefore:
			res.EnricherError = "the model's text is no shorter than the file"
		default:
			res.Body, res.Method = strings.TrimSpace(text)+"\n", CompactEnricher
		}
	}
	res.TokensAfter = count(res.Body)
	if req.DryRun {
		res.PreviousRev = 0
		return res, nil
	}
	w, err := replaceBody(ctx, store, it, block, []byte(res.Body), vfs.OpCompact)
	if err != nil {
		return CompactResult{}, fmt.Errorf("compact %s: %w", at, err)
	}
	res.Item = w.Item
	return res, nil
}

const compactInstructions = `Rewrite the memory file below shorter, for an AI agent that loads it into its context. ` +
	`Keep every heading, every fact that is still true, and names, paths, commands and numbers exactly; merge repeated entries; ` +
	`when entries contradict, keep the later one. Write markdown of at most %d words and answer with the file's new text only.`

// section is a heading line (empty for the text before the first) and the
// blocks under it.
type section struct {
	heading string
	blocks  []string
}

// extractiveCompact is Compact's model-free rewrite of body.
func extractiveCompact(body string, target int, count func(string) int, ref string, rev int64) string {
	sections := splitSections(body)
	total := 0
	for i := range sections {
		s := &sections[i]
		total += count(s.heading)
		seen := map[string][]map[string]bool{} // the words of the section's kept blocks, by word
		// Later entries win: walk backwards and drop a block that repeats
		// a later one.
		var kept []string
		for j := len(s.blocks) - 1; j >= 0; j-- {
			b := s.blocks[j]
			words := wordSet(b)
			if repeats(seen, words) {
				continue
			}
			remember(seen, words)
			kept = append(kept, b)
			total += count(b)
		}
		for l, r := 0, len(kept)-1; l < r; l, r = l+1, r-1 {
			kept[l], kept[r] = kept[r], kept[l]
		}
		s.blocks = kept
	}
	var out strings.Builder
	for _, s := range sections {
		blocks := s.blocks
		dropped := 0
		if total > target {
			share := 0
			for _, b := range blocks {
				share += count(b)
			}
			// The section's share of the target, in proportion to its size.
			allow := share * target / max(total, 1)
			n, used := 0, 0
			for j := len(blocks) - 1; j >= 0; j-- {
				c := count(blocks[j])
				if n > 0 && used+c > allow {
					break
				}
				used += c
				n++
			}
			dropped, blocks = len(blocks)-n, blocks[len(blocks)-n:]
		}
		if s.heading != "" {
			out.WriteString(s.heading + "\n\n")
		}
		switch {
		case dropped > 0 && rev > 0:
			fmt.Fprintf(&out, "_%d older entries compacted; `ctxd read %s --rev %d` has them._\n\n", dropped, ref, rev)
		case dropped > 0:
			fmt.Fprintf(&out, "_%d older entries compacted._\n\n", dropped)
		}
		for _, b := range blocks {
			out.WriteString(b + "\n\n")
		}
	}
	return strings.TrimRight(out.String(), "\n") + "\n"
}

// splitSections splits markdown into sections at heading lines and each
// into blocks: paragraphs, list entries (an item with its indented
// continuation lines), and fenced code blocks kept whole.
func splitSections(body string) []section {
	var out []section
	cur := section{}
	var blk []string
	flush := func() {
		if len(blk) > 0 {
			cur.blocks = append(cur.blocks, strings.Join(blk, "\n"))
			blk = nil
		}
	}
	fence := ""
	for line := range strings.Lines(body) {
		line = strings.TrimRight(line, "\r\n")
		trim := strings.TrimSpace(line)
		switch {
		case fence != "":
			blk = append(blk, line)
			if strings.HasPrefix(trim, fence) {
				fence = ""
				flush()
			}
		case strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~"):
			flush()
			fence = trim[:3]
			blk = append(blk, line)
		case strings.HasPrefix(line, "#"):
			flush()
			if cur.heading != "" || len(cur.blocks) > 0 {
				out = append(out, cur)
			}
			cur = section{heading: line}
		case trim == "":
			flush()
		case isListItem(line):
			flush()
			blk = append(blk, line)
		default:
			blk = append(blk, line)
		}
	}
	flush()
	if cur.heading != "" || len(cur.blocks) > 0 {
		out = append(out, cur)
	}
	return out
}

// isListItem reports whether line starts a top-level list entry.
func isListItem(line string) bool {
	for _, p := range []string{"- ", "* ", "+ "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	i := strings.IndexFunc(line, func(r rune) bool { return !unicode.IsDigit(r) })
	return i > 0 && (strings.HasPrefix(line[i:], ". ") || strings.HasPrefix(line[i:], ") "))
}

// wordSet is the lowercased words of a block.
func wordSet(b string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(b), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[w] = true
	}
	return out
}

// repeats reports whether words are those of a kept block, or 80% of the
// union with one (a restatement with a word or two changed).
func repeats(seen map[string][]map[string]bool, words map[string]bool) bool {
	for w := range words {
		for _, other := range seen[w] {
			common := 0
			for x := range words {
				if other[x] {
					common++
				}
			}
			if union := len(words) + len(other) - common; union > 0 && float64(common)/float64(union) >= 0.8 {
				return true
			}
		}
	}
	return false
}

// remember indexes a kept block's words by each of its words, so repeats
// compares a block only with blocks sharing a word.
func remember(seen map[string][]map[string]bool, words map[string]bool) {
	for w := range words {
		seen[w] = append(seen[w], words)
	}
}
