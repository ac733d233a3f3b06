package fanin

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"msgbench/targets/go/internal/protocol"
)

func messageMix(shares ...Share) Mix { return Mix(shares) }

func TestRunReceivesEverySignalSent(t *testing.T) {
	for _, c := range []struct {
		senders, capacity int
		mix               Mix
	}{
		{1, 0, messageMix(Share{100, Message, 1})},
		{3, 16, messageMix(Share{100, Message, 10})},
		{4, 1024, messageMix(Share{50, Message, 1}, Share{50, Message, 100})},
	} {
		t.Run(fmt.Sprintf("senders=%d/capacity=%d", c.senders, c.capacity), func(t *testing.T) {
			p := Params{Senders: c.senders, Duration: 20 * time.Millisecond, Mix: c.mix, Method: MethodMsgbench}
			out := Run(p, Options{ChannelCapacity: c.capacity})
			if out.Sent[Message] == 0 {
				t.Fatal("nothing sent")
			}
			if out.Received != out.Sent {
				t.Fatalf("received %v, sent %v", out.Received, out.Sent)
			}
			if out.Sent[ExitSignal] != 0 || !out.ReceiverAlive {
				t.Fatalf("outcome %+v", out)
			}
			if out.SendTime < p.Duration || out.ReceiveTime < out.SendTime || out.Drain < 0 {
				t.Fatalf("times: send %v, receive %v, drain %v", out.SendTime, out.ReceiveTime, out.Drain)
			}
		})
	}
}

func TestPickFollowsTheMix(t *testing.T) {
	mix := messageMix(Share{25, Message, 1}, Share{75, ExitSignal, 2})
	table := mix.table()
	rng := newRand()
	var picked [2]int
	const draws = 100000
	for range draws {
		if table.pick(rng) == &table[0] {
			picked[0]++
		} else {
			picked[1]++
		}
	}
	share := float64(picked[0]) / draws
	if math.Abs(share-0.25) > 0.01 {
		t.Fatalf("first share picked %.3f of the time, want 0.25", share)
	}
	if got := table[1].words; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("prepared payload %v, want [1 2]", got)
	}
}

func validParams() map[string]any {
	return map[string]any{
		"senders":         json.Number("2"),
		"duration_ms":     json.Number("10"),
		"mix":             []any{map[string]any{"percent": json.Number("100"), "kind": "message", "size": json.Number("1")}},
		"method":          "msgbench",
		"memory_limit_mb": json.Number("8192"),
	}
}

func mixOf(items ...map[string]any) []any {
	out := make([]any, len(items))
	for i, item := range items {
		out[i] = item
	}
	return out
}

func share(percent, kind, size string) map[string]any {
	return map[string]any{"percent": json.Number(percent), "kind": kind, "size": json.Number(size)}
}

func TestParseParamsRejectsBadValues(t *testing.T) {
	cases := []struct {
		name   string
		change func(map[string]any)
		kind   protocol.ErrorKind
		want   string
	}{
		{"senders zero", func(p map[string]any) { p["senders"] = json.Number("0") }, protocol.BadParams,
			"senders = 0 is out of range: senders must be an integer >= 1 and <= 100000"},
		{"duration too long", func(p map[string]any) { p["duration_ms"] = json.Number("3600001") }, protocol.BadParams,
			"duration_ms = 3600001 is out of range"},
		{"method unknown", func(p map[string]any) { p["method"] = "fast" }, protocol.BadParams,
			`method = "fast" is not valid: method must be one of "msgbench", "otp"`},
		{"memory limit small", func(p map[string]any) { p["memory_limit_mb"] = json.Number("63") }, protocol.BadParams,
			"memory_limit_mb = 63 is out of range"},
		{"mix empty", func(p map[string]any) { p["mix"] = []any{} }, protocol.BadParams,
			"mix (an array of 0 items) is out of range"},
		{"mix not array", func(p map[string]any) { p["mix"] = "message" }, protocol.BadParams, `mix = "message" is not valid`},
		{"percents short of 100", func(p map[string]any) { p["mix"] = mixOf(share("60", "message", "1")) },
			protocol.BadParams, "mix percents add to 60"},
		{"percent zero", func(p map[string]any) {
			p["mix"] = mixOf(share("0", "message", "1"), share("100", "message", "1"))
		}, protocol.BadParams, "mix[0].percent = 0 is out of range: mix[0].percent must be a number > 0 and <= 100"},
		{"size zero", func(p map[string]any) { p["mix"] = mixOf(share("100", "message", "0")) }, protocol.BadParams,
			"mix[0].size = 0 is out of range"},
		{"kind unknown", func(p map[string]any) { p["mix"] = mixOf(share("100", "link", "1")) }, protocol.BadParams,
			`mix[0].kind = "link" is not valid`},
		{"share field unknown", func(p map[string]any) {
			item := share("100", "message", "1")
			item["queue"] = "off_heap"
			p["mix"] = mixOf(item)
		}, protocol.BadParams, "unknown parameter mix[0].queue"},
		{"share field missing", func(p map[string]any) {
			item := share("100", "message", "1")
			delete(item, "size")
			p["mix"] = mixOf(item)
		}, protocol.BadParams, "mix[0].size is missing"},
		{"unknown param", func(p map[string]any) { p["queue"] = "off_heap" }, protocol.BadParams, "unknown parameter queue"},
		{"exit signals", func(p map[string]any) {
			p["mix"] = mixOf(share("50", "message", "1"), share("50", "exit_signal", "1"))
		}, protocol.Unsupported, `exit signals are an Erlang notion; go has no equivalent (mix[1].kind = "exit_signal")`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := validParams()
			c.change(p)
			_, err := ParseParams(p)
			perr, ok := err.(*protocol.Error)
			if !ok || perr.Kind != c.kind || !strings.Contains(perr.Message, c.want) {
				t.Fatalf("error = %v; want %s containing %q", err, c.kind, c.want)
			}
		})
	}
	p := validParams()
	p["mix"] = mixOf(share("33.3333333", "message", "1"), share("33.3333333", "message", "2"),
		share("33.3333334", "message", "3"))
	if _, err := ParseParams(p); err != nil {
		t.Fatalf("thirds rejected: %v", err)
	}
}

