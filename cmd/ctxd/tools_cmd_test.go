package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxd/ctxd/daemon/toolset"
	"github.com/ctxd/ctxd/internal/llmtokens"
)

// TestCLI_Tools checks that `ctxd tools` prints the toolset's export of a
// profile (core by default) in each format, without a daemon, and refuses
// an unknown format or profile as a usage error.
func TestCLI_Tools(t *testing.T) {
	noDaemon := filepath.Join(t.TempDir(), "none.sock")
	for _, profile := range append([]string{""}, toolset.Profiles...) {
		tools, err := toolset.Profile(profile)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range toolset.Formats {
			args := []string{"tools", "--format", format}
			if profile != "" {
				args = append(args, "--tools", profile)
			}
			code, out, errOut := ctxd(t, noDaemon, "", args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
			want, err := toolset.Export(tools, format)
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want)+"\n" {
				t.Errorf("%v: output differs from toolset.Export", args)
			}
		}
	}
	code, out, _ := ctxd(t, noDaemon, "", "tools", "--format", "anthropic", "--tools", "all", "--scopes", "read,write")
	var tools []struct{ Name string }
	if err := json.Unmarshal([]byte(out), &tools); code != 0 || err != nil {
		t.Fatalf("--scopes: exit %d, %v", code, err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "context_write") || !slices.Contains(names, "context_delete") || slices.Contains(names, "context_add") {
		t.Errorf("--tools all --scopes read,write: %v", names)
	}
	if code, _, errOut := ctxd(t, noDaemon, "", "tools", "--format", "yaml"); code != exitUsage {
		t.Errorf("unknown format: exit %d (%s), want %d", code, errOut, exitUsage)
	}
	if code, _, errOut := ctxd(t, noDaemon, "", "tools", "--tools", "most"); code != exitUsage || !strings.Contains(errOut, "core, read, all") {
		t.Errorf("unknown profile: exit %d (%s), want %d", code, errOut, exitUsage)
	}
}

// TestCLI_ToolsStats is the tool list's budget as a user sees it: the total
// `ctxd tools --stats` reports for the core list in the mcp format is the
// token count of the real `ctxd tools --format mcp` output (compacted, as a
// host receives it), and it is within toolset.TokenBudget. Every profile is
// reported, each with a row per tool.
func TestCLI_ToolsStats(t *testing.T) {
	noDaemon := filepath.Join(t.TempDir(), "none.sock")
	code, out, errOut := ctxd(t, noDaemon, "", "tools", "--stats")
	if code != 0 {
		t.Fatalf("--stats: exit %d: %s", code, errOut)
	}
	totals := map[string][]int{} // profile -> mcp, openai, anthropic
	rows := map[string]int{}
	profile := ""
	header := regexp.MustCompile(`^(\w+): (\d+) tools$`)
	for line := range strings.SplitSeq(out, "\n") {
		if m := header.FindStringSubmatch(line); m != nil {
			profile = m[1]
			continue
		}
		f := strings.Fields(line)
		if profile == "" || len(f) != 1+len(toolset.Formats) || f[0] == "TOOL" {
			continue
		}
		if f[0] != "total" {
			rows[profile]++
			continue
		}
		for _, v := range f[1:] {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("total %q: %v", line, err)
			}
			totals[profile] = append(totals[profile], n)
		}
	}
	for _, p := range toolset.Profiles {
		tools, _ := toolset.Profile(p)
		if rows[p] != len(tools) || len(totals[p]) != len(toolset.Formats) {
			t.Errorf("%s: %d rows and totals %v, want %d rows and a total per format:\n%s", p, rows[p], totals[p], len(tools), out)
		}
	}

	code, listed, errOut := ctxd(t, noDaemon, "", "tools", "--format", "mcp")
	if code != 0 {
		t.Fatalf("--format mcp: exit %d: %s", code, errOut)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(listed)); err != nil {
		t.Fatal(err)
	}
	want, err := llmtokens.Count(compact.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(totals["core"]) == 0 || totals["core"][0] != want {
		t.Errorf("core, mcp: --stats says %v, the printed list counts %d", totals["core"], want)
	}
	if want > toolset.TokenBudget {
		t.Errorf("`ctxd tools --format mcp` costs %d tokens, over the budget of %d", want, toolset.TokenBudget)
	}
	if totals["all"][0] <= want {
		t.Errorf("all costs %d, core %d", totals["all"][0], want)
	}

	// --tools narrows it to one list.
	_, one, _ := ctxd(t, noDaemon, "", "tools", "--stats", "--tools", "read")
	if !strings.Contains(one, "\nread: ") || strings.Contains(one, "\ncore: ") {
		t.Errorf("--stats --tools read:\n%s", one)
	}
}
