package openai

import (
	"errors"
	"testing"
	"time"
)

func TestBreaker_OpensProbesAndCloses(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newBreaker(2, time.Minute)
	b.now = func() time.Time { return now }
	admit := func(want, wantOpen bool) {
		t.Helper()
		ok, open, _ := b.admit()
		if ok != want || (!ok && open != wantOpen) {
			t.Fatalf("admit = %v (open %v), want %v (open %v)", ok, open, want, wantOpen)
		}
	}
	down := errors.New("connection refused")
	admit(true, false)
	b.record(down)
	admit(true, false) // one failure: still closed
	b.record(down)
	admit(false, true) // two in a row: open
	now = now.Add(time.Minute)
	admit(true, false)  // the cooldown is over: this call is the probe
	admit(false, false) // one probe at a time
	b.record(down)      // the probe failed: open for another cooldown
	admit(false, true)
	now = now.Add(time.Minute)
	admit(true, false)
	b.abandon() // the probe's caller went away: the next call probes
	admit(true, false)
	b.record(nil)
	if open, failures, last, _ := b.state(); open || failures != 0 || last != nil {
		t.Fatalf("after a success: open %v, failures %d, last %v", open, failures, last)
	}
	admit(true, false)
}
