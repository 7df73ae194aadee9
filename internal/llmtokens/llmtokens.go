package llmtokens

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding names the byte-pair encoding Count uses.
const Encoding = "o200k_base"

var (
	loadOnce sync.Once
	enc      *tiktoken.Tiktoken
	loadErr  error
)

// load parses the embedded ranks once. The loader is set here, before the
// first encoding is built, so tiktoken-go never downloads one.
func load() (*tiktoken.Tiktoken, error) {
	loadOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		enc, loadErr = tiktoken.GetEncoding(Encoding)
		if loadErr != nil {
			loadErr = fmt.Errorf("load the %s encoding: %w", Encoding, loadErr)
		}
	})
	return enc, loadErr
}

// Count returns the number of Encoding tokens of s. Special-token text such
// as "<|endoftext|>" counts as ordinary text, as it does inside a prompt.
func Count(s string) (int, error) {
	e, err := load()
	if err != nil {
		return 0, err
	}
	return len(e.EncodeOrdinary(s)), nil
}
