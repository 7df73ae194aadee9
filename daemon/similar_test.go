package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

const (
	deployNote = "# Deployment\n\nRun the canary release in staging before rolling out to production, and watch the error rate for an hour before going further.\n"
	// deployEdit is deployNote reworded a little, as an agent rewrites a memory.
	deployEdit = "# Deployment\n\nRun the canary release on staging before rolling it out to production, then watch the error rate for one hour before going on.\n"
	gardenNote = "# Garden\n\nWater the tomatoes every morning in July, and tie the vines to their stakes as they grow.\n"
	breadNote  = "# Bread\n\nKnead the dough for ten minutes, let it rise until it has doubled, then bake it at 220 degrees until the crust is brown.\n"
)

func similarRefs(r *ctxdv1.FindSimilarResponse) []string {
	var out []string
	for _, it := range r.GetItems() {
		out = append(out, it.GetRef())
	}
	return out
}

// TestFindSimilar runs FindSimilar with the real model through the daemon:
// an exact copy, a small rewording above the default threshold, an
// unrelated note below it, the target never among its own results, the
// caller's access, limits and errors, over gRPC and JSON/HTTP.
func TestFindSimilar(t *testing.T) {
	cfg := withModel(t, testConfig(t))
	cfg.GRPCTCP, cfg.HTTP = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Limits.MaxSimilarTextBytes = 4096
	cfg.Tokens = []TokenConfig{{Name: "team", SHA256: sha256Hex("team-token"), Scopes: []string{"read"}, Paths: []string{"notes:/team/"}}}
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(conn)
	writeText(t, vc, "notes:/deploy.md", deployNote)
	writeText(t, vc, "notes:/deploy-copy.md", deployNote)
	writeText(t, vc, "notes:/team/deploy-edit.md", deployEdit)
	writeText(t, vc, "notes:/bread.md", breadNote)
	waitEmbedded(t, conn, 60*time.Second)
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 30*time.Second)
	sc := ctxdv1.NewSearchServiceClient(conn)
	ctx := context.Background()

	r, err := sc.FindSimilar(ctx, &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Ref{Ref: "notes:/deploy.md"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := similarRefs(r); len(got) != 2 || got[0] != "notes:/deploy-copy.md" || got[1] != "notes:/team/deploy-edit.md" {
		t.Fatalf("similar to notes:/deploy.md: %v", r.GetItems())
	}
	exact, edit := r.Items[0], r.Items[1]
	if exact.GetSimilarity() < 0.999 || exact.GetCoverage() != 1 || r.GetTargetChunks() != 1 {
		t.Errorf("exact copy: %v (target chunks %d)", exact, r.GetTargetChunks())
	}
	t.Logf("rewording: similarity %.4f", edit.GetSimilarity())
	if s := edit.GetSimilarity(); s < 0.9 || s >= exact.GetSimilarity() || edit.GetCoverage() != 1 {
		t.Errorf("rewording: %v", edit)
	}
	if exact.GetTitle() != "deploy-copy.md" || !strings.Contains(exact.GetSnippet(), "canary") || !strings.HasPrefix(exact.GetChunkId(), exact.GetItemId()+"#") {
		t.Errorf("exact copy shows %v", exact)
	}

	// The same text: nothing excluded, the bread note still below; a
	// threshold over the rewording's similarity leaves the copies.
	r, err = sc.FindSimilar(ctx, &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Text{Text: deployNote}})
	if err != nil {
		t.Fatal(err)
	}
	if got := similarRefs(r); len(got) != 3 || got[2] != "notes:/team/deploy-edit.md" || r.Items[0].GetSimilarity() < 0.999 {
		t.Fatalf("similar to the text: %v", r.GetItems())
	}
	strict := (edit.GetSimilarity() + 1) / 2
	r, err = sc.FindSimilar(ctx, &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Text{Text: deployNote}, Threshold: strict, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetItems()) != 1 || r.Items[0].GetRef() == "notes:/team/deploy-edit.md" {
		t.Errorf("threshold %v, limit 1: %v", strict, r.GetItems())
	}
	r, err = sc.FindSimilar(ctx, &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Text{Text: breadNote}})
	if err != nil || len(r.GetItems()) != 1 || r.Items[0].GetRef() != "notes:/bread.md" {
		t.Errorf("similar to the bread note: %v, %v", r.GetItems(), err)
	}

	// A token limited to notes:/team/ compares only what it may see.
	tcp := ctxdv1.NewSearchServiceClient(dial(t, "passthrough:///"+d.GRPCAddr().String()))
	team := bearer("team-token")
	r, err = tcp.FindSimilar(team, &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Text{Text: deployNote}})
	if err != nil || strings.Join(similarRefs(r), " ") != "notes:/team/deploy-edit.md" {
		t.Errorf("limited token: %v, %v", similarRefs(r), err)
	}
	_, err = tcp.FindSimilar(team, &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Ref{Ref: "notes:/deploy.md"}})
	if code, _ := errorDetail(t, err); code != codes.NotFound {
		t.Errorf("limited token, ref outside its access: %v", err)
	}

	// JSON over HTTP.
	status, body := httpCall(t, "POST", "http://"+d.HTTPAddr().String()+"/v1/similar", `{"ref":"notes:/deploy.md","threshold":0.95}`, d.token)
	var resp struct {
		Items []struct {
			Ref        string
			Similarity float64
			Coverage   float64
		}
		TargetChunks int `json:"target_chunks"`
	}
	if err := json.Unmarshal(body, &resp); status != 200 || err != nil || len(resp.Items) == 0 || resp.Items[0].Ref != "notes:/deploy-copy.md" || resp.TargetChunks != 1 {
		t.Errorf("HTTP %d: %s", status, body)
	}

	for _, tt := range []struct {
		name string
		req  *ctxdv1.FindSimilarRequest
		code codes.Code
		hint string
	}{
		{"no target", &ctxdv1.FindSimilarRequest{}, codes.InvalidArgument, "ctxd similar"},
		{"threshold over 1", &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Text{Text: "x"}, Threshold: 1.5}, codes.InvalidArgument, "--threshold"},
		{"negative threshold", &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Ref{Ref: "notes:/deploy.md"}, Threshold: -1}, codes.InvalidArgument, "--threshold"},
		{"text over the limit", &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Text{Text: strings.Repeat("word ", 1000)}}, codes.InvalidArgument, "CTXD_MAX_SIMILAR_TEXT_BYTES"},
		{"empty text", &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Text{Text: " \n"}}, codes.InvalidArgument, "--text"},
		{"limit over the maximum", &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Ref{Ref: "notes:/deploy.md"}, Limit: 1001}, codes.InvalidArgument, "`ctxd similar --limit`); the daemon's owner can raise the limit with limits.max_search_limit"},
		{"missing ref", &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Ref{Ref: "notes:/nothing.md"}}, codes.NotFound, ""},
		{"directory", &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Ref{Ref: "notes:/team"}}, codes.FailedPrecondition, "item ref"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sc.FindSimilar(ctx, tt.req)
			code, ed := errorDetail(t, err)
			if code != tt.code || !strings.Contains(ed.GetNextActionHint(), tt.hint) {
				t.Errorf("error %v (hint %q), want %v with a hint naming %q", err, ed.GetNextActionHint(), tt.code, tt.hint)
			}
		})
	}
}

