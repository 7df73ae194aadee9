// Command ctxd is the ctxd daemon (`ctxd serve`) and its command-line client.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(Run(context.Background(), os.Args[1:]))
}
