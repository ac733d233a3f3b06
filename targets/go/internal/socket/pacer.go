package socket

import (
	"math"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// schedule is one socket's open-loop plan: message i (from 0) is due at
// start + i*intervalNs, whether or not earlier echoes have returned.
type schedule struct {
	start      time.Time
	intervalNs float64
}

// newSchedule plans a socket's share of rate round trips per second offered
// by sockets sockets together.
func newSchedule(start time.Time, rate float64, sockets int) schedule {
	return schedule{start: start, intervalNs: float64(sockets) * 1e9 / rate}
}

// at is message i's intended send time.
func (s schedule) at(i int64) time.Time {
	return s.start.Add(time.Duration(math.Round(float64(i) * s.intervalNs)))
}

// prSetTimerSlack is prctl(2)'s PR_SET_TIMERSLACK (not in package syscall).
const prSetTimerSlack = 29

// lockPreciseThread wires the calling goroutine to its OS thread for good
// and sets that thread's timer slack to 1 ns, so that a nanosleep on it
// wakes within the kernel's wake-up latency rather than
// after the default 50 µs slack. time.Sleep cannot serve: while the runtime
// idles in its network poller, a timer under a millisecond waits a whole
// millisecond (epoll_wait's unit). The goroutine must never unlock: the
// thread then ends with it, and its slack with it.
func lockPreciseThread() {
	runtime.LockOSThread()
	// A failure leaves the default slack: the pacer is then ~50 µs late,
	// which the latencies show, rather than wrong.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
}

// maxSleep bounds one nanosleep, so that a stopped pacer notices within it
// even at a rate of one message a minute.
const maxSleep = 50 * time.Millisecond

// sleepUntil blocks the calling (locked) thread until due, or until stop is
// set (false then). It never spins: on two cores a spinning writer would
// take the CPU its own server and reader need, and the wake-up latency it
// saves is charged to the latencies anyway (they run from the intended time).
func sleepUntil(due time.Time, stop *atomic.Bool) bool {
	for {
		if stop.Load() {
			return false
		}
		rest := time.Until(due)
		if rest <= 0 {
			return true
		}
		ts := syscall.NsecToTimespec(int64(min(rest, maxSleep)))
		_ = syscall.Nanosleep(&ts, nil) // EINTR: the loop measures again
	}
}
