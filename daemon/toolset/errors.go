package toolset

import (
	"encoding/json"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// toolError is the seed's error shape; the field order is part of it.
type toolError struct {
	IsError        bool   `json:"is_error"`
	ErrorType      string `json:"error_type"`
	Message        string `json:"message"`
	NextActionHint string `json:"next_action_hint"`
}

// codeTypes names the error type of a status that carries no ErrorDetail
// (the transport failed, or grpc refused the call before the daemon saw it)
// and says what to do.
var codeTypes = map[codes.Code]struct{ typ, hint string }{
	codes.Unavailable: {"unavailable",
		"The ctxd daemon is not reachable. Start it with `ctxd serve` (or point --socket / CTXD_SOCKET at its socket), then retry."},
	codes.DeadlineExceeded: {"deadline_exceeded",
		"Give the call a longer deadline, or ask for less: a smaller limit, a path or drive filter, a subdirectory."},
	codes.Canceled: {"cancelled",
		"The call was cancelled before it finished; a write it had not acknowledged did not happen. Retry if that was not intended."},
	codes.ResourceExhausted: {"content_too_large",
		"The request or its response is over the size limit. Send less content per call (split it into several items), or read a line range with offset and limit."},
	codes.Unauthenticated: {"unauthenticated",
		"Present a valid token (--token / CTXD_TOKEN, or the Authorization header)."},
	codes.PermissionDenied: {"permission_denied",
		"The token lacks the scope this tool needs; use a token with that scope."},
}

// ErrorResult renders any error in the seed's shape: a gRPC status with an
// ErrorDetail gives its type (lowercased without ERROR_TYPE_) and hint; a
// status without one gives its code lowercased (unavailable,
// deadline_exceeded, ...) and a generic hint; argument errors of this
// package are invalid_argument.
func ErrorResult(err error) Result {
	te := toolError{IsError: true}
	var ae *argError
	switch {
	case errors.As(err, &ae):
		te.ErrorType, te.Message, te.NextActionHint = "invalid_argument", ae.msg, ae.hint
	default:
		st := status.Convert(err)
		if st.Code() == codes.Unknown {
			// A plain error from this side of the connection (not a status).
			st = status.FromContextError(err)
		}
		te.Message = st.Message()
		var detail *ctxdv1.ErrorDetail
		for _, d := range st.Details() {
			if ed, ok := d.(*ctxdv1.ErrorDetail); ok {
				detail = ed
			}
		}
		switch ct, known := codeTypes[st.Code()]; {
		case detail != nil && detail.Type != ctxdv1.ErrorType_ERROR_TYPE_UNSPECIFIED:
			te.ErrorType = lower(detail.Type.String(), "ERROR_TYPE_")
			te.NextActionHint = toolHint(detail.NextActionHint)
		case known:
			te.ErrorType, te.NextActionHint = ct.typ, ct.hint
		default:
			te.ErrorType = snake(st.Code().String())
			te.NextActionHint = "Retry; if it fails again, the daemon log has the details."
		}
	}
	b, _ := json.Marshal(te) // strings and a bool always marshal
	return Result{Text: string(b), IsError: true}
}

// hintReplacer rewrites the CLI-flavoured phrases of daemon hints into the
// tools' terms; the request-field names (on_conflict, recursive,
// expected_hash) are already the tools' argument names.
var hintReplacer = strings.NewReplacer("Call tree ", "Call context_tree with path ")

func toolHint(h string) string { return hintReplacer.Replace(h) }

// snake turns a gRPC code name (FailedPrecondition) into failed_precondition.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
