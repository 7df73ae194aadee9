package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// frontmatterOf returns the frontmatter block at the start of content
// ("---\n" up to and including the closing "---\n"), failing the test when
// there is none.
func frontmatterOf(t testing.TB, content string) string {
	t.Helper()
	if !strings.HasPrefix(content, "---\n") {
		t.Fatalf("no frontmatter in %q", content)
	}
	end := strings.Index(content[4:], "\n---\n")
	if end < 0 {
		t.Fatalf("frontmatter not closed in %q", content)
	}
	return content[:4+end+5]
}

// readContent reads an item's whole text over c.
func readContent(t testing.TB, ctx context.Context, c ctxdv1.VfsServiceClient, ref string) string {
	t.Helper()
	r, err := c.Read(ctx, &ctxdv1.ReadRequest{Ref: ref})
	if err != nil {
		t.Fatalf("Read %s: %v", ref, err)
	}
	return r.GetContent()
}

// wantReadOnly fails the test unless err is READ_ONLY (PERMISSION_DENIED)
// about ref, with a hint.
func wantReadOnly(t testing.TB, err error, ref string) {
	t.Helper()
	code, detail := errorDetail(t, err)
	if code != codes.PermissionDenied || detail.GetType() != ctxdv1.ErrorType_ERROR_TYPE_READ_ONLY || detail.GetNextActionHint() == "" || detail.GetRef() != ref {
		t.Errorf("got %v %v, want PERMISSION_DENIED / READ_ONLY about %s with a hint", code, detail, ref)
	}
}

