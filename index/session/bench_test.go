package session

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkSessions_Append measures recording one event, as a host's hook
// does after every tool use: a write transaction (one fsync) and the count
// of the session's events.
func BenchmarkSessions_Append(b *testing.B) {
	e := newEnv(b, Options{})
	ctx := context.Background()
	e.start("bench", "p")
	ev := Event{Kind: KindToolUse, Tool: "Bash", Text: "go test ./daemon -run TestSearch -count=1"}
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, _, err := e.s.Append(ctx, AppendParams{SessionID: "bench", Project: "p", Events: []Event{ev}}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkSessions_Digest measures writing the digest of a session of n
// events, as a host's Stop hook does after every turn.
func BenchmarkSessions_Digest(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			e := newEnv(b, Options{})
			ctx := context.Background()
			e.start("bench", "p")
			for i := 0; i < n; i += MaxEventsPerAppend {
				batch := make([]Event, min(MaxEventsPerAppend, n-i))
				for j := range batch {
					batch[j] = recorded()[(i+j)%len(recorded())]
				}
				e.append("bench", "p", batch...)
			}
			var lat []time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := e.s.Digest(ctx, "bench", "p", false); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

// reportPercentiles reports the p50 and p99 of lat in milliseconds.
func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50_ms")
	b.ReportMetric(at(0.99), "p99_ms")
}
