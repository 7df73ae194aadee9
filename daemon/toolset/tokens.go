package toolset

import (
	"fmt"

	"github.com/ctxd/ctxd/internal/llmtokens"
)

// TokenBudget is what the default tool list (ProfileCore, every scope) may
// cost a model in each format, in llmtokens.Encoding tokens: an MCP host
// loads it into every conversation before the first word. A test holds the
// list to it.
const TokenBudget = 4000

// TokenStats is what a tool list costs a model, counted with
// llmtokens.Encoding over the compact JSON of the list in one format (as an
// MCP host receives it in tools/list, and as a provider's API takes it).
type TokenStats struct {
	// Tools is each tool's own entry, in the list's order.
	Tools []ToolTokens
	// Total is the whole array: the entries and the punctuation between them.
	Total int
}

// ToolTokens is one tool's entry.
type ToolTokens struct {
	Name   string
	Tokens int
}

// CountTokens measures tools in a format (one of Formats).
func CountTokens(tools []Tool, format string) (TokenStats, error) {
	entries, err := exportEntries(tools, format)
	if err != nil {
		return TokenStats{}, err
	}
	var st TokenStats
	for i, e := range entries {
		n, err := countJSON(e)
		if err != nil {
			return TokenStats{}, err
		}
		st.Tools = append(st.Tools, ToolTokens{tools[i].Name, n})
	}
	if st.Total, err = countJSON(entries); err != nil {
		return TokenStats{}, err
	}
	return st, nil
}

func countJSON(v any) (int, error) {
	b, err := marshal(v, "")
	if err != nil {
		return 0, fmt.Errorf("encode tools: %w", err)
	}
	return llmtokens.Count(string(b))
}
