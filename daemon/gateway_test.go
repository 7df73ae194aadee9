package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// httpError is the JSON body of every gateway error: a google.rpc.Status
// whose one detail is the ErrorDetail.
type httpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details []struct {
		Type string `json:"type"`
		Hint string `json:"next_action_hint"`
	} `json:"details"`
}

// decodeHTTPError fails the test unless body is an error status with one
// ErrorDetail of type want and a hint.
func decodeHTTPError(t *testing.T, body []byte, want ctxdv1.ErrorType) httpError {
	t.Helper()
	var e httpError
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not a JSON status: %s", body)
	}
	if e.Code != int(typeCodes[want]) || e.Message == "" || len(e.Details) != 1 || e.Details[0].Type != want.String() || e.Details[0].Hint == "" {
		t.Fatalf("error body = %s, want code %d and one %s detail with a hint", body, typeCodes[want], want)
	}
	return e
}

// endless is an io.Reader that never ends.
type endless byte

func (b endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestGateway_BodyLimit answers an oversize body with 413 and
// CONTENT_TOO_LARGE, before reading it whole.
func TestGateway_BodyLimit(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	cfg.MaxContentBytes = 1024
	d := mustStart(t, cfg)
	base := "http://" + d.HTTPAddr().String()
	limit := maxRequestBytes(cfg.MaxContentBytes)
	write := func(content int) string {
		return `{"ref":"/big.txt","on_conflict":"ON_CONFLICT_OVERWRITE","content":"` + strings.Repeat("x", content) + `"}`
	}

	tests := []struct {
		name     string
		body     string
		edgeHint bool // refused by the daemon's edge, whose hint names the limit's flag and key
	}{
		{"content just over the limit", write(2048), false}, // refused by the store
		{"request over the limit, body under the cap", write(int(cfg.MaxContentBytes) + messageSlack + 200), true},
		{"body over the cap", write(int(limit)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := httpCall(t, "POST", base+"/v1/write", tt.body, d.token)
			if code != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413; body %.300s", code, body)
			}
			e := decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE)
			if tt.edgeHint && (!strings.Contains(e.Details[0].Hint, "max_content_bytes") || !strings.Contains(e.Details[0].Hint, "--max-content-bytes")) {
				t.Errorf("hint %q does not name the config key and the flag", e.Details[0].Hint)
			}
		})
	}

	// A body without Content-Length that never ends is cut off at the cap.
	t.Run("endless body", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a measurement
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/write",
			io.MultiReader(strings.NewReader(`{"ref":"/big.txt","content":"`), endless('x')))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+d.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("endless body: %v", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, want 413; body %s", resp.StatusCode, body)
		}
		decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE)
	})

	if code, body := httpCall(t, "GET", base+"/v1/read?ref=/big.txt", "", d.token); code != http.StatusNotFound {
		t.Errorf("an oversize write left an item: %d %s", code, body)
	}
}

