package inspector

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"testing"
)

// TestAssets_HtmxPinned: the committed htmx is the file whose sha256
// scripts/inspector-assets.sh pins (`make inspector-assets` fetches it from
// npm; `make checkgenerate` compares it with the registry's).
func TestAssets_HtmxPinned(t *testing.T) {
	script, err := os.ReadFile("../../scripts/inspector-assets.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^sum=([0-9a-f]{64})$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/inspector-assets.sh pins no sum=")
	}
	js, err := files.ReadFile("static/htmx.min.js")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(js); hex.EncodeToString(sum[:]) != string(m[1]) {
		t.Errorf("static/htmx.min.js has sha256 %x, the script pins %s; run `make inspector-assets`", sum, m[1])
	}
}
