package main

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestScheduleSendsOncePerThinkFromARandomPhaseWithinTheWindow(t *testing.T) {
	think, window := 5*time.Second, 20*time.Second
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		s := newSchedule(rng, think, window)
		var times []time.Duration
		for {
			at, ok := s.Next()
			if !ok {
				break
			}
			times = append(times, at)
		}
		if len(times) != 4 {
			// phase in [0, 5 s): sends at phase, +5, +10, +15 all before 20 s
			t.Fatalf("want 4 sends in a 20 s window at think 5 s, got %v", times)
		}
		if times[0] < 0 || times[0] >= think {
			t.Fatalf("first send at %v, want within the first think", times[0])
		}
		for i := 1; i < len(times); i++ {
			if times[i]-times[i-1] != think {
				t.Fatalf("sends %v are not one think apart", times)
			}
		}
		if last := times[len(times)-1]; last >= window {
			t.Fatalf("a send at %v, at or after the window's end", last)
		}
	}
}

func TestSchedulePhasesSpreadOverTheThinkTime(t *testing.T) {
	think := time.Second
	rng := rand.New(rand.NewPCG(3, 4))
	var buckets [10]int
	for range 10000 {
		s := newSchedule(rng, think, time.Hour)
		at, _ := s.Next()
		buckets[at*10/think]++
	}
	for i, n := range buckets {
		if n < 800 || n > 1200 { // uniform: ~1000 each
			t.Fatalf("phase decile %d holds %d of 10000: not uniform (%v)", i, n, buckets)
		}
	}
}

func TestAShortWindowMaySendNothing(t *testing.T) {
	s := schedule{next: 300 * time.Millisecond, think: time.Second, window: 200 * time.Millisecond}
	if at, ok := s.Next(); ok {
		t.Fatalf("a phase past the window sent at %v", at)
	}
}

func TestAddressesSpreadClientsOverLoopbackBelowThePortsOfOne(t *testing.T) {
	if a := addressFor(7, 100); a != [4]byte{127, 0, 0, 1} {
		t.Fatalf("100 users: want 127.0.0.1 for all, got %v", a)
	}
	users := int64(100_000) // 6 addresses
	counts := map[[4]byte]int{}
	for i := range users {
		counts[addressFor(i, users)]++
	}
	if len(counts) != 6 {
		t.Fatalf("100,000 users over %d addresses, want 6", len(counts))
	}
	for a, n := range counts {
		if a[0] != 127 || n > perAddress {
			t.Fatalf("%v carries %d clients", a, n)
		}
	}
	if a := addressFor(300, 10_000_000); a != [4]byte{127, 0, 1, 47} {
		t.Fatalf("past 254 addresses: want 127.0.1.x, got %v", a)
	}
}
