package socket

import (
	"os"
	"time"

	"msgbench/kits/go/peer"
	"msgbench/kits/go/protocol"
)

// who names the server half in the worker's errors ("the server: port 5000
// is in use").
const who = "the server"

// Limits on the waits for the server's lines.
const (
	listeningWithin = 30 * time.Second
	servedWithin    = 30 * time.Second
	// explainWithin is how long a client that lost a connection waits for
	// the server's own error line, which says more than a reset does.
	explainWithin = 2 * time.Second
)

// PeerConfig says how to start the server and where to connect to it.
type PeerConfig struct {
	Argv []string
	Cwd  string
	Host string
}

// peerFromEnv reads the harness's environment (peer.EnvCommand, EnvCwd,
// EnvHost). Without it (a worker run by hand) the server is this very binary
// with peer.ServeFlag, on this host; placement = remote then cannot be.
func peerFromEnv(p Params) (PeerConfig, error) {
	cfg := PeerConfig{Cwd: os.Getenv(peer.EnvCwd), Host: os.Getenv(peer.EnvHost)}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if os.Getenv(peer.EnvCommand) == "" && p.Remote {
		return cfg, protocol.Errorf(protocol.Unsupported,
			"placement = remote needs the harness to place the server (%s and %s are not set)",
			peer.EnvCommand, peer.EnvHost)
	}
	argv, err := peer.Argv(who)
	cfg.Argv = argv
	return cfg, err
}

// The server's lines besides error (spec/README.md, "Peers"): the server
// writes them, the worker decodes them.
type (
	listeningLine struct {
		Type string `json:"type"` // "listening"
		Port int    `json:"port"`
	}
	servedLine struct {
		Type     string `json:"type"` // "served"
		Messages int64  `json:"messages"`
		Bytes    int64  `json:"bytes"`
	}
)
