package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/embed"
)

func TestToStatus_ContextErrorsCarryDetail(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		err      error
		wantCode codes.Code
		wantType ctxdv1.ErrorType
	}{
		{fmt.Errorf("search: %w", context.Canceled), codes.Canceled, ctxdv1.ErrorType_ERROR_TYPE_CANCELLED},
		{fmt.Errorf("list: %w", context.DeadlineExceeded), codes.DeadlineExceeded, ctxdv1.ErrorType_ERROR_TYPE_DEADLINE_EXCEEDED},
		{fmt.Errorf("embed: %w: embedding endpoint http://127.0.0.1:1/v1 is failing", embed.ErrUnavailable), codes.Unavailable, ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.wantType.String(), func(t *testing.T) {
			st := status.Convert(toStatus(log, &storeInfo{}, "/ctxd.v1.SearchService/Search", tt.err))
			if st.Code() != tt.wantCode {
				t.Errorf("code = %v, want %v", st.Code(), tt.wantCode)
			}
			details := st.Details()
			if len(details) != 1 {
				t.Fatalf("details = %v, want one ErrorDetail", details)
			}
			d, ok := details[0].(*ctxdv1.ErrorDetail)
			if !ok || d.Type != tt.wantType || d.NextActionHint == "" {
				t.Errorf("detail = %v, want type %v with a hint", details[0], tt.wantType)
			}
		})
	}
}
