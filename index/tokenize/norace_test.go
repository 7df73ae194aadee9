//go:build !race

package tokenize

// raceEnabled reports whether the race detector is on (sync.Pool then drops
// items at random, so allocation counts are not meaningful).
const raceEnabled = false