// TestFindSimilar_WithoutEmbeddings: with the model's tokenizer but no
// runtime the vector leg exists and nothing gets embedded, so a ref's
// chunks wait for vectors and a text cannot be embedded; both say what to
// do.
func TestFindSimilar_WithoutEmbeddings(t *testing.T) {
	cfg := testConfig(t)
	cfg.ModelDir, cfg.OnnxRuntimeLib = modelDir(t), filepath.Join(t.TempDir(), "no-libonnxruntime.so")
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	writeText(t, d.vfsClient(t), "notes:/deploy.md", deployNote)
	waitStatus(t, ctxdv1.NewAdminServiceClient(conn), 30*time.Second, "the vector leg", func(st *ctxdv1.StatusResponse) bool {
		return st.GetIndex().GetAppliedSequence() >= st.GetIndex().GetOutboxSequence() && st.GetEmbedding().GetModelId() != ""
	})
	sc := ctxdv1.NewSearchServiceClient(conn)
	// Status shows the model's id before the search engine has taken the
	// model, and until it has, a ref is answered as if no model were set.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := sc.FindSimilar(context.Background(), &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Ref{Ref: "notes:/deploy.md"}})
		if _, ed := errorDetail(t, err); !strings.Contains(ed.GetNextActionHint(), "make setup-run") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, tt := range []struct {
		name string
		req  *ctxdv1.FindSimilarRequest
		hint string
	}{
		{"ref not embedded", &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Ref{Ref: "notes:/deploy.md"}}, "pending embedding"},
		{"text", &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Text{Text: deployNote}}, "make setup-run"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sc.FindSimilar(context.Background(), tt.req)
			code, ed := errorDetail(t, err)
			if code != codes.Unavailable || !strings.Contains(ed.GetNextActionHint(), tt.hint) {
				t.Errorf("error %v (hint %q), want UNAVAILABLE with a hint naming %q", err, ed.GetNextActionHint(), tt.hint)
			}
		})
	}
	_, err := add(t, conn, &ctxdv1.AddRequest{Sources: []string{t.TempDir()}, DedupeThreshold: 0.9})
	if code, ed := errorDetail(t, err); code != codes.Unavailable || !strings.Contains(ed.GetNextActionHint(), "without --dedupe") {
		t.Errorf("add --dedupe: %v (hint %q)", err, ed.GetNextActionHint())
	}
}

