package chatserver

import (
	"encoding/json"
	"runtime"
	"strings"

	"github.com/gorilla/websocket"

	"msgbench/kits/go/chatstats"
	"msgbench/kits/go/measure"
	"msgbench/kits/go/sample"
)

// Stats is the answer to {"stats": true} (docs/chat-server.md).
type Stats = chatstats.Stats

func (s *Server) stats() Stats {
	view := sample.GoRuntime()
	runtimeView := make(map[string]float64, len(view))
	for name, v := range view {
		if strings.HasPrefix(name, "go_") {
			runtimeView[strings.TrimPrefix(name, "go_")] = v
		}
	}
	rss, _ := measure.RSSBytes()
	peak, _ := measure.PeakRSSBytes() // after the RSS: never below it
	return Stats{
		PeakRSSBytes: peak, RSSBytes: rss, CPUNs: measure.CPUTime().Nanoseconds(),
		Connections: s.connections.Load(), Processes: int64(runtime.NumGoroutine()), Runtime: runtimeView,
	}
}

// serveStats answers every {"stats": true} frame of a control connection,
// the first included.
func (s *Server) serveStats(conn *websocket.Conn) {
	for {
		body, err := json.Marshal(s.stats())
		if err != nil {
			return
		}
		if err := conn.WriteMessage(websocket.TextMessage, body); err != nil {
			return
		}
		if _, _, err := conn.ReadMessage(); err != nil {
			return
		}
	}
}
