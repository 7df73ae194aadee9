package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func TestDaemon_UnixSocketRoundTrip(t *testing.T) {
	d := mustStart(t, testConfig(t))
	ctx := context.Background()
	conn := dial(t, "unix://"+d.cfg.Socket)
	c := ctxdv1.NewVfsServiceClient(conn)

	fi, err := os.Stat(d.cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("socket mode = %o, want 600", perm)
	}
	hc, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || hc.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v; want SERVING", hc, err)
	}

	w := writeText(t, c, "agent:/notes/100% done_*.md", "héllo\nwörld\n")
	if !w.Created || w.Item.SizeBytes != int64(len("héllo\nwörld\n")) || w.Item.LineCount != 2 {
		t.Errorf("write = %+v", w.Item)
	}
	if !strings.Contains(w.Tree.Rendered, "100% done_*.md") {
		t.Errorf("write snapshot does not show the item:\n%s", w.Tree.Rendered)
	}
	r, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: "agent:/notes/100% done_*.md", LineOffset: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "wörld\n" || r.StartLine != 2 || r.TotalLines != 2 {
		t.Errorf("read = %q start %d total %d", r.Content, r.StartLine, r.TotalLines)
	}
	// The id is a ref too.
	if byID, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: w.Item.Id}); err != nil || byID.Content != "héllo\nwörld\n" {
		t.Errorf("read by id = %v, %v", byID, err)
	}
	tree, err := c.Tree(ctx, &ctxdv1.TreeRequest{Ref: "agent:/"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tree.Rendered, "notes") || len(tree.Root.Children) != 1 {
		t.Errorf("tree:\n%s", tree.Rendered)
	}
	del, err := c.Delete(ctx, &ctxdv1.DeleteRequest{Ref: "agent:/notes", Recursive: true})
	if err != nil || del.DeletedCount != 1 {
		t.Fatalf("delete = %v, %v", del, err)
	}
	_, err = c.Read(ctx, &ctxdv1.ReadRequest{Ref: "agent:/notes/100% done_*.md"})
	if code, detail := errorDetail(t, err); code != codes.NotFound || detail.Type != ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND {
		t.Errorf("read after delete: %v %v", code, detail)
	}
}

