// Command msgbench-go is the msgbench worker of the go target: it reads one
// JSON request on stdin and writes JSON lines on stdout (spec/README.md).
package main

import (
	"fmt"
	"os"

	"msgbench/targets/go/internal/worker"
)

func main() {
	if err := worker.Run(os.Stdin, os.Stdout); err != nil {
		// stdout is gone: nothing left to report to but stderr.
		fmt.Fprintln(os.Stderr, "msgbench-go:", err)
		os.Exit(1)
	}
}
