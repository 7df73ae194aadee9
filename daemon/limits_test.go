package daemon

import (
	"strings"
	"testing"
)

func TestConfig_Limits(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.LoadConfig(strings.NewReader("[limits]\nmax_queries = 5\nmax_list_limit = 70\n")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CTXD_MAX_TREE_DEPTH": "4", "CTXD_MAX_QUERY_BYTES": "4096"}
	if err := cfg.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	want := DefaultLimits()
	want.MaxQueries, want.MaxListLimit, want.MaxTreeDepth, want.MaxQueryBytes = 5, 70, 4, 4096
	if cfg.Limits != want {
		t.Fatalf("limits %+v, want %+v", cfg.Limits, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// The engine sees the same values.
	if s := cfg.Limits.search(); s.MaxQueries != 5 || s.MaxQueryBytes != 4096 || s.MaxLimit != want.MaxSearchLimit {
		t.Fatalf("engine limits %+v", s)
	}

	cfg.Limits.MaxTreeItemsPerDir = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "limits.max_tree_items_per_dir") {
		t.Fatalf("Validate with a zero limit: %v", err)
	}
	bad := DefaultConfig()
	if err := bad.ApplyEnv(func(k string) (string, bool) { return "many", k == "CTXD_MAX_QUERIES" }); err == nil || !strings.Contains(err.Error(), "CTXD_MAX_QUERIES") {
		t.Fatalf("ApplyEnv with a bad number: %v", err)
	}
	if err := bad.LoadConfig(strings.NewReader("[limits]\nmax_querys = 5\n")); err == nil {
		t.Fatal("a misspelt limit was accepted")
	}
}
