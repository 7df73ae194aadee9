package search

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// isEvent is the daemon's rule for session events, restated for the tests.
func isEvent(drive, path string) bool {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	return drive == "session" && len(segs) >= 4 && segs[2] == "events"
}

// TestEngine_RecencyFreshEventBeatsStale: three items with the same text
// rank by id (their creation order) without recency; with it, the fresh
// event outranks the stale one, which keeps the floor of its score, and the
// note between them is untouched, in both groupings.
func TestEngine_RecencyFreshEventBeatsStale(t *testing.T) {
	e := newEnv(t)
	text := "deploy failed: the disk was full"
	stale := e.write("session:/proj/s1/events/e1", text)
	note := e.write("notes:/deploy.md", text)
	fresh := e.write("session:/proj/s2/events/e2", text)
	e.sync()
	age := fresh.CreatedAt.Sub(stale.CreatedAt)
	if age <= 0 {
		t.Fatalf("the fresh event is not younger: %v, %v", stale.CreatedAt, fresh.CreatedAt)
	}
	// The stale event is ten half-lives old when the search runs.
	rec := Recency{HalfLife: age / 10, Floor: 0.5, Applies: isEvent, Now: fresh.CreatedAt}
	want := map[string]float64{
		"session:/proj/s1/events/e1": rec.Floor + (1-rec.Floor)*math.Exp2(-float64(age)/float64(rec.HalfLife)),
		"notes:/deploy.md":           1,
		"session:/proj/s2/events/e2": 1,
	}
	q := []Query{{Text: "deploy disk full"}}
	for _, group := range []GroupBy{GroupChunk, GroupItem} {
		off := e.search(Request{Queries: q, Mode: BM25, GroupBy: group})
		if got, w := refs(off), []string{"session:/proj/s1/events/e1", "notes:/deploy.md", "session:/proj/s2/events/e2"}; !slices.Equal(got, w) {
			t.Fatalf("group %d, no recency: %v, want %v", group, got, w)
		}
		on := e.search(Request{Queries: q, Mode: BM25, GroupBy: group, Recency: rec})
		if got, w := refs(on), []string{"notes:/deploy.md", "session:/proj/s2/events/e2", "session:/proj/s1/events/e1"}; !slices.Equal(got, w) {
			t.Errorf("group %d, recency: %v, want %v", group, got, w)
		}
		base := map[string]float64{}
		for _, r := range off.Results {
			base[r.Drive+":"+r.Path] = r.Score
		}
		for _, r := range on.Results {
			ref := r.Drive + ":" + r.Path
			if w := base[ref] * want[ref]; math.Abs(r.Score-w) > 1e-12 {
				t.Errorf("group %d: %s scores %v, want %v", group, ref, r.Score, w)
			}
		}
	}
	if note.CreatedAt.IsZero() {
		t.Fatal("no creation time")
	}
}

// TestEngine_RecencyLooksPastTheWindow: when ageing lowers every event in
// the first window, the window grows until the events after it are aged
// too, so a fresh event ranked past them all comes first, not the stale
// events that followed the window.
func TestEngine_RecencyLooksPastTheWindow(t *testing.T) {
	e := newEnv(t)
	const stale = 30
	var last time.Time
	for i := range stale {
		last = e.write(fmt.Sprintf("session:/proj/s%02d/events/e", i), "heron heron heron").CreatedAt
	}
	fresh := e.write("session:/proj/new/events/e", "heron seen over the marsh at dawn, wading slowly among the reeds")
	e.sync()
	q := []Query{{Text: "heron"}}
	const limit = 5 // a first window of 10 events
	off := e.search(Request{Queries: q, Mode: BM25, Limit: stale + 1})
	if got := refs(off); len(got) != stale+1 || got[stale] != "session:/proj/new/events/e" {
		t.Fatalf("without recency the fresh event is not last: %v", got)
	}
	base := map[string]float64{}
	for _, r := range off.Results {
		base[r.Path] = r.Score
	}
	rec := Recency{HalfLife: fresh.CreatedAt.Sub(last) / 10, Floor: 0.5, Applies: isEvent, Now: fresh.CreatedAt}
	for _, group := range []GroupBy{GroupChunk, GroupItem} {
		on := e.search(Request{Queries: q, Mode: BM25, Limit: limit, GroupBy: group, Recency: rec})
		if got := refs(on); len(got) != limit || got[0] != "session:/proj/new/events/e" {
			t.Errorf("group %d: %v, want the fresh event first", group, got)
		}
		for _, r := range on.Results[1:] {
			if r.Score > 0.51*base[r.Path] {
				t.Errorf("group %d: %s scores %v of %v, not aged", group, r.Path, r.Score, base[r.Path])
			}
		}
	}
}

func TestEngine_RecencyValidates(t *testing.T) {
	e := newEnv(t)
	for _, r := range []Recency{{HalfLife: -time.Hour}, {HalfLife: time.Hour, Floor: 1.5}, {HalfLife: time.Hour, Floor: math.NaN()}} {
		_, err := e.eng.Search(t.Context(), Request{Queries: []Query{{Text: "x"}}, Recency: r})
		if !errors.Is(err, ErrRecency) || !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("%+v: %v", r, err)
		}
	}
}
