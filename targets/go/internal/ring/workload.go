package ring

import (
	"msgbench/targets/go/internal/measure"
	"msgbench/targets/go/internal/params"
	"msgbench/targets/go/internal/protocol"
)

// The accepted ranges, as in spec/workloads/ring.json (a test checks they agree).
var (
	NRange        = params.IntRange{Min: 2, Max: 134217727}
	MRange        = params.IntRange{Min: 1, Max: 1000000000}
	PayloadLength = params.StringLength{Min: 0, Max: 65536}
)

// ParseParams validates the request's params.
func ParseParams(raw map[string]any) (Params, error) {
	var p Params
	var err error
	if err = params.RejectUnknown(raw, "", "n", "m", "payload"); err != nil {
		return p, err
	}
	if p.N, err = params.Get(raw, "n", "n").Int(NRange); err != nil {
		return p, err
	}
	if p.M, err = params.Get(raw, "m", "m").Int(MRange); err != nil {
		return p, err
	}
	if p.Payload, err = params.Get(raw, "payload", "payload").String(PayloadLength); err != nil {
		return p, err
	}
	return p, nil
}

// Measure runs the workload for the protocol: params in, result out.
func Measure(raw map[string]any, opt Options) (protocol.Result, error) {
	p, err := ParseParams(raw)
	if err != nil {
		return protocol.Result{}, err
	}
	out := Run(p, opt)
	peak, err := measure.PeakRSSBytes()
	if err != nil {
		return protocol.Result{}, err
	}
	return report(p, out, peak), nil
}

func report(p Params, out Outcome, peakRSS int64) protocol.Result {
	return protocol.Result{
		Metrics: map[string]float64{
			"create_wall_ms": measure.Millis(out.CreateWall),
			"create_cpu_ms":  measure.Millis(out.CreateCPU),
			"pass_wall_ms":   measure.Millis(out.PassWall),
			"pass_cpu_ms":    measure.Millis(out.PassCPU),
			"hops_per_s":     measure.PerSecond(p.N*p.M, out.PassWall),
			"spawns_per_s":   measure.PerSecond(p.N, out.CreateWall),
			"peak_rss_bytes": float64(peakRSS),
		},
		Verify: map[string]int64{
			"hops":  out.Hops,
			"laps":  out.Laps,
			"links": out.Links,
		},
	}
}
