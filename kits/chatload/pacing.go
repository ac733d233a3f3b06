package main

import (
	"math/rand/v2"
	"time"
)

// schedule is one realistic user's sends: one every think, the first at a
// uniformly random phase within the first think, none at or after window.
// Each send's intended time (from the release) is its timestamp, so a
// server, or a load generator, that falls behind shows it in the latency
// instead of hiding it (coordinated omission corrected).
type schedule struct {
	next, think, window time.Duration
}

func newSchedule(rng *rand.Rand, think, window time.Duration) schedule {
	return schedule{next: time.Duration(rng.Int64N(int64(think))), think: think, window: window}
}

// Next is the intended time of the next send, false once the window is over.
func (s *schedule) Next() (time.Duration, bool) {
	if s.next >= s.window {
		return 0, false
	}
	at := s.next
	s.next += s.think
	return at, true
}

// addressFor is the loopback source address of client i when users clients
// share the 127.0.0.0/8 block: 127.0.0.1 .. 127.0.0.N, N = users/20000 + 1,
// so no address needs more than ~20,000 of its ~28,000 ephemeral ports.
// Past 254 addresses it goes on with 127.0.1.1 and so on.
func addressFor(i, users int64) [4]byte {
	k := i % (users/perAddress + 1)
	return [4]byte{127, 0, byte(k / 254), byte(1 + k%254)}
}

// perAddress is the most clients one source address carries.
const perAddress = 20000
