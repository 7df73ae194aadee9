package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// revisionSummary is "actor/op/rev" per revision, newest first.
func revisionSummary(rs []*ctxdv1.Revision) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.GetActor()+"/"+r.GetOp()+"/"+r.GetRef())
	}
	return out
}

// TestVfsService_History follows an item through write, edit, revert,
// delete and restore over gRPC: its revisions with actor and operation, an
// old revision's content, a revert as a new revision, the deleted list, and
// the audit log by actor and time, paged.
func TestVfsService_History(t *testing.T) {
	d := startTokenDaemon(t)
	vc := ctxdv1.NewVfsServiceClient(d.tcp)
	owner, ci := bearer(d.token), bearer(ciSecret)
	const ref = "notes:/a.md"

	w, err := vc.Write(owner, &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: "v1\n"}})
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	if _, err := vc.Edit(ci, &ctxdv1.EditRequest{Ref: ref, Patches: []*ctxdv1.Patch{{StartLine: 1, EndLine: 1, Content: "v2 by ci"}}}); err != nil {
		t.Fatal(err)
	}
	h, err := vc.History(owner, &ctxdv1.HistoryRequest{Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := revisionSummary(h.GetRevisions()), []string{"ci/edit/" + ref, "owner/write/" + ref}; !slices.Equal(got, want) {
		t.Fatalf("History = %v, want %v", got, want)
	}
	r1 := h.GetRevisions()[1]
	if r1.GetRev() != 1 || h.GetRevisions()[0].GetRev() != 2 || r1.GetContentHash() != w.GetItem().GetContentHash() || r1.GetSizeBytes() != 3 ||
		r1.GetItemId() != w.GetItem().GetId() || r1.GetTime() == nil || r1.GetItem().GetRef() != ref {
		t.Errorf("revision 1 = %v, want rev 1 with the write's hash, size, id and time", r1)
	}

	old, err := vc.ReadRevision(ci, &ctxdv1.ReadRevisionRequest{Ref: ref, Rev: 1})
	if err != nil || old.GetContent() != "v1\n" || old.GetRevision().GetRev() != 1 {
		t.Fatalf("ReadRevision 1 = %v, %v; want v1", old, err)
	}
	_, err = vc.ReadRevision(ci, &ctxdv1.ReadRevisionRequest{Ref: ref, Rev: 9})
	if code, _ := errorDetail(t, err); code != codes.NotFound {
		t.Errorf("ReadRevision of a revision that does not exist: %v, want NOT_FOUND", code)
	}

	rv, err := vc.Revert(ci, &ctxdv1.RevertRequest{Ref: ref, Rev: 1})
	if err != nil || rv.GetItem().GetContentHash() != w.GetItem().GetContentHash() || rv.GetCreated() {
		t.Fatalf("Revert to 1 = %v, %v", rv, err)
	}
	if got := readContent(t, owner, vc, ref); got != "v1\n" {
		t.Errorf("content after the revert = %q", got)
	}

	if _, err := vc.Delete(owner, &ctxdv1.DeleteRequest{Ref: ref}); err != nil {
		t.Fatal(err)
	}
	del, err := vc.ListDeleted(owner, &ctxdv1.ListDeletedRequest{Ref: "notes:/"})
	if err != nil || len(del.GetRevisions()) != 1 || del.GetRevisions()[0].GetRef() != ref || !del.GetRevisions()[0].GetDeleted() || del.GetRevisions()[0].GetRev() != 4 {
		t.Fatalf("ListDeleted notes:/ = %v, %v; want the deletion of %s as revision 4", del, err, ref)
	}
	if other, err := vc.ListDeleted(owner, &ctxdv1.ListDeletedRequest{Ref: "elsewhere:/"}); err != nil || len(other.GetRevisions()) != 0 {
		t.Errorf("ListDeleted elsewhere:/ = %v, %v; want nothing", other, err)
	}
	h, err = vc.History(owner, &ctxdv1.HistoryRequest{Ref: ref})
	if err != nil || len(h.GetRevisions()) != 4 || h.GetRevisions()[0].GetOp() != "delete" {
		t.Fatalf("History of the deleted item = %v, %v", revisionSummary(h.GetRevisions()), err)
	}

	restored, err := vc.Revert(owner, &ctxdv1.RevertRequest{Ref: ref, Rev: 3})
	if err != nil || !restored.GetCreated() || restored.GetItem().GetId() != w.GetItem().GetId() {
		t.Fatalf("Revert of the deleted item = %v, %v; want it restored with its id", restored, err)
	}
	if got := readContent(t, owner, vc, ref); got != "v1\n" {
		t.Errorf("restored content = %q", got)
	}

	// The audit log: what ci did, newest first, and paging.
	lg, err := vc.Log(owner, &ctxdv1.LogRequest{Actor: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := revisionSummary(lg.GetRevisions()), []string{"ci/revert/" + ref, "ci/edit/" + ref}; !slices.Equal(got, want) {
		t.Errorf("Log actor=ci = %v, want %v", got, want)
	}
	lg, err = vc.Log(owner, &ctxdv1.LogRequest{Since: timestamppb.New(since)})
	if err != nil {
		t.Fatal(err)
	}
	if got := revisionSummary(lg.GetRevisions()); len(got) != 4 || slices.Contains(got, "owner/write/"+ref) {
		t.Errorf("Log since the first write = %v, want the four later changes", got)
	}
	var paged []string
	var token string
	for range 10 {
		page, err := vc.Log(owner, &ctxdv1.LogRequest{Limit: 2, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.GetRevisions()) > 2 {
			t.Fatalf("page of %d revisions, limit 2", len(page.GetRevisions()))
		}
		for _, r := range page.GetRevisions() {
			paged = append(paged, r.GetOp())
		}
		if token = page.GetNextPageToken(); token == "" {
			break
		}
	}
	if want := []string{"revert", "delete", "revert", "edit", "write"}; !slices.Equal(paged, want) {
		t.Errorf("Log paged by 2 = %v, want %v", paged, want)
	}

	_, err = vc.History(owner, &ctxdv1.HistoryRequest{Ref: ref, Limit: 1001})
	if code, detail := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(detail.GetNextActionHint(), "1000") {
		t.Errorf("History limit over 1000: %v %v, want INVALID_ARGUMENT with a hint naming the maximum", code, detail)
	}
}

// TestGateway_History calls History, ReadRevision, Revert, ListDeleted and
// Log over HTTP.
func TestGateway_History(t *testing.T) {
	d := startTokenDaemon(t)
	vc := ctxdv1.NewVfsServiceClient(d.tcp)
	const ref = "notes:/h.md"
	q := url.QueryEscape(ref)
	writeText(t, d.vfsClient(t), ref, "one\n")
	if _, err := vc.Write(bearer(ciSecret), &ctxdv1.WriteRequest{Ref: ref, Body: &ctxdv1.WriteRequest_Content{Content: "two\n"}, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE}); err != nil {
		t.Fatal(err)
	}
	type revision struct {
		Rev     int64  `json:"rev,string"`
		Actor   string `json:"actor"`
		Op      string `json:"op"`
		Ref     string `json:"ref"`
		Deleted bool   `json:"deleted"`
	}
	get := func(path string, out any) {
		t.Helper()
		code, body := httpCall(t, "GET", d.base+path, "", d.token)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, body)
		}
	}

	var h struct{ Revisions []revision }
	get("/v1/history?ref="+q, &h)
	if len(h.Revisions) != 2 || h.Revisions[0].Actor != "ci" || h.Revisions[0].Rev != 2 || h.Revisions[1].Actor != "owner" {
		t.Fatalf("GET /v1/history = %+v", h)
	}
	var rr struct {
		Content  string
		Revision revision
	}
	get("/v1/revision?ref="+q+"&rev=1", &rr)
	if rr.Content != "one\n" || rr.Revision.Rev != 1 {
		t.Errorf("GET /v1/revision = %+v", rr)
	}
	if code, body := httpCall(t, "POST", d.base+"/v1/revert", `{"ref":"`+ref+`","rev":1}`, botSecret); code != http.StatusOK {
		t.Errorf("POST /v1/revert: %d %s", code, body)
	}
	if got := readContent(t, context.Background(), d.vfsClient(t), ref); got != "one\n" {
		t.Errorf("content after the HTTP revert = %q", got)
	}
	if code, body := httpCall(t, "POST", d.base+"/v1/delete", `{"ref":"`+ref+`"}`, d.token); code != http.StatusOK {
		t.Fatalf("POST /v1/delete: %d %s", code, body)
	}
	var del struct{ Revisions []revision }
	get("/v1/deleted?ref="+url.QueryEscape("notes:/"), &del)
	if len(del.Revisions) != 1 || del.Revisions[0].Ref != ref || !del.Revisions[0].Deleted {
		t.Errorf("GET /v1/deleted = %+v", del)
	}
	var lg struct {
		Revisions     []revision
		NextPageToken string `json:"next_page_token"`
	}
	get("/v1/log?actor=bot&since="+url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)), &lg)
	if len(lg.Revisions) != 1 || lg.Revisions[0].Op != "revert" || lg.Revisions[0].Actor != "bot" {
		t.Errorf("GET /v1/log?actor=bot = %+v", lg)
	}
}

