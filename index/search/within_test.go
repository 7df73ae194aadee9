package search

import (
	"slices"
	"testing"

	"github.com/ctxd/ctxd/index/lexical"
)

func TestWithin(t *testing.T) {
	bound := []string{"agent:/project-x", "self:/"}
	tests := []struct {
		name string
		f    lexical.Filter
		want []string // nil: nothing can match
	}{
		{"no filter", lexical.Filter{}, []string{"agent:/project-x", "self:/"}},
		{"drive outside", lexical.Filter{Drives: []string{"vault"}}, nil},
		{"drive inside", lexical.Filter{Drives: []string{"self", "vault"}}, []string{"self:/"}},
		{"prefix above", lexical.Filter{PathPrefixes: []string{"agent:/"}}, []string{"agent:/project-x"}},
		{"prefix below", lexical.Filter{PathPrefixes: []string{"agent:/project-x/sub/"}}, []string{"agent:/project-x/sub"}},
		{"sibling prefix", lexical.Filter{PathPrefixes: []string{"agent:/project-xyz"}}, nil},
		{"prefix in any drive", lexical.Filter{PathPrefixes: []string{"/notes"}}, []string{"self:/notes"}},
		{"prefix in any drive above", lexical.Filter{PathPrefixes: []string{"/"}}, []string{"agent:/project-x", "self:/"}},
		{"drives and prefixes", lexical.Filter{Drives: []string{"agent"}, PathPrefixes: []string{"/project-x/a", "self:/"}}, []string{"agent:/project-x/a"}},
		{"prefix in another drive", lexical.Filter{PathPrefixes: []string{"vault:/project-x"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := within(tt.f, bound)
			if ok != (tt.want != nil) || ok && !slices.Equal(f.PathPrefixes, tt.want) {
				t.Errorf("within = %q, %v; want %q", f.PathPrefixes, ok, tt.want)
			}
			if ok && !slices.Equal(f.Drives, tt.f.Drives) {
				t.Errorf("drives changed to %q", f.Drives)
			}
		})
	}
	if _, ok := within(lexical.Filter{}, []string{}); ok {
		t.Error("an empty bound matches something")
	}
}
