package pubsubkit

import (
	"sync/atomic"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histogram range: 1 ns to 60 s, 3 significant digits.
const (
	latencyMinNs  = 1
	latencyMaxNs  = 60_000_000_000
	latencyDigits = 3
)

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
	latency      *hdrhistogram.Histogram // nil when rate = 0
}

func newReceiverState(p Params) *receiverState {
	r := &receiverState{
		payloadBytes: p.PayloadBytes,
		sources:      uint32(p.Sources),
		lastSeq:      make([]uint32, p.Sources),
	}
	if p.Rate > 0 {
		r.latency = hdrhistogram.New(latencyMinNs, latencyMaxNs, latencyDigits)
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
		// Late beyond the histogram's range is clamped, not dropped: the
		// message still counts, at the largest latency recordable.
		_ = r.latency.RecordValue(min(max(now-h.IntendedNs, latencyMinNs), latencyMaxNs))
	}
}

// report is the receiver's line in served; call it once deliver has stopped.
func (r *receiverState) report(dropped int64) ReceiverReport {
	return ReceiverReport{
		Received:   r.received.Load(),
		FirstNs:    r.firstNs,
		LastNs:     r.lastNs.Load(),
		OutOfOrder: r.outOfOrder,
		Duplicates: r.duplicates,
		Corrupt:    r.corrupt,
		Dropped:    dropped,
	}
}

// mergedLatency sums the receivers' histograms into µs percentiles; nil when
// the run records none (rate = 0).
func mergedLatency(states []*receiverState) *LatencyReport {
	var all *hdrhistogram.Histogram
	for _, r := range states {
		if r.latency == nil {
			return nil
		}
		if all == nil {
			all = hdrhistogram.New(latencyMinNs, latencyMaxNs, latencyDigits)
		}
		all.Merge(r.latency)
	}
	if all == nil {
		return nil
	}
	us := func(ns int64) float64 { return float64(ns) / 1000 }
	return &LatencyReport{
		P50:  us(all.ValueAtQuantile(50)),
		P99:  us(all.ValueAtQuantile(99)),
		P999: us(all.ValueAtQuantile(99.9)),
		Max:  us(all.Max()),
	}
}
