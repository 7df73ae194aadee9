package standing

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ctxd/ctxd/index/lexical"
	"github.com/ctxd/ctxd/index/search"
	"github.com/ctxd/ctxd/vfs"
)

// A BM25 subscription is pushed an item holding every query term (as the
// lexical index analyses them: "panels" and "efficient" stem like "panel"
// and "efficiency"), with a search result's shape; an item holding only
// some is not pushed, and an edit of a matching item is pushed again as a
// new version.
func TestHub_LexicalMatchAndEdit(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.subscribe(Query{Texts: []string{"solar panel efficiency"}, Mode: search.BM25}, SubscribeOptions{})
	e.write("notes", "/partial.md", "Solar power is popular.")
	e.write("notes", "/full.md", "Intro line.\n\nThese solar panels are efficient in winter.")
	m := nextMatch(t, s, "/full.md")
	r := m.Result
	if r.Score != 1 || r.ChunkID != r.ItemID+"#1" || !strings.Contains(r.Snippet, "panels") || r.StartLine != 3 {
		t.Fatalf("result %+v: want score 1, chunk #1 from line 3 with a snippet around the terms", r)
	}
	if len(r.Ranks) != 1 || r.Ranks[0].Leg != search.LegBM25 || len(r.QueryIndexes) != 1 {
		t.Fatalf("ranks %+v queries %v: want the BM25 leg and query 0", r.Ranks, r.QueryIndexes)
	}
	if m.Change.Op != vfs.OpWrite || m.Change.Rev != 1 || m.Change.Seq == 0 {
		t.Fatalf("change %+v: want write rev 1 with its sequence", m.Change)
	}
	if _, err := e.store.Edit(context.Background(), vfs.Ref{Drive: "notes", Path: "/full.md"}, []vfs.Patch{{StartLine: 1, EndLine: 1, Content: "New intro."}}, ""); err != nil {
		t.Fatal(err)
	}
	m2 := nextMatch(t, s, "/full.md")
	if m2.Change.Op != vfs.OpEdit || m2.Change.Rev != 2 || m2.Change.Seq <= m.Change.Seq {
		t.Fatalf("change %+v after %+v: want edit rev 2, later", m2.Change, m.Change)
	}
}

// The lexical leg weighs terms by IDF: with min_score 0.5 a chunk holding
// only the query's rare term matches and one holding only its common term
// does not; the score is the share of the query's weight.
func TestHub_IDFWeighting(t *testing.T) {
	e := newEnv(t, Options{})
	for i := range 20 {
		e.write("notes", "/common"+string(rune('a'+i))+".md", "The budget meeting is on Monday.")
	}
	s := e.subscribe(Query{Texts: []string{"budget xylophone"}, Mode: search.BM25, MinScore: 0.5}, SubscribeOptions{})
	e.write("notes", "/c.md", "Another budget line.")
	e.write("notes", "/x.md", "A xylophone in the hall.")
	m := nextMatch(t, s, "/x.md")
	st, err := e.eng.TermStats(context.Background(), []string{"budget", "xylophon"}, "")
	if err != nil {
		t.Fatal(err)
	}
	wb, wx := idfOf(st.Docs, st.DF[0]), idfOf(st.Docs, st.DF[1])
	if want := wx / (wb + wx); math.Abs(m.Result.Score-want) > 0.05 || m.Result.Score <= 0.5 {
		t.Fatalf("score %v, want about %v (the rare term's share)", m.Result.Score, want)
	}
}

// Filters and the stream's access apply before anything is queued.
func TestHub_FilterAndAccess(t *testing.T) {
	e := newEnv(t, Options{})
	acc, err := vfs.NewAccess(nil, []string{"team:/shared"})
	if err != nil {
		t.Fatal(err)
	}
	limited := e.subscribe(Query{Texts: []string{"quarterly report"}}, SubscribeOptions{Access: acc})
	tagged := e.subscribe(Query{Texts: []string{"quarterly report"}, Filter: lexical.Filter{Drives: []string{"team"}, PathPrefixes: []string{"/private"}}}, SubscribeOptions{})
	e.write("team", "/private/q.md", "The quarterly report is late.")
	e.write("team", "/shared/q.md", "The quarterly report is out.")
	nextMatch(t, limited, "/shared/q.md")
	nextMatch(t, tagged, "/private/q.md")
}

