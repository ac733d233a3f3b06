package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"msgbench/kits/go/chatstats"
	"msgbench/kits/go/peer"
	"msgbench/kits/go/protocol"
)

// server is the chat server under test, started as the harness said
// (MSGBENCH_PEER_COMMAND/CWD/HOST) in its own process group.
type server struct {
	proc *peer.Process // nil: started by the harness (attachServer)
	argv []string
	host string
	port int
}

// attachServer is the server the harness started (a run across hosts): its
// death shows as broken connections, which the harness names with its host.
func attachServer(raw string) (*server, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return nil, fmt.Errorf("%s has no port", raw)
	}
	return &server{host: u.Hostname(), port: port}, nil
}

// listenWithin bounds the server's start (a JVM's or a BEAM's boot included,
// on a loaded machine).
const listenWithin = 60 * time.Second

func startServer() (*server, error) {
	argv, err := peer.Argv("the chat server")
	if err != nil {
		return nil, err
	}
	if os.Getenv(peer.EnvCommand) == "" {
		return nil, protocol.Errorf(protocol.Internal,
			"%s is not set: the load generator starts the chat server the harness names there", peer.EnvCommand)
	}
	host := os.Getenv(peer.EnvHost)
	if host == "" {
		host = "127.0.0.1"
	}
	// 0.0.0.0: the clients come from every loopback address 127.0.0.x.
	argv = append(argv, "--listen", "0.0.0.0:0")
	proc, stdout, err := peer.Spawn("the chat server", argv, os.Getenv(peer.EnvCwd))
	if err != nil {
		return nil, err
	}
	s := &server{proc: proc, argv: argv, host: host}
	port := make(chan int, 1)
	bad := make(chan string, 1)
	go func() {
		defer stdout.Close()
		line, err := bufio.NewReader(stdout).ReadString('\n')
		var said struct {
			Listening *int `json:"listening"`
		}
		if err != nil && line == "" {
			bad <- "exited before saying it was listening (" + proc.ExitStatus() + ")"
			return
		}
		if json.Unmarshal([]byte(line), &said) != nil || said.Listening == nil {
			bad <- fmt.Sprintf("printed %.200q where {\"listening\": PORT} was due", strings.TrimSpace(line))
			return
		}
		port <- *said.Listening
		// Nothing more is due on stdout; drain it so a chatty server never blocks.
		_, _ = bufio.NewReader(stdout).WriteTo(discard{})
	}()
	select {
	case s.port = <-port:
		return s, nil
	case why := <-bad:
		s.stop()
		return nil, protocol.Errorf(protocol.Internal, "the chat server %s %s", peer.QuoteArgv(argv), why)
	case <-time.After(listenWithin):
		s.stop()
		return nil, protocol.Errorf(protocol.Internal, "the chat server %s did not say it was listening within %v",
			peer.QuoteArgv(argv), listenWithin)
	}
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func (s *server) url() string { return fmt.Sprintf("ws://%s:%d/", s.host, s.port) }

func (s *server) loopback() bool { return strings.HasPrefix(s.host, "127.") || s.host == "localhost" }

// died says how the server ended, if it has.
func (s *server) died() (string, bool) {
	if s.proc == nil {
		return "", false
	}
	select {
	case <-s.proc.Exited():
		return fmt.Sprintf("the chat server %s died mid-run (%s)", peer.QuoteArgv(s.argv), s.proc.ExitStatus()), true
	default:
		return "", false
	}
}

func (s *server) stop() {
	if s.proc != nil {
		s.proc.Terminate()
	}
}

// exited is closed when a server this generator started exits; never for
// the harness's.
func (s *server) exited() <-chan struct{} {
	if s.proc == nil {
		return nil
	}
	return s.proc.Exited()
}

// stats is the server's answer to {"stats": true} (docs/chat-server.md), with the
// load generator's readings of it as methods.
type stats chatstats.Stats

// statsClient is the control connection: one query at a time.
type statsClient struct {
	mu   sync.Mutex
	conn *websocket.Conn
}

const statsWithin = 30 * time.Second

func (s *server) statsClient(d *websocket.Dialer) (*statsClient, error) {
	conn, _, err := d.Dial(s.url(), nil)
	if err != nil {
		return nil, err
	}
	return &statsClient{conn: conn}, nil
}

func (c *statsClient) query() (stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var st stats
	_ = c.conn.SetWriteDeadline(time.Now().Add(statsWithin))
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(`{"stats": true}`)); err != nil {
		return st, err
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(statsWithin))
	_, body, err := c.conn.ReadMessage()
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("its stats %.200q do not decode: %v", body, err)
	}
	return st, nil
}

func (c *statsClient) close() { _ = c.conn.Close() }

var unitName = regexp.MustCompile(`^[a-z][a-z0-9_]*_(bytes|count|ns|ms|percent|per_s)$`)

// values are the stats as sample values, prefixed server_; a runtime name
// without its unit is left out (and said once on stderr).
func (st stats) values(warned *sync.Once) map[string]float64 {
	v := map[string]float64{
		"server_peak_rss_bytes":    float64(st.PeakRSSBytes),
		"server_rss_bytes":         float64(st.RSSBytes),
		"server_cpu_ns":            float64(st.CPUNs),
		"server_connections_count": float64(st.Connections),
		"server_processes_count":   float64(st.Processes),
	}
	for name, x := range st.Runtime {
		if !unitName.MatchString(name) {
			warned.Do(func() {
				fmt.Fprintf(os.Stderr, "chatload: the server's runtime stat %q has no unit suffix: left out\n", name)
			})
			continue
		}
		v["server_"+name] = x
	}
	return v
}
