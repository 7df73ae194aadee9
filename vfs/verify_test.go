package vfs

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestStore_VerifyRefusesAPinnedRead: the page check takes the writer lock,
// which must never be waited for while holding a pinned read.
func TestStore_VerifyRefusesAPinnedRead(t *testing.T) {
	s := mustOpenStore(t)
	mustWrite(t, s, "notes:/a.md", "alpha")
	pc, release, err := s.Pin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := s.Verify(pc); err == nil {
		t.Fatal("Verify under a pinned read succeeded")
	}
}

// TestStore_PinSeesOneMoment: reads under a pin see the store as of the pin,
// whatever commits meanwhile.
func TestStore_PinSeesOneMoment(t *testing.T) {
	s := mustOpenStore(t)
	mustSetIndexing(t, s, paragraphChunker{"p1"}, "m1")
	ctx := context.Background()
	mustWrite(t, s, "notes:/a.md", "alpha")
	pc, release, err := s.Pin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	mustWrite(t, s, "notes:/b.md", "beta")
	pinned, err := s.OutboxSeq(pc)
	if err != nil {
		t.Fatal(err)
	}
	live, err := s.OutboxSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cs, _, err := s.Changes(pc, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if pinned != 1 || live != 2 || len(cs) != 1 {
		t.Fatalf("pinned seq %d, live %d, %d changes under the pin; want 1, 2, 1", pinned, live, len(cs))
	}
}

// BenchmarkStore_Verify measures the whole check; writers wait while its
// page part runs (see Verify).
func BenchmarkStore_Verify(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := mustOpenStore(b)
			if _, err := s.SetIndexing(ctx, paragraphChunker{"p1"}, "m1"); err != nil {
				b.Fatal(err)
			}
			for i := 0; i < n; i += 500 {
				done := make(chan error, 500)
				for j := i; j < i+500 && j < n; j++ {
					go func() {
						body := strings.Repeat(fmt.Sprintf("paragraph of item %d\n\n", j), 100)
						_, err := s.Write(ctx, WriteParams{Ref: Ref{Drive: "agent", Path: fmt.Sprintf("/d%d/f%d.md", j%20, j)}, Content: []byte(body), IsText: true})
						done <- err
					}()
				}
				for j := i; j < i+500 && j < n; j++ {
					if err := <-done; err != nil {
						b.Fatal(err)
					}
				}
			}
			u, err := s.db.Usage(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(u.Size)
			b.ResetTimer()
			for b.Loop() {
				if err := s.Verify(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
