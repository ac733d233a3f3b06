package pubsub

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The receivers' drain: after the published line, how long the peer waits
// for the receivers, and what the messages they did not get are counted as.

// countWithin bounds the count of what the brokers still hold once the drain
// has ended (Halt, then Backlog, for every receiver at once): the peer stops
// draining 5 s before the worker gives up on its served line.
const countWithin = 3 * time.Second

// backlogWatch asks a Backlogger receiver's system, when the receiver has had
// nothing for drain_ms, whether it still holds messages for it; one question
// at a time, in a goroutine, since a starved broker is slow to answer.
type backlogWatch struct {
	b       Backlogger
	asking  atomic.Bool
	askedNs atomic.Int64 // when the last question was asked
	heldNs  atomic.Int64 // when an answer last found messages held
	failed  atomic.Bool  // an answer was an error (said once on stderr)
}

func newBacklogWatches(receivers []Receiver) []*backlogWatch {
	watches := make([]*backlogWatch, len(receivers))
	for i, r := range receivers {
		if b, ok := r.(Backlogger); ok {
			watches[i] = &backlogWatch{b: b}
		}
	}
	return watches
}

// ask starts a question unless one is outstanding. heldNs is stored before
// asking is cleared, so a monitor that sees no question outstanding sees its
// answer.
func (w *backlogWatch) ask(receiver int) {
	if !w.asking.CompareAndSwap(false, true) {
		return
	}
	w.askedNs.Store(monoNow())
	go func() {
		defer w.asking.Store(false)
		n, err := w.b.Backlog()
		switch {
		case err != nil:
			if w.failed.CompareAndSwap(false, true) {
				fmt.Fprintf(os.Stderr, "pubsub kit, receivers: receiver %d: asking the broker for its backlog: %v\n", receiver, err)
			}
		case n > 0:
			w.heldNs.Store(monoNow())
		}
	}()
}

// awaitReceivers waits until each receiver has total messages, or has had
// nothing for drainFor (drain_ms) since the published line (or its last message) while
// its broker, where it can say, holds nothing more for it; or stdin closes,
// or limitAfter passes. A broker that still holds messages for a
// receiver, or is slow to say, keeps it waiting: on a loaded machine RabbitMQ
// can go seconds without delivering with its queues full.
func awaitReceivers(states []*receiverState, watches []*backlogWatch, total int64, drainFor, limitAfter time.Duration,
	stdinClosed <-chan struct{}) {
	drain := int64(drainFor)
	start := monoNow()
	limit := start + int64(limitAfter)
	tick := time.NewTicker(monitorEvery)
	defer tick.Stop()
	for {
		now := monoNow()
		waiting := 0
		for i, st := range states {
			if st.received.Load() >= total {
				continue
			}
			w := watches[i]
			idleSince := max(st.lastNs.Load(), start)
			if w != nil {
				idleSince = max(idleSince, w.heldNs.Load())
			}
			switch {
			case now-idleSince < drain:
				waiting++
			case w == nil:
				// idle, and nobody to ask: done
			case w.asking.Load():
				waiting++
			case w.askedNs.Load() < idleSince+drain:
				// Idle for drain_ms with no question since: ask.
				w.ask(i)
				waiting++
			}
			// else: asked since it went idle, and the answer found nothing held
			// (or failed): done
		}
		if waiting == 0 {
			return
		}
		if now >= limit {
			fmt.Fprintf(os.Stderr, "pubsub kit, receivers: %d receiver(s) still receiving or with messages held "+
				"by the broker at the time limit (%.1f s after the published line)\n", waiting, float64(now-start)/1e9)
			return
		}
		select {
		case <-stdinClosed:
			return
		case <-tick.C:
		}
	}
}

// countUndelivered stops delivery to every receiver short of total whose
// system can say what it holds, and asks how many messages it still holds:
// those are undelivered (still queued in the broker when the drain ended),
// not lost. It returns the count per receiver; a receiver whose system
// cannot say, or does not answer within countWithin, has 0, and what it
// lacks stays counted as lost.
func countUndelivered(states []*receiverState, watches []*backlogWatch, total int64) []int64 {
	undelivered := make([]int64, len(states))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, st := range states {
		w := watches[i]
		if w == nil || st.received.Load() >= total {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.b.Halt(); err != nil {
				fmt.Fprintf(os.Stderr, "pubsub kit, receivers: receiver %d: stopping its delivery to count what is left: %v\n", i, err)
				return
			}
			n, err := w.b.Backlog()
			if err != nil {
				fmt.Fprintf(os.Stderr, "pubsub kit, receivers: receiver %d: asking the broker what it still holds: %v\n", i, err)
				return
			}
			mu.Lock()
			undelivered[i] = n
			mu.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(countWithin):
		fmt.Fprintf(os.Stderr, "pubsub kit, receivers: the brokers did not say what they still hold within %s; "+
			"what the receivers lack counts as lost\n", countWithin)
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]int64(nil), undelivered...)
}

// drainLimit is how long the worker waits for served after its published
// line: 25 s plus twice drain_ms plus twice the publishing time, because a
// receiver still working through a backlog (a broker's queue filled at several
// times the rate it delivers) is not idle: RabbitMQ at 16 B took 15 s to
// deliver 3 s of publishing here. The peer stops 5 s earlier, so its served
// line, with the loss counted, arrives before the worker gives up. Setup (at
// most 25 s), publishing and this stay within the harness's time limit
// (60 + duration_s*3 + drain_ms/1000*2 s).
func drainLimit(p Params) time.Duration {
	return 25*time.Second + 2*time.Duration(p.DrainMs)*time.Millisecond +
		time.Duration(2*p.DurationS*float64(time.Second))
}
