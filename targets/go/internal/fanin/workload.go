package fanin

import (
	"time"

	"msgbench/kits/go/measure"
	"msgbench/kits/go/protocol"
)

const (
	bytesPerWord = 8       // a payload word is a uint64
	bytesPerMiB  = 1 << 20 // memory_limit_mb counts MiB
	// Go's default GOGC=100 lets the heap grow to twice the live data
	// before it collects.
	garbageHeadroom = 2
	unsupportedExit = "exit signals are an Erlang notion; go has no equivalent"
	// channelCapacity bounds the receiver's channel at 1024 signals: the
	// smallest power of two past which throughput measured flat (README.md,
	// "Fanin: channel capacity").
	channelCapacity = 1024
)

// wireParams are the fanin parameters as the request carries them
// (spec/workloads/fanin.json).
type wireParams struct {
	Senders       int         `json:"senders"`
	DurationMS    int64       `json:"duration_ms"`
	Mix           []wireShare `json:"mix"`
	Method        string      `json:"method"` // how the harness derives throughput from the raw facts
	MemoryLimitMB int64       `json:"memory_limit_mb"`
}

// parse is the request's parameters and the variant's options. A mix with
// exit signals is unsupported.
func parse(req protocol.Request) (Params, Options, error) {
	var w wireParams
	if err := req.DecodeParams(&w); err != nil {
		return Params{}, Options{}, err
	}
	share, err := req.Options.Bool("share_payload")
	if err != nil {
		return Params{}, Options{}, err
	}
	if err := req.Options.Unknown("share_payload"); err != nil {
		return Params{}, Options{}, err
	}
	mix, err := newMix(w.Mix)
	if err != nil {
		return Params{}, Options{}, err
	}
	p := Params{Senders: w.Senders, Duration: time.Duration(w.DurationMS) * time.Millisecond, Mix: mix,
		MemoryLimitBytes: w.MemoryLimitMB * bytesPerMiB}
	if i, found := p.Mix.find(ExitSignal); found {
		return p, Options{}, protocol.Errorf(protocol.Unsupported, "%s (mix[%d].kind = %q)", unsupportedExit, i, ExitSignal)
	}
	return p, Options{ChannelCapacity: channelCapacity, SharePayload: share}, nil
}

// checkMemory refuses a run whose payloads in flight could pass the memory
// limit. The channel is bounded, so the worst case is known in advance: a full
// channel, one signal held by each blocked sender, one at the receiver, all of
// the largest size, and the garbage collector's headroom on top.
func checkMemory(p Params, opt Options) error {
	const atReceiver = 1 // the signal the receiver has just taken
	inFlight := int64(opt.ChannelCapacity + p.Senders + atReceiver)
	worst := inFlight * p.Mix.largest() * bytesPerWord * garbageHeadroom
	if worst > p.MemoryLimitBytes {
		return protocol.Errorf(protocol.Resource,
			"up to %d MiB of payload could be in flight (%d signals of up to %d words: channel capacity %d, "+
				"one per sender, one at the receiver; doubled for garbage-collector headroom), "+
				"more than memory_limit_mb = %d",
			worst/bytesPerMiB, inFlight, p.Mix.largest(), opt.ChannelCapacity, p.MemoryLimitBytes/bytesPerMiB)
	}
	return nil
}

// Measure runs the workload for the protocol: the request in, raw facts out.
func Measure(req protocol.Request) (protocol.Result, error) {
	p, opt, err := parse(req)
	if err != nil {
		return protocol.Result{}, err
	}
	if err := checkMemory(p, opt); err != nil {
		return protocol.Result{}, err
	}
	out := Run(p, opt)
	peak, err := measure.PeakRSSBytes()
	if err != nil {
		return protocol.Result{}, err
	}
	return report(out, peak), nil
}

// report gives the raw facts; the harness derives both methods' throughput
// from them (the OTP suite's planned duration and whole-ms drain included).
func report(out Outcome, peakRSS int64) protocol.Result {
	alive := int64(0)
	if out.ReceiverAlive {
		alive = 1
	}
	return protocol.Result{
		Measured: map[string]any{
			"send_ns":        out.SendTime.Nanoseconds(),
			"receive_ns":     out.ReceiveTime.Nanoseconds(),
			"drain_ns":       out.Drain.Nanoseconds(),
			"cpu_ns":         out.CPU.Nanoseconds(),
			"peak_rss_bytes": peakRSS,
		},
		Verify: map[string]int64{
			"sent_message":         out.Sent[Message],
			"received_message":     out.Received[Message],
			"sent_exit_signal":     out.Sent[ExitSignal],
			"received_exit_signal": out.Received[ExitSignal],
			"receiver_alive":       alive,
		},
	}
}
