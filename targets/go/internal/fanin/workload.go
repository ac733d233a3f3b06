package fanin

import (
	"time"

	"msgbench/targets/go/internal/measure"
	"msgbench/targets/go/internal/params"
	"msgbench/targets/go/internal/protocol"
)

// The accepted ranges, as in spec/workloads/fanin.json (a test checks they agree).
var (
	SendersRange     = params.IntRange{Min: 1, Max: 100000}
	DurationRange    = params.IntRange{Min: 1, Max: 3600000}
	MemoryLimitRange = params.IntRange{Min: 64, Max: 1048576}
	Methods          = []string{MethodMsgbench, MethodOTP}
)

// The methods of computing throughput (docs/methodology.md).
const (
	MethodMsgbench = "msgbench"
	MethodOTP      = "otp"
)

const (
	bytesPerWord = 8       // a payload word is a uint64
	bytesPerMiB  = 1 << 20 // memory_limit_mb counts MiB
	// Go's default GOGC=100 lets the heap grow to twice the live data
	// before it collects.
	garbageHeadroom = 2
	unsupportedExit = "exit signals are an Erlang notion; go has no equivalent"
)

// ParseParams validates the request's params. A valid mix with exit signals
// is unsupported rather than bad.
func ParseParams(raw map[string]any) (Params, error) {
	var p Params
	if err := params.RejectUnknown(raw, "", "senders", "duration_ms", "mix", "method", "memory_limit_mb"); err != nil {
		return p, err
	}
	senders, err := params.Get(raw, "senders", "senders").Int(SendersRange)
	if err != nil {
		return p, err
	}
	p.Senders = int(senders)
	durationMS, err := params.Get(raw, "duration_ms", "duration_ms").Int(DurationRange)
	if err != nil {
		return p, err
	}
	p.Duration = time.Duration(durationMS) * time.Millisecond
	if p.Mix, err = ParseMix(params.Get(raw, "mix", "mix")); err != nil {
		return p, err
	}
	if p.Method, err = params.Get(raw, "method", "method").OneOf(Methods...); err != nil {
		return p, err
	}
	limitMB, err := params.Get(raw, "memory_limit_mb", "memory_limit_mb").Int(MemoryLimitRange)
	if err != nil {
		return p, err
	}
	p.MemoryLimitBytes = limitMB * bytesPerMiB
	if i, found := p.Mix.find(ExitSignal); found {
		return p, protocol.Errorf(protocol.Unsupported, "%s (mix[%d].kind = %q)", unsupportedExit, i, ExitSignal)
	}
	return p, nil
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

// Measure runs the workload for the protocol: params in, result out.
func Measure(raw map[string]any, opt Options) (protocol.Result, error) {
	p, err := ParseParams(raw)
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
	return report(p, out, peak), nil
}

func report(p Params, out Outcome, peakRSS int64) protocol.Result {
	total := out.Sent.Total()
	sendTime, receiveTime := out.SendTime, out.ReceiveTime
	if p.Method == MethodOTP {
		// The OTP suite divides by the planned duration, and adds the drain
		// in whole milliseconds for the receive figure.
		sendTime = p.Duration
		receiveTime = p.Duration + out.Drain.Truncate(time.Millisecond)
	}
	alive := int64(0)
	if out.ReceiverAlive {
		alive = 1
	}
	return protocol.Result{
		Metrics: map[string]float64{
			"send_throughput_per_s":    measure.PerSecond(total, sendTime),
			"receive_throughput_per_s": measure.PerSecond(total, receiveTime),
			"send_duration_ms":         measure.Millis(sendTime),
			"receive_duration_ms":      measure.Millis(receiveTime),
			"drain_ms":                 measure.Millis(out.Drain),
			"cpu_ms":                   measure.Millis(out.CPU),
			"peak_rss_bytes":           float64(peakRSS),
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
