package benchenv

import (
	"os"
	"strconv"
	"testing"
)

// Int returns the positive integer in the environment variable name, def
// when it is unset; anything else fails tb.
func Int(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