func TestDaemon_NotFoundHintNamesSiblings(t *testing.T) {
	d := mustStart(t, testConfig(t))
	c := d.vfsClient(t)
	writeText(t, c, "agent:/notes/readme.md", "a")
	writeText(t, c, "agent:/notes/guide.md", "b")
	_, err := c.Read(context.Background(), &ctxdv1.ReadRequest{Ref: "agent:/notes/architecture.md"})
	code, detail := errorDetail(t, err)
	if code != codes.NotFound {
		t.Fatalf("code = %v", code)
	}
	for _, want := range []string{"agent:/notes/readme.md", "agent:/notes/guide.md"} {
		if !strings.Contains(detail.NextActionHint, want) || !contains(detail.NearbyRefs, want) {
			t.Errorf("hint %q / nearby %v lacks %s", detail.NextActionHint, detail.NearbyRefs, want)
		}
	}
	if detail.Ref != "agent:/notes/architecture.md" {
		t.Errorf("detail ref = %q", detail.Ref)
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestDaemon_Reflection(t *testing.T) {
	d := mustStart(t, testConfig(t))
	stream, err := reflectionpb.NewServerReflectionClient(dial(t, "unix://"+d.cfg.Socket)).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	for _, want := range []string{"ctxd.v1.VfsService", "ctxd.v1.SearchService", "ctxd.v1.IngestService", "ctxd.v1.AdminService", "grpc.health.v1.Health"} {
		if !contains(names, want) {
			t.Errorf("reflection lists %v, missing %s", names, want)
		}
	}
}

func TestDaemon_SecondInstanceRefused(t *testing.T) {
	cfg := testConfig(t)
	mustStart(t, cfg)
	second := cfg
	second.Socket = cfg.Socket + "2"
	_, err := Start(context.Background(), second, slogDiscard())
	if err == nil || !strings.Contains(err.Error(), "in use by another ctxd") {
		t.Fatalf("second Start on the same data dir: %v", err)
	}
	other := testConfig(t)
	other.Socket = cfg.Socket
	_, err = Start(context.Background(), other, slogDiscard())
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second Start on the same socket: %v", err)
	}
}

func TestDaemon_TCPNeedsToken(t *testing.T) {
	cfg := testConfig(t)
	cfg.GRPCTCP = "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{{Name: "reader", SHA256: sha256Hex("reader-token"), Scopes: []string{"read"}}}
	d := mustStart(t, cfg)
	c := ctxdv1.NewVfsServiceClient(dial(t, "passthrough:///"+d.GRPCAddr().String()))
	write := &ctxdv1.WriteRequest{Ref: "/a.md", Body: &ctxdv1.WriteRequest_Content{Content: "x"}}
	withToken := func(tok string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	}

	tests := []struct {
		name string
		ctx  context.Context
		call func(context.Context) error
		want codes.Code
	}{
		{"no token", context.Background(), func(ctx context.Context) error { _, err := c.ListDrives(ctx, &ctxdv1.ListDrivesRequest{}); return err }, codes.Unauthenticated},
		{"wrong token", withToken("nope"), func(ctx context.Context) error { _, err := c.ListDrives(ctx, &ctxdv1.ListDrivesRequest{}); return err }, codes.Unauthenticated},
		{"owner writes", withToken(d.token), func(ctx context.Context) error { _, err := c.Write(ctx, write); return err }, codes.OK},
		{"reader reads", withToken("reader-token"), func(ctx context.Context) error { _, err := c.ListDrives(ctx, &ctxdv1.ListDrivesRequest{}); return err }, codes.OK},
		{"reader cannot write", withToken("reader-token"), func(ctx context.Context) error { _, err := c.Write(ctx, write); return err }, codes.PermissionDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(tt.ctx)
			if tt.want == codes.OK {
				if err != nil {
					t.Fatalf("want OK, got %v", err)
				}
				return
			}
			code, detail := errorDetail(t, err)
			if code != tt.want || detail.NextActionHint == "" {
				t.Errorf("got %v %v, want %v with a hint", code, detail, tt.want)
			}
		})
	}
	fi, err := os.Stat(cfg.TokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v mode %v, want 0600", err, fi)
	}
}

