package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"msgbench/kits/go/measure"
	"msgbench/kits/go/protocol"
)

// dialAtOnce bounds the connections being opened at one time: enough to keep
// the server's accept loop busy, few enough not to overflow its backlog.
const dialAtOnce = 64

// Small read buffers (a chat payload is ~100 bytes), and write buffers lent
// from a pool only while a client writes: at 100,000 clients gorilla's 4 KiB
// defaults would cost 800 MiB.
const bufferBytes = 512

var writeBuffers sync.Pool

// joinWithin bounds one connection's handshake and join.
const joinWithin = 60 * time.Second

// run is one measurement: the clients of users connected to the server,
// T of sends, the drain, the counts.
type run struct {
	p      Params
	srv    *server
	epoch  time.Time // the monotonic clock of every timestamp
	binary bool

	// This generator's users: firstUser .. firstUser+users-1 (all of them, but
	// across hosts, where each generator owns whole groups: split.go).
	firstUser, users int64

	clients []*client
	connect Histogram
	latency Histogram

	sent, received, receivedInWindow atomic.Int64
	crossGroup, selfDeliveries       atomic.Int64
	joined, opened                   atomic.Int64
	lastDelivery                     atomic.Int64 // ns since epoch
	sending                          atomic.Bool
	closing                          atomic.Bool

	failOnce sync.Once
	failure  error
	aborted  chan struct{}
}

type client struct {
	group, user int64
	conn        *websocket.Conn
}

func newRun(p Params, srv *server, sp *split) *run {
	r := &run{p: p, srv: srv, epoch: time.Now(), binary: p.Message == "binary", aborted: make(chan struct{}),
		users: p.Users()}
	if sp != nil {
		r.firstUser, r.users = sp.firstUser(p.ClientsPerGroup), sp.groups*p.ClientsPerGroup
	}
	return r
}

func (r *run) now() int64 { return time.Since(r.epoch).Nanoseconds() }

// fail records the first failure and aborts the run. A connection that broke
// because the server died is reported as the server's death, which says more.
func (r *run) fail(err error) {
	if r.closing.Load() {
		return
	}
	if _, gone := r.srv.died(); !gone && r.srv.proc != nil {
		select {
		case <-r.srv.exited():
		case <-time.After(time.Second): // a dying server's connections break first
		}
	}
	if why, gone := r.srv.died(); gone {
		err = protocol.Errorf(protocol.Internal, "%s", why)
	}
	r.failOnce.Do(func() {
		r.failure = err
		close(r.aborted)
	})
}

func (r *run) isAborted() bool {
	select {
	case <-r.aborted:
		return true
	default:
		return false
	}
}

// watchServer aborts the run the moment the server exits before its end.
func (r *run) watchServer() {
	select {
	case <-r.srv.exited():
		r.fail(errors.New("the chat server exited"))
	case <-r.aborted:
	}
}

func (r *run) dialer(i int64) *websocket.Dialer {
	d := &websocket.Dialer{ReadBufferSize: bufferBytes, WriteBufferPool: &writeBuffers, HandshakeTimeout: joinWithin}
	if r.srv.loopback() {
		a := addressFor(i, r.users)
		local := &net.TCPAddr{IP: net.IPv4(a[0], a[1], a[2], a[3])}
		d.NetDialContext = (&net.Dialer{LocalAddr: local, Control: bindAddressNoPort}).DialContext
	}
	return d
}

// ipBindAddressNoPort is Linux's IP_BIND_ADDRESS_NO_PORT (linux/in.h), which
// the syscall package does not name.
const ipBindAddressNoPort = 24

// bindAddressNoPort lets a client bound to its source address take its port
// at connect time, by the whole 4-tuple: bind(2) alone would want a port free
// for every destination, which the TIME_WAIT of earlier runs' connections
// (and other programs' on 127.0.0.1) exhaust long before 28,000 clients.
func bindAddressNoPort(_, _ string, c syscall.RawConn) error {
	var sockErr error
	err := c.Control(func(fd uintptr) {
		sockErr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort, 1)
	})
	if err != nil {
		return err
	}
	return sockErr
}

// connectAll opens every user's connection, joins it to its group and waits
// for every "joined"; each client's reader starts as soon as it has joined.
func (r *run) connectAll() error {
	users := r.users
	r.clients = make([]*client, users)
	slots := make(chan struct{}, dialAtOnce)
	var wg sync.WaitGroup
	for i := int64(0); i < users; i++ {
		select {
		case slots <- struct{}{}:
		case <-r.aborted:
		}
		if r.isAborted() {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := r.open(i); err != nil {
				r.fail(err)
			}
		}()
	}
	wg.Wait()
	if r.isAborted() {
		return r.failure
	}
	return nil
}

