// Package chat is the Chut chat-server benchmark of seed 003: G groups of CPG
// users message each other for T seconds, through their groups.
//
// Every process of the seed is a goroutine with inbox channels. A client
// drives its user and listens for deliveries; a message goes client -> its
// user -> the group -> the peer user (which keeps it in its history) -> the
// peer's client, which counts it and records its latency.
package chat

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"msgbench/targets/go/internal/histogram"
)

// Sentence is the seed's text message (with an em dash, U+2014, in UTF-8).
const Sentence = "I've been mad for fucking years\u2014absolutely years"

// Params are the chat parameters (spec/workloads/chat.json).
type Params struct {
	Groups          int
	ClientsPerGroup int
	Duration        time.Duration // T
	Think           time.Duration // 0: stress; else the time between a client's sends
	ListenerDelay   time.Duration // stress: how long a client listens after each send
	Binary          bool          // message=binary: a fresh encoded buffer per message
	History         int           // messages each user keeps
	DrainTimeout    time.Duration
}

// Users is G x CPG: every user has one client.
func (p Params) Users() int64 { return int64(p.Groups) * int64(p.ClientsPerGroup) }

// Options are the variant's choices.
type Options struct {
	// InboxCapacity buffers every user's two inboxes (requests from its
	// client, deliveries from its group) and every client's inbox.
	InboxCapacity int
	// GroupCapacity buffers every group's inbox.
	GroupCapacity int
	// Yield makes a stress client without a listener delay call
	// runtime.Gosched after each send-and-listen round (README.md, "Chat:
	// stress and the scheduler").
	Yield bool
}

// Outcome is what one run measured and counted.
type Outcome struct {
	// Counted by the clients.
	Sent, Received, ReceivedInWindow int64
	CrossGroup, SelfDeliveries       int64
	Latency                          histogram.Histogram // every client's, merged
	// Counted by the goroutines themselves as they started.
	Users, Processes int64
	// Counted by the users: messages they stored, and the most any held.
	Stored  int64
	MaxHeld int

	Setup      time.Duration // start of the build to every goroutine ready
	SendWindow time.Duration // release to the last client stopping sending
	Drain      time.Duration // T to the last delivery (0 if none came after T)
	// RuntimeMemory is runtime.MemStats.Sys read at T.
	RuntimeMemory uint64
}

// message is what travels: the client allocates it (40 bytes), and from the
// send on nobody writes to it, so the channels pass a pointer and the peer
// user's history keeps that pointer (Go's share-by-communicating: the
// message changes hands, it is not copied). The body is the one shared
// Sentence for message=text, a buffer of its own for message=binary.
type message struct {
	from   int32  // the sender's index in its group: (group, from) is its user id
	to     int32  // the peer's index in the group, drawn by the sender's client
	group  int32  // the sender's group
	sentAt int64  // ns on the run's monotonic clock, when the client sent it
	body   string // immutable either way: a string
}

// supervisor is what stands in for the seed's OTP supervisor: Go has none.
// The coordinator owns it: the join handles of every goroutine of the run (a
// WaitGroup), their failures (an error channel) and the quit channel. A
// goroutine that panics reports on errs; the coordinator then closes quit,
// every goroutine returns and the run ends with an error: one_for_all without
// restarts, since a run that lost a process has nothing left to measure.
type supervisor struct {
	wg   sync.WaitGroup
	errs chan error // the first failure; later ones are dropped
	quit chan struct{}
}

// exit is deferred first thing by every goroutine of the run: it reports a
// panic and marks the goroutine's end for the WaitGroup.
func (s *supervisor) exit(name string, id int) {
	if r := recover(); r != nil {
		select {
		case s.errs <- fmt.Errorf("%s %d crashed: %v", name, id, r):
		default:
		}
	}
	s.wg.Done()
}

// session is what every goroutine of one measurement shares. Written by the
// coordinator before the release (closing release orders it before every
// client's reads), read-only afterwards.
type session struct {
	p        Params
	opt      Options
	base     time.Time // the monotonic clock's origin
	start    int64     // the release, ns since base
	deadline int64     // start + T
	ready    chan struct{}
	release  chan struct{}
	stopped  chan int64 // each client's sent count, when it stops sending
	sup      *supervisor
}

// clock reads the monotonic clock: ns since base.
func (r *session) clock() int64 { return int64(time.Since(r.base)) }

// The goroutines below are flat for-select loops: one select, and a nil
// channel disables the case that has nothing to do (Go's idiom for a state
// machine). That, and passing messages by pointer, keeps the users and
// groups within the 2 KiB stack a goroutine starts with (README.md, "Chat:
// memory").

