// Package chatserver is the go target's WebSocket chat server for the chat
// server kind (docs/chat-server.md): a goroutine per connected user and one
// per group, as in Chut, over gorilla/websocket.
//
// A user is two goroutines, because a WebSocket connection is read and
// written from one goroutine each: the connection's reader forwards every
// frame to the user's group, and the user proper keeps its history and
// writes deliveries to its connection. A group is one goroutine that owns
// its members and picks a random peer for every message.
package chatserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
)

// inbox bounds every user's and group's channel, as the in-process chat's.
const inbox = 16

// writeBuffers lends a connection its write buffer only while it writes (a
// realistic user writes a message every few seconds), so 100,000 idle
// connections do not each hold one.
var writeBuffers sync.Pool

// Server holds the groups and counts the users connected.
type Server struct {
	mu          sync.Mutex
	groups      map[int64]*group
	connections atomic.Int64
	upgrader    websocket.Upgrader
}

// New makes an empty server.
func New() *Server {
	return &Server{
		groups: map[int64]*group{},
		upgrader: websocket.Upgrader{
			// Read buffer size 0: the HTTP server's own reader (4 KiB) serves
			// on, rather than a second one beside it.
			WriteBufferPool: &writeBuffers,
			// The load generator is no browser: no Origin to check.
			CheckOrigin: func(*http.Request) bool { return true },
		},
	}
}

// frame is one WebSocket message, passed on verbatim with its opcode.
type frame struct {
	opcode  int
	payload []byte
}

type user struct {
	id      int64
	conn    *websocket.Conn
	history int
	inbox   chan frame
	done    chan struct{} // closed when the connection ends
}

type op struct {
	join, leave *user
	from        *user
	msg         frame
	joined      chan struct{}
}

type group struct {
	ops chan op
}

// ServeHTTP upgrades every request to a WebSocket connection: a user or the
// stats control connection, told apart by the first frame.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	// The connection is hijacked: serve it from a fresh goroutine and let this
	// one, whose stack grew while net/http parsed the request, end.
	go s.serve(conn)
}

// serve is one connection: a user or the stats control connection.
func (s *Server) serve(conn *websocket.Conn) {
	defer conn.Close()
	_, first, err := conn.ReadMessage()
	if err != nil {
		return
	}
	var hello struct {
		Stats bool `json:"stats"`
		Join  *struct {
			Group   int64 `json:"group"`
			User    int64 `json:"user"`
			History int   `json:"history"`
		} `json:"join"`
	}
	if err := json.Unmarshal(first, &hello); err != nil || (!hello.Stats && hello.Join == nil) {
		_ = conn.WriteMessage(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "first frame: join or stats"))
		return
	}
	if hello.Stats {
		s.serveStats(conn)
		return
	}
	s.serveUser(conn, hello.Join.Group, hello.Join.User, hello.Join.History)
}

func (s *Server) group(id int64) *group {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[id]
	if !ok {
		g = &group{ops: make(chan op, inbox)}
		s.groups[id] = g
		go g.run()
	}
	return g
}

func (s *Server) serveUser(conn *websocket.Conn, groupID, id int64, history int) {
	u := &user{id: id, conn: conn, history: history, inbox: make(chan frame, inbox), done: make(chan struct{})}
	g := s.group(groupID)
	joined := make(chan struct{})
	g.ops <- op{join: u, joined: joined}
	<-joined
	s.connections.Add(1)
	defer s.connections.Add(-1)
	if err := conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"joined":%d}`, id)); err != nil {
		close(u.done)
		g.ops <- op{leave: u}
		return
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		u.run()
	}()
	for {
		opcode, payload, err := conn.ReadMessage()
		if err != nil {
			break
		}
		// ReadMessage's buffer starts at 512 bytes; the peer's history keeps
		// the payload, so keep only its ~100 bytes (4 KB per user at history 10).
		g.ops <- op{from: u, msg: frame{opcode, bytes.Clone(payload)}}
	}
	close(u.done)
	g.ops <- op{leave: u}
	<-written
}

// run is the user: it keeps the last history payloads it was delivered and
// writes each to its connection.
func (u *user) run() {
	kept := make([][]byte, 0, u.history)
	next := 0
	for {
		select {
		case f := <-u.inbox:
			if u.history > 0 {
				if len(kept) < u.history {
					kept = append(kept, f.payload)
				} else {
					kept[next] = f.payload
					next = (next + 1) % u.history
				}
			}
			if err := u.conn.WriteMessage(f.opcode, f.payload); err != nil {
				return
			}
		case <-u.done:
			return
		}
	}
}

// run is the group: joins, leaves, and every message to a random other member.
func (g *group) run() {
	var members []*user
	for o := range g.ops {
		switch {
		case o.join != nil:
			members = append(members, o.join)
			close(o.joined)
		case o.leave != nil:
			for i, m := range members {
				if m == o.leave {
					members[i] = members[len(members)-1]
					members = members[:len(members)-1]
					break
				}
			}
		default:
			if len(members) < 2 {
				continue // alone in the group: dropped (docs/chat-server.md)
			}
			peer := members[rand.IntN(len(members)-1)]
			if peer == o.from {
				peer = members[len(members)-1]
			}
			select {
			case peer.inbox <- o.msg:
			case <-peer.done:
			}
		}
	}
}

// Main is the worker's --chat-server mode: args are the rest of its command
// line, `--listen HOST:PORT` (the load generator appends them to target.toml's
// chat_server); it serves on stdin and stdout.
func Main(args []string) error {
	if len(args) != 2 || args[0] != "--listen" {
		return fmt.Errorf("want --listen HOST:PORT, got %q", args)
	}
	return Listen(args[1], os.Stdin, os.Stdout)
}

// Listen serves on addr until SIGTERM or the end of stdin, after writing
// {"listening": PORT} to out.
func Listen(addr string, stdin io.Reader, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: New(), ReadHeaderTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := fmt.Fprintf(out, "{\"listening\": %d}\n", ln.Addr().(*net.TCPAddr).Port); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-stop:
	case <-eof:
	case err := <-served:
		return err
	}
	// Exit promptly: the connections die with the process.
	if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
