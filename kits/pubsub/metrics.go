package pubsub

import (
	"time"

	"msgbench/kits/go/protocol"
)

// measured is everything the result is made of.
type measured struct {
	params    Params
	pub       publishing
	served    servedLine
	sourceCPU time.Duration
	peakRSS   int64
}

// result gives the raw facts and the counts (spec/workloads/pubsub.json's
// measured and verify); the harness derives the rates, the loss ratio and the
// latency percentiles from them.
func (m measured) result() protocol.Result {
	var published int64
	for _, c := range m.pub.counts {
		published += c
	}
	n := len(m.served.Receivers)
	got, first, last := make([]int64, n), make([]int64, n), make([]int64, n)
	var received, undelivered, outOfOrder, duplicates, corrupt, dropped int64
	for i, r := range m.served.Receivers {
		got[i], first[i], last[i] = r.Received, r.FirstNs, r.LastNs
		received += r.Received
		undelivered += r.Undelivered
		outOfOrder += r.OutOfOrder
		duplicates += r.Duplicates
		corrupt += r.Corrupt
		dropped += r.Dropped
	}
	out := protocol.Result{
		Measured: map[string]any{
			"publish_ns":        m.pub.endNs - m.pub.startNs,
			"source_cpu_ns":     m.sourceCPU.Nanoseconds(),
			"receiver_cpu_ns":   m.served.CPUNs,
			"peak_rss_bytes":    m.peakRSS,
			"receiver_received": got,
			"receiver_first_ns": first,
			"receiver_last_ns":  last,
		},
		Verify: map[string]int64{
			"published": published,
			"received":  received,
			// Still queued in the broker when the drain ended (the
			// receivers' systems say where they can): not lost.
			"undelivered": undelivered,
			// What did not arrive and is not held, from the published
			// counts: received + undelivered + lost == published x receivers.
			"lost":         published*int64(n) - received - undelivered,
			"receivers":    int64(n),
			"out_of_order": outOfOrder,
			"duplicates":   duplicates,
			"corrupt":      corrupt,
			"dropped":      dropped,
		},
	}
	if m.params.Rate > 0 {
		out.Measured["latency_max_ns"] = m.served.LatencyMaxNs
		out.Histograms = map[string][][2]int64{"latency_ns": m.served.LatencyNs}
		if out.Histograms["latency_ns"] == nil {
			out.Histograms["latency_ns"] = [][2]int64{}
		}
	}
	return out
}
