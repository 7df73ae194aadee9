package vfs

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

func TestStore_Tree(t *testing.T) {
	s := mustOpenStore(t)
	writeAll(t, s, []string{"/notes/a.md", "/notes/b.md", "/notes/deep/er/x.md", "/z.txt", "/a%/1"})
	mustMkdir(t, s, "/notes/empty")
	mustWrite(t, s, "disk:/f", "disk")
	mustWrite(t, s, "url:/https://example.com/post", "u")

	tests := []struct {
		name          string
		dir           Ref
		depth, perDir int
		want          string
	}{
		{"drive", mustRef(t, "agent:/"), 0, 0, `agent:/ (107 B)
├── a%/ (16 B)
│   └── 1 (16 B)
├── notes/ (74 B)
│   ├── deep/ (30 B)
│   │   └── er/ (30 B) …
│   ├── empty/ (0 B)
│   ├── a.md (22 B)
│   └── b.md (22 B)
└── z.txt (17 B)
`},
		{"per dir cap", mustRef(t, "/notes"), 1, 2, `agent:/notes (74 B)
├── deep/ (30 B) …
├── empty/ (0 B)
└── … 2 more
`},
		{"per dir cap keeps dirs then first items", mustRef(t, "/notes"), 1, 3, `agent:/notes (74 B)
├── deep/ (30 B) …
├── empty/ (0 B)
├── a.md (22 B)
└── … 1 more
`},
		{"all drives", Ref{}, 2, 0, `(all drives) 112 B
├── agent:/ (107 B)
│   ├── a%/ (16 B) …
│   ├── notes/ (74 B) …
│   └── z.txt (17 B)
├── disk:/ (4 B)
│   └── f (4 B)
└── url:/ (1 B)
    └── https:/ (1 B) …
`},
		{"url grouping", mustRef(t, "url:/"), 0, 0, `url:/ (1 B)
└── https:/ (1 B)
    └── example.com/ (1 B)
        └── post (1 B)
`},
		{"all drives depth 1", Ref{}, 1, 2, `(all drives) 112 B
├── agent:/ (107 B) …
├── disk:/ (4 B) …
└── … 1 more
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := s.Tree(ctx, tt.dir, tt.depth, tt.perDir)
			if err != nil {
				t.Fatal(err)
			}
			if got := RenderTree(n); got != tt.want {
				t.Errorf("RenderTree =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	node, err := s.Tree(ctx, mustRef(t, "url:/https:"), 0, 0)
	if err != nil || node.Children[0].Path != "/https://example.com" || node.Children[0].Ref() != "url:/https://example.com" {
		t.Fatalf("url tree = %+v, %v", node, err)
	}
	_, err = s.Tree(ctx, mustRef(t, "/z.txt"), 0, 0)
	wantErr(t, err, ErrNotDir)
	_, err = s.Tree(ctx, mustRef(t, "/missing"), 0, 0)
	wantErr(t, err, ErrNotFound)
	_, err = s.Tree(ctx, mustRef(t, "/"), -1, 0)
	wantErr(t, err, ErrInvalid)
}

func TestStore_Tree_large(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	s := mustOpenStore(t)
	const n = 2000
	for i := range n {
		mustWrite(t, s, fmt.Sprintf("/d%02d/f%04d.md", i%40, i), "x")
	}
	root, err := s.Tree(ctx, mustRef(t, "agent:/"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if root.Size != n || len(root.Children) != 40 || root.Children[0].OmittedChildren != 0 || len(root.Children[0].Children) != 50 {
		t.Errorf("root: size %d, %d children", root.Size, len(root.Children))
	}
	if out := RenderTree(root); !strings.Contains(out, "d00/ (50 B)") {
		t.Errorf("render:\n%.300s", out)
	}
}

func BenchmarkStore_Tree(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := mustOpenStore(b)
			for i := 0; i < n; i += 500 {
				// Batches of writes through one Write each would take long; go
				// straight through Write but in parallel groups.
				done := make(chan error, 500)
				for j := i; j < i+500 && j < n; j++ {
					go func() {
						_, err := s.Write(ctx, WriteParams{Ref: Ref{Drive: "agent", Path: fmt.Sprintf("/d%d/e%d/f%d.md", j%20, j%7, j)}, Content: []byte("x"), IsText: true})
						done <- err
					}()
				}
				for j := i; j < i+500 && j < n; j++ {
					if err := <-done; err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Tree(ctx, Ref{Drive: "agent", Path: "/"}, 0, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStore_Read(b *testing.B) {
	s := mustOpenStore(b)
	mustWrite(b, s, "/notes/a.md", strings.Repeat("some line of text\n", 200))
	ref := mustRef(b, "/notes/a.md")
	for b.Loop() {
		if _, err := s.Read(ctx, ref, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStore_Write(b *testing.B) {
	s := mustOpenStore(b)
	b.SetParallelism(16)
	var i atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p := fmt.Sprintf("/w/%d", i.Add(1))
			if _, err := s.Write(ctx, WriteParams{Ref: Ref{Drive: "agent", Path: p}, Content: []byte("hello"), IsText: true}); err != nil {
				b.Error(err)
			}
		}
	})
}
