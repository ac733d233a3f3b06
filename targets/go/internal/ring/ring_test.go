package ring

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"msgbench/targets/go/internal/protocol"
)

func TestRunCountsEveryHopLapAndLink(t *testing.T) {
	for _, capacity := range []int{0, 1} {
		for _, p := range []Params{
			{N: 2, M: 1, Payload: "BOO!"},
			{N: 3, M: 3, Payload: ""},
			{N: 1000, M: 10, Payload: "BOO!"},
		} {
			t.Run(fmt.Sprintf("capacity=%d/n=%d/m=%d", capacity, p.N, p.M), func(t *testing.T) {
				out := Run(p, Options{InboxCapacity: capacity})
				if out.Hops != p.N*p.M || out.Laps != p.M || out.Links != p.N {
					t.Fatalf("hops, laps, links = %d, %d, %d; want %d, %d, %d",
						out.Hops, out.Laps, out.Links, p.N*p.M, p.M, p.N)
				}
				if out.CreateWall <= 0 || out.PassWall <= 0 {
					t.Fatalf("phases not timed: %+v", out)
				}
			})
		}
	}
}

func TestRunStopsEveryLink(t *testing.T) {
	before := runtime.NumGoroutine()
	Run(Params{N: 500, M: 2, Payload: "x"}, Options{})
	// The links exit after forwarding the collect message; give the
	// scheduler a moment to retire them.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines left behind", after-before)
	}
}

func TestMeasureReportsTheSpecMetrics(t *testing.T) {
	result, err := Measure(map[string]any{"n": json.Number("10"), "m": json.Number("4"), "payload": "BOO!"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"create_wall_ms", "create_cpu_ms", "pass_wall_ms", "pass_cpu_ms",
		"hops_per_s", "spawns_per_s", "peak_rss_bytes"} {
		if _, ok := result.Metrics[name]; !ok {
			t.Errorf("metric %s missing", name)
		}
	}
	if result.Verify["hops"] != 40 || result.Verify["laps"] != 4 || result.Verify["links"] != 10 {
		t.Errorf("verify = %v", result.Verify)
	}
	if result.Metrics["peak_rss_bytes"] <= 0 {
		t.Errorf("peak_rss_bytes = %v", result.Metrics["peak_rss_bytes"])
	}
}

func TestParseParamsRejectsBadValues(t *testing.T) {
	valid := func() map[string]any {
		return map[string]any{"n": json.Number("1000"), "m": json.Number("10"), "payload": "BOO!"}
	}
	cases := []struct {
		name   string
		change func(map[string]any)
		want   string
	}{
		{"n too small", func(p map[string]any) { p["n"] = json.Number("1") },
			"n = 1 is out of range: n must be an integer >= 2"},
		{"n too large", func(p map[string]any) { p["n"] = json.Number("134217728") }, "n = 134217728 is out of range"},
		{"n not integer", func(p map[string]any) { p["n"] = json.Number("2.5") }, "n = 2.5 is not valid"},
		{"n a string", func(p map[string]any) { p["n"] = "10" }, `n = "10" is not valid`},
		{"m zero", func(p map[string]any) { p["m"] = json.Number("0") }, "m = 0 is out of range"},
		{"m missing", func(p map[string]any) { delete(p, "m") }, "m is missing"},
		{"payload too long", func(p map[string]any) { p["payload"] = strings.Repeat("x", 65537) },
			"payload (a string of 65537 characters) is out of range"},
		{"payload not string", func(p map[string]any) { p["payload"] = json.Number("4") }, "payload = 4 is not valid"},
		{"unknown param", func(p map[string]any) { p["laps"] = json.Number("3") }, "unknown parameter laps"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := valid()
			c.change(p)
			_, err := ParseParams(p)
			perr, ok := err.(*protocol.Error)
			if !ok || perr.Kind != protocol.BadParams || !strings.Contains(perr.Message, c.want) {
				t.Fatalf("error = %v; want bad_params containing %q", err, c.want)
			}
		})
	}
	if _, err := ParseParams(valid()); err != nil {
		t.Fatalf("valid params rejected: %v", err)
	}
	p := valid()
	p["n"] = json.Number("2.0") // JSON Schema counts 2.0 as an integer
	if got, err := ParseParams(p); err != nil || got.N != 2 {
		t.Fatalf("n = 2.0: %+v, %v", got, err)
	}
}

// BenchmarkPass compares inbox buffering: one op is one hop.
func BenchmarkPass(b *testing.B) {
	const n = 1000
	for _, capacity := range []int{0, 1} {
		b.Run(fmt.Sprintf("capacity=%d", capacity), func(b *testing.B) {
			laps := max(int64(b.N)/n, 1)
			out := Run(Params{N: n, M: laps, Payload: "BOO!"}, Options{InboxCapacity: capacity})
			b.ReportMetric(float64(out.PassWall.Nanoseconds())/float64(out.Hops), "ns/hop")
		})
	}
}
