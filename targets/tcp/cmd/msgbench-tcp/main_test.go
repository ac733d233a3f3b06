package main

import (
	"fmt"
	"testing"

	"msgbench/kits/pubsub/kittest"
)

// The binary through the worker protocol, its peer started from
// MSGBENCH_PEER_COMMAND as the harness does.
func TestEndToEnd(t *testing.T) {
	bin := kittest.BuildCommand(t, "msgbench-tcp")
	for _, rate := range []float64{0, 5000} {
		result := kittest.RunPubsub(t, fmt.Sprintf("rate %v", rate), bin, nil, "default", nil,
			map[string]any{"payload_bytes": 100, "duration_s": 0.3, "sources": 2, "source_threads": 2,
				"receivers": 2, "batching_bytes": 8192, "rate": rate, "drain_ms": 200})
		v := result.Verify
		if v["published"] <= 0 || v["received"] != 2*v["published"] || v["lost"] != 0 ||
			v["out_of_order"] != 0 || v["duplicates"] != 0 || v["corrupt"] != 0 {
			t.Errorf("rate %v: verify %v", rate, v)
		}
		if _, ok := result.Histograms["latency_ns"]; ok != (rate > 0) {
			t.Errorf("rate %v: latency present = %v", rate, ok)
		}
	}
}
