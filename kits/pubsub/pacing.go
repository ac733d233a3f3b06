package pubsub

import (
	"math"

	"golang.org/x/sys/unix"
)

// schedule is one source's open-loop plan at rate > 0: message k (from 0) is
// due at start + k*interval, for every k with that time before end. A late
// source sends what is due at once, each message stamped with its own due
// time, so the receivers' latency includes the wait a late publisher
// imposed (coordinated omission corrected).
type schedule struct {
	start, end int64   // CLOCK_MONOTONIC ns
	intervalNs float64 // ns between one source's messages
}

// newSchedule plans each source's share, rate/sources messages per second.
func newSchedule(start int64, p Params) schedule {
	return schedule{
		start:      start,
		end:        start + int64(p.DurationS*1e9),
		intervalNs: float64(p.Sources) * 1e9 / p.Rate,
	}
}

// at is message k's intended send time.
func (s schedule) at(k int64) int64 { return s.start + int64(math.Round(float64(k)*s.intervalNs)) }

// done says whether message k falls outside the publishing time.
func (s schedule) done(k int64) bool { return s.at(k) >= s.end }

// count is how many messages one source publishes in all.
func (s schedule) count() int64 {
	n := int64(float64(s.end-s.start) / s.intervalNs)
	for n > 0 && s.done(n-1) {
		n--
	}
	for !s.done(n) {
		n++
	}
	return n
}

// spinNs is how early the sleep wakes up to spin the rest of a wait: a
// nanosleep on this locked thread overshoots by ~50-80 µs (timer slack,
// wake-up), Go's time.Sleep by up to milliseconds on a loaded host.
const spinNs = 60_000

// waitUntil blocks the calling (locked) thread until CLOCK_MONOTONIC >= due.
func waitUntil(due int64) {
	if rest := due - monoNow() - spinNs; rest > 0 {
		ts := unix.NsecToTimespec(rest)
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
	}
	// Spin on this locked thread. runtime.Gosched would hand the P to another
	// thread and park this one (stoplockedm), a futex round trip per turn;
	// async preemption still reaches the loop, which lasts at most spinNs.
	for monoNow() < due {
	}
}
