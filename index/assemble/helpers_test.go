package assemble

import (
	"context"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/embed"
	"github.com/ctxd/ctxd/index/indexer"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/internal/testmodel"
	"github.com/ctxd/ctxd/vfs"
)

// env is a real store, search engine and indexer (with the real model when
// withModel) over a temporary directory.
type env struct {
	t     testing.TB
	store *vfs.Store
	eng   *search.Engine
	ix    *indexer.Indexer
}

func newEnv(t testing.TB, withModel bool) *env {
	t.Helper()
	dir := t.TempDir()
	s, err := vfs.Open(filepath.Join(dir, "ctxd.db"), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := search.Open(s, search.Options{Dir: filepath.Join(dir, "index")})
	if err != nil {
		t.Fatal(err)
	}
	modelDir, lib := "", ""
	if withModel {
		modelDir = testmodel.Dir(t)
		lib = testmodel.ORTLib(t)
	}
	ix := indexer.New(s, eng, slog.New(slog.DiscardHandler), modelDir, lib)
	ctx, cancel := context.WithCancel(context.Background())
	go ix.Run(ctx)
	t.Cleanup(func() {
		cancel()
		ix.Wait()
		eng.Close()
		s.Close()
	})
	e := &env{t: t, store: s, eng: eng, ix: ix}
	if withModel {
		e.waitFor("the embedding model to load", func() bool { return ix.Available() != nil })
	}
	return e
}

func (e *env) waitFor(what string, ok func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sync waits until every item is chunked and embedded and the search
// indexes have applied every change.
func (e *env) sync() {
	e.t.Helper()
	ctx := context.Background()
	e.waitFor("indexing", func() bool {
		st, err := e.store.EmbedStats(ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		seq, err := e.store.OutboxSeq(ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		es := e.eng.State()
		embedded := e.ix.Available() == nil || st.PendingEmbed == 0 && es.Model != ""
		return st.PendingChunking == 0 && embedded && es.AppliedSeq >= seq && !es.Rebuilding
	})
}

func (e *env) write(ref, content string) vfs.Item {
	e.t.Helper()
	r, err := vfs.ParseRef(ref)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.store.Write(context.Background(), vfs.WriteParams{Ref: r, Content: []byte(content), IsText: true, OnConflict: vfs.ConflictOverwrite})
	if err != nil {
		e.t.Fatalf("write %s: %v", ref, err)
	}
	return res.Item
}

func (e *env) read(ref string) (vfs.Item, string) {
	e.t.Helper()
	r, err := vfs.ParseRef(ref)
	if err != nil {
		e.t.Fatal(err)
	}
	it, b, err := e.store.ReadRaw(context.Background(), r)
	if err != nil {
		e.t.Fatalf("read %s: %v", ref, err)
	}
	return it, string(b)
}

func (e *env) builder() *Builder {
	return NewBuilder(e.store, e.eng, Options{Tokenizer: e.ix.Tokenizer})
}

// build runs Build with the task embedded by the real model when it runs,
// as the daemon does.
func (e *env) build(req Request) Result {
	e.t.Helper()
	if w := e.ix.Available(); w != nil && req.Search.EmbedQuery == nil {
		req.Search.EmbedQuery = func(ctx context.Context, text string) ([]float32, error) {
			v, err := w.EmbedAt(ctx, []string{text}, embed.Query)
			if err != nil {
				return nil, err
			}
			return v[0], nil
		}
	}
	res, err := e.builder().Build(context.Background(), req)
	if err != nil {
		e.t.Fatalf("build %q: %v", req.Task, err)
	}
	return res
}

// contextSet is a small context: Init's four files, another always file
// whose name sorts before them, two contextual files on unrelated topics,
// and notes elsewhere for the chunk search.
var contextSet = map[string]string{
	"self:/a-style.md": `---
title: Style
loading: always
agent-modification: false
---
# Style

Answer in short paragraphs. Quote refs exactly.
`,
	"self:/invoicing.md": `---
title: Invoicing
description: How invoices, refunds and credit notes work.
loading: contextual
agent-modification: true
---
# Invoicing

Invoices are generated on the first day of each month by the billing job.
Refunds are issued as credit notes against the original invoice; never edit
an invoice once it has been sent.
`,
	"self:/deploy.md": `---
title: Deployment checklist
description: Steps to ship a new version.
loading: contextual
---
# Deployment checklist

1. Bump the version in package.json.
2. Run the test suite and the linter.
3. Tag the release and push the tag; CI deploys to production.
`,
	"agent:/notes/billing.md": `# Billing notes

## Duplicate invoices

In March the billing job ran twice after a restart and sent duplicate
invoices to forty customers. Nobody noticed for two days, because the job
reported success both times and the monitoring only checked that it ran,
not how often. Customers wrote to support, and support had to find every
affected account by hand from the payment logs. The fix was a lock on the
job, so that a second run waits for the first and then finds nothing left
to do, and an alert when more invoices go out in a day than there are
active customers. Affected customers received a refund as a credit note,
with a short apology and the number of the invoice it cancels.

## Payment providers

Card payments go through the payment provider's hosted page, so card
numbers never reach our servers. Bank transfers are matched to invoices by
their reference number every night; a transfer without a known reference
goes to a queue that finance reviews each morning. When the provider is
down, the checkout shows a notice and offers a bank transfer instead, and
the nightly match catches up once the provider's export is available again.
`,
	"agent:/notes/ops.md": `# Operations

## Rollbacks

To roll back a release, redeploy the previous tag from CI. Database
migrations are forward-only, so a rollback never reverts the schema: a
migration that must be undone gets a new migration that undoes it, which
is reviewed like any other change. Before a risky release, check that the
previous tag still deploys cleanly against the migrated schema.

## Servers

Production runs on three servers behind a load balancer; staging runs on
one. Each server can carry the whole load alone, so one can be drained for
maintenance at any time during working hours.
`,
	"agent:/notes/recipes.md": `# Recipes

## Bread

Mix flour, water, salt and yeast; let the dough rise overnight and bake it
at a high temperature.
`,
}

// withContextSet runs Init on self:/ and writes contextSet.
func (e *env) withContextSet() {
	e.t.Helper()
	if _, _, err := Init(context.Background(), e.store, ""); err != nil {
		e.t.Fatal(err)
	}
	// In a fixed order: item ids (UUIDv7, in order of creation) break ties
	// between equally ranked chunks.
	for _, ref := range slices.Sorted(maps.Keys(contextSet)) {
		e.write(ref, contextSet[ref])
	}
	e.sync()
	// BM25 statistics depend on how Bleve segmented the index, and merges
	// change them in the background: a rebuild puts the small set in one
	// segment, so the rankings the golden files hold are reproducible.
	if _, err := e.eng.Reindex(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}