// TestContextService_Init creates the four context files only where absent,
// each with its frontmatter.
func TestContextService_Init(t *testing.T) {
	d := mustStart(t, testConfig(t))
	ctx := context.Background()
	vc, cc := d.vfsClient(t), d.contextClient(t)
	mine := "---\nloading: always\nagent-modification: true\n---\nmy own beliefs\n"
	writeText(t, vc, "self:/beliefs.md", mine)

	resp, err := cc.Init(ctx, &ctxdv1.InitRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"self:/soul.md", "self:/goals.md", "self:/capabilities.md"}; !slices.Equal(resp.GetCreated(), want) ||
		!slices.Equal(resp.GetExisting(), []string{"self:/beliefs.md"}) {
		t.Errorf("Init created %v, existing %v; want %v and beliefs.md existing", resp.GetCreated(), resp.GetExisting(), want)
	}
	if got := readContent(t, ctx, vc, "self:/beliefs.md"); got != mine {
		t.Errorf("Init changed an existing file: %q", got)
	}
	for ref, agentEditable := range map[string]bool{"self:/soul.md": false, "self:/goals.md": true, "self:/capabilities.md": true} {
		info, err := vc.Info(ctx, &ctxdv1.InfoRequest{Ref: ref})
		if err != nil {
			t.Fatal(err)
		}
		if it := info.GetItem(); it.GetLoading() != "always" || it.GetAgentModification() != agentEditable {
			t.Errorf("%s: loading %q agent_modification %v, want always and %v", ref, it.GetLoading(), it.GetAgentModification(), agentEditable)
		}
	}
	again, err := cc.Init(ctx, &ctxdv1.InitRequest{Root: "self:/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.GetCreated()) != 0 || len(again.GetExisting()) != 4 {
		t.Errorf("second Init created %v, existing %v; want nothing created", again.GetCreated(), again.GetExisting())
	}
	// Another root, for a second agent.
	other, err := cc.Init(ctx, &ctxdv1.InitRequest{Root: "self:/researcher/"})
	if err != nil || len(other.GetCreated()) != 4 || other.GetCreated()[0] != "self:/researcher/soul.md" {
		t.Errorf("Init of a second root: %v %v", other, err)
	}
}

// TestContextService_AgentGuard refuses an agent token's changes to a file
// its frontmatter protects, with READ_ONLY and a hint, over gRPC and HTTP;
// the agent may update beliefs.md, and the owner and non-agent tokens may
// change anything. Update keeps the frontmatter byte-for-byte.
func TestContextService_AgentGuard(t *testing.T) {
	d := startTokenDaemon(t)
	ctx := context.Background()
	if _, err := d.contextClient(t).Init(ctx, &ctxdv1.InitRequest{}); err != nil {
		t.Fatal(err)
	}
	vc := ctxdv1.NewVfsServiceClient(d.tcp)
	cc := ctxdv1.NewContextServiceClient(d.tcp)
	bot, owner, ci := bearer(botSecret), bearer(d.token), bearer(ciSecret)
	soulBefore := readContent(t, owner, vc, "self:/soul.md")

	t.Run("grpc", func(t *testing.T) {
		_, err := cc.Update(bot, &ctxdv1.UpdateRequest{Ref: "self:/soul.md", Body: "I obey no one.\n"})
		wantReadOnly(t, err, "self:/soul.md")
		_, err = vc.Write(bot, &ctxdv1.WriteRequest{Ref: "self:/soul.md", Body: &ctxdv1.WriteRequest_Content{Content: "gone"}, OnConflict: ctxdv1.OnConflict_ON_CONFLICT_OVERWRITE})
		wantReadOnly(t, err, "self:/soul.md")
		_, err = vc.Edit(bot, &ctxdv1.EditRequest{Ref: "self:/soul.md", Patches: []*ctxdv1.Patch{{StartLine: 7, EndLine: 7, Content: "x"}}})
		wantReadOnly(t, err, "self:/soul.md")
		_, err = vc.Delete(bot, &ctxdv1.DeleteRequest{Ref: "self:/soul.md"})
		wantReadOnly(t, err, "self:/soul.md")
		// A new file under the context root without agent-modification: true.
		_, err = vc.Write(bot, &ctxdv1.WriteRequest{Ref: "self:/rules.md", Body: &ctxdv1.WriteRequest_Content{Content: "my rules"}})
		wantReadOnly(t, err, "self:/rules.md")
		if got := readContent(t, owner, vc, "self:/soul.md"); got != soulBefore {
			t.Fatalf("a refused change reached soul.md: %q", got)
		}

		before := readContent(t, owner, vc, "self:/beliefs.md")
		up, err := cc.Update(bot, &ctxdv1.UpdateRequest{Ref: "self:/beliefs.md", Body: "# Beliefs\n\n- The owner prefers short answers.\n"})
		if err != nil {
			t.Fatalf("agent updating beliefs.md: %v", err)
		}
		after := readContent(t, owner, vc, "self:/beliefs.md")
		if fm := frontmatterOf(t, before); after != fm+"# Beliefs\n\n- The owner prefers short answers.\n" || up.GetItem().GetContentHash() == "" {
			t.Errorf("beliefs.md after Update = %q, want the old frontmatter %q and the new body", after, fm)
		}

		for _, c := range []struct {
			name   string
			caller context.Context
		}{{"owner token", owner}, {"non-agent token", ci}} {
			name, caller := c.name, c.caller
			body := "# Soul\n\nUpdated by the " + name + ".\n"
			if _, err := cc.Update(caller, &ctxdv1.UpdateRequest{Ref: "self:/soul.md", Body: body}); err != nil {
				t.Fatalf("%s updating soul.md: %v", name, err)
			}
			if got := readContent(t, owner, vc, "self:/soul.md"); got != frontmatterOf(t, soulBefore)+body {
				t.Errorf("soul.md after the %s's Update = %q", name, got)
			}
		}
		// The unix socket is the owner too.
		if _, err := d.contextClient(t).Update(ctx, &ctxdv1.UpdateRequest{Ref: "self:/soul.md", Body: "# Soul\n\nBy the socket.\n"}); err != nil {
			t.Fatalf("owner over the socket updating soul.md: %v", err)
		}
	})

	t.Run("http", func(t *testing.T) {
		update := func(secret, ref, body string) (int, []byte) {
			b, _ := json.Marshal(map[string]string{"ref": ref, "body": body})
			return httpCall(t, "POST", d.base+"/v1/context/update", string(b), secret)
		}
		code, body := update(botSecret, "self:/soul.md", "I obey no one.\n")
		if code != http.StatusForbidden {
			t.Fatalf("agent update of soul.md over HTTP: %d %s, want 403", code, body)
		}
		decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_READ_ONLY)
		code, body = httpCall(t, "POST", d.base+"/v1/write", `{"ref":"self:/soul.md","content":"gone","on_conflict":"ON_CONFLICT_OVERWRITE"}`, botSecret)
		if code != http.StatusForbidden {
			t.Fatalf("agent write of soul.md over HTTP: %d %s, want 403", code, body)
		}
		decodeHTTPError(t, body, ctxdv1.ErrorType_ERROR_TYPE_READ_ONLY)

		if code, body := update(botSecret, "self:/goals.md", "# Goals\n\n- Ship issue 11.\n"); code != http.StatusOK {
			t.Fatalf("agent update of goals.md over HTTP: %d %s", code, body)
		}
		if got := readContent(t, owner, vc, "self:/goals.md"); !strings.HasPrefix(got, "---\n") || !strings.HasSuffix(got, "---\n# Goals\n\n- Ship issue 11.\n") {
			t.Errorf("goals.md after the HTTP update = %q", got)
		}
		if code, body := update(d.token, "self:/soul.md", "# Soul\n\nBy the owner over HTTP.\n"); code != http.StatusOK {
			t.Fatalf("owner update of soul.md over HTTP: %d %s", code, body)
		}
	})

	// History names who made each change.
	h, err := vc.History(owner, &ctxdv1.HistoryRequest{Ref: "self:/soul.md"})
	if err != nil {
		t.Fatal(err)
	}
	var actors []string
	for _, r := range h.GetRevisions() {
		actors = append(actors, r.GetActor()+"/"+r.GetOp())
	}
	want := []string{"owner/context_update", "owner/context_update", "ci/context_update", "owner/context_update", "owner/write"}
	if !slices.Equal(actors, want) {
		t.Errorf("soul.md history (newest first) = %v, want %v", actors, want)
	}
}

