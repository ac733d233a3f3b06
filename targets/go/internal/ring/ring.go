// Package ring is the process ring of seed 004: n goroutines in a ring, a
// token passed m laps round it.
package ring

import (
	"time"

	"msgbench/kits/go/measure"
)

// kind tells the three messages of the ring apart. One message type (and so
// one inbox per link) mirrors the seed, where connect and the token arrive in
// the same mailbox.
type kind uint8

const (
	// connect travels from the last link back to the root while the ring is
	// built: the seed's {connect, NextLink}.
	connect kind = iota
	// token is the seed's {Laps, Payload}, passed round the ring.
	token
	// collect follows the timed laps: each link adds its hop count to it,
	// forwards it and exits, so the counts are gathered outside the timing.
	collect
)

type message struct {
	kind    kind
	laps    int64        // token: laps still to go, the current one included
	payload string       // token: the seed's "BOO!"
	inbox   chan message // connect: the inbox of the link that sent it
	links   int64        // connect: links from the sender to the end of the chain
	hops    int64        // collect: hops forwarded by the links it has visited
}

// Params are the ring's parameters (spec/workloads/ring.json).
type Params struct {
	N       int64  `json:"n"` // processes in the ring, the root included
	M       int64  `json:"m"` // laps
	Payload string `json:"payload"`
}

// Options are the variant's choices.
type Options struct {
	// InboxCapacity is the buffer of every link's inbox channel; 0 is the
	// plain unbuffered channel.
	InboxCapacity int
}

// Outcome is what one run measured and counted.
type Outcome struct {
	CreateWall, CreateCPU time.Duration
	PassWall, PassCPU     time.Duration
	Hops                  int64 // token sends by the root plus forwards by the links
	Laps                  int64 // laps completed, seen by the root
	Links                 int64 // processes that joined the ring, the root included
}

// Run builds the ring, passes the token p.M laps and collects the counts.
// The calling goroutine is the root: the seed's start/2 and lapCounter/1.
func Run(p Params, opt Options) Outcome {
	var out Outcome
	inbox := make(chan message, opt.InboxCapacity)

	// Phase 1: the root spawns link n-1; the chain spawns itself and the
	// connect message comes back.
	begin := measure.Now()
	go newLink(p.N-1, inbox, inbox, opt.InboxCapacity)
	joined := <-inbox
	created := measure.Now()
	next := joined.inbox
	out.Links = joined.links + 1

	// Phase 2: the lap counter.
	next <- message{kind: token, laps: p.M, payload: p.Payload}
	sends := int64(1)
	for {
		msg := <-inbox
		out.Laps++
		if msg.laps == 1 {
			break
		}
		msg.laps--
		next <- msg
		sends++
	}
	passed := measure.Now()

	// After the timing: gather the links' counts and stop them.
	next <- message{kind: collect}
	gathered := <-inbox
	out.Hops = sends + gathered.hops

	out.CreateWall, out.CreateCPU = begin.WallSince(created), begin.CPUSince(created)
	out.PassWall, out.PassCPU = created.WallSince(passed), created.CPUSince(passed)
	return out
}

// newLink is the seed's newLink/3: remaining counts this link and the ones it
// still has to spawn; prev is the predecessor's inbox, root the root's.
func newLink(remaining int64, prev, root chan message, capacity int) {
	inbox := make(chan message, capacity)
	if remaining == 1 { // the last link closes the ring onto the root
		prev <- message{kind: connect, inbox: inbox, links: 1}
		forward(inbox, root)
		return
	}
	go newLink(remaining-1, inbox, root, capacity)
	joined := <-inbox // the only message that can come before the ring exists
	prev <- message{kind: connect, inbox: inbox, links: joined.links + 1}
	forward(inbox, joined.inbox)
}

// forward is the seed's passMsgOn/1: pass on whatever arrives, counting the
// hops, until the collect message comes by.
func forward(inbox <-chan message, next chan<- message) {
	var hops int64
	for {
		msg := <-inbox
		if msg.kind == collect {
			msg.hops += hops
			next <- msg
			return
		}
		next <- msg
		hops++
	}
}
