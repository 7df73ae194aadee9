package metrics

import (
	"testing"
	"time"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestRate_PerSecond(t *testing.T) {
	c := &fakeClock{t: time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)}
	r := NewRate(c.now)
	if got := r.PerSecond(); got != 0 {
		t.Fatalf("no events: %v/s", got)
	}
	r.Add(3)
	if got := r.PerSecond(); got != 3 { // over the first second
		t.Errorf("3 events in the first second: %v/s; want 3", got)
	}
	c.advance(9 * time.Second)
	r.Add(7)
	if got := r.PerSecond(); got != 10.0/9 { // 10 events over the 9 s since the Rate was made
		t.Errorf("10 events over 9 s: %v/s; want %v", got, 10.0/9)
	}
	c.advance(51 * time.Second) // 60 s in: the first 3 events fall out of the window
	if got := r.PerSecond(); got != 7.0/60 {
		t.Errorf("60 s in: %v/s; want %v (the first second's events dropped)", got, 7.0/60)
	}
	c.advance(time.Hour) // slots of an hour ago are not counted again
	r.Add(6)
	if got := r.PerSecond(); got != 6.0/60 {
		t.Errorf("an hour later: %v/s; want %v", got, 6.0/60)
	}
}