// TestIngest_Dedupe adds a tree with dedupe_threshold over a store holding
// two notes: a reworded copy of one and an exact copy of the other
// (several chunks) are skipped naming the item they duplicate; a distinct
// note, and a copy with a new section no stored item holds, are added.
func TestIngest_Dedupe(t *testing.T) {
	root := t.TempDir()
	cfg := withModel(t, testConfig(t))
	cfg.AllowedRoots = []string{root}
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := d.vfsClient(t)
	writeText(t, vc, "notes:/deploy.md", deployNote)
	writeText(t, vc, "notes:/runbook.md", runbook)
	waitEmbedded(t, conn, time.Minute)
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 30*time.Second)

	files := map[string]string{
		"deploy.md":   deployEdit,
		"runbook.md":  runbook,
		"bread.md":    breadNote,
		"extended.md": runbook + "\n## Escalation\n\n" + strings.Repeat("Escalate to the database team when a restore takes longer than two hours. ", 12) + "\n",
		// Two copies of a note no stored item holds: one is added, the other
		// is a duplicate of it though it is not searchable yet.
		"twin-a.md": gardenNote,
		"twin-b.md": gardenNote,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := add(t, conn, &ctxdv1.AddRequest{Sources: []string{root}, Drive: "files", DedupeThreshold: 1.5}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("threshold 1.5: %v", err)
	}
	ev, err := add(t, conn, &ctxdv1.AddRequest{Sources: []string{root}, Drive: "files", DedupeThreshold: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*ctxdv1.IngestItemResult{}
	for _, it := range ev.items {
		got[filepath.Base(it.GetSource())] = it
	}
	skipped, added := ctxdv1.IngestAction_INGEST_ACTION_SKIPPED, ctxdv1.IngestAction_INGEST_ACTION_ADDED
	for name, want := range map[string]struct {
		action ctxdv1.IngestAction
		dup    string
	}{
		"deploy.md":   {skipped, "notes:/deploy.md"},
		"runbook.md":  {skipped, "notes:/runbook.md"},
		"bread.md":    {added, ""},
		"extended.md": {added, ""},
	} {
		if it := got[name]; it.GetAction() != want.action || it.GetDuplicateOf() != want.dup {
			t.Errorf("%s: %v, want %v duplicate of %q", name, it, want.action, want.dup)
		}
	}
	a, b := got["twin-a.md"], got["twin-b.md"]
	if a.GetAction() == skipped {
		a, b = b, a
	}
	if a.GetAction() != added || b.GetAction() != skipped || b.GetDuplicateOf() != a.GetRef() {
		t.Errorf("twins: %v and %v, want one added and the other a duplicate of it", a, b)
	}
	if ev.summary.GetSkipped() != 3 || ev.summary.GetAdded() != 3 {
		t.Errorf("summary %v", ev.summary)
	}
}

// TestFindSimilar_WithoutModel: with no model at all a stored item has
// chunks but never vectors; FindSimilar says a model is missing, not that
// the item waits.
func TestFindSimilar_WithoutModel(t *testing.T) {
	cfg := testConfig(t)
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	writeText(t, d.vfsClient(t), "notes:/deploy.md", deployNote)
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 30*time.Second)
	_, err := ctxdv1.NewSearchServiceClient(conn).FindSimilar(context.Background(), &ctxdv1.FindSimilarRequest{Target: &ctxdv1.FindSimilarRequest_Ref{Ref: "notes:/deploy.md"}})
	if code, ed := errorDetail(t, err); code != codes.Unavailable || !strings.Contains(ed.GetNextActionHint(), "make setup-run") {
		t.Errorf("error %v (hint %q), want UNAVAILABLE naming the model setup", err, ed.GetNextActionHint())
	}
}
