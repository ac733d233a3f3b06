package pubsub

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Idler is what a Source may also implement: the kit calls Idle when a
// rate-limited source is about to wait for its next intended send time, so a
// client that batches can push out a partial batch instead of sitting on it.
type Idler interface {
	Idle() error
}

// sourceRun is one source's publishing state; one thread owns it.
type sourceRun struct {
	index     int
	src       Source
	idler     Idler // src as an Idler, nil when it is not one
	msg       []byte
	seq       uint32
	published int64
}

// publishing is the outcome of the sources' run.
type publishing struct {
	counts  []int64 // messages published, per source
	startNs int64
	endNs   int64 // after the last Flush
}

// publishAll runs the sources for p.DurationS, spread round-robin over
// p.SourceThreads goroutines (the seed's -T threads; locked to OS threads
// when paced), then flushes each source from its goroutine. The first failure stops
// every thread.
func publishAll(srcs []Source, p Params) (publishing, error) {
	runs := make([]*sourceRun, len(srcs))
	groups := make([][]*sourceRun, p.SourceThreads)
	for i, src := range srcs {
		idler, _ := src.(Idler)
		runs[i] = &sourceRun{index: i, src: src, idler: idler, msg: make([]byte, p.PayloadBytes)}
		groups[i%p.SourceThreads] = append(groups[i%p.SourceThreads], runs[i])
	}
	var (
		stop     atomic.Bool
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		stop.Store(true)
	}
	start := monoNow()
	for _, group := range groups {
		wg.Add(1)
		go func(group []*sourceRun) {
			defer wg.Done()
			// A paced source sleeps in nanosleep and spins to its send times,
			// which needs a thread of its own (never unlocked: the thread ends
			// with the goroutine). Flat out, a plain goroutine is Go's idiom:
			// locked, every wait for a broker's reply (redis, NATS flush,
			// confirms) hands the socket to another thread and back, 2-3
			// context switches per round trip, which halved redis's rate.
			var err error
			if p.Rate > 0 {
				runtime.LockOSThread()
				err = publishPaced(group, newSchedule(start, p), &stop)
			} else {
				err = publishFlat(group, p, start, &stop)
			}
			if err != nil {
				fail(err)
				return
			}
			for _, s := range group {
				if err := s.src.Flush(); err != nil {
					fail(fmt.Errorf("source %d: flush: %w", s.index, err))
					return
				}
			}
		}(group)
	}
	wg.Wait()
	out := publishing{counts: make([]int64, len(runs)), startNs: start, endNs: monoNow()}
	for i, s := range runs {
		out.counts[i] = s.published
	}
	return out, firstErr
}

// flatClockEvery is how many rounds of its sources a flat-out thread
// publishes per clock read. A read (clock_gettime through the vDSO) took a
// third of nats's source CPU at 16 B on the dev VM when it was made for every
// message; at rate = 0 the stamp feeds no latency, and 16 messages at a few
// hundred ns each move the end by microseconds.
const flatClockEvery = 16

// publishFlat publishes as fast as the system takes it (rate = 0), each
// message stamped with the clock's last reading before it is handed over
// (taken every flatClockEvery rounds).
func publishFlat(group []*sourceRun, p Params, start int64, stop *atomic.Bool) error {
	end := start + int64(p.DurationS*1e9)
	var now int64
	for round := 0; !stop.Load(); round++ {
		if round%flatClockEvery == 0 {
			if now = monoNow(); now >= end {
				return nil
			}
		}
		for _, s := range group {
			if s.seq == math.MaxUint32 {
				return nil
			}
			if err := s.publish(now); err != nil {
				return err
			}
		}
	}
	return nil
}

// publishPaced publishes on the open-loop schedule (rate > 0); the thread's
// sources share it, so message k of each is due at the same time.
func publishPaced(group []*sourceRun, sch schedule, stop *atomic.Bool) error {
	for k := int64(0); k < math.MaxUint32; k++ {
		due := sch.at(k)
		if due >= sch.end || stop.Load() {
			return nil
		}
		if monoNow() < due {
			for _, s := range group {
				if s.idler != nil {
					if err := s.idler.Idle(); err != nil {
						return fmt.Errorf("source %d: %w", s.index, err)
					}
				}
			}
			waitUntil(due)
		}
		for _, s := range group {
			if err := s.publish(due); err != nil {
				return err
			}
		}
	}
	return nil
}

// publish sends the source's next message stamped with intendedNs.
func (s *sourceRun) publish(intendedNs int64) error {
	s.seq++
	encodeMessage(s.msg, Header{Source: uint32(s.index), Seq: s.seq, IntendedNs: intendedNs})
	if err := s.src.Publish(s.msg); err != nil {
		return fmt.Errorf("source %d: publish of message %d: %w", s.index, s.seq, err)
	}
	s.published++
	return nil
}
