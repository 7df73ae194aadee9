package daemon

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// TestDaemon_TextContentValidated sends text that is not UTF-8 or holds a
// NUL byte through Write and Edit, over gRPC and HTTP: each is
// INVALID_ARGUMENT with a hint, and the item stays readable over HTTP.
func TestDaemon_TextContentValidated(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	c := d.vfsClient(t)
	ctx := context.Background()
	writeText(t, c, "agent:/a.md", "one\ntwo\n")

	base := "http://" + d.HTTPAddr().String()
	readOverHTTP := func(when string) {
		t.Helper()
		code, body := httpCall(t, "GET", base+"/v1/read?ref="+url.QueryEscape("agent:/a.md"), "", d.token)
		var read struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal(body, &read); err != nil || code != 200 || read.Content != "one\ntwo\n" {
			t.Errorf("read over HTTP %s: %d %s", when, code, body)
		}
	}

	grpcCalls := []struct {
		name string
		call func() error
	}{
		{"edit invalid UTF-8", func() error {
			_, err := c.Edit(ctx, &ctxdv1.EditRequest{Ref: "agent:/a.md", Patches: []*ctxdv1.Patch{{StartLine: 1, EndLine: 1, Content: "\xff"}}})
			return err
		}},
		{"edit NUL", func() error {
			_, err := c.Edit(ctx, &ctxdv1.EditRequest{Ref: "agent:/a.md", Patches: []*ctxdv1.Patch{{StartLine: 2, EndLine: 0, Content: "a\x00b"}}})
			return err
		}},
		{"write NUL", func() error {
			_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: "agent:/n.md", Body: &ctxdv1.WriteRequest_Content{Content: "a\x00b"}})
			return err
		}},
	}
	for _, tt := range grpcCalls {
		t.Run("grpc "+tt.name, func(t *testing.T) {
			code, detail := errorDetail(t, tt.call())
			if code != codes.InvalidArgument || detail.Type != ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT || detail.NextActionHint == "" {
				t.Errorf("got %v %v %q", code, detail.Type, detail.NextActionHint)
			}
		})
	}
	readOverHTTP("after the gRPC calls")

	for _, req := range [][2]string{
		{"/v1/edit", `{"ref":"agent:/a.md","patches":[{"start_line":1,"end_line":1,"content":"a\u0000b"}]}`},
		{"/v1/write", `{"ref":"agent:/n.md","content":"a\u0000b"}`},
	} {
		t.Run("http "+req[0], func(t *testing.T) {
			code, body := httpCall(t, "POST", base+req[0], req[1], d.token)
			if code != 400 || !strings.Contains(string(body), "ERROR_TYPE_INVALID_ARGUMENT") || !strings.Contains(string(body), "NUL") {
				t.Errorf("%d %s", code, body)
			}
		})
	}
	readOverHTTP("after the HTTP calls")
}
