// Command msgbench-go is the msgbench worker of the go target: it reads one
// JSON request on stdin and writes JSON lines on stdout (spec/README.md).
// With --serve it is the server half of the socket workload instead
// (target.toml's serve; spec/README.md, "Peers").
package main

import (
	"fmt"
	"os"

	"msgbench/kits/go/peer"
	"msgbench/targets/go/internal/worker"
)

func main() {
	run := worker.Run
	switch {
	case len(os.Args) == 2 && os.Args[1] == peer.ServeFlag:
		run = worker.Serve
	case len(os.Args) > 1:
		fmt.Fprintf(os.Stderr, "usage: msgbench-go [%s] (the request on stdin)\n", peer.ServeFlag)
		os.Exit(2)
	}
	if err := run(os.Stdin, os.Stdout); err != nil {
		// stdout is gone: nothing left to report to but stderr.
		fmt.Fprintln(os.Stderr, "msgbench-go:", err)
		os.Exit(1)
	}
}