// TestDaemon_ErrorMapping checks that each error type reaches gRPC and HTTP
// clients with the same type and the documented codes.
func TestDaemon_ErrorMapping(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	cfg.MaxContentBytes = 1024
	d := mustStart(t, cfg)
	c := d.vfsClient(t)
	writeText(t, c, "/dir/a.md", "one\ntwo\n")
	if _, err := c.Write(context.Background(), &ctxdv1.WriteRequest{Ref: "/bin.dat", Body: &ctxdv1.WriteRequest_Data{Data: []byte{0, 1, 2}}}); err != nil {
		t.Fatal(err)
	}
	base := "http://" + d.HTTPAddr().String()

	tests := []struct {
		name     string
		grpcCall func(context.Context) error
		method   string // HTTP
		path     string
		body     string
		wantType ctxdv1.ErrorType
		wantCode codes.Code
		wantHTTP int
	}{
		{"not found",
			func(ctx context.Context) error {
				_, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: "/dir/zz.md"})
				return err
			},
			"GET", "/v1/read?ref=" + url.QueryEscape("/dir/zz.md"), "",
			ctxdv1.ErrorType_ERROR_TYPE_NOT_FOUND, codes.NotFound, 404},
		{"path conflict",
			func(ctx context.Context) error {
				_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: "/dir/a.md", Body: &ctxdv1.WriteRequest_Content{Content: "x"}})
				return err
			},
			"POST", "/v1/write", `{"ref":"/dir/a.md","content":"x"}`,
			ctxdv1.ErrorType_ERROR_TYPE_PATH_CONFLICT, codes.AlreadyExists, 409},
		{"invalid ref",
			func(ctx context.Context) error { _, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: "Bad:/x"}); return err },
			"GET", "/v1/read?ref=Bad:/x", "",
			ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, codes.InvalidArgument, 400},
		{"dot dot",
			func(ctx context.Context) error {
				_, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: "agent:/dir/../etc"})
				return err
			},
			"GET", "/v1/read?ref=" + url.QueryEscape("agent:/dir/../etc"), "",
			ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, codes.InvalidArgument, 400},
		{"no text",
			func(ctx context.Context) error {
				_, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: "/bin.dat"})
				return err
			},
			"GET", "/v1/read?ref=/bin.dat", "",
			ctxdv1.ErrorType_ERROR_TYPE_NO_TEXT_CONTENT, codes.FailedPrecondition, 400},
		{"is a directory",
			func(ctx context.Context) error { _, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: "/dir"}); return err },
			"GET", "/v1/read?ref=/dir", "",
			ctxdv1.ErrorType_ERROR_TYPE_IS_DIRECTORY, codes.FailedPrecondition, 400},
		{"not a directory",
			func(ctx context.Context) error {
				_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: "/dir/a.md/b", Body: &ctxdv1.WriteRequest_Content{Content: "x"}})
				return err
			},
			"POST", "/v1/write", `{"ref":"/dir/a.md/b","content":"x"}`,
			ctxdv1.ErrorType_ERROR_TYPE_NOT_DIRECTORY, codes.FailedPrecondition, 400},
		{"out of range",
			func(ctx context.Context) error {
				_, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: "/dir/a.md", LineOffset: 9})
				return err
			},
			"GET", "/v1/read?ref=/dir/a.md&line_offset=9", "",
			ctxdv1.ErrorType_ERROR_TYPE_OUT_OF_RANGE, codes.OutOfRange, 400},
		{"invalid patch",
			func(ctx context.Context) error {
				_, err := c.Edit(ctx, &ctxdv1.EditRequest{Ref: "/dir/a.md", Patches: []*ctxdv1.Patch{{StartLine: 1, EndLine: 2, Content: "a"}, {StartLine: 2, EndLine: 2, Content: "b"}}})
				return err
			},
			"POST", "/v1/edit", `{"ref":"/dir/a.md","patches":[{"start_line":1,"end_line":2,"content":"a"},{"start_line":2,"end_line":2,"content":"b"}]}`,
			ctxdv1.ErrorType_ERROR_TYPE_INVALID_PATCH, codes.InvalidArgument, 400},
		{"content changed",
			func(ctx context.Context) error {
				_, err := c.Edit(ctx, &ctxdv1.EditRequest{Ref: "/dir/a.md", ExpectedContentHash: strings.Repeat("0", 64), Patches: []*ctxdv1.Patch{{StartLine: 1, EndLine: 1, Content: "a"}}})
				return err
			},
			"POST", "/v1/edit", `{"ref":"/dir/a.md","expected_content_hash":"` + strings.Repeat("0", 64) + `","patches":[{"start_line":1,"end_line":1,"content":"a"}]}`,
			ctxdv1.ErrorType_ERROR_TYPE_CONTENT_CHANGED, codes.Aborted, 409},
		{"directory not empty",
			func(ctx context.Context) error {
				_, err := c.Delete(ctx, &ctxdv1.DeleteRequest{Ref: "/dir"})
				return err
			},
			"POST", "/v1/delete", `{"ref":"/dir"}`,
			ctxdv1.ErrorType_ERROR_TYPE_DIRECTORY_NOT_EMPTY, codes.FailedPrecondition, 400},
		{"too large",
			func(ctx context.Context) error {
				_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: "/big.txt", Body: &ctxdv1.WriteRequest_Content{Content: strings.Repeat("x", 2048)}})
				return err
			},
			"POST", "/v1/write", `{"ref":"/big.txt","content":"` + strings.Repeat("x", 2048) + `"}`,
			ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE, codes.InvalidArgument, 413},
		{"streaming call with a bad request",
			func(ctx context.Context) error {
				stream, err := ctxdv1.NewIngestServiceClient(dial(t, "unix://"+cfg.Socket)).Add(ctx, &ctxdv1.AddRequest{})
				if err != nil {
					return err
				}
				_, err = stream.Recv() // a streaming call's status arrives with the first read
				return err
			},
			"POST", "/v1/ingest/add", `{}`,
			ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, codes.InvalidArgument, 400},
		{"search without queries",
			func(ctx context.Context) error {
				_, err := ctxdv1.NewSearchServiceClient(dial(t, "unix://"+cfg.Socket)).Search(ctx, &ctxdv1.SearchRequest{})
				return err
			},
			"POST", "/v1/search", `{}`,
			ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT, codes.InvalidArgument, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, detail := errorDetail(t, tt.grpcCall(context.Background()))
			if code != tt.wantCode || detail.Type != tt.wantType {
				t.Errorf("gRPC: got %v %v, want %v %v", code, detail.Type, tt.wantCode, tt.wantType)
			}
			httpStatus, body := httpCall(t, tt.method, base+tt.path, tt.body, d.token)
			if httpStatus != tt.wantHTTP {
				t.Errorf("HTTP status = %d, want %d; body %s", httpStatus, tt.wantHTTP, body)
			}
			var st httpError
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatalf("HTTP body is not JSON: %s", body)
			}
			if st.Code != int(tt.wantCode) || len(st.Details) != 1 || st.Details[0].Type != tt.wantType.String() || st.Message == "" {
				t.Errorf("HTTP body = %s", body)
			}
		})
	}
}

