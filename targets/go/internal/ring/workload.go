package ring

import (
	"msgbench/kits/go/measure"
	"msgbench/kits/go/protocol"
)

// inbox is every link's inbox: unbuffered, the plain idiom. A buffer of one
// measured no faster (README.md, "Ring: channel buffering").
var inbox = Options{InboxCapacity: 0}

// Measure runs the workload for the protocol: the request in, raw facts out.
func Measure(req protocol.Request) (protocol.Result, error) {
	var p Params
	if err := req.DecodeParams(&p); err != nil {
		return protocol.Result{}, err
	}
	if err := req.Options.Unknown(); err != nil {
		return protocol.Result{}, err
	}
	out := Run(p, inbox)
	peak, err := measure.PeakRSSBytes()
	if err != nil {
		return protocol.Result{}, err
	}
	return report(out, peak), nil
}

func report(out Outcome, peakRSS int64) protocol.Result {
	return protocol.Result{
		Measured: map[string]any{
			"create_wall_ns": out.CreateWall.Nanoseconds(),
			"create_cpu_ns":  out.CreateCPU.Nanoseconds(),
			"pass_wall_ns":   out.PassWall.Nanoseconds(),
			"pass_cpu_ns":    out.PassCPU.Nanoseconds(),
			"peak_rss_bytes": peakRSS,
		},
		Verify: map[string]int64{
			"hops":  out.Hops,
			"laps":  out.Laps,
			"links": out.Links,
		},
	}
}
