package pubsub

import (
	"math/bits"
	"slices"
	"sync/atomic"
)

// Latency histogram range: 1 ns to 60 s, 3 significant digits.
// The latency histogram's layout is the harness's (msgbench/histogram.py):
// values below 128 ns exact, then 64 buckets per power of two, so a bucket is
// at most 1/64 of its values wide. The harness computes the percentiles.
const (
	subBuckets = 64
	// histogramBuckets covers every int64 value: the bucket of 2^63-1 is 3711.
	histogramBuckets = 3712
)

// LayoutIndex is the bucket of v ns: v itself below 128, else
// shift*64 + v>>shift with shift = bit_length(v) - 7. Negative counts as 0.
func LayoutIndex(v int64) int {
	v = max(v, 0)
	if v < 2*subBuckets {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - 7
	return shift*subBuckets + int(v>>shift)
}

// histogram counts latencies into the layout's buckets.
type histogram struct {
	counts []int64 // by bucket, allocated on the first value
	max    int64
}

func (h *histogram) record(v int64) {
	if h.counts == nil {
		h.counts = make([]int64, histogramBuckets)
	}
	h.counts[LayoutIndex(v)]++
	h.max = max(h.max, v)
}

// merge adds other's counts.
func (h *histogram) merge(other *histogram) {
	for i, n := range other.counts {
		if n > 0 {
			if h.counts == nil {
				h.counts = make([]int64, histogramBuckets)
			}
			h.counts[i] += n
		}
	}
	h.max = max(h.max, other.max)
}

// sparse is the histogram as the protocol carries it: [bucket, count] pairs
// with count > 0, by bucket.
func (h *histogram) sparse() [][2]int64 {
	pairs := [][2]int64{}
	for i, n := range h.counts {
		if n > 0 {
			pairs = append(pairs, [2]int64{int64(i), n})
		}
	}
	return slices.Clip(pairs)
}

// receiverState checks and counts one receiver's messages. deliver runs on
// the receiver's one delivery goroutine; the peer's monitor reads only the
// atomics while it runs, and everything else once the receiver is closed.
type receiverState struct {
	received atomic.Int64 // every delivery, whatever its state
	lastNs   atomic.Int64 // CLOCK_MONOTONIC of the last delivery

	payloadBytes int
	sources      uint32
	firstNs      int64
	bytes        int64
	lastSeq      []uint32 // per source; 0 = nothing yet
	outOfOrder   int64
	duplicates   int64
	corrupt      int64
	latency      *histogram // nil when rate = 0
}

func newReceiverState(p Params) *receiverState {
	r := &receiverState{
		payloadBytes: p.PayloadBytes,
		sources:      uint32(p.Sources),
		lastSeq:      make([]uint32, p.Sources),
	}
	if p.Rate > 0 {
		r.latency = &histogram{}
	}
	return r
}

// deliver is the System's deliver callback.
func (r *receiverState) deliver(msg []byte) {
	now := monoNow()
	if r.received.Add(1) == 1 {
		r.firstNs = now
	}
	r.lastNs.Store(now)
	r.bytes += int64(len(msg))
	h, ok := decodeHeader(msg)
	if !ok || len(msg) != r.payloadBytes || h.Source >= r.sources || h.Seq == 0 ||
		(len(msg) > HeaderBytes && msg[len(msg)-1] != byte(h.Seq)) {
		r.corrupt++
		return
	}
	last := r.lastSeq[h.Source]
	switch {
	case h.Seq > last:
		// seq > last+1: the gap is loss, counted at the end from the
		// published counts (received + lost == published x receivers).
		r.lastSeq[h.Source] = h.Seq
	case h.Seq == last:
		r.duplicates++
	default:
		r.outOfOrder++
	}
	if r.latency != nil {
		r.latency.record(now - h.IntendedNs)
	}
}

// report is the receiver's line in served; call it once deliver has stopped.
func (r *receiverState) report(dropped, undelivered int64) ReceiverReport {
	return ReceiverReport{
		Undelivered: undelivered,
		Received:    r.received.Load(),
		FirstNs:     r.firstNs,
		LastNs:      r.lastNs.Load(),
		OutOfOrder:  r.outOfOrder,
		Duplicates:  r.duplicates,
		Corrupt:     r.corrupt,
		Dropped:     dropped,
	}
}

// mergedLatency adds up the receivers' histograms; nil when the run records
// none (rate = 0).
func mergedLatency(states []*receiverState) *histogram {
	var all *histogram
	for _, r := range states {
		if r.latency == nil {
			return nil
		}
		if all == nil {
			all = &histogram{}
		}
		all.merge(r.latency)
	}
	return all
}
