package openapi

import (
	"encoding/json"
	"testing"
)

func TestSpec_HasTitleAndVersion(t *testing.T) {
	var doc struct {
		Info struct{ Title, Version string }
	}
	if err := json.Unmarshal(Spec, &doc); err != nil {
		t.Fatal(err)
	}
	// protoc-gen-openapiv2 writes "version not set" and a file name as the
	// title unless proto/ctxd/v1/openapi.yaml gives them.
	if doc.Info.Title != "ctxd API" || doc.Info.Version != "v1" {
		t.Fatalf("info = %+v, want title %q and version %q", doc.Info, "ctxd API", "v1")
	}
}
