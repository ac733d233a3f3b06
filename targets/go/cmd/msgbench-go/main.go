// Command msgbench-go is the msgbench worker of the go target: it reads one
// JSON request on stdin and writes JSON lines on stdout (spec/README.md).
// With --serve it is the server half of the socket workload instead
// (target.toml's serve; spec/README.md, "Peers"). With --chat-server
// --listen HOST:PORT it is the chat server kind's WebSocket server
// (target.toml's chat_server; docs/chat-server.md).
package main

import (
	"fmt"
	"os"

	"msgbench/kits/go/peer"
	"msgbench/targets/go/internal/chatserver"
	"msgbench/targets/go/internal/worker"
)

const usage = "usage: msgbench-go [%s | --chat-server --listen HOST:PORT] (the request on stdin)\n"

func main() {
	run := worker.Run
	switch {
	case len(os.Args) == 2 && os.Args[1] == peer.ServeFlag:
		run = worker.Serve
	case len(os.Args) == 4 && os.Args[1] == "--chat-server" && os.Args[2] == "--listen":
		if err := chatserver.Listen(os.Args[3], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "msgbench-go --chat-server:", err)
			os.Exit(1)
		}
		return
	case len(os.Args) > 1:
		fmt.Fprintf(os.Stderr, usage, peer.ServeFlag)
		os.Exit(2)
	}
	if err := run(os.Stdin, os.Stdout); err != nil {
		// stdout is gone: nothing left to report to but stderr.
		fmt.Fprintln(os.Stderr, "msgbench-go:", err)
		os.Exit(1)
	}
}
