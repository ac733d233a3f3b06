package chat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"msgbench/targets/go/internal/protocol"
)

func validParams() map[string]any {
	return map[string]any{
		"groups":            json.Number("3"),
		"clients_per_group": json.Number("4"),
		"duration_s":        json.Number("0.05"),
		"think_ms":          json.Number("0"),
		"listener_delay_ms": json.Number("0"),
		"message":           "text",
		"history":           json.Number("10"),
		"drain_timeout_s":   json.Number("5"),
	}
}

func TestParseParams(t *testing.T) {
	raw := validParams()
	raw["duration_s"], raw["think_ms"], raw["listener_delay_ms"] = json.Number("1.5"), json.Number("5000"), json.Number("1")
	raw["message"], raw["drain_timeout_s"], raw["groups"] = "binary", json.Number("0"), json.Number("2.0")
	p, err := ParseParams(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := Params{Groups: 2, ClientsPerGroup: 4, Duration: 1500 * time.Millisecond, Think: 5 * time.Second,
		ListenerDelay: time.Millisecond, Binary: true, History: 10, DrainTimeout: 0}
	if p != want {
		t.Fatalf("got %+v, want %+v", p, want)
	}
}

func TestParseParamsRejectsBadValues(t *testing.T) {
	cases := []struct {
		name  string
		key   string
		value any
		want  string
	}{
		{"no groups", "groups", json.Number("0"), "groups = 0 is out of range: groups must be an integer >= 1 and <= 1000000"},
		{"groups fractional", "groups", json.Number("2.5"), "groups = 2.5 is not valid"},
		{"one client", "clients_per_group", json.Number("1"),
			"clients_per_group = 1 is out of range: clients_per_group must be an integer >= 2 and <= 100000 " +
				"(a user needs a peer in its group)"},
		{"too many clients", "clients_per_group", json.Number("100001"), "clients_per_group = 100001 is out of range"},
		{"clients a string", "clients_per_group", "5", `clients_per_group = "5" is not valid`},
		{"zero duration", "duration_s", json.Number("0"),
			"duration_s = 0 is out of range: duration_s must be a number > 0 and <= 86400"},
		{"duration too long", "duration_s", json.Number("86401"), "duration_s = 86401 is out of range"},
		{"think negative", "think_ms", json.Number("-1"), "think_ms = -1 is out of range"},
		{"delay too long", "listener_delay_ms", json.Number("1001"),
			"listener_delay_ms = 1001 is out of range: listener_delay_ms must be an integer >= 0 and <= 1000"},
		{"message unknown", "message", "json", `message = "json" is not valid: message must be one of "text", "binary"`},
		{"history too long", "history", json.Number("10001"), "history = 10001 is out of range"},
		{"drain negative", "drain_timeout_s", json.Number("-0.5"),
			"drain_timeout_s = -0.5 is out of range: drain_timeout_s must be a number >= 0 and <= 3600"},
		{"unknown", "rooms", json.Number("3"), "unknown parameter rooms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := validParams()
			raw[c.key] = c.value
			_, err := ParseParams(raw)
			perr, ok := err.(*protocol.Error)
			if !ok || perr.Kind != protocol.BadParams || !strings.Contains(perr.Message, c.want) {
				t.Fatalf("error = %v; want bad_params containing %q", err, c.want)
			}
		})
	}
	raw := validParams()
	delete(raw, "history")
	if _, err := ParseParams(raw); err == nil || !strings.Contains(err.Error(), "history is missing") {
		t.Fatalf("missing history: %v", err)
	}
}

func TestMeasureRefusesWhatCannotFit(t *testing.T) {
	raw := validParams()
	raw["groups"], raw["clients_per_group"] = json.Number("1000000"), json.Number("100000")
	_, err := Measure(raw, testOptions)
	perr, ok := err.(*protocol.Error)
	if !ok || perr.Kind != protocol.Resource || !strings.Contains(perr.Message, "100000000000 users") {
		t.Fatalf("error = %v; want a resource error", err)
	}
}

func TestMeasureReportsTheSeedsAverages(t *testing.T) {
	result, err := Measure(validParams(), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	m, v := result.Metrics, result.Verify
	if v["sent"] <= 0 || v["received"] != v["sent"] || v["users"] != 12 || v["cross_group"] != 0 ||
		v["self_deliveries"] != 0 {
		t.Fatalf("verify %v", v)
	}
	seconds := m["send_window_ms"] / 1000
	sent := float64(v["sent"])
	for name, want := range map[string]float64{
		"sent_count":            sent,
		"sent_per_s":            sent / seconds,
		"sent_per_group_count":  sent / 3,
		"sent_per_client_count": sent / 12,
		"sent_per_client_per_s": sent / 12 / seconds,
		"memory_per_user_bytes": m["peak_rss_bytes"] / 12,
		"processes_count":       27,
	} {
		if got := m[name]; got < want*0.999999 || got > want*1.000001 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if m["latency_p50_us"] <= 0 || m["latency_p99_us"] < m["latency_p50_us"] || m["latency_max_us"] < m["latency_p99_us"] {
		t.Errorf("latencies p50 %v p99 %v max %v", m["latency_p50_us"], m["latency_p99_us"], m["latency_max_us"])
	}
	if m["runtime_memory_bytes"] <= 0 || m["send_window_ms"] < 50 {
		t.Errorf("metrics %v", m)
	}
}

// The seed's Received stopped counting at T, so the received averages are
// taken from what arrived before T; the drain shows only in received_count.
func TestReportCountsReceivedBeforeT(t *testing.T) {
	out := Outcome{Sent: 1000, Received: 1000, ReceivedInWindow: 250, SendWindow: 2 * time.Second}
	m := report(Params{Groups: 2, ClientsPerGroup: 5}, out, 1<<20).Metrics
	for name, want := range map[string]float64{
		"sent_per_s":                500,
		"received_count":            1000,
		"received_in_window_count":  250,
		"received_per_s":            125,
		"received_per_group_count":  125,
		"received_per_client_count": 25,
		"received_per_client_per_s": 12.5,
	} {
		if got := m[name]; got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}
