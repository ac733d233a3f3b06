// Command msgbench-go is the msgbench worker of the go target, on the Go
// kit's worker (kits/go/worker): one JSON request on stdin, JSON lines on
// stdout (spec/README.md). With --serve it is the socket workload's server
// half (target.toml's serve; "Peers"); with --chat-server --listen
// HOST:PORT the chat server kind's WebSocket server (docs/chat-server.md).
package main

import (
	"msgbench/kits/go/worker"
	"msgbench/targets/go/internal/chat"
	"msgbench/targets/go/internal/chatserver"
	"msgbench/targets/go/internal/fanin"
	"msgbench/targets/go/internal/ring"
	"msgbench/targets/go/internal/socket"
)

// goWorker is the go target's worker. Chat is long enough for a time series
// of the runtime's view; the socket worker is the client and starts its
// server half (--serve) itself.
var goWorker = worker.Worker{
	Target: "go",
	Workloads: map[string]worker.Measure{
		"ring": ring.Measure, "fanin": fanin.Measure, "chat": chat.Measure, "socket": socket.Measure,
	},
	Sampled: []string{"chat"},
	Serve:   socket.ServeStream,
	Modes:   map[string]func([]string) error{"--chat-server": chatserver.Main},
}

func main() { goWorker.Main() }
