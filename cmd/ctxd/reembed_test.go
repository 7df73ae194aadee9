package main

import (
	"testing"

	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

func TestReembedLine(t *testing.T) {
	tests := []struct {
		name string
		p    *ctxdv1.IngestProgress
		want string
	}{
		{"not measured yet", &ctxdv1.IngestProgress{ItemsTotal: 2}, "embedding: 0/2 chunks"},
		{"measured", &ctxdv1.IngestProgress{ChunksDone: 120, ItemsTotal: 400, ItemsPerSecond: 35.2, EtaSeconds: 8}, "embedding: 120/400 chunks, 35 chunks/s, ETA 8s"},
		{"done", &ctxdv1.IngestProgress{ChunksDone: 400, ItemsTotal: 400, ItemsPerSecond: 2.5}, "embedding: 400/400 chunks, 2.5 chunks/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reembedLine(tt.p); got != tt.want {
				t.Errorf("reembedLine = %q, want %q", got, tt.want)
			}
		})
	}
}
