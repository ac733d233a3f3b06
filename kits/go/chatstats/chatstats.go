// Package chatstats is the chat server kind's answer to {"stats": true}
// (docs/chat-server.md): one definition for the Go server that writes it and the
// load generator that reads it.
package chatstats

// Stats is a server's view of itself at one moment.
type Stats struct {
	PeakRSSBytes int64              `json:"peak_rss_bytes"`
	RSSBytes     int64              `json:"rss_bytes"`
	CPUNs        int64              `json:"cpu_ns"`
	Connections  int64              `json:"connections"`
	Processes    int64              `json:"processes"`
	Runtime      map[string]float64 `json:"runtime"`
}
