package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// limitedCase is a token limited to drives or paths, what it may see, and
// words that only what lies outside holds.
type limitedCase struct {
	name, secret string
	describe     string   // the access as denials name it
	inside       []string // ref prefixes it may see ("agent:/", "agent:/project-x/")
	outside      []string // refs of items it must not see
	markers      []string // words only those items (their refs, content, titles) hold
}

func (c limitedCase) sees(ref string) bool {
	for _, p := range c.inside {
		if strings.HasPrefix(ref+"/", p) {
			return true
		}
	}
	return false
}

// leaks returns the first marker in s other than in the refs the caller asked about.
func (c limitedCase) leaks(s string, asked ...string) string {
	for _, a := range asked {
		s = strings.ReplaceAll(s, a, "ASKED")
		if drive, _, ok := strings.Cut(a, ":"); ok {
			s = strings.ReplaceAll(s, fmt.Sprintf("drive %q", drive), "drive ASKED")
			s = strings.ReplaceAll(s, `drive \"`+drive+`\"`, "drive ASKED") // in JSON
		}
	}
	for _, m := range c.markers {
		if strings.Contains(strings.ToLower(s), strings.ToLower(m)) {
			return m
		}
	}
	return ""
}

func (c limitedCase) noLeak(t *testing.T, what string, m proto.Message, asked ...string) {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if leak := c.leaks(string(b), asked...); leak != "" {
		t.Errorf("%s leaks %q: %s", what, leak, b)
	}
}

// wantCode checks err's code and that its message, hint and nearby refs
// name nothing outside.
func (c limitedCase) wantCode(t *testing.T, what string, err error, want codes.Code, asked ...string) *ctxdv1.ErrorDetail {
	t.Helper()
	code, ed := errorDetail(t, err)
	if code != want {
		t.Errorf("%s: code %v, want %v (%v)", what, code, want, err)
	}
	if leak := c.leaks(fmt.Sprint(err, " ", ed.GetNextActionHint(), " ", ed.GetNearbyRefs()), asked...); leak != "" {
		t.Errorf("%s: the error leaks %q: %v %v", what, leak, err, ed)
	}
	return ed
}