// TestVfsService_FrontmatterWarnings reports malformed frontmatter in the
// write and edit responses, over gRPC and HTTP, and stores the item.
func TestVfsService_FrontmatterWarnings(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	ctx := context.Background()
	vc := d.vfsClient(t)
	bad := "---\nloading: sometimes\ntags: [a\n---\nbody\n"
	w := writeText(t, vc, "/bad.md", bad)
	if len(w.GetWarnings()) == 0 {
		t.Errorf("Write of malformed frontmatter: no warning")
	}
	if got := readContent(t, ctx, vc, "/bad.md"); got != bad {
		t.Errorf("stored %q, want it as written", got)
	}
	good := writeText(t, vc, "/good.md", "---\nloading: contextual\ntags: [billing]\n---\nbody\n")
	if len(good.GetWarnings()) != 0 || good.GetItem().GetLoading() != "contextual" || !slices.Equal(good.GetItem().GetTags(), []string{"billing"}) {
		t.Errorf("well-formed frontmatter: warnings %v, item %v", good.GetWarnings(), good.GetItem())
	}
	e, err := vc.Edit(ctx, &ctxdv1.EditRequest{Ref: "/good.md", Patches: []*ctxdv1.Patch{{StartLine: 2, EndLine: 2, Content: "loading: [always"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.GetWarnings()) == 0 {
		t.Errorf("Edit that breaks the frontmatter: no warning")
	}

	code, body := httpCall(t, "POST", "http://"+d.HTTPAddr().String()+"/v1/write",
		`{"ref":"/bad2.md","content":"---\nimportance: 7\n---\nbody\n"}`, d.token)
	var resp struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(body, &resp); code != http.StatusOK || err != nil || len(resp.Warnings) == 0 {
		t.Errorf("HTTP write of malformed frontmatter: %d %s, want 200 with warnings", code, body)
	}
}

// TestContextService_BuildContext assembles a task's context over gRPC and
// HTTP: the always files in order, a contextual file only for a task it
// matches, search chunks labelled with their refs, and what a tight budget
// left out.
func TestContextService_BuildContext(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	ctx := context.Background()
	vc, cc := d.vfsClient(t), d.contextClient(t)
	if _, err := cc.Init(ctx, &ctxdv1.InitRequest{}); err != nil {
		t.Fatal(err)
	}
	writeText(t, vc, "self:/invoicing.md", "---\nloading: contextual\ntitle: Invoicing\n---\n# Invoicing\n\nInvoices go out on the first of the month; every invoice carries the customer's VAT number.\n")
	writeText(t, vc, "docs:/deploy.md", "# Deploy\n\n## Rollout\n\nDeploy the service with a canary rollout to production, then watch the error rate.\n")
	waitIndexed(t, ctxdv1.NewAdminServiceClient(dial(t, "unix://"+cfg.Socket)), time.Minute)

	kinds := func(r *ctxdv1.BuildContextResponse) (refs []string) {
		for _, s := range r.GetSections() {
			refs = append(refs, s.GetKind()+" "+s.GetRef())
		}
		return refs
	}
	always := []string{"always self:/soul.md", "always self:/beliefs.md", "always self:/goals.md", "always self:/capabilities.md"}

	inv, err := cc.BuildContext(ctx, &ctxdv1.BuildContextRequest{Task: "send the monthly invoice with the VAT number"})
	if err != nil {
		t.Fatal(err)
	}
	got := kinds(inv)
	if len(got) < 5 || !slices.Equal(got[:4], always) || got[4] != "contextual self:/invoicing.md" {
		t.Fatalf("invoicing task sections = %v, want the always files in order, then invoicing.md", got)
	}
	if s := inv.GetSections()[4]; len(s.GetMatchedTerms()) == 0 || s.GetScore() <= 0 || strings.Contains(s.GetText(), "loading:") {
		t.Errorf("contextual section: matched %v score %v text %q; want matched terms, a score and no frontmatter", s.GetMatchedTerms(), s.GetScore(), s.GetText())
	}
	if inv.GetBudget() != 4000 || inv.GetTokensUsed() <= 0 || inv.GetTokensUsed() > inv.GetBudget() || !strings.Contains(inv.GetMarkdown(), "Invoices go out on the first") {
		t.Errorf("budget %d, tokens used %d, markdown %.200q", inv.GetBudget(), inv.GetTokensUsed(), inv.GetMarkdown())
	}

	dep, err := cc.BuildContext(ctx, &ctxdv1.BuildContextRequest{Task: "deploy the service to production with a canary"})
	if err != nil {
		t.Fatal(err)
	}
	got = kinds(dep)
	if slices.Contains(got, "contextual self:/invoicing.md") || !slices.Contains(got, "chunk docs:/deploy.md") {
		t.Errorf("deployment task sections = %v, want no invoicing.md and a chunk of docs:/deploy.md", got)
	}
	for _, s := range dep.GetSections() {
		if s.GetKind() == "chunk" && (s.GetHeading() == "" || s.GetStartLine() == 0) {
			t.Errorf("chunk section without heading or lines: %v", s)
		}
	}

	// One token less than that context took leaves out its last section, a
	// chunk, and says so; everything before it fits as before.
	tight, err := cc.BuildContext(ctx, &ctxdv1.BuildContextRequest{Task: "deploy the service to production with a canary", Budget: dep.GetTokensUsed() - 1})
	if err != nil {
		t.Fatal(err)
	}
	last := dep.GetSections()[len(dep.GetSections())-1]
	if got, want := kinds(tight), kinds(dep)[:len(dep.GetSections())-1]; !slices.Equal(got, want) || last.GetKind() != "chunk" {
		t.Errorf("sections with budget %d = %v, want %v (the last, a chunk of %s, left out)", tight.GetBudget(), got, want, last.GetRef())
	}
	var dropped bool
	for _, o := range tight.GetOmitted() {
		dropped = dropped || (o.GetKind() == "chunk" && o.GetRef() == last.GetRef() && o.GetHeading() == last.GetHeading() &&
			strings.HasPrefix(o.GetReason(), "over budget") && o.GetTokens() == last.GetTokens())
	}
	if !dropped {
		t.Errorf("tight budget omitted %v, want the chunk %s > %s over budget", tight.GetOmitted(), last.GetRef(), last.GetHeading())
	}

	_, err = cc.BuildContext(ctx, &ctxdv1.BuildContextRequest{Task: "x", Budget: int32(cfg.Limits.MaxTokenBudget) + 1})
	if code, detail := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(detail.GetNextActionHint(), "max_token_budget") {
		t.Errorf("budget over the limit: %v %v, want INVALID_ARGUMENT naming max_token_budget", code, detail)
	}

	_, err = cc.BuildContext(ctx, &ctxdv1.BuildContextRequest{Task: "deploy", Limit: int32(cfg.Limits.MaxSearchLimit) + 1})
	if code, detail := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(detail.GetNextActionHint(), "max_search_limit") {
		t.Errorf("chunk limit over the limit: %v %v, want INVALID_ARGUMENT naming max_search_limit", code, detail)
	}

	_, err = cc.BuildContext(ctx, &ctxdv1.BuildContextRequest{Task: "deploy", Limit: -1})
	if code, detail := errorDetail(t, err); code != codes.InvalidArgument || detail.GetNextActionHint() == "" {
		t.Errorf("negative chunk limit: %v %v, want INVALID_ARGUMENT with a hint", code, detail)
	}

	code, body := httpCall(t, "POST", "http://"+d.HTTPAddr().String()+"/v1/context/build", `{"task":"send the monthly invoice","budget":2000}`, d.token)
	var resp struct {
		Sections []struct {
			Kind, Ref string
		} `json:"sections"`
		Markdown string `json:"markdown"`
		Budget   int    `json:"budget"`
	}
	if err := json.Unmarshal(body, &resp); code != http.StatusOK || err != nil || len(resp.Sections) < 5 ||
		resp.Sections[0].Ref != "self:/soul.md" || resp.Sections[4].Kind != "contextual" || resp.Budget != 2000 || resp.Markdown == "" {
		t.Errorf("HTTP BuildContext: %d %.500s", code, body)
	}
}

// TestContextService_BuildContextWithModel counts the budget with the
// model's tokenizer and finds chunks by hybrid search once the embedding
// model is loaded: no warning about estimated tokens or a BM25 fallback.
func TestContextService_BuildContextWithModel(t *testing.T) {
	cfg := withModel(t, testConfig(t))
	mustStart(t, cfg)
	ctx := context.Background()
	conn := dial(t, "unix://"+cfg.Socket)
	vc, cc := ctxdv1.NewVfsServiceClient(conn), ctxdv1.NewContextServiceClient(conn)
	if _, err := cc.Init(ctx, &ctxdv1.InitRequest{}); err != nil {
		t.Fatal(err)
	}
	writeText(t, vc, "docs:/deploy.md", "# Deploy\n\n## Rollout\n\nShip the service with a canary rollout to production, then watch the error rate.\n")
	waitEmbedded(t, conn, 2*time.Minute)
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), time.Minute)

	resp, err := cc.BuildContext(ctx, &ctxdv1.BuildContextRequest{Task: "how do we release to production safely", Mode: ctxdv1.SearchMode_SEARCH_MODE_HYBRID})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetWarnings()) != 0 {
		t.Errorf("warnings with the model loaded: %v", resp.GetWarnings())
	}
	var found bool
	var sum int32
	for _, s := range resp.GetSections() {
		found = found || (s.GetKind() == "chunk" && s.GetRef() == "docs:/deploy.md")
		sum += s.GetTokens()
	}
	if !found || sum <= 0 || sum > resp.GetTokensUsed() {
		t.Errorf("sections %v: want a chunk of docs:/deploy.md and section tokens (%d) within tokens used (%d)", resp.GetSections(), sum, resp.GetTokensUsed())
	}
}

