package toolset_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/daemon/toolset"
)

func toolNames(tools []toolset.Tool) []string {
	var n []string
	for _, t := range tools {
		n = append(n, t.Name)
	}
	return n
}

// TestProfile checks each profile's tools: core is the seeds' seven and
// remember, read is every read-only tool, all is Tools(), "" is core, and
// an unknown name is an error naming the profiles. Every profile keeps
// Tools' order.
func TestProfile(t *testing.T) {
	all := toolNames(toolset.Tools())
	profile := func(name string) []string {
		t.Helper()
		tools, err := toolset.Profile(name)
		if err != nil {
			t.Fatalf("Profile(%q): %v", name, err)
		}
		got := toolNames(tools)
		if !slices.IsSortedFunc(got, func(a, b string) int { return slices.Index(all, a) - slices.Index(all, b) }) {
			t.Errorf("%s is not in Tools' order: %v", name, got)
		}
		return got
	}
	core := []string{"context_list_drives", "context_tree", "context_read", "context_write", "context_edit",
		"context_search", "build_context", "remember"}
	if got := profile(toolset.ProfileCore); !slices.Equal(sorted(got), sorted(core)) {
		t.Errorf("core: %v, want %v", got, core)
	}
	if got := profile(""); !slices.Equal(got, profile(toolset.ProfileCore)) {
		t.Errorf(`"" is not core: %v`, got)
	}
	var readOnly []string
	for _, tool := range toolset.Tools() {
		if tool.Annotations.ReadOnly {
			readOnly = append(readOnly, tool.Name)
		}
	}
	if got := profile(toolset.ProfileRead); !slices.Equal(got, readOnly) || !slices.Contains(got, "context_history") || slices.Contains(got, "context_write") {
		t.Errorf("read: %v, want the read-only tools %v", got, readOnly)
	}
	if got := profile(toolset.ProfileAll); !slices.Equal(got, all) {
		t.Errorf("all: %v, want %v", got, all)
	}
	if _, err := toolset.Profile("everything"); err == nil || !strings.Contains(err.Error(), "core, read, all") {
		t.Errorf("unknown profile: %v", err)
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// TestKnown checks that the names merged into context_info still run but
// no profile lists them, and that every listed tool is known.
func TestKnown(t *testing.T) {
	for _, name := range []string{"context_exists", "context_count_lines", "context_dir_size"} {
		if !toolset.Known(name) {
			t.Errorf("%s is no longer callable", name)
		}
		if slices.Contains(toolNames(toolset.Tools()), name) {
			t.Errorf("%s is listed; context_info answers it", name)
		}
	}
	for _, tool := range toolset.Tools() {
		if !toolset.Known(tool.Name) {
			t.Errorf("%s is listed but not known", tool.Name)
		}
	}
	if toolset.Known("context_frobnicate") {
		t.Error("an unknown name is known")
	}
}

// TestCountTokens_CoreWithinBudget is the budget of the default tool list:
// the core profile, as the owner (every scope) gets it, in every format,
// counted as CountTokens counts it, must cost at most TokenBudget tokens.
// A tool or a description that grows the list past it fails here: trim, or
// move the tool out of core. It also checks that the whole list costs about
// the sum of its entries (the array adds punctuation, which merges into a
// token with its neighbour at times), and that more tools cost more.
func TestCountTokens_CoreWithinBudget(t *testing.T) {
	core, err := toolset.Profile(toolset.ProfileCore)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range toolset.Formats {
		st, err := toolset.CountTokens(core, format)
		if err != nil {
			t.Fatal(err)
		}
		if st.Total > toolset.TokenBudget {
			t.Errorf("%s: the core tool list costs %d tokens, over the budget of %d (ctxd tools --stats shows each tool's share)", format, st.Total, toolset.TokenBudget)
		}
		sum := 0
		for i, tt := range st.Tools {
			if tt.Name != core[i].Name || tt.Tokens < 20 {
				t.Errorf("%s: entry %d is %+v, want %s with its tokens", format, i, tt, core[i].Name)
			}
			sum += tt.Tokens
		}
		if d := st.Total - sum; d < -len(core) || d > 2*len(core)+2 {
			t.Errorf("%s: total %d, entries sum to %d", format, st.Total, sum)
		}
		all, err := toolset.CountTokens(toolset.Tools(), format)
		if err != nil {
			t.Fatal(err)
		}
		if all.Total <= st.Total {
			t.Errorf("%s: all costs %d, core %d", format, all.Total, st.Total)
		}
		t.Logf("%s: core %d tokens, all %d", format, st.Total, all.Total)
	}
	if _, err := toolset.CountTokens(core, "yaml"); err == nil {
		t.Error("unknown format counted")
	}
}