// TestDaemon_PrunesHistory starts a daemon that keeps one revision per item
// regardless of age: at start it prunes the older revisions.
func TestDaemon_PrunesHistory(t *testing.T) {
	cfg := testConfig(t)
	d, stop := startStop(t, cfg)
	c := d.vfsClient(t)
	for _, v := range []string{"one\n", "two\n", "three\n"} {
		writeText(t, c, "notes:/p.md", v)
	}
	h, err := c.History(context.Background(), &ctxdv1.HistoryRequest{Ref: "notes:/p.md"})
	if err != nil || len(h.GetRevisions()) != 3 {
		t.Fatalf("History before pruning: %v, %v; want 3 revisions (the default keeps 20)", revisionSummary(h.GetRevisions()), err)
	}
	stop()

	cfg.HistoryKeep, cfg.HistoryMinAge = 1, Duration{}
	d = mustStart(t, cfg)
	c = d.vfsClient(t)
	deadline := time.Now().Add(time.Minute) // a guard against a prune that never runs, not a measurement
	for {
		h, err = c.History(context.Background(), &ctxdv1.HistoryRequest{Ref: "notes:/p.md"})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.GetRevisions()) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("History after a minute = %v, want only the newest revision", revisionSummary(h.GetRevisions()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := h.GetRevisions()[0]; r.GetRev() != 3 {
		t.Errorf("kept revision %d, want 3", r.GetRev())
	}
	if got := readContent(t, context.Background(), c, "notes:/p.md"); got != "three\n" {
		t.Errorf("content after pruning = %q", got)
	}
}