func httpCall(t testing.TB, method, url, body, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func TestGateway_HTTP(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	base := "http://" + d.HTTPAddr().String()

	code, body := httpCall(t, "POST", base+"/v1/write", `{"ref":"notes:/a b/c.md","content":"# Title\nbody\n","tags":["x"]}`, d.token)
	if code != 200 || !strings.Contains(string(body), `"created": true`) && !strings.Contains(string(body), `"created":true`) {
		t.Fatalf("write: %d %s", code, body)
	}
	code, body = httpCall(t, "GET", base+"/v1/read?ref="+url.QueryEscape("notes:/a b/c.md"), "", d.token)
	var read struct {
		Content    string `json:"content"`
		TotalLines string `json:"total_lines"` // int64 is a JSON string
	}
	if err := json.Unmarshal(body, &read); err != nil || code != 200 || read.Content != "# Title\nbody\n" || read.TotalLines != "2" {
		t.Fatalf("read: %d %s", code, body)
	}
	code, body = httpCall(t, "GET", base+"/v1/drives", "", d.token)
	if code != 200 || !strings.Contains(string(body), `"notes"`) {
		t.Errorf("drives: %d %s", code, body)
	}
	code, body = httpCall(t, "GET", base+"/openapi.json", "", d.token)
	if code != 200 || !strings.Contains(string(body), "/v1/read") {
		t.Errorf("openapi: %d %.200s", code, body)
	}
	for _, tok := range []string{"", "wrong"} {
		code, body = httpCall(t, "GET", base+"/v1/drives", "", tok)
		if code != 401 || !strings.Contains(string(body), "ERROR_TYPE_UNAUTHENTICATED") {
			t.Errorf("token %q: %d %s", tok, code, body)
		}
	}
	code, _ = httpCall(t, "GET", base+"/openapi.json", "", "")
	if code != 401 {
		t.Errorf("openapi without token: %d", code)
	}
}

// TestDaemon_BadInput sends malformed requests; each gets a precise error and
// leaves nothing behind.
func TestDaemon_BadInput(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxContentBytes = 1 << 10
	d := mustStart(t, cfg)
	c := d.vfsClient(t)
	ctx := context.Background()
	tests := []struct {
		name string
		req  *ctxdv1.WriteRequest
		want ctxdv1.ErrorType
	}{
		{"invalid utf-8 path", &ctxdv1.WriteRequest{Ref: "agent:/bad\xff.md"}, ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT},
		{"dot dot", &ctxdv1.WriteRequest{Ref: "agent:/a/../b"}, ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT},
		{"nul", &ctxdv1.WriteRequest{Ref: "agent:/a\x00b"}, ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT},
		{"control char", &ctxdv1.WriteRequest{Ref: "agent:/a\nb"}, ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT},
		{"bad drive", &ctxdv1.WriteRequest{Ref: "No Drive:/a"}, ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT},
		{"invalid utf-8 text", &ctxdv1.WriteRequest{Ref: "/t.txt", Body: &ctxdv1.WriteRequest_Content{Content: "ok\xc3("}}, ctxdv1.ErrorType_ERROR_TYPE_INVALID_ARGUMENT},
		{"oversized", &ctxdv1.WriteRequest{Ref: "/big", Body: &ctxdv1.WriteRequest_Data{Data: make([]byte, 2<<10)}}, ctxdv1.ErrorType_ERROR_TYPE_CONTENT_TOO_LARGE},
		{"drive root", &ctxdv1.WriteRequest{Ref: "agent:/"}, ctxdv1.ErrorType_ERROR_TYPE_IS_DIRECTORY},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Write(ctx, tt.req)
			code, detail := errorDetail(t, err)
			if detail.Type != tt.want || code != typeCodes[tt.want] {
				t.Errorf("got %v %v (%v), want %v", code, detail.Type, err, tt.want)
			}
			if !strings.Contains(err.Error(), "\\x") && strings.ContainsAny(err.Error(), "\xff\x00") {
				t.Errorf("message leaks raw bytes: %q", err.Error())
			}
		})
	}
	drives, err := c.ListDrives(ctx, &ctxdv1.ListDrivesRequest{})
	if err != nil || len(drives.Drives) != 0 {
		t.Errorf("bad writes left items behind: %v %v", drives, err)
	}
	// Beyond maxRequestBytes grpc itself refuses the message, without a detail
	// (TestDaemon_OversizeMessage covers the range below it).
	_, err = c.Write(ctx, &ctxdv1.WriteRequest{Ref: "/huge", Body: &ctxdv1.WriteRequest_Data{Data: make([]byte, maxRequestBytes(cfg.MaxContentBytes)+1)}})
	if code := status.Code(err); code != codes.ResourceExhausted {
		t.Errorf("huge message: %v", err)
	}
}

