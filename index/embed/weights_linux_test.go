package embed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The installed models keep their weights beside the graph, and ONNX
// Runtime maps that file rather than copying it: the weights are the
// kernel's page cache, not the daemon's anonymous memory.
func TestOpen_MapsWeightsBesideTheGraph(t *testing.T) {
	for name, dir := range modelDirs() {
		t.Run(name, func(t *testing.T) {
			data, err := filepath.Abs(filepath.Join(dir, ModelDataFile))
			if err != nil {
				t.Fatal(err)
			}
			requireFiles(t, data)
			mustOpenModel(t, dir, Options{})
			maps, err := os.ReadFile("/proc/self/maps")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(maps), data) {
				t.Fatalf("%s is not mapped after Open: the weights were copied into the process", data)
			}
		})
	}
}

// A directory of links to a model's files, with a ctxd-model.json of its
// own, opens though ONNX Runtime refuses a weights file linked from outside
// the graph's directory: Open goes through the links.
func TestOpen_DirectoryOfLinks(t *testing.T) {
	src := modelDirs()["int8"]
	dir := linkModelDir(t, src, func(s map[string]any) { s["id"] = "linked" })
	linked := mustEmbed(t, mustOpenModel(t, dir, Options{}), []string{"a memory layer for agents"}, false)
	direct := mustEmbed(t, mustOpenModel(t, src, Options{}), []string{"a memory layer for agents"}, false)
	if c := Cosine(linked[0], direct[0]); c < 0.99999 {
		t.Fatalf("the linked directory's vector differs from the model's own: cosine %.6f", c)
	}
}
