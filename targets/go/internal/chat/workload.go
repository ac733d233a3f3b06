package chat

import (
	"encoding/json"
	"time"

	"msgbench/targets/go/internal/measure"
	"msgbench/targets/go/internal/params"
	"msgbench/targets/go/internal/protocol"
)

// The accepted ranges, as in spec/workloads/chat.json (a test checks they agree).
var (
	GroupsRange          = params.IntRange{Min: 1, Max: 1000000}
	ClientsPerGroupRange = params.IntRange{Min: 2, Max: 100000}
	DurationRange        = params.FloatRange{Min: 0, Max: 86400, MinExclusive: true}
	ThinkRange           = params.IntRange{Min: 0, Max: 3600000}
	ListenerDelayRange   = params.IntRange{Min: 0, Max: 1000}
	Messages             = []string{MessageText, MessageBinary}
	HistoryRange         = params.IntRange{Min: 0, Max: 10000}
	DrainTimeoutRange    = params.FloatRange{Min: 0, Max: 3600}
)

// The message kinds.
const (
	MessageText   = "text"
	MessageBinary = "binary"
)

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

var paramNames = []string{"groups", "clients_per_group", "duration_s", "think_ms", "listener_delay_ms",
	"message", "history", "drain_timeout_s"}

// ParseParams validates the request's params.
func ParseParams(raw map[string]any) (Params, error) {
	var p Params
	if err := params.RejectUnknown(raw, "", paramNames...); err != nil {
		return p, err
	}
	groups, err := params.Get(raw, "groups", "groups").Int(GroupsRange)
	if err != nil {
		return p, err
	}
	p.Groups = int(groups)
	cpg := params.Get(raw, "clients_per_group", "clients_per_group")
	perGroup, err := cpg.Int(ClientsPerGroupRange)
	if err != nil {
		return p, needsPeer(cpg, err)
	}
	p.ClientsPerGroup = int(perGroup)
	seconds, err := params.Get(raw, "duration_s", "duration_s").Float(DurationRange)
	if err != nil {
		return p, err
	}
	p.Duration = secondsToDuration(seconds)
	think, err := params.Get(raw, "think_ms", "think_ms").Int(ThinkRange)
	if err != nil {
		return p, err
	}
	p.Think = time.Duration(think) * time.Millisecond
	delay, err := params.Get(raw, "listener_delay_ms", "listener_delay_ms").Int(ListenerDelayRange)
	if err != nil {
		return p, err
	}
	p.ListenerDelay = time.Duration(delay) * time.Millisecond
	kind, err := params.Get(raw, "message", "message").OneOf(Messages...)
	if err != nil {
		return p, err
	}
	p.Binary = kind == MessageBinary
	history, err := params.Get(raw, "history", "history").Int(HistoryRange)
	if err != nil {
		return p, err
	}
	p.History = int(history)
	drain, err := params.Get(raw, "drain_timeout_s", "drain_timeout_s").Float(DrainTimeoutRange)
	if err != nil {
		return p, err
	}
	p.DrainTimeout = secondsToDuration(drain)
	return p, nil
}

// needsPeer says why clients_per_group cannot be below 2.
func needsPeer(v params.Value, err error) error {
	perr, ok := err.(*protocol.Error)
	if !ok {
		return err
	}
	if n, isNumber := v.Raw.(json.Number); isNumber {
		if f, ferr := n.Float64(); ferr == nil && f < float64(ClientsPerGroupRange.Min) {
			return protocol.Errorf(perr.Kind, "%s (a user needs a peer in its group)", perr.Message)
		}
	}
	return err
}

// secondsToDuration rounds to the nanosecond; the ranges keep it far from
// overflowing.
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

// Measure runs the workload for the protocol: params in, result out.
func Measure(raw map[string]any, opt Options) (protocol.Result, error) {
	p, err := ParseParams(raw)
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
	return report(p, out, peak), nil
}

// report computes the averages as the seed does: per second over T (here
// the measured send window), per group over G, per client over the users.
// The received averages count what arrived within T, as the seed's Received
// did, so a flood delivered only in the drain does not score as received per
// second of T; received_count (the drain included) is what verify compares
// with sent.
func report(p Params, out Outcome, peakRSS int64) protocol.Result {
	seconds := max(out.SendWindow.Seconds(), 1e-9)
	groups, users := float64(p.Groups), float64(p.Users())
	sent, inWindow := float64(out.Sent), float64(out.ReceivedInWindow)
	us := func(ns int64) float64 { return float64(ns) / float64(time.Microsecond) }
	return protocol.Result{
		Metrics: map[string]float64{
			"sent_count":                float64(out.Sent),
			"received_count":            float64(out.Received),
			"received_in_window_count":  inWindow,
			"sent_per_s":                sent / seconds,
			"received_per_s":            inWindow / seconds,
			"sent_per_group_count":      sent / groups,
			"received_per_group_count":  inWindow / groups,
			"sent_per_client_count":     sent / users,
			"received_per_client_count": inWindow / users,
			"sent_per_client_per_s":     sent / users / seconds,
			"received_per_client_per_s": inWindow / users / seconds,
			"latency_p50_us":            us(out.Latency.Quantile(0.50)),
			"latency_p99_us":            us(out.Latency.Quantile(0.99)),
			"latency_max_us":            us(out.Latency.Max()),
			"setup_ms":                  measure.Millis(out.Setup),
			"send_window_ms":            measure.Millis(out.SendWindow),
			"drain_ms":                  measure.Millis(out.Drain),
			"processes_count":           float64(out.Processes),
			"peak_rss_bytes":            float64(peakRSS),
			"runtime_memory_bytes":      float64(out.RuntimeMemory),
			"memory_per_user_bytes":     float64(peakRSS) / users,
		},
		Verify: map[string]int64{
			"sent":            out.Sent,
			"received":        out.Received,
			"cross_group":     out.CrossGroup,
			"self_deliveries": out.SelfDeliveries,
			"users":           out.Users,
		},
	}
}