// group knows its members: their inboxes, by index.
type group struct {
	inbox   chan *message
	members []chan<- *message
	started bool
}

// run routes every message to the peer it names, one at a time.
func (g *group) run(r *session, id int) {
	defer r.sup.exit("group", id)
	g.started = true
	r.ready <- struct{}{}
	var (
		m     *message
		inbox = g.inbox
		to    chan<- *message // the peer's inbox while m waits for it
	)
	for {
		select {
		case m = <-inbox:
			inbox, to = nil, g.members[m.to]
		case to <- m:
			inbox, to = g.inbox, nil
		case <-r.sup.quit:
			return
		}
	}
}

// user sits between its client and its group, and keeps the last messages
// delivered to it.
type user struct {
	requests chan *message   // from its client: messages to send
	inbox    chan *message   // from its group: deliveries
	group    chan<- *message // its group's inbox
	client   chan<- *message // its client's inbox
	history  []*message      // ring buffer of the last len(history) deliveries
	next     int             // where the next delivery goes in history
	stored   int64           // deliveries stored
	started  bool
}

// run passes its client's messages to the group and the group's deliveries
// (kept in the history) to its client, one of each at a time. It takes
// deliveries while a message waits for the group, and clients always take
// deliveries: so bounded channels hold messages back but never deadlock (a
// group waiting for a user that waits for that group).
func (u *user) run(r *session, id int) {
	defer r.sup.exit("user", id)
	u.started = true
	r.ready <- struct{}{}
	var (
		out, in           *message
		requests, inbox   = u.requests, u.inbox
		toGroup, toClient chan<- *message // set while out, in wait
	)
	for {
		select {
		case out = <-requests:
			requests, toGroup = nil, u.group
		case toGroup <- out:
			requests, toGroup = u.requests, nil
		case in = <-inbox:
			u.keep(in)
			inbox, toClient = nil, u.client
		case toClient <- in:
			inbox, toClient = u.inbox, nil
		case <-r.sup.quit:
			return
		}
	}
}

// keep stores m in the history, over the oldest message once it is full.
func (u *user) keep(m *message) {
	u.stored++
	if len(u.history) == 0 {
		return
	}
	u.history[u.next] = m
	u.next++
	if u.next == len(u.history) {
		u.next = 0
	}
}

// held is the number of messages in the history.
func (u *user) held() int { return int(min(u.stored, int64(len(u.history)))) }

// client drives its user and counts what is delivered to it.
type client struct {
	group, index int32
	peers        int             // members of its group, itself included
	requests     chan<- *message // its user's requests
	inbox        chan *message   // deliveries from its user
	rng          *rand.Rand
	timer        *time.Timer // stress with a listener delay; realistic
	started      bool

	sent, inWindow, crossGroup, selfDeliveries int64
	lastDelivery                               int64 // ns since base; 0: none
	latency                                    histogram.Histogram
	// received is also read by the coordinator during the drain; only the
	// client writes it.
	received atomic.Int64
}

func (c *client) run(r *session, id int) {
	defer r.sup.exit("client", id)
	c.started = true
	r.ready <- struct{}{}
	select {
	case <-r.release:
	case <-r.sup.quit:
		return
	}
	var ok bool
	if r.p.Think == 0 {
		ok = c.stress(r)
	} else {
		ok = c.realistic(r)
	}
	if !ok {
		return
	}
	r.stopped <- c.sent // never waits: the channel holds one per client
	// The drain: take deliveries until the coordinator ends the run.
	for {
		select {
		case m := <-c.inbox:
			c.receive(r, m)
		case <-r.sup.quit:
			return
		}
	}
}

// stress sends, listens for the listener delay (without one: takes the
// deliveries already there), and again, until T. While its user has not
// taken a message it keeps taking deliveries. It returns false on quit.
func (c *client) stress(r *session) bool {
	delay := r.p.ListenerDelay
	var (
		m      *message
		toUser chan<- *message  // set while m waits for the user
		tick   <-chan time.Time // set while listening
	)
	for {
		if toUser == nil && tick == nil {
			now := r.clock()
			if now >= r.deadline {
				return true
			}
			m, toUser = c.compose(r, now), c.requests
		}
		select {
		case toUser <- m:
			c.sent++
			toUser = nil
			if delay == 0 {
				c.takeWaiting(r)
				if r.opt.Yield {
					runtime.Gosched()
				}
			} else {
				tick = c.listen(delay)
			}
		case d := <-c.inbox:
			c.receive(r, d)
		case <-tick:
			tick = nil
		case <-r.sup.quit:
			return false
		}
	}
}