// A hybrid subscription matches by meaning once the chunk is embedded, with
// the real model: no query word is in the text.
func TestHub_VectorLeg(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.subscribe(Query{Texts: []string{"How do I reset my password?"}, Mode: search.Hybrid, MinScore: 0.45}, SubscribeOptions{})
	e.write("notes", "/weather.md", "Tomorrow brings heavy rain along the coast.")
	e.write("notes", "/login.md", "To recover account credentials, open the sign-in page and choose forgot passphrase.")
	m := nextMatch(t, s, "/login.md")
	if len(m.Result.Ranks) != 1 || m.Result.Ranks[0].Leg != search.LegVector || m.Result.Score < 0.45 {
		t.Fatalf("result %+v: want a vector-leg match over 0.45", m.Result)
	}
	if _, err := e.hub.Subscribe(context.Background(), Query{Texts: []string{"x"}, Mode: search.Vector}, SubscribeOptions{}); err != nil {
		t.Fatalf("vector subscription with a model: %v", err)
	}
	noModel := newEnv(t, Options{Embed: func(context.Context, string) ([]float32, error) { return nil, errors.New("no model") }})
	if _, err := noModel.hub.Subscribe(context.Background(), Query{Texts: []string{"x"}, Mode: search.Vector}, SubscribeOptions{}); !errors.Is(err, ErrNoModel) {
		t.Fatalf("vector subscription without a model: %v, want ErrNoModel", err)
	}
}

// A stream resumed with a push's token gets, in order, what matched while
// it was gone; a token the outbox no longer covers starts with a Gap.
func TestHub_ResumeAndGap(t *testing.T) {
	// Retain 2 keeps /b.md and /c.md until the resumed stream holds them.
	e := newEnvWith(t, Options{Retain: 2}, false)
	q := Query{Texts: []string{"invoice"}}
	s := e.subscribe(q, SubscribeOptions{})
	e.write("notes", "/a.md", "invoice A")
	a := nextMatch(t, s, "/a.md")
	s.Close()
	e.write("notes", "/b.md", "invoice B")
	e.write("notes", "/c.md", "invoice C")
	r := e.subscribe(q, SubscribeOptions{Resume: a.Change.Seq, HasResume: true})
	e.write("notes", "/d.md", "invoice D")
	nextMatch(t, r, "/b.md")
	nextMatch(t, r, "/c.md")
	nextMatch(t, r, "/d.md")

	// Once idle and replayed, the engine trims all but the last 2 entries.
	waitTrimmed(t, e, a.Change.Seq+2)
	g := e.subscribe(q, SubscribeOptions{Resume: a.Change.Seq - 1, HasResume: true})
	ev := next(t, g)
	if ev.Gap == nil || ev.Gap.From != a.Change.Seq {
		t.Fatalf("first event %+v, want a gap from %d", ev, a.Change.Seq)
	}
}

// A resumed stream holds the outbox entries it has yet to replay: the
// engine may not trim them however many entries come after, until the
// stream has read them.
func TestHub_HoldsReplay(t *testing.T) {
	e := newEnvWith(t, Options{Retain: 2}, false)
	q := Query{Texts: []string{"invoice"}}
	s := e.subscribe(q, SubscribeOptions{})
	e.write("notes", "/a.md", "invoice A")
	a := nextMatch(t, s, "/a.md").Change.Seq
	s.Close()
	e.write("notes", "/b.md", "invoice B")
	waitMatched(t, e, a+1) // so that /b.md is the resumed stream's replay, not a push
	r := e.subscribe(q, SubscribeOptions{Resume: a, HasResume: true})
	for _, p := range []string{"/c.md", "/d.md", "/e.md"} {
		e.write("notes", p, "invoice "+p)
	}
	waitMatched(t, e, a+4)
	// Retain alone would let the engine trim through a+2, /b.md with it.
	if _, trim := e.hub.Hold(); trim > a {
		t.Fatalf("the hub lets the engine trim through %d while the stream resumed at %d has not replayed", trim, a)
	}
	for _, p := range []string{"/b.md", "/c.md", "/d.md", "/e.md"} {
		nextMatch(t, r, p)
	}
	if _, trim := e.hub.Hold(); trim != a+2 {
		t.Fatalf("after the replay the hub holds the outbox through %d, want %d (Retain 2 below %d)", trim, a+2, a+4)
	}
}

// waitMatched waits until the hub has matched the outbox through seq.
func waitMatched(t *testing.T, e *env, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for matched, _ := e.hub.Hold(); matched < seq; matched, _ = e.hub.Hold() {
		if time.Now().After(deadline) {
			t.Fatalf("the hub matched through %d after 30s, want %d", matched, seq)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitTrimmed waits until the outbox retains nothing below seq.
func waitTrimmed(t *testing.T, e *env, seq uint64) {
	t.Helper()
	for {
		_, retained, err := e.store.Changes(context.Background(), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if retained >= seq {
			return
		}
		_, changed := e.eng.Applied()
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond): // trimming follows applying
		}
	}
}

// A consumer that never reads is cut off once its queue is full, and the
// writes go on.
func TestHub_SlowConsumerCutOff(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.subscribe(Query{Texts: []string{"alert"}}, SubscribeOptions{Pending: 2})
	for i := range 5 {
		e.write("notes", "/alert"+string(rune('0'+i))+".md", "alert number")
	}
	<-s.done
	if !errors.Is(s.err, ErrCutOff) {
		t.Fatalf("stream ended with %v, want ErrCutOff", s.err)
	}
	if _, _, cut := e.hub.Counts(); cut != 1 {
		t.Fatalf("cut off %d, want 1", cut)
	}
}
