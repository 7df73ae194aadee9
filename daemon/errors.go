package daemon

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/ingest"
	"github.com/ctxd/ctxd/vfs"
)

// kindTypes maps the error kinds of vfs and ingest (the Kind of their Error
// types) to the API's error types.
var kindTypes = map[error]ctxdv1.ErrorType{
	vfs.ErrNotFound:      ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND,
	vfs.ErrConflict:      ctxdv1.ErrorType_ERROR_TYPE_PATH_CONFLICT,
	vfs.ErrNoText:        ctxdv1.ErrorType_ERROR_TYPE_NO_TEXT_CONTENT,
	vfs.ErrInvalid:       ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT,
	vfs.ErrInvalidPatch:  ctxdv1.ErrorType_ERROR_TYPE_INVALID_PATCH,
	vfs.ErrIsDir:         ctxdv1.ErrorType_ERROR_TYPE_IS_DIRECTORY,
	vfs.ErrNotDir:        ctxdv1.ErrorType_ERROR_TYPE_NOT_DIRECTORY,
	vfs.ErrTooLarge:      ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE,
	vfs.ErrOutOfRange:    ctxdv1.ErrorType_ERROR_TYPE_OUT_OF_RANGE,
	vfs.ErrChanged:       ctxdv1.ErrorType_ERROR_TYPE_CONTENT_CHANGED,
	vfs.ErrDirNotEmpty:   ctxdv1.ErrorType_ERROR_TYPE_DIRECTORY_NOT_EMPTY,
	vfs.ErrReadOnly:      ctxdv1.ErrorType_ERROR_TYPE_READ_ONLY,
	vfs.ErrDenied:        ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED,
	ingest.ErrRefused:    ctxdv1.ErrorType_ERROR_TYPE_SOURCE_REFUSED,
	ingest.ErrUnreadable: ctxdv1.ErrorType_ERROR_TYPE_SOURCE_UNREADABLE,
	ingest.ErrMissing:    ctxdv1.ErrorType_ERROR_TYPE_SOURCE_UNREADABLE,
	ingest.ErrTooLarge:   ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE,
	ingest.ErrExists:     ctxdv1.ErrorType_ERROR_TYPE_PATH_CONFLICT,
	ingest.ErrInvalid:    ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT,
}

// typeCodes gives the gRPC code of every error type. It is the one place
// where error types meet transport codes; grpc-gateway derives HTTP codes.
var typeCodes = map[ctxdv1.ErrorType]codes.Code{
	ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND:           codes.NotFound,
	ctxdv1.ErrorType_ERROR_TYPE_PATH_CONFLICT:       codes.AlreadyExists,
	ctxdv1.ErrorType_ERROR_TYPE_NO_TEXT_CONTENT:     codes.FailedPrecondition,
	ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT:    codes.InvalidArgument,
	ctxdv1.ErrorType_ERROR_TYPE_INVALID_PATCH:       codes.InvalidArgument,
	ctxdv1.ErrorType_ERROR_TYPE_IS_DIRECTORY:        codes.FailedPrecondition,
	ctxdv1.ErrorType_ERROR_TYPE_NOT_DIRECTORY:       codes.FailedPrecondition,
	ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE:   codes.InvalidArgument,
	ctxdv1.ErrorType_ERROR_TYPE_OUT_OF_RANGE:        codes.OutOfRange,
	ctxdv1.ErrorType_ERROR_TYPE_CONTENT_CHANGED:     codes.Aborted,
	ctxdv1.ErrorType_ERROR_TYPE_DIRECTORY_NOT_EMPTY: codes.FailedPrecondition,
	ctxdv1.ErrorType_ERROR_TYPE_UNAUTHENTICATED:     codes.Unauthenticated,
	ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED:   codes.PermissionDenied,
	ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE:         codes.Unavailable,
	ctxdv1.ErrorType_ERROR_TYPE_UNIMPLEMENTED:       codes.Unimplemented,
	ctxdv1.ErrorType_ERROR_TYPE_INTERNAL:            codes.Internal,
	ctxdv1.ErrorType_ERROR_TYPE_SOURCE_REFUSED:      codes.PermissionDenied,
	ctxdv1.ErrorType_ERROR_TYPE_SOURCE_UNREADABLE:   codes.FailedPrecondition,
	ctxdv1.ErrorType_ERROR_TYPE_CANCELLED:           codes.Canceled,
	ctxdv1.ErrorType_ERROR_TYPE_DEADLINE_EXCEEDED:   codes.DeadlineExceeded,
	ctxdv1.ErrorType_ERROR_TYPE_READ_ONLY:           codes.PermissionDenied,
}

// apiError builds a status error carrying an ErrorDetail.
func apiError(typ ctxdv1.ErrorType, msg, hint string) error {
	return detailedStatus(&ctxdv1.ErrorDetail{Type: typ, NextActionHint: hint}, msg)
}

func detailedStatus(d *ctxdv1.ErrorDetail, msg string) error {
	st, err := status.New(typeCodes[d.Type], msg).WithDetails(d)
	if err != nil { // only fails if the detail cannot be marshalled
		return status.Error(typeCodes[d.Type], msg)
	}
	return st.Err()
}

// toStatus converts an error from the domain into a gRPC status error. Domain
// errors keep their message, hint and nearby refs; a store out of reach is
// UNAVAILABLE, named by store without its password; anything unexpected is
// logged and becomes a generic Internal error.
func toStatus(log *slog.Logger, store *storeInfo, method string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if u, ok := unreachable(err); ok {
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, "store unreachable: "+store.scrub(u.Err.Error()), store.unavailableHint())
	}
	var ve *vfs.Error
	if errors.As(err, &ve) {
		if typ, ok := kindTypes[ve.Kind]; ok {
			return detailedStatus(&ctxdv1.ErrorDetail{Type: typ, NextActionHint: ve.Hint, Ref: ve.Ref, NearbyRefs: ve.Nearby}, ve.Message)
		}
	}
	var ie *ingest.Error
	if errors.As(err, &ie) {
		if typ, ok := kindTypes[ie.Kind]; ok {
			return detailedStatus(&ctxdv1.ErrorDetail{Type: typ, NextActionHint: ie.Hint, Ref: ie.Source}, ie.Message)
		}
	}
	switch {
	case errors.Is(err, embed.ErrUnavailable):
		// A remote embedding endpoint failing: its message names it and
		// what failed, and holds no key.
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE, err.Error(),
			"The embedding endpoint is failing; `ctxd status` shows it and when it is tried again. Retry once it answers.")
	case errors.Is(err, context.Canceled):
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_CANCELLED, "request cancelled",
			"The call was cancelled before it finished and the daemon stopped working on it; a write it had not acknowledged did not happen. Retry if that was not intended.")
	case errors.Is(err, context.DeadlineExceeded):
		return apiError(ctxdv1.ErrorType_ERROR_TYPE_DEADLINE_EXCEEDED, "request deadline exceeded",
			"Give the call a longer deadline (the client's timeout), or ask for less: a smaller limit, a path or drive filter, a subdirectory.")
	}
	log.Error("internal error", "method", method, "err", store.scrub(err.Error()))
	return apiError(ctxdv1.ErrorType_ERROR_TYPE_INTERNAL, "internal error", "The daemon log has the details; retry, and report it if it persists.")
}
