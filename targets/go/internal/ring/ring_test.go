package ring

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"msgbench/kits/go/protocol"
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

func TestMeasureReportsTheRawFacts(t *testing.T) {
	req := protocol.Request{Workload: "ring", Params: json.RawMessage(`{"n":10,"m":4,"payload":"BOO!"}`)}
	result, err := Measure(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"create_wall_ns", "create_cpu_ns", "pass_wall_ns", "pass_cpu_ns", "peak_rss_bytes"} {
		if v, ok := result.Measured[name].(int64); !ok || v < 0 {
			t.Errorf("measured %s = %v", name, result.Measured[name])
		}
	}
	if result.Verify["hops"] != 40 || result.Verify["laps"] != 4 || result.Verify["links"] != 10 {
		t.Errorf("verify = %v", result.Verify)
	}
	if result.Measured["peak_rss_bytes"].(int64) <= 0 {
		t.Errorf("peak_rss_bytes = %v", result.Measured["peak_rss_bytes"])
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
