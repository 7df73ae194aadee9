package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

// rywPairs is how many write-then-search pairs each client makes.
const rywPairs = 1000

// TestDaemon_ReadYourWrites makes 1,000 write-then-search pairs with no
// pause over the HTTP gateway in hybrid mode (as issue 27 found it: 29 of
// 30 searches missed the note just written) and, at the same time, 1,000
// over gRPC in bm25 mode (written on the unix socket, searched on loopback
// TCP: another client), with the real model: every search finds the note
// just written by the word only it holds, and none is stale. index_wait is
// long so that a slow machine cannot make a search stale; the engine's
// tests check the bound.
func TestDaemon_ReadYourWrites(t *testing.T) {
	cfg := withModel(t, testConfig(t))
	cfg.GRPCTCP, cfg.HTTP = "127.0.0.1:0", "127.0.0.1:0"
	cfg.IndexWait = Duration{time.Minute}
	d := mustStart(t, cfg)
	unix := dial(t, "unix://"+cfg.Socket)
	waitStatus(t, ctxdv1.NewAdminServiceClient(unix), time.Minute, "the model", func(st *ctxdv1.StatusResponse) bool { return st.Embedding.Available })

	check := func(t *testing.T, i int, ref, mode, want string, refs []string, stale bool, reason string) {
		t.Helper()
		if !slices.Contains(refs, ref) || stale || mode != want {
			t.Fatalf("pair %d: the search right after writing %s found %v in mode %s (stale %v: %q)", i, ref, refs, mode, stale, reason)
		}
	}
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		base := "http://" + d.HTTPAddr().String()
		for i := range rywPairs {
			word := fmt.Sprintf("httpryw%04dmark", i)
			ref := fmt.Sprintf("agent:/ryw/http/%04d.md", i)
			body, _ := json.Marshal(map[string]string{"ref": ref, "content": "A note the client searches for at once: " + word + "."})
			if code, out := httpCall(t, "POST", base+"/v1/write", string(body), d.token); code != http.StatusOK {
				t.Fatalf("write %s: %d %s", ref, code, out)
			}
			code, out := httpCall(t, "POST", base+"/v1/search", `{"queries":[{"text":"`+word+`"}],"limit":5}`, d.token)
			if code != http.StatusOK {
				t.Fatalf("search %s: %d %s", word, code, out)
			}
			var resp struct {
				Results []struct {
					Ref string `json:"ref"`
				} `json:"results"`
				ModeUsed    string `json:"mode_used"`
				Stale       bool   `json:"stale"`
				StaleReason string `json:"stale_reason"`
			}
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatalf("search response %s: %v", out, err)
			}
			var refs []string
			for _, r := range resp.Results {
				refs = append(refs, r.Ref)
			}
			check(t, i, ref, resp.ModeUsed, "SEARCH_MODE_HYBRID", refs, resp.Stale, resp.StaleReason)
		}
	})
	t.Run("grpc", func(t *testing.T) {
		t.Parallel()
		vfsc := ctxdv1.NewVfsServiceClient(unix)
		search := ctxdv1.NewSearchServiceClient(dial(t, "passthrough:///"+d.GRPCAddr().String()))
		ctx := bearer(d.token)
		for i := range rywPairs {
			word := fmt.Sprintf("grpcryw%04dmark", i)
			ref := fmt.Sprintf("agent:/ryw/grpc/%04d.md", i)
			writeText(t, vfsc, ref, "A note another client searches for at once: "+word+".")
			resp, err := search.Search(ctx, &ctxdv1.SearchRequest{Mode: ctxdv1.SearchMode_SEARCH_MODE_BM25, Queries: []*ctxdv1.SearchQuery{{Text: word}}, Limit: 5})
			if err != nil {
				t.Fatalf("search %s: %v", word, err)
			}
			var refs []string
			for _, r := range resp.Results {
				refs = append(refs, r.Ref)
			}
			check(t, i, ref, resp.ModeUsed.String(), "SEARCH_MODE_BM25", refs, resp.Stale, resp.StaleReason)
		}
	})
}

// TestDaemon_ReadsItsWritesFromStart writes and searches the moment a
// daemon with the model serves, five times: the note is found, not stale.
// A text item written before the chunker was installed waited, unchunked,
// until the model had loaded; and the vector index's first build right
// after start made searches answer stale.
func TestDaemon_ReadsItsWritesFromStart(t *testing.T) {
	for i := range 5 {
		cfg := withModel(t, testConfig(t))
		cfg.IndexWait = Duration{time.Minute}
		mustStart(t, cfg)
		unix := dial(t, "unix://"+cfg.Socket)
		writeText(t, ctxdv1.NewVfsServiceClient(unix), "agent:/first.md", "The first note after start mentions quillwort.")
		resp, err := ctxdv1.NewSearchServiceClient(unix).Search(t.Context(), &ctxdv1.SearchRequest{Queries: []*ctxdv1.SearchQuery{{Text: "quillwort"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) != 1 || resp.Results[0].Ref != "agent:/first.md" || resp.Stale {
			t.Fatalf("start %d: search right after the first write found %v (stale %q)", i, resp.Results, resp.StaleReason)
		}
	}
}

// TestDaemon_SessionEventsReadTheirWrites: an event appended to a session
// is found by SearchEvents made right after, each of 50 times, and the
// answer is not stale.
func TestDaemon_SessionEventsReadTheirWrites(t *testing.T) {
	cfg := testConfig(t)
	cfg.IndexWait = Duration{time.Minute}
	mustStart(t, cfg)
	sessions := ctxdv1.NewSessionServiceClient(dial(t, "unix://"+cfg.Socket))
	ctx := t.Context()
	if _, err := sessions.StartSession(ctx, &ctxdv1.StartSessionRequest{Id: "s1", Project: "ryw"}); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		word := fmt.Sprintf("eventryw%02dmark", i)
		if _, err := sessions.AppendEvents(ctx, &ctxdv1.AppendEventsRequest{SessionId: "s1", Project: "ryw", Events: []*ctxdv1.SessionEvent{
			{Kind: ctxdv1.SessionEventKind_SESSION_EVENT_KIND_DECISION, Text: "We decided on " + word + "."},
		}}); err != nil {
			t.Fatal(err)
		}
		resp, err := sessions.SearchEvents(ctx, &ctxdv1.SearchEventsRequest{Query: word, Project: "ryw"})
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, s := range resp.Sessions {
			for _, h := range s.Hits {
				texts = append(texts, h.GetEvent().GetText())
			}
		}
		if len(texts) != 1 || !strings.Contains(texts[0], word) || resp.Stale {
			t.Fatalf("event %d: SearchEvents right after the append found %q (stale %q)", i, texts, resp.StaleReason)
		}
	}
}