// TestGateway_ParseErrors gives malformed requests the same error shape as
// every other error: INVALID_ARGUMENT with a hint.
func TestGateway_ParseErrors(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	base := "http://" + d.HTTPAddr().String()
	tests := []struct {
		name, method, path, body string
	}{
		{"malformed JSON", "POST", "/v1/write", `{"ref":`},
		{"not an object", "POST", "/v1/write", `[1,2]`},
		{"unknown field", "POST", "/v1/write", `{"ref":"/a.md","content":"x","bogus":1}`},
		{"wrong type", "POST", "/v1/write", `{"ref":5}`},
		{"bad enum", "POST", "/v1/write", `{"ref":"/a.md","content":"x","on_conflict":"SOMETIMES"}`},
		{"bad query parameter", "GET", "/v1/read?ref=/a.md&line_offset=abc", ""},
		{"streaming call with malformed JSON", "POST", "/v1/ingest/add", `{"sources":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := httpCall(t, tt.method, base+tt.path, tt.body, d.token)
			if code != http.StatusBadRequest {
				t.Errorf("status %d, want 400; body %s", code, body)
			}
			decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT)
		})
	}
}

// TestGateway_Routing answers a wrong method with 405 and the allowed ones,
// and an unknown path with 404, both with an ErrorDetail.
func TestGateway_Routing(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	base := "http://" + d.HTTPAddr().String()
	tests := []struct {
		method, path string
		want         int
		allow        string
	}{
		{"GET", "/v1/write", http.StatusMethodNotAllowed, "POST"},
		{"DELETE", "/v1/read?ref=/a.md", http.StatusMethodNotAllowed, "GET"},
		{"PUT", "/v1/admin/reindex", http.StatusMethodNotAllowed, "POST"},
		{"POST", "/openapi.json", http.StatusMethodNotAllowed, "GET, HEAD"},
		{"GET", "/v1/nope", http.StatusNotFound, ""},
		{"GET", "/nope", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, base+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+d.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			if got := resp.Header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
			want := ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND
			if tt.want == http.StatusMethodNotAllowed {
				want = ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT
			}
			e := decodeHTTPError(t, body, want)
			if method, _, _ := strings.Cut(tt.allow, ","); !strings.Contains(e.Details[0].Hint, method) {
				t.Errorf("hint %q does not name %s", e.Details[0].Hint, method)
			}
		})
	}
}

// TestGateway_StreamErrorShape: a streaming call that fails before its first
// message answers like a unary call, with the status as the whole body.
func TestGateway_StreamErrorShape(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	base := "http://" + d.HTTPAddr().String()
	// No model is configured, so Reembed is unavailable.
	code, body := httpCall(t, "POST", base+"/v1/ingest/reembed", `{}`, d.token)
	if code != http.StatusServiceUnavailable {
		t.Errorf("reembed: %d %s", code, body)
	}
	decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_UNAVAILABLE)
	code, body = httpCall(t, "POST", base+"/v1/ingest/refresh", `{}`, d.token)
	if code != http.StatusBadRequest {
		t.Errorf("refresh: %d %s", code, body)
	}
	decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT)
}

// TestGateway_LowerCaseBearer accepts the scheme in any case.
func TestGateway_LowerCaseBearer(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	req, err := http.NewRequest("GET", "http://"+d.HTTPAddr().String()+"/v1/drives", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("lower-case bearer: %d", resp.StatusCode)
	}
}

// TestDaemon_OversizeMessage gives a gRPC request over the request limit
// CONTENT_TOO_LARGE with a hint, for unary and streaming calls alike, where
// grpc itself answered RESOURCE_EXHAUSTED without a detail.
func TestDaemon_OversizeMessage(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxContentBytes = 64 << 10
	mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	over := int(cfg.MaxContentBytes) + messageSlack + 1000
	_, err := ctxdv1.NewVfsServiceClient(conn).Write(context.Background(), &ctxdv1.WriteRequest{Ref: "/huge", Body: &ctxdv1.WriteRequest_Data{Data: make([]byte, over)}})
	checkTooLarge(t, "unary", err)
	stream, err := ctxdv1.NewIngestServiceClient(conn).Add(context.Background(), &ctxdv1.AddRequest{Sources: []string{strings.Repeat("a", over)}})
	if err == nil {
		_, err = stream.Recv()
	}
	checkTooLarge(t, "streaming", err)
}

func checkTooLarge(t *testing.T, what string, err error) {
	t.Helper()
	code, detail := errorDetail(t, err)
	if code != codes.InvalidArgument || detail.Type != ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE ||
		!strings.Contains(detail.NextActionHint, "--max-content-bytes") || !strings.Contains(detail.NextActionHint, "max_content_bytes") {
		t.Errorf("%s: %v %v, want CONTENT_TOO_LARGE with a hint naming the flag and the config key", what, code, detail)
	}
}
