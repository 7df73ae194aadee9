package llmtokens

import (
	"slices"
	"testing"
)

// TestCount checks the encoding against token ids tiktoken's own tests pin
// for o200k_base, with every proxy pointing at a closed port: a download
// of the ranks would fail the load.
func TestCount(t *testing.T) {
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"} {
		t.Setenv(k, "http://127.0.0.1:1")
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	e, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if got := e.EncodeOrdinary("hello world"); !slices.Equal(got, []int{24912, 2375}) {
		t.Errorf("hello world: %v, want [24912 2375]", got)
	}
	if n, err := Count("hello world"); n != 2 || err != nil {
		t.Errorf("Count(hello world) = %d, %v; want 2", n, err)
	}
	if n, err := Count(""); n != 0 || err != nil {
		t.Errorf("Count(\"\") = %d, %v; want 0", n, err)
	}
	// A special token's text inside a prompt is ordinary text, several tokens.
	if n, err := Count("<|endoftext|>"); n < 2 || err != nil {
		t.Errorf("Count(<|endoftext|>) = %d, %v; want it counted as text", n, err)
	}
}