func (r *run) open(i int64) error {
	c := &client{group: (r.firstUser + i) / r.p.ClientsPerGroup, user: r.firstUser + i}
	started := time.Now()
	conn, _, err := r.dialer(i).Dial(r.srv.url(), nil)
	if err != nil {
		from := "this host's address"
		if r.srv.loopback() {
			a := addressFor(i, r.users)
			from = fmt.Sprintf("%d.%d.%d.%d", a[0], a[1], a[2], a[3])
		}
		return protocol.Errorf(protocol.Internal, "cannot connect to the chat server at %s (user %d, from %s): %v",
			r.srv.url(), c.user, from, err)
	}
	r.connect.Record(time.Since(started).Nanoseconds())
	r.opened.Add(1)
	c.conn = conn
	r.clients[i] = c
	join := fmt.Appendf(nil, `{"join": {"group": %d, "user": %d, "history": %d}}`, c.group, c.user, r.p.History)
	_ = conn.SetWriteDeadline(time.Now().Add(joinWithin))
	if err := conn.WriteMessage(websocket.TextMessage, join); err != nil {
		return fmt.Errorf("user %d could not send its join: %w", c.user, err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(joinWithin))
	_, answer, err := conn.ReadMessage()
	if err != nil {
		return fmt.Errorf("user %d got no joined from the chat server: %w", c.user, err)
	}
	if want := fmt.Sprintf(`{"joined":%d}`, c.user); compact(answer) != want {
		return protocol.Errorf(protocol.Internal, "user %d: the chat server answered its join with %.200q, not %s", c.user, answer, want)
	}
	_ = conn.SetReadDeadline(time.Time{})
	_ = conn.SetWriteDeadline(time.Time{})
	r.joined.Add(1)
	go r.listen(c)
	return nil
}

// compact drops the spaces a server's JSON may put in its answer.
func compact(b []byte) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			out = append(out, c)
		}
	}
	return string(out)
}

// listen is a client's reader: every delivery checked and timed.
func (r *run) listen(c *client) {
	for {
		opcode, payload, err := c.conn.ReadMessage()
		if err != nil {
			if !r.closing.Load() {
				r.fail(fmt.Errorf("user %d's connection broke: %w", c.user, err))
			}
			return
		}
		at := r.now()
		var s stamp
		if opcode == websocket.BinaryMessage {
			s, err = decodeBinary(payload)
		} else {
			s, err = decodeText(payload)
		}
		if err != nil || (opcode == websocket.BinaryMessage) != r.binary {
			r.fail(protocol.Errorf(protocol.Internal, "user %d was delivered %.200q (opcode %d), not a chat payload of message=%s",
				c.user, payload, opcode, r.p.Message))
			return
		}
		r.deliver(c, s, at)
	}
}

// deliver counts one delivery to c (verification and latency).
func (r *run) deliver(c *client, s stamp, at int64) {
	if s.Group != c.group {
		r.crossGroup.Add(1)
	}
	if s.User == c.user {
		r.selfDeliveries.Add(1)
	}
	r.latency.Record(at - s.T)
	if r.sending.Load() {
		r.receivedInWindow.Add(1)
	}
	r.received.Add(1)
	for {
		old := r.lastDelivery.Load()
		if at <= old || r.lastDelivery.CompareAndSwap(old, at) {
			return
		}
	}
}

func (r *run) payload(c *client, t int64) []byte {
	s := stamp{Group: c.group, User: c.user, T: t}
	if r.binary {
		return encodeBinary(s)
	}
	return encodeText(s)
}

func (r *run) opcode() int {
	if r.binary {
		return websocket.BinaryMessage
	}
	return websocket.TextMessage
}

// sendAll runs T: every client's sender, released together; it returns the
// send window as it happened.
func (r *run) sendAll() time.Duration {
	release := time.Now()
	window := r.p.duration()
	r.sending.Store(true)
	var wg sync.WaitGroup
	for _, c := range r.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.p.ThinkMS > 0 {
				rng := rand.New(rand.NewPCG(uint64(c.user), uint64(release.UnixNano())))
				r.realistic(c, newSchedule(rng, r.p.think(), window), release)
			} else {
				r.stress(c, release.Add(window))
			}
		}()
	}
	wg.Wait()
	r.sending.Store(false)
	return time.Since(release)
}

// stress: send, listen listener_delay_ms (the reader always listens), send...
func (r *run) stress(c *client, end time.Time) {
	_ = c.conn.SetWriteDeadline(end.Add(r.p.drainTimeout()))
	for time.Now().Before(end) {
		if !r.send(c, r.now()) {
			return
		}
		if d := r.p.listenerDelay(); d > 0 {
			select {
			case <-time.After(d):
			case <-r.aborted:
				return
			}
		}
	}
}

// realistic: one send at each intended time of the schedule, stamped with it.
func (r *run) realistic(c *client, s schedule, release time.Time) {
	_ = c.conn.SetWriteDeadline(release.Add(s.window + r.p.drainTimeout()))
	offset := release.Sub(r.epoch)
	for {
		at, ok := s.Next()
		if !ok {
			return
		}
		timer := time.NewTimer(time.Until(release.Add(at)))
		select {
		case <-timer.C:
		case <-r.aborted:
			timer.Stop()
			return
		}
		if !r.send(c, (offset + at).Nanoseconds()) {
			return
		}
	}
}

func (r *run) send(c *client, t int64) bool {
	if err := c.conn.WriteMessage(r.opcode(), r.payload(c, t)); err != nil {
		r.fail(fmt.Errorf("user %d could not send: %w", c.user, err))
		return false
	}
	r.sent.Add(1)
	return true
}

// drain waits until every message sent was received or the drain timeout;
// it returns T to the last delivery (0 if none came after T).
func (r *run) drain(windowEnd int64) time.Duration {
	deadline := time.Now().Add(r.p.drainTimeout())
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for r.received.Load() < r.sent.Load() && time.Now().Before(deadline) {
		select {
		case <-tick.C:
		case <-r.aborted:
			return 0
		}
	}
	return time.Duration(max(r.lastDelivery.Load()-windowEnd, 0))
}

// closeAll ends every connection (the TCP connection: at 100,000 users a
// close handshake each would only add to the teardown).
func (r *run) closeAll() {
	r.closing.Store(true)
	for _, c := range r.clients {
		if c != nil && c.conn != nil {
			_ = c.conn.Close()
		}
	}
}

// cpuNow is this process's CPU time, ns.
func cpuNow() int64 { return measure.CPUTime().Nanoseconds() }
