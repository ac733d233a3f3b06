// Package fanin is the parallel send/receive benchmark of seed 000 (the OTP
// suite parallel_messages_SUITE): N senders send to one receiver for a while.
package fanin

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"msgbench/kits/go/measure"
)

// Options are the variant's choices.
type Options struct {
	// ChannelCapacity bounds the receiver's channel: Go channels are bounded,
	// so senders block once the receiver falls this far behind.
	ChannelCapacity int
	// SharePayload sends the one prepared payload by reference instead of
	// a copy per send: Go's zero-copy idiom, but not the copy semantics of
	// Erlang messages, so only a tuned variant uses it.
	SharePayload bool
}

// Params are the fanin parameters (spec/workloads/fanin.json).
type Params struct {
	Senders          int
	Duration         time.Duration
	Mix              Mix
	MemoryLimitBytes int64
}

// Outcome is what one run measured and counted.
type Outcome struct {
	Sent, Received Counts
	ReceiverAlive  bool
	SendTime       time.Duration // first send (release) to all senders reported
	ReceiveTime    time.Duration // first send (release) to the last receive
	Drain          time.Duration // all senders reported to the last receive
	CPU            time.Duration // whole process, over the measurement
}

// signal is what travels to the receiver.
type signal struct {
	kind  Kind
	words []uint64 // the payload: a copy per send (shared only with SharePayload)
	end   bool     // a sender's end marker (the OTP suite's `stop` to the receiver)
}

// receipt is the receiver's report.
type receipt struct {
	counts      Counts
	lastReceive time.Time
}

// Run does one measurement. The calling goroutine is the coordinator.
func Run(p Params, opt Options) Outcome {
	inbox := make(chan signal, opt.ChannelCapacity)
	receipts := make(chan receipt, 1)
	go receive(inbox, p.Senders, receipts)

	table := p.Mix.table()
	var stop atomic.Bool
	release := make(chan struct{})
	reports := make(chan Counts, p.Senders) // never makes a sender wait
	var ready sync.WaitGroup
	ready.Add(p.Senders)
	for range p.Senders {
		s := sender{
			table: table,
			rng:   newRand(),
			inbox: inbox,
			stop:  &stop,
			share: opt.SharePayload,
		}
		go s.run(&ready, release, reports)
	}
	ready.Wait()
	// Start from a clean heap, as the OTP suite does with garbage_collect().
	runtime.GC()

	startCPU := measure.CPUTime()
	start := time.Now()
	close(release)
	time.Sleep(p.Duration)
	stop.Store(true)
	var out Outcome
	for range p.Senders {
		out.Sent.Add(<-reports)
	}
	sendersStopped := time.Now()
	r := <-receipts
	endCPU := measure.CPUTime()

	out.Received = r.counts
	out.ReceiverAlive = true
	// The receiver may see the last end marker just before the coordinator
	// has taken all reports in: receiving is not over before sending is.
	lastReceive := r.lastReceive
	if lastReceive.Before(sendersStopped) {
		lastReceive = sendersStopped
	}
	out.SendTime = sendersStopped.Sub(start)
	out.ReceiveTime = lastReceive.Sub(start)
	out.Drain = lastReceive.Sub(sendersStopped)
	out.CPU = endCPU - startCPU
	return out
}

// newRand gives each sender its own source: no shared lock, no contention.
// PCG is cheap; the seeds only need to differ.
func newRand() *rand.Rand {
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

type sender struct {
	table choiceTable
	rng   *rand.Rand
	inbox chan<- signal
	stop  *atomic.Bool
	share bool
}

// run is the OTP suite's Worker and do_work: wait for the release, then pick,
// send, check for the stop, until stopped; report; send the end marker.
func (s sender) run(ready *sync.WaitGroup, release <-chan struct{}, reports chan<- Counts) {
	ready.Done()
	<-release
	var sent Counts
	for {
		c := s.table.pick(s.rng)
		words := c.words
		if !s.share {
			words = slices.Clone(words) // the receiver gets its own copy
		}
		s.inbox <- signal{kind: c.kind, words: words}
		sent[c.kind]++
		if s.stop.Load() {
			break
		}
	}
	reports <- sent
	s.inbox <- signal{end: true}
}

// receive is the OTP suite's ReceiveFun: count what arrives until every
// sender's end marker is in.
func receive(inbox <-chan signal, senders int, done chan<- receipt) {
	var got Counts
	for ended := 0; ended < senders; {
		s := <-inbox
		if s.end {
			ended++
			continue
		}
		got[s.kind]++
	}
	done <- receipt{counts: got, lastReceive: time.Now()}
}
