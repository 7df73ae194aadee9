package inspector

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"time": func(ts *timestamppb.Timestamp) string {
		if ts == nil || !ts.IsValid() || ts.AsTime().IsZero() {
			return "—"
		}
		return ts.AsTime().UTC().Format("2006-01-02 15:04:05Z")
	},
	"leg": func(l ctxdv1.SearchLeg) string {
		return strings.ToLower(strings.TrimPrefix(l.String(), "SEARCH_LEG_"))
	},
	"mode": func(m ctxdv1.SearchMode) string {
		return strings.ToLower(strings.TrimPrefix(m.String(), "SEARCH_MODE_"))
	},
	"join":  strings.Join,
	"list":  func(s ...string) []string { return s },
	"score": func(f float64) string { return fmt.Sprintf("%.4f", f) },
	"inc":   func(i int) int { return i + 1 },
	"prev":  func(rev int64) int64 { return rev - 1 },
	"yes": func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	},
	"bytes": func(n int64) string {
		switch {
		case n >= 1<<20:
			return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
		case n >= 1<<10:
			return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
		}
		return fmt.Sprintf("%d B", n)
	},
	"secs": func(d float64) string {
		return (time.Duration(d * float64(time.Second))).Round(time.Millisecond).String()
	},
	"rate": func(f float64) string { return fmt.Sprintf("%.2f", f) },
}

// invalid is the INVALID_ARGUMENT error of a form value the inspector
// reads itself.
func invalid(msg string) error { return status.Error(codes.InvalidArgument, msg) }
