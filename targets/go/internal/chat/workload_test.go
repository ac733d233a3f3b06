package chat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"msgbench/kits/go/protocol"
)

// request is a small chat request; overrides replace params.
func request(overrides map[string]any) protocol.Request {
	params := map[string]any{
		"groups": 3, "clients_per_group": 4, "duration_s": 0.05, "think_ms": 0, "listener_delay_ms": 0,
		"message": "text", "history": 10, "drain_timeout_s": 5,
	}
	for k, v := range overrides {
		params[k] = v
	}
	raw, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return protocol.Request{Workload: "chat", Options: protocol.Options{}, Params: raw}
}

func TestParse(t *testing.T) {
	req := request(map[string]any{"duration_s": 1.5, "think_ms": 5000, "listener_delay_ms": 1, "message": "binary",
		"drain_timeout_s": 0, "groups": 2})
	req.Options = protocol.Options{"yield": true}
	p, opt, err := Parse(req)
	if err != nil {
		t.Fatal(err)
	}
	want := Params{Groups: 2, ClientsPerGroup: 4, Duration: 1500 * time.Millisecond, Think: 5 * time.Second,
		ListenerDelay: time.Millisecond, Binary: true, History: 10, DrainTimeout: 0}
	if p != want || opt != (Options{InboxCapacity: channels, GroupCapacity: channels, Yield: true}) {
		t.Fatalf("got %+v %+v, want %+v", p, opt, want)
	}
}

func TestMeasureRefusesWhatCannotFit(t *testing.T) {
	_, err := Measure(request(map[string]any{"groups": 1000000, "clients_per_group": 100000}))
	perr, ok := err.(*protocol.Error)
	if !ok || perr.Kind != protocol.Resource || !strings.Contains(perr.Message, "100000000000 users") {
		t.Fatalf("error = %v; want a resource error", err)
	}
}

func TestMeasureReportsTheRawFacts(t *testing.T) {
	result, err := Measure(request(nil))
	if err != nil {
		t.Fatal(err)
	}
	m, v := result.Measured, result.Verify
	if v["sent"] <= 0 || v["received"] != v["sent"] || v["users"] != 12 || v["cross_group"] != 0 ||
		v["self_deliveries"] != 0 {
		t.Fatalf("verify %v", v)
	}
	if m["processes_count"] != int64(27) || m["send_window_ns"].(int64) < 50e6 || m["runtime_memory_bytes"].(uint64) == 0 ||
		m["received_in_window"].(int64) > v["received"] || m["latency_max_ns"].(int64) <= 0 {
		t.Errorf("measured %v", m)
	}
	var counted int64
	for _, pair := range result.Histograms["latency_ns"] {
		counted += pair[1]
	}
	if counted != v["received"] {
		t.Errorf("the latency histogram counts %d deliveries, verify %d", counted, v["received"])
	}
}