func TestMeasureCountsPerKind(t *testing.T) {
	p := validParams()
	p["mix"] = mixOf(share("50", "message", "1"), share("50", "message", "100"))
	result, err := Measure(p, Options{ChannelCapacity: 64})
	if err != nil {
		t.Fatal(err)
	}
	v := result.Verify
	if v["sent_message"] == 0 || v["received_message"] != v["sent_message"] ||
		v["sent_exit_signal"] != 0 || v["received_exit_signal"] != 0 || v["receiver_alive"] != 1 {
		t.Fatalf("verify = %v", v)
	}
	for _, name := range []string{"send_throughput_per_s", "receive_throughput_per_s", "send_duration_ms",
		"receive_duration_ms", "drain_ms", "cpu_ms", "peak_rss_bytes"} {
		if _, ok := result.Metrics[name]; !ok {
			t.Errorf("metric %s missing", name)
		}
	}
}

func TestMemoryLimitIsAResourceError(t *testing.T) {
	p := validParams()
	p["senders"] = json.Number("100")
	p["mix"] = mixOf(share("100", "message", "1000000")) // 8 MB per signal
	p["memory_limit_mb"] = json.Number("64")
	_, err := Measure(p, Options{ChannelCapacity: 1024})
	perr, ok := err.(*protocol.Error)
	if !ok || perr.Kind != protocol.Resource || !strings.Contains(perr.Message, "memory_limit_mb = 64") {
		t.Fatalf("error = %v; want a resource error naming memory_limit_mb", err)
	}
}

func TestReportMethods(t *testing.T) {
	p := Params{Duration: time.Second, Method: MethodMsgbench}
	out := Outcome{
		Sent:        Counts{Message: 1000},
		Received:    Counts{Message: 1000},
		SendTime:    1250 * time.Millisecond,
		ReceiveTime: 2500*time.Millisecond + 700*time.Microsecond,
		Drain:       1250*time.Millisecond + 700*time.Microsecond,
	}
	m := report(p, out, 1).Metrics
	if m["send_throughput_per_s"] != 800 || m["send_duration_ms"] != 1250 || m["drain_ms"] != 1250.7 {
		t.Fatalf("msgbench metrics %v", m)
	}
	p.Method = MethodOTP
	m = report(p, out, 1).Metrics
	// send: 1000 / planned 1 s; receive: planned 1000 ms + floor(1250.7 ms).
	if m["send_throughput_per_s"] != 1000 || m["send_duration_ms"] != 1000 ||
		m["receive_duration_ms"] != 2250 || m["receive_throughput_per_s"] != 1000/2.25 {
		t.Fatalf("otp metrics %v", m)
	}
}

// BenchmarkSharePayload compares a copy per send with one shared payload:
// run with -benchtime 1x.
func BenchmarkSharePayload(b *testing.B) {
	for _, size := range []int64{1, 100, 1000} {
		for _, shared := range []bool{false, true} {
			b.Run(fmt.Sprintf("size=%d/shared=%v", size, shared), func(b *testing.B) {
				p := Params{Senders: 2, Duration: 200 * time.Millisecond,
					Mix: messageMix(Share{100, Message, size}), Method: MethodMsgbench}
				out := Run(p, Options{ChannelCapacity: 1024, SharePayload: shared})
				b.ReportMetric(float64(out.Sent.Total())/out.ReceiveTime.Seconds(), "received/s")
			})
		}
	}
}

// BenchmarkCapacity compares channel capacities: run with -benchtime 1x.
func BenchmarkCapacity(b *testing.B) {
	for _, size := range []int64{1, 100} {
		for _, senders := range []int{1, 2, 8, 64} {
			for _, capacity := range []int{0, 1, 16, 128, 1024, 8192} {
				name := fmt.Sprintf("size=%d/senders=%d/capacity=%d", size, senders, capacity)
				b.Run(name, func(b *testing.B) {
					p := Params{Senders: senders, Duration: 200 * time.Millisecond,
						Mix: messageMix(Share{100, Message, size}), Method: MethodMsgbench}
					out := Run(p, Options{ChannelCapacity: capacity})
					b.ReportMetric(float64(out.Sent.Total())/out.SendTime.Seconds(), "sent/s")
					b.ReportMetric(float64(out.Sent.Total())/out.ReceiveTime.Seconds(), "received/s")
				})
			}
		}
	}
}
