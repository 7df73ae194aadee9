package search

import (
	"slices"

	"github.com/ctxd/ctxd/index/lexical"
)

// within narrows f to the drive-qualified path prefixes of bound ("agent:/",
// "agent:/project-x"): the result matches what both f's drives and path
// prefixes and one of bound's prefixes match, and ok is false when that is
// nothing. f has been validated.
func within(f lexical.Filter, bound []string) (_ lexical.Filter, ok bool) {
	var out []string
	for _, b := range bound {
		bd, bp, err := lexical.ParsePathPrefix(b)
		if err != nil || bd == "" || len(f.Drives) > 0 && !slices.Contains(f.Drives, bd) {
			continue // a bound that is not drive-qualified allows nothing
		}
		if len(f.PathPrefixes) == 0 {
			out = append(out, bd+":"+bp)
			continue
		}
		for _, p := range f.PathPrefixes {
			d, dir, _ := lexical.ParsePathPrefix(p)
			switch {
			case d != "" && d != bd:
			case under(dir, bp):
				out = append(out, bd+":"+dir)
			case under(bp, dir):
				out = append(out, bd+":"+bp)
			}
		}
	}
	if len(out) == 0 {
		return f, false
	}
	slices.Sort(out)
	f.PathPrefixes = slices.Compact(out)
	return f, true
}