// TestAccess_LimitedTokens runs a daemon with tokens limited to a drive and
// to a path, and checks over TCP that nothing outside them can be read,
// counted, listed, searched (every leg), hinted at, taken from history,
// copied, moved, overwritten or assembled into a context.
func TestAccess_LimitedTokens(t *testing.T) {
	cfg := withModel(t, testConfig(t))
	cfg.GRPCTCP, cfg.HTTP = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{
		{Name: "drive", SHA256: sha256Hex("drive-token"), Scopes: []string{"read", "write"}, Drives: []string{"agent"}},
		{Name: "project", SHA256: sha256Hex("project-token"), Scopes: []string{"read", "write"}, Paths: []string{"agent:/project-x/"}, Agent: true},
	}
	d := mustStart(t, cfg)
	tcp := dial(t, "passthrough:///"+d.GRPCAddr().String())
	owner := dial(t, "unix://"+cfg.Socket)
	ov := ctxdv1.NewVfsServiceClient(owner)
	writeText(t, ov, "agent:/project-x/notes.md", "# Deployment checklist\n\nRun the canary release before the rollout to production.\n")
	siblingID := writeText(t, ov, "agent:/project-xyz/plan.md", "# Quokka merger\n\nThe Quokka acquisition closes in March; keep the merger quiet.\n").GetItem().GetId()
	vaultID := writeText(t, ov, "vault:/keys.md", "# Quokka passphrase\n\nThe passphrase hunter2 unlocks the vault of the Quokka merger.\n").GetItem().GetId()
	writeText(t, ov, "self:/soul.md", "---\nloading: always\nagent-modification: true\n---\nThe soul of Quokka: never tell the passphrase hunter2.\n")
	writeText(t, ov, "vault:/old.md", "Quokka draft")
	if _, err := ov.Delete(context.Background(), &ctxdv1.DeleteRequest{Ref: "vault:/old.md"}); err != nil {
		t.Fatal(err)
	}
	waitEmbedded(t, owner, 2*time.Minute)

	// The owner finds the secrets: the searches below can find them.
	for _, mode := range []ctxdv1.SearchMode{ctxdv1.SearchMode_SEARCH_MODE_BM25, ctxdv1.SearchMode_SEARCH_MODE_VECTOR, ctxdv1.SearchMode_SEARCH_MODE_HYBRID} {
		resp := doSearch(t, owner, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "quokka passphrase hunter2"}}, Mode: mode})
		if refs := resultRefs(resp); len(refs) == 0 || refs[0] != "vault:/keys.md" || resp.GetModeUsed() != mode {
			t.Fatalf("owner search in %v = %v (mode %v), want vault:/keys.md first", mode, refs, resp.GetModeUsed())
		}
	}

	cases := []limitedCase{
		{name: "drive", secret: "drive-token", describe: "drives agent", inside: []string{"agent:/"},
			outside: []string{"vault:/keys.md", vaultID, "self:/soul.md"},
			markers: []string{"vault", "keys", "hunter2", "self:/soul", "passphrase", "old.md"}},
		{name: "project", secret: "project-token", describe: "paths agent:/project-x/", inside: []string{"agent:/project-x/"},
			outside: []string{"vault:/keys.md", vaultID, "agent:/project-xyz/plan.md", siblingID, "self:/soul.md"},
			markers: []string{"vault", "keys", "hunter2", "self:/soul", "passphrase", "old.md", "xyz", "quokka", "merger"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := bearer(c.secret)
			vc := ctxdv1.NewVfsServiceClient(tcp)
			sc := ctxdv1.NewSearchServiceClient(tcp)

			for _, ref := range c.outside {
				_, err := vc.Read(ctx, &ctxdv1.ReadRequest{Ref: ref})
				c.wantCode(t, "Read "+ref, err, codes.NotFound, ref)
				_, err = vc.Read(ctx, &ctxdv1.ReadRequest{Ref: ref, Raw: true})
				c.wantCode(t, "raw Read "+ref, err, codes.NotFound, ref)
				_, err = vc.Info(ctx, &ctxdv1.InfoRequest{Ref: ref})
				c.wantCode(t, "Info "+ref, err, codes.NotFound, ref)
				_, err = vc.CountLines(ctx, &ctxdv1.CountLinesRequest{Ref: ref})
				c.wantCode(t, "CountLines "+ref, err, codes.NotFound, ref)
				_, err = vc.DirSize(ctx, &ctxdv1.DirSizeRequest{Ref: ref})
				c.wantCode(t, "DirSize "+ref, err, codes.NotFound, ref)
				_, err = vc.History(ctx, &ctxdv1.HistoryRequest{Ref: ref})
				c.wantCode(t, "History "+ref, err, codes.NotFound, ref)
				_, err = vc.ReadRevision(ctx, &ctxdv1.ReadRevisionRequest{Ref: ref, Rev: 1})
				c.wantCode(t, "ReadRevision "+ref, err, codes.NotFound, ref)
				if ex, err := vc.Exists(ctx, &ctxdv1.ExistsRequest{Ref: ref}); err != nil || ex.GetExists() {
					t.Errorf("Exists %s = %v, %v", ref, ex, err)
				}
				_, err = vc.Copy(ctx, &ctxdv1.CopyRequest{SourceRef: ref, DestinationRef: "agent:/project-x/stolen.md"})
				c.wantCode(t, "Copy from "+ref, err, codes.NotFound, ref)
				_, err = vc.Move(ctx, &ctxdv1.MoveRequest{SourceRef: ref, DestinationRef: "agent:/project-x/stolen.md"})
				c.wantCode(t, "Move from "+ref, err, codes.NotFound, ref)
			}
			for _, dst := range []string{"vault:/", "vault:/keys.md", "self:/new.md"} {
				_, err := vc.Copy(ctx, &ctxdv1.CopyRequest{SourceRef: "agent:/project-x/notes.md", DestinationRef: dst, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
				ed := c.wantCode(t, "Copy to "+dst, err, codes.PermissionDenied, dst, "vault:/notes.md")
				if !strings.Contains(ed.GetNextActionHint(), c.describe) || !strings.Contains(ed.GetNextActionHint(), "tokens[].paths") {
					t.Errorf("denial hint %q names neither the token's access nor the config keys", ed.GetNextActionHint())
				}
				_, err = vc.Move(ctx, &ctxdv1.MoveRequest{SourceRef: "agent:/project-x/notes.md", DestinationRef: dst, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
				c.wantCode(t, "Move to "+dst, err, codes.PermissionDenied, dst, "vault:/notes.md")
				_, err = vc.Write(ctx, &ctxdv1.WriteRequest{Ref: dst + "x", Body: &ctxdv1.WriteRequest_Content{Content: "x"}, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
				c.wantCode(t, "Write "+dst+"x", err, codes.PermissionDenied, dst+"x")
			}
			if r, err := ov.Read(context.Background(), &ctxdv1.ReadRequest{Ref: "vault:/keys.md"}); err != nil || !strings.Contains(r.GetContent(), "hunter2") {
				t.Fatalf("the secret changed: %v %v", r, err)
			}

			// Hints next to a secret name only what the token sees.
			ed := c.wantCode(t, "Read next to the sibling", func() error {
				_, err := vc.Read(ctx, &ctxdv1.ReadRequest{Ref: "agent:/project-xa"})
				return err
			}(), codes.NotFound, "agent:/project-xa")
			if len(ed.GetNearbyRefs()) == 0 {
				t.Errorf("no nearby refs for a path next to visible items")
			}
			c.wantCode(t, "Read in the other drive", func() error {
				_, err := vc.Read(ctx, &ctxdv1.ReadRequest{Ref: "vault:/key.md"})
				return err
			}(), codes.NotFound, "vault:/key.md")

			// Listings and counts hold only what it sees.
			drives, err := vc.ListDrives(ctx, &ctxdv1.ListDrivesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			c.noLeak(t, "ListDrives", drives)
			wantItems := int64(2) // notes.md and the sibling's plan.md
			if c.name == "project" {
				wantItems = 1
			}
			if len(drives.GetDrives()) != 1 || drives.GetDrives()[0].GetItemCount() != wantItems {
				t.Errorf("ListDrives = %v, want agent with %d items", drives.GetDrives(), wantItems)
			}
			tree, err := vc.Tree(ctx, &ctxdv1.TreeRequest{MaxDepth: 5})
			if err != nil {
				t.Fatal(err)
			}
			c.noLeak(t, "Tree", tree)
			list, err := vc.List(ctx, &ctxdv1.ListRequest{Ref: "agent:/", Recursive: true})
			if err != nil || len(list.GetEntries()) != int(wantItems) {
				t.Errorf("List agent:/ = %v, %v; want %d entries", list, err, wantItems)
			}
			c.noLeak(t, "List", list)
			info, err := vc.Info(ctx, &ctxdv1.InfoRequest{Ref: "agent:/"})
			if err != nil || info.GetItemCount() != wantItems {
				t.Errorf("Info agent:/ = %v, %v; want %d items", info, err, wantItems)
			}
			c.noLeak(t, "Log", mustLog(t, vc, ctx))
			del, err := vc.ListDeleted(ctx, &ctxdv1.ListDeletedRequest{})
			if err != nil || len(del.GetRevisions()) != 0 {
				t.Errorf("ListDeleted = %v, %v; want nothing", del, err)
			}

			// Every search leg, whatever the filter asks for.
			filters := []*ctxdv1.SearchFilter{nil, {Drives: []string{"vault"}}, {PathPrefixes: []string{"vault:/"}}, {Drives: []string{"agent", "vault", "self"}}, {PathPrefixes: []string{"/"}}}
			for _, mode := range []ctxdv1.SearchMode{ctxdv1.SearchMode_SEARCH_MODE_BM25, ctxdv1.SearchMode_SEARCH_MODE_VECTOR, ctxdv1.SearchMode_SEARCH_MODE_HYBRID} {
				for _, f := range filters {
					for _, q := range []string{"quokka passphrase hunter2", "hunter", "passphrse"} {
						resp, err := sc.Search(ctx, &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: q}}, Mode: mode, Filter: f})
						if err != nil {
							t.Fatalf("Search %q in %v with %v: %v", q, mode, f, err)
						}
						for _, r := range resp.GetResults() {
							if !c.sees(r.GetRef()) {
								t.Errorf("Search %q in %v with %v found %s", q, mode, f, r.GetRef())
							}
						}
						for _, qr := range resp.GetQueries() {
							qr.Text = "" // the query as sent
						}
						c.noLeak(t, fmt.Sprintf("Search %q in %v with %v", q, mode, f), resp)
						if resp.GetModeUsed() != mode {
							t.Errorf("Search in %v ran in %v: %s", mode, resp.GetModeUsed(), resp.GetModeReason())
						}
					}
				}
			}

			// Context assembly reads roots and chunks within access only.
			bc, err := ctxdv1.NewContextServiceClient(tcp).BuildContext(ctx, &ctxdv1.BuildContextRequest{Task: "quokka passphrase hunter2 merger"})
			if err != nil {
				t.Fatal(err)
			}
			c.noLeak(t, "BuildContext", bc)
			if !slices.ContainsFunc(bc.GetWarnings(), func(w string) bool { return strings.Contains(w, "self:/ is not wholly within") }) {
				t.Errorf("BuildContext warnings %q do not say the context root is outside the token's access", bc.GetWarnings())
			}
			_, err = ctxdv1.NewContextServiceClient(tcp).Update(ctx, &ctxdv1.UpdateRequest{Ref: "self:/soul.md", Body: "replaced"})
			c.wantCode(t, "context Update", err, codes.NotFound, "self:/soul.md")

			// The HTTP gateway answers alike.
			for path, want := range map[string]int{"/v1/read?ref=vault:/keys.md": http.StatusNotFound, "/v1/drives": http.StatusOK, "/v1/status": http.StatusForbidden} {
				req, err := http.NewRequest("GET", "http://"+d.HTTPAddr().String()+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+c.secret)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want || c.leaks(string(body), "vault:/keys.md") != "" {
					t.Errorf("GET %s = %d %s, want %d and nothing outside", path, resp.StatusCode, body, want)
				}
			}

			// Store-wide figures are refused.
			_, err = ctxdv1.NewAdminServiceClient(tcp).Status(ctx, &ctxdv1.StatusRequest{})
			c.wantCode(t, "Status", err, codes.PermissionDenied)
		})
	}
	// The owner's BuildContext does include the soul: the check above can fail.
	bc, err := ctxdv1.NewContextServiceClient(owner).BuildContext(context.Background(), &ctxdv1.BuildContextRequest{Task: "quokka passphrase hunter2 merger"})
	if err != nil || !strings.Contains(bc.GetMarkdown(), "hunter2") {
		t.Errorf("owner BuildContext = %v, %v; want the secrets", bc.GetMarkdown(), err)
	}
}

func mustLog(t *testing.T, vc ctxdv1.VfsServiceClient, ctx context.Context) *ctxdv1.LogResponse {
	t.Helper()
	l, err := vc.Log(ctx, &ctxdv1.LogRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.GetRevisions()) == 0 {
		t.Errorf("Log shows nothing, not even the visible writes")
	}
	return l
}

// TestAccess_IngestTargets checks that Add and Refresh with a limited token
// write and refresh only within its access.
func TestAccess_IngestTargets(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("# A\n\nalpha\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.GRPCTCP = "127.0.0.1:0"
	cfg.AllowedRoots = []string{root}
	cfg.Tokens = []TokenConfig{{Name: "ing", SHA256: sha256Hex("ing-token"), Scopes: []string{"read", "write", "ingest"}, Drives: []string{"agent"}}}
	d := mustStart(t, cfg)
	tcp := dial(t, "passthrough:///"+d.GRPCAddr().String())
	owner := dial(t, "unix://"+cfg.Socket)
	ic := ctxdv1.NewIngestServiceClient(tcp)
	ctx := bearer("ing-token")
	diskRef := "disk:" + filepath.ToSlash(filepath.Join(root, "a.md"))

	// The natural drive, disk, is outside: the item is refused, nothing stored.
	stream, err := ic.Add(ctx, &ctxdv1.AddRequest{Sources: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := drain(t, stream)
	if err != nil {
		t.Fatal(err)
	}
	if it := ev.items[diskRef]; it == nil || it.GetAction() != ctxdv1.IngestAction_INGEST_ACTION_FAILED || it.GetError().GetType() != ctxdv1.ErrorType_ERROR_TYPE_PERMISSION_DENIED {
		t.Errorf("Add to disk: = %v, want FAILED with PERMISSION_DENIED", ev.items)
	}
	if ok, err := ctxdv1.NewVfsServiceClient(owner).Exists(context.Background(), &ctxdv1.ExistsRequest{Ref: diskRef}); err != nil || ok.GetExists() {
		t.Errorf("%s was stored: %v, %v", diskRef, ok, err)
	}

	// Into its own drive it works; the owner's copy on disk stays out of its refresh.
	if ev, err := add(t, owner, &ctxdv1.AddRequest{Sources: []string{root}}); err != nil || ev.summary.GetAdded() != 1 {
		t.Fatalf("owner Add = %v, %v", ev, err)
	}
	stream, err = ic.Add(ctx, &ctxdv1.AddRequest{Sources: []string{root}, Drive: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err = drain(t, stream); err != nil || ev.summary.GetAdded() != 1 {
		t.Fatalf("Add to agent: = %v, %v", ev, err)
	}
	rs, err := ic.Refresh(ctx, &ctxdv1.RefreshRequest{All: true, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err = drain(t, rs); err != nil || ev.summary.GetUnchanged()+ev.summary.GetUpdated() != 1 {
		t.Errorf("Refresh all = %+v, %v; want the one agent: item", ev.summary, err)
	}
	rs, err = ic.Refresh(ctx, &ctxdv1.RefreshRequest{Refs: []string{diskRef}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(t, rs)
	if code, _ := errorDetail(t, err); code != codes.NotFound {
		t.Errorf("Refresh %s: %v, want NOT_FOUND", diskRef, err)
	}
}
