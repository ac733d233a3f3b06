package pubsub

import (
	"time"

	"golang.org/x/sys/unix"
)

// The header's send times are CLOCK_MONOTONIC nanoseconds, so that the
// receivers' process (on the same host) can subtract them from its own
// reading. unix.ClockGettime is a real system call (~100 ns and more on a VM);
// Go's own monotonic clock reads the same CLOCK_MONOTONIC through the vDSO
// but from an origin private to the process. So each process pins the two
// together once, and then reads CLOCK_MONOTONIC as origin + time.Since.
var (
	clockBase     time.Time
	clockBaseMono int64
)

func init() { calibrate() }

// calibrate takes the tightest of a few (Go clock, CLOCK_MONOTONIC, Go clock)
// brackets: its error is half the bracket, well under a microsecond.
func calibrate() {
	best := time.Duration(1<<63 - 1)
	for i := 0; i < 20; i++ {
		var ts unix.Timespec
		before := time.Now()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			panic("clock_gettime(CLOCK_MONOTONIC): " + err.Error())
		}
		after := time.Now()
		if span := after.Sub(before); span < best {
			best = span
			clockBase = before.Add(span / 2)
			clockBaseMono = ts.Nano()
		}
	}
}

// monoNow is CLOCK_MONOTONIC in nanoseconds.
func monoNow() int64 { return clockBaseMono + int64(time.Since(clockBase)) }