// takeWaiting takes the deliveries already in the inbox.
func (c *client) takeWaiting(r *session) {
	for {
		select {
		case m := <-c.inbox:
			c.receive(r, m)
		default:
			return
		}
	}
}

// listen starts the listener delay. Every listen ends on the timer's tick,
// so its channel is empty and Reset is safe whatever the Go version's timer
// semantics.
func (c *client) listen(delay time.Duration) <-chan time.Time {
	if c.timer == nil {
		c.timer = time.NewTimer(delay)
	} else {
		c.timer.Reset(delay)
	}
	return c.timer.C
}

// realistic sends every think time from a random phase in the first think
// time, listening in between, while the send is due before T. Sends are due
// at start + phase + k * think, so late wake-ups do not drift the schedule.
func (c *client) realistic(r *session) bool {
	think := int64(r.p.Think)
	due := r.start + c.rng.Int64N(think)
	if due >= r.deadline {
		return true
	}
	c.timer = time.NewTimer(time.Duration(due - r.clock()))
	var (
		m      *message
		toUser chan<- *message // set while m waits for the user
		tick   = c.timer.C     // set while waiting for the next send
	)
	for {
		select {
		case <-tick:
			m, toUser, tick = c.compose(r, r.clock()), c.requests, nil
		case toUser <- m:
			c.sent++
			toUser = nil
			due += think
			if due >= r.deadline {
				return true
			}
			c.timer.Reset(time.Duration(due - r.clock()))
			tick = c.timer.C
		case d := <-c.inbox:
			c.receive(r, d)
		case <-r.sup.quit:
			c.timer.Stop()
			return false
		}
	}
}

// compose writes a message to a peer drawn uniformly among the other
// members of the group.
func (c *client) compose(r *session, now int64) *message {
	peer := int32(c.rng.IntN(c.peers - 1))
	if peer >= c.index {
		peer++ // skip itself
	}
	m := &message{from: c.index, to: peer, group: c.group, sentAt: now, body: Sentence}
	if r.p.Binary {
		m.body = encode(now)
	}
	return m
}

// encode is the seed's term_to_binary({Text, os:timestamp()}): the sentence
// and the send time in a buffer of its own, so nothing is shared. The
// Builder hands its one allocation over as the string, without a copy.
func encode(now int64) string {
	var b strings.Builder
	b.Grow(len(Sentence) + 8)
	b.WriteString(Sentence)
	var stamp [8]byte
	binary.BigEndian.PutUint64(stamp[:], uint64(now))
	b.Write(stamp[:])
	return b.String()
}

// receive counts one delivery and records its latency.
func (c *client) receive(r *session, m *message) {
	now := r.clock()
	c.received.Add(1)
	if now < r.deadline {
		c.inWindow++
	}
	if m.group != c.group {
		c.crossGroup++
	} else if m.from == c.index {
		c.selfDeliveries++
	}
	c.latency.Record(now - m.sentAt)
	c.lastDelivery = now
}

