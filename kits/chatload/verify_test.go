package main

import (
	"testing"
	"time"
)

func TestDeliveriesAreCheckedForGroupAndSenderAndTimed(t *testing.T) {
	r := &run{epoch: time.Now(), aborted: make(chan struct{})}
	me := &client{group: 2, user: 7}
	r.sending.Store(true)
	r.deliver(me, stamp{Group: 2, User: 8, T: 100}, 1100) // good, in the window
	r.deliver(me, stamp{Group: 3, User: 9, T: 100}, 2100) // another group's
	r.deliver(me, stamp{Group: 2, User: 7, T: 100}, 600)  // its own
	r.sending.Store(false)
	r.deliver(me, stamp{Group: 2, User: 6, T: 5000}, 9000) // after T: the drain
	if got := r.received.Load(); got != 4 {
		t.Fatalf("received %d, want 4", got)
	}
	if got := r.receivedInWindow.Load(); got != 3 {
		t.Fatalf("received in the window %d, want 3", got)
	}
	if r.crossGroup.Load() != 1 || r.selfDeliveries.Load() != 1 {
		t.Fatalf("cross_group %d, self_deliveries %d, want 1 and 1", r.crossGroup.Load(), r.selfDeliveries.Load())
	}
	if r.latency.Max() != 4000 || r.lastDelivery.Load() != 9000 {
		t.Fatalf("latency max %d (want 4000), last delivery %d (want 9000)", r.latency.Max(), r.lastDelivery.Load())
	}
}

func TestHistogramUsesTheHarnessLayout(t *testing.T) {
	// The vectors of msgbench/histogram.py's index(): exact below 128, then
	// shift * 64 + (v >> shift).
	for v, want := range map[int64]int{0: 0, 127: 127, 128: 128, 255: 191, 256: 192, 1000: 317, 1 << 40: 34*64 + 64} {
		if got := bucketIndex(v); got != want {
			t.Errorf("bucketIndex(%d) = %d, want %d", v, got, want)
		}
	}
	if bucketIndex(1<<63-1) != largestIndex {
		t.Errorf("the largest value falls in %d, not the last bucket %d", bucketIndex(1<<63-1), largestIndex)
	}
	var h Histogram
	h.Record(-5)
	h.Record(1000)
	h.Record(1000)
	if got := h.Sparse(); len(got) != 2 || got[0] != [2]int64{0, 1} || got[1] != [2]int64{317, 2} {
		t.Fatalf("sparse %v", got)
	}
}
