package daemon

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
	"github.com/ctxd/ctxd/index/search"
)

// TestSearch_ProximityAndRecency runs the proximity and recency switches
// through the real daemon, over gRPC and JSON/HTTP: proximity puts the note
// holding the query's words together first (by default in BM25 mode), and
// the default recency ages a session event, never a note with the same text.
func TestSearch_ProximityAndRecency(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTP = "127.0.0.1:0"
	d := mustStart(t, cfg)
	conn := dial(t, "unix://"+cfg.Socket)
	vc := ctxdv1.NewVfsServiceClient(conn)
	writeText(t, vc, "notes:/scattered.md", "heat flows slowly outward before transfer\n")
	writeText(t, vc, "notes:/tight.md", "heat transfer matters in pipes, vessels, engines, boilers, radiators, condensers and turbines\n")
	text := "deploy failed: the disk was full\n"
	writeText(t, vc, "session:/proj/s1/events/e1", text)
	writeText(t, vc, "notes:/deploy.md", text)
	waitIndexed(t, ctxdv1.NewAdminServiceClient(conn), 30*time.Second)

	bm25 := ctxdv1.SearchMode_SEARCH_MODE_BM25
	on, off := ctxdv1.SearchToggle_SEARCH_TOGGLE_ON, ctxdv1.SearchToggle_SEARCH_TOGGLE_OFF
	q := []*ctxdv1.SearchQuery{{Text: "heat transfer"}}
	for _, tc := range []struct {
		toggle ctxdv1.SearchToggle
		first  string
	}{
		{off, "notes:/scattered.md"},
		{on, "notes:/tight.md"},
		{ctxdv1.SearchToggle_SEARCH_TOGGLE_UNSPECIFIED, map[bool]string{true: "notes:/tight.md", false: "notes:/scattered.md"}[search.DefaultProximity(search.BM25, search.GroupChunk)]},
	} {
		r := doSearch(t, conn, &ctxdv1.SearchRequest{Queries: q, Mode: bm25, Proximity: tc.toggle})
		if got := resultRefs(r); len(got) != 2 || got[0] != tc.first {
			t.Errorf("proximity %v: %v, want %s first", tc.toggle, got, tc.first)
		}
	}
	// BuildContext's chunk search takes the same default.
	bc, err := ctxdv1.NewContextServiceClient(conn).BuildContext(t.Context(), &ctxdv1.BuildContextRequest{Task: "heat transfer", Mode: bm25})
	if err != nil {
		t.Fatal(err)
	}
	var chunks []string
	for _, s := range bc.GetSections() {
		if s.GetKind() == "chunk" {
			chunks = append(chunks, s.GetRef())
		}
	}
	if want := map[bool]string{true: "notes:/tight.md", false: "notes:/scattered.md"}[search.DefaultProximity(search.BM25, search.GroupChunk)]; len(chunks) != 2 || chunks[0] != want {
		t.Errorf("BuildContext chunks %v, want %s first", chunks, want)
	}
	status, body := httpCall(t, "POST", "http://"+d.HTTPAddr().String()+"/v1/search",
		`{"queries":[{"text":"heat transfer"}],"mode":"SEARCH_MODE_BM25","proximity":"SEARCH_TOGGLE_ON"}`, d.token)
	var resp struct{ Results []struct{ Ref string } }
	if err := json.Unmarshal(body, &resp); status != 200 || err != nil || len(resp.Results) != 2 || resp.Results[0].Ref != "notes:/tight.md" {
		t.Errorf("HTTP proximity on: %d %s", status, body)
	}

	// The event and the note match alike; recency ages only the event (it
	// was written moments ago, so its score drops by a hair), and turning
	// it off gives the event its score back.
	scoreOf := func(r *ctxdv1.SearchResponse) map[string]float64 {
		out := map[string]float64{}
		for _, res := range r.Results {
			out[res.Ref] = res.Score
		}
		return out
	}
	dq := []*ctxdv1.SearchQuery{{Text: "deploy disk full"}}
	aged := scoreOf(doSearch(t, conn, &ctxdv1.SearchRequest{Queries: dq, Mode: bm25}))
	plain := scoreOf(doSearch(t, conn, &ctxdv1.SearchRequest{Queries: dq, Mode: bm25, Recency: off}))
	explicit := scoreOf(doSearch(t, conn, &ctxdv1.SearchRequest{Queries: dq, Mode: bm25, Recency: on}))
	ev, note := "session:/proj/s1/events/e1", "notes:/deploy.md"
	if len(plain) != 2 || !(aged[ev] < plain[ev]) || aged[ev] < 0.99*plain[ev] || aged[note] != plain[note] {
		t.Errorf("recency default %v, off %v: want the event aged by a hair and the note untouched", aged, plain)
	}
	if explicit[ev] >= plain[ev] || explicit[note] != plain[note] {
		t.Errorf("recency on %v, off %v", explicit, plain)
	}

	for name, req := range map[string]*ctxdv1.SearchRequest{
		"--proximity": {Queries: q, Proximity: 7},
		"--recency":   {Queries: q, Recency: 7},
	} {
		_, err := ctxdv1.NewSearchServiceClient(conn).Search(t.Context(), req)
		if code, det := errorDetail(t, err); code != codes.InvalidArgument || !strings.Contains(det.GetNextActionHint(), name) {
			t.Errorf("unknown %s toggle: %v %v", name, code, det)
		}
	}
}