// newRand gives each client its own source: no shared lock.
func newRand() *rand.Rand {
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

// drainPoll is how often the coordinator adds up the clients' received
// counts during the drain. It does not bound drain_ms, which comes from the
// clients' own delivery times.
const drainPoll = time.Millisecond

// Run does one measurement. The calling goroutine is the coordinator; each
// phase is a method of the run's processes (build, awaitReady, atT,
// collectSent, drain, tally).
func Run(p Params, opt Options) (Outcome, error) {
	var out Outcome
	ps := build(p, opt)
	if err := ps.awaitReady(); err != nil {
		return out, ps.fail(err)
	}
	out.Setup = time.Since(ps.begin)
	// Start from a clean heap, as the fanin coordinator does.
	runtime.GC()

	r := ps.r
	r.start = r.clock()
	r.deadline = r.start + int64(p.Duration)
	close(r.release)
	if err := ps.atT(&out); err != nil {
		return out, ps.fail(err)
	}
	stoppedAt, err := ps.collectSent(&out)
	if err != nil {
		return out, ps.fail(err)
	}
	if err := ps.drain(stoppedAt+int64(p.DrainTimeout), out.Sent); err != nil {
		return out, ps.fail(err)
	}

	// End the run; after Wait every goroutine's counts are ours to read.
	close(r.sup.quit)
	r.sup.wg.Wait()
	select {
	case err := <-r.sup.errs: // a crash during the drain
		return out, err
	default:
	}
	ps.tally(&out)
	return out, nil
}

// processes are one run's groups, users and clients, and the session they share.
type processes struct {
	r       *session
	begin   time.Time
	procs   int
	groups  []group
	users   []user
	clients []client
}

// build starts every group, its users and their clients, in three slices and
// one history array, so the run's memory is allocated up front.
func build(p Params, opt Options) *processes {
	n := int(p.Users())
	cpg := p.ClientsPerGroup
	ps := &processes{
		begin:   time.Now(),
		procs:   p.Groups + 2*n,
		groups:  make([]group, p.Groups),
		users:   make([]user, n),
		clients: make([]client, n),
	}
	ps.r = &session{
		p:       p,
		opt:     opt,
		base:    time.Now(),
		ready:   make(chan struct{}, ps.procs),
		release: make(chan struct{}),
		stopped: make(chan int64, n),
		sup:     &supervisor{errs: make(chan error, 1), quit: make(chan struct{})},
	}
	ps.r.sup.wg.Add(ps.procs)
	histories := make([]*message, n*p.History)
	for g := range ps.groups {
		grp := &ps.groups[g]
		grp.inbox = make(chan *message, opt.GroupCapacity)
		grp.members = make([]chan<- *message, cpg)
		for i := range cpg {
			k := g*cpg + i
			u, c := &ps.users[k], &ps.clients[k]
			u.requests = make(chan *message, opt.InboxCapacity)
			u.inbox = make(chan *message, opt.InboxCapacity)
			u.group = grp.inbox
			u.history = histories[k*p.History : (k+1)*p.History : (k+1)*p.History]
			c.inbox = make(chan *message, opt.InboxCapacity)
			u.client = c.inbox
			c.group, c.index, c.peers = int32(g), int32(i), cpg
			c.requests = u.requests
			c.rng = newRand()
			grp.members[i] = u.inbox
		}
		go grp.run(ps.r, g)
		for i := range cpg {
			k := g*cpg + i
			go ps.users[k].run(ps.r, k)
			go ps.clients[k].run(ps.r, k)
		}
	}
	return ps
}

// fail stops everything after a crash and passes the crash on.
func (ps *processes) fail(err error) error {
	close(ps.r.sup.quit)
	ps.r.sup.wg.Wait()
	return err
}

// awaitReady waits until every process has started.
func (ps *processes) awaitReady() error {
	for range ps.procs {
		select {
		case <-ps.r.ready:
		case err := <-ps.r.sup.errs:
			return err
		}
	}
	return nil
}

// atT waits for T and takes the runtime's own view of its memory then.
func (ps *processes) atT(out *Outcome) error {
	atT := time.NewTimer(time.Duration(ps.r.deadline - ps.r.clock()))
	select {
	case <-atT.C:
	case err := <-ps.r.sup.errs:
		atT.Stop()
		return err
	}
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	out.RuntimeMemory = mem.Sys
	return nil
}

// collectSent waits until every client has stopped sending on its own at T
// and reported its count; it returns when the last did.
func (ps *processes) collectSent(out *Outcome) (int64, error) {
	for range ps.clients {
		select {
		case sent := <-ps.r.stopped:
			out.Sent += sent
		case err := <-ps.r.sup.errs:
			return 0, err
		}
	}
	stoppedAt := ps.r.clock()
	out.SendWindow = time.Duration(stoppedAt - ps.r.start)
	return stoppedAt, nil
}

// drain waits until every message sent was received, or until drainEnd.
func (ps *processes) drain(drainEnd, sent int64) error {
	received := func() int64 {
		var sum int64
		for k := range ps.clients {
			sum += ps.clients[k].received.Load()
		}
		return sum
	}
	if received() >= sent || ps.r.clock() >= drainEnd {
		return nil
	}
	poll := time.NewTicker(drainPoll)
	defer poll.Stop()
	for received() < sent && ps.r.clock() < drainEnd {
		select {
		case <-poll.C:
		case err := <-ps.r.sup.errs:
			return err
		}
	}
	return nil
}

// tally adds up every process's counts, once they have all ended.
func (ps *processes) tally(out *Outcome) {
	var last int64
	for g := range ps.groups {
		if ps.groups[g].started {
			out.Processes++
		}
	}
	for k := range ps.users {
		u, c := &ps.users[k], &ps.clients[k]
		if u.started {
			out.Users++
			out.Processes++
		}
		if c.started {
			out.Processes++
		}
		out.Stored += u.stored
		out.MaxHeld = max(out.MaxHeld, u.held())
		out.Received += c.received.Load()
		out.ReceivedInWindow += c.inWindow
		out.CrossGroup += c.crossGroup
		out.SelfDeliveries += c.selfDeliveries
		out.Latency.Merge(&c.latency)
		last = max(last, c.lastDelivery)
	}
	out.Drain = time.Duration(max(last-ps.r.deadline, 0))
}
