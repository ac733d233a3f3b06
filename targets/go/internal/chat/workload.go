package chat

import (
	"time"

	"msgbench/kits/go/measure"
	"msgbench/kits/go/protocol"
)

// The message kinds.
const (
	MessageText   = "text"
	MessageBinary = "binary"
)

// channels bound every user's and client's inboxes and every group's at 16
// messages: throughput still grows past it, but latency grows faster
// (README.md, "Chat: channel capacity").
const channels = 16

// Memory per user, for refusing a run that plainly cannot fit before
// starting it. Measured (README.md, "Chat: measured"): realistic runs at
// 15,000 and 100,000 users with history 10 peak at 8,500-9,100 bytes per
// user. Stress runs take about twice that (garbage-collector headroom), so
// this is a floor, not a promise. A larger history adds, per message kept,
// its pointer and the message (and for message=binary its buffer).
const (
	bytesPerUser       = 9 << 10
	defaultHistory     = 10
	bytesPerKept       = 8 + 48 // the history's pointer, the message's allocation
	bytesPerBinaryBody = 64     // 58 bytes in a 64-byte allocation
)

// wireParams are the parameters as the request carries them (spec/workloads/chat.json).
type wireParams struct {
	Groups          int     `json:"groups"`
	ClientsPerGroup int     `json:"clients_per_group"`
	DurationS       float64 `json:"duration_s"`
	ThinkMS         int64   `json:"think_ms"`
	ListenerDelayMS int64   `json:"listener_delay_ms"`
	Message         string  `json:"message"`
	History         int     `json:"history"`
	DrainTimeoutS   float64 `json:"drain_timeout_s"`
}

// Parse is the request's parameters and the variant's options.
func Parse(req protocol.Request) (Params, Options, error) {
	var w wireParams
	if err := req.DecodeParams(&w); err != nil {
		return Params{}, Options{}, err
	}
	yield, err := req.Options.Bool("yield")
	if err != nil {
		return Params{}, Options{}, err
	}
	if err := req.Options.Unknown("yield"); err != nil {
		return Params{}, Options{}, err
	}
	p := Params{
		Groups: w.Groups, ClientsPerGroup: w.ClientsPerGroup, Duration: secondsToDuration(w.DurationS),
		Think: time.Duration(w.ThinkMS) * time.Millisecond, ListenerDelay: time.Duration(w.ListenerDelayMS) * time.Millisecond,
		Binary: w.Message == MessageBinary, History: w.History, DrainTimeout: secondsToDuration(w.DrainTimeoutS),
	}
	return p, Options{InboxCapacity: channels, GroupCapacity: channels, Yield: yield}, nil
}

// secondsToDuration rounds to the nanosecond; the spec's ranges keep it far
// from overflowing.
func secondsToDuration(s float64) time.Duration {
	return time.Duration(s*float64(time.Second) + 0.5)
}

// checkMemory refuses a run that cannot fit in the memory available now.
func checkMemory(p Params) error {
	available, err := measure.AvailableBytes()
	if err != nil {
		return nil // no /proc/meminfo: let the harness's own estimate decide
	}
	perUser := int64(bytesPerUser)
	if extra := int64(p.History - defaultHistory); extra > 0 {
		perKept := int64(bytesPerKept)
		if p.Binary {
			perKept += bytesPerBinaryBody
		}
		perUser += extra * perKept
	}
	users := p.Users()
	if users > available/perUser {
		const mib = 1 << 20
		return protocol.Errorf(protocol.Resource,
			"%d users (groups x clients_per_group) need about %d MiB at %d bytes per user, more than the %d MiB available",
			users, users*perUser/mib, perUser, available/mib)
	}
	return nil
}

// Measure runs the workload for the protocol: the request in, raw facts out.
func Measure(req protocol.Request) (protocol.Result, error) {
	p, opt, err := Parse(req)
	if err != nil {
		return protocol.Result{}, err
	}
	if err := checkMemory(p); err != nil {
		return protocol.Result{}, err
	}
	out, err := Run(p, opt)
	if err != nil {
		return protocol.Result{}, protocol.Errorf(protocol.Internal, "%v", err)
	}
	peak, err := measure.PeakRSSBytes()
	if err != nil {
		return protocol.Result{}, err
	}
	return report(out, peak), nil
}

// report gives the raw facts; the harness derives the seed's averages (per
// second of the measured send window, per group, per client) and the latency
// percentiles from the histogram. received_in_window is what arrived within
// T, as the seed's Received counted; received (the drain included) is what
// verify compares with sent.
func report(out Outcome, peakRSS int64) protocol.Result {
	return protocol.Result{
		Measured: map[string]any{
			"setup_ns":             out.Setup.Nanoseconds(),
			"send_window_ns":       out.SendWindow.Nanoseconds(),
			"drain_ns":             out.Drain.Nanoseconds(),
			"received_in_window":   out.ReceivedInWindow,
			"processes_count":      out.Processes,
			"peak_rss_bytes":       peakRSS,
			"runtime_memory_bytes": out.RuntimeMemory,
			"latency_max_ns":       out.Latency.Max(),
		},
		Verify: map[string]int64{
			"sent":            out.Sent,
			"received":        out.Received,
			"cross_group":     out.CrossGroup,
			"self_deliveries": out.SelfDeliveries,
			"users":           out.Users,
		},
		Histograms: map[string][][2]int64{"latency_ns": out.Latency.Sparse()},
	}
}
