package main

import (
	"fmt"
	"testing"

	"msgbench/kits/pubsub/kittest"
)

// The binary through the worker protocol against a real nats-server, its
// peer started from MSGBENCH_PEER_COMMAND as the harness does.
func TestEndToEnd(t *testing.T) {
	server := kittest.Binary(t, "Debian package nats-server", "nats-server")
	srv := kittest.StartServer(t, server, func(port int) []string { return []string{"-a", "127.0.0.1", "-p", fmt.Sprint(port)} })
	bin := kittest.BuildCommand(t, "msgbench-nats")
	for _, c := range []struct {
		batching int
		rate     float64
	}{{8192, 0}, {8192, 2000}, {0, 500}} {
		result := kittest.RunPubsub(t, fmt.Sprintf("%+v", c), bin, []string{"MSGBENCH_SERVICE_URL=nats://" + srv.Addr}, "default", nil,
			map[string]any{"payload_bytes": 100, "duration_s": 0.3, "sources": 2, "source_threads": 2,
				"receivers": 2, "batching_bytes": c.batching, "rate": c.rate, "drain_ms": 500})
		v := result.Verify
		if v["published"] <= 0 || v["received"]+v["lost"] != 2*v["published"] || v["out_of_order"] != 0 ||
			v["duplicates"] != 0 || v["corrupt"] != 0 {
			t.Errorf("%+v: verify %v", c, v)
		}
		if v["lost"] != 0 {
			t.Logf("%+v: %d lost (NATS core is at-most-once), %d dropped by the client", c, v["lost"], v["dropped"])
		}
		if _, ok := result.Histograms["latency_ns"]; ok != (c.rate > 0) {
			t.Errorf("%+v: latency present = %v", c, ok)
		}
	}
}