// TestDaemon_ConcurrentClients runs 32 clients writing and reading
// overlapping paths; every acknowledged write must be readable afterwards.
func TestDaemon_ConcurrentClients(t *testing.T) {
	d := mustStart(t, testConfig(t))
	c := d.vfsClient(t)
	ctx := context.Background()
	const clients, ops, shared = 32, 40, 8
	var mu sync.Mutex
	acked := map[string]map[string]bool{} // ref -> contents acknowledged
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ops {
				ref := fmt.Sprintf("agent:/own/c%d/k%d.md", i, j)
				if j%2 == 1 {
					ref = fmt.Sprintf("agent:/shared/k%d.md", j%shared)
				}
				body := fmt.Sprintf("client %d op %d\n", i, j)
				_, err := c.Write(ctx, &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: body}, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
				if err != nil {
					errs <- fmt.Errorf("write %s: %w", ref, err)
					return
				}
				mu.Lock()
				if acked[ref] == nil {
					acked[ref] = map[string]bool{}
				}
				acked[ref][body] = true
				mu.Unlock()
				if _, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: fmt.Sprintf("agent:/shared/k%d.md", (j+i)%shared)}); err != nil && status.Code(err) != codes.NotFound {
					errs <- fmt.Errorf("read: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for ref, bodies := range acked {
		r, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: ref})
		if err != nil {
			t.Fatalf("acknowledged %s unreadable: %v", ref, err)
		}
		if !bodies[r.Content] {
			t.Errorf("%s holds %q, which no acknowledged write wrote", ref, r.Content)
		}
	}
	du, err := c.DirSize(ctx, &ctxdv1.DirSizeRequest{Ref: "agent:/own"})
	if err != nil || du.ItemCount != clients*ops/2 {
		t.Errorf("own items = %v, %v; want %d", du, err, clients*ops/2)
	}
}