// TestContextService_Compact compacts an oversized memory file through the
// daemon: extractive by default, by the configured enricher when it
// answers, and never for an agent the file's frontmatter keeps out.
func TestContextService_Compact(t *testing.T) {
	const rewritten = "# Runbook\n\n- Restart the backup job with `systemctl --user restart backup`.\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string }
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		answer := `[]`
		if strings.Contains(req.Messages[0].Content, "memory file") {
			answer = rewritten
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": answer}}}})
	}))
	defer srv.Close()
	cfg := testConfig(t)
	cfg.GRPCTCP = "127.0.0.1:0"
	cfg.Tokens = []TokenConfig{{Name: "bot", SHA256: sha256Hex(botSecret), Scopes: []string{"read", "write"}, Agent: true}}
	cfg.Enricher.Endpoint, cfg.Enricher.Model = srv.URL+"/v1", "test"
	d := mustStart(t, cfg)
	vc, cc := d.vfsClient(t), d.contextClient(t)
	ctx := context.Background()
	var b strings.Builder
	b.WriteString("---\nloading: contextual\n---\n# Runbook\n\n")
	for i := range 1500 {
		fmt.Fprintf(&b, "- Step %d: check the backup log on host h%d and restart the job if it stalled.\n", i, i)
	}
	writeText(t, vc, "self:/runbook.md", b.String())

	small, err := cc.Compact(ctx, &ctxdv1.CompactRequest{Ref: "self:/runbook.md", MinTokens: 1_000_000})
	if err != nil || small.Compacted {
		t.Fatalf("under min_tokens: %v, %v", small, err)
	}
	// An agent may not compact a context file it may not change.
	bot := ctxdv1.NewContextServiceClient(dial(t, "passthrough:///"+d.GRPCAddr().String()))
	_, err = bot.Compact(bearer(botSecret), &ctxdv1.CompactRequest{Ref: "self:/runbook.md"})
	wantReadOnly(t, err, "self:/runbook.md")

	res, err := cc.Compact(ctx, &ctxdv1.CompactRequest{Ref: "self:/runbook.md"})
	if err != nil || !res.Compacted || res.Method != "enricher" || res.Body != rewritten || res.PreviousRev == 0 || res.TokensAfter >= res.TokensBefore {
		t.Fatalf("Compact with the enricher = %v, %v", res, err)
	}
	got, err := vc.Read(ctx, &ctxdv1.ReadRequest{Ref: "self:/runbook.md"})
	if err != nil || got.Content != "---\nloading: contextual\n---\n"+rewritten {
		t.Errorf("the compacted file: %q, %v", got.GetContent(), err)
	}
	old, err := vc.ReadRevision(ctx, &ctxdv1.ReadRevisionRequest{Ref: "self:/runbook.md", Rev: res.PreviousRev})
	if err != nil || old.GetContent() != b.String() {
		t.Errorf("revision %d does not hold the file before compaction (%v)", res.PreviousRev, err)
	}
}
