package fanin

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"msgbench/kits/go/protocol"
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
			p := Params{Senders: c.senders, Duration: 20 * time.Millisecond, Mix: c.mix}
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

// request is a small fanin request with the given mix (JSON) and overrides.
func request(mix string, overrides string) protocol.Request {
	params := `{"senders":2,"duration_ms":10,"mix":` + mix + `,"method":"msgbench","memory_limit_mb":8192}`
	if overrides != "" {
		params = strings.TrimSuffix(params, "}") + "," + overrides + "}"
	}
	return protocol.Request{Workload: "fanin", Options: protocol.Options{}, Params: json.RawMessage(params)}
}

func TestExitSignalsAreUnsupported(t *testing.T) {
	_, err := Measure(request(`[{"percent":50,"kind":"message","size":1},{"percent":50,"kind":"exit_signal","size":1}]`, ""))
	perr, ok := err.(*protocol.Error)
	if !ok || perr.Kind != protocol.Unsupported ||
		!strings.Contains(perr.Message, `exit signals are an Erlang notion; go has no equivalent (mix[1].kind = "exit_signal")`) {
		t.Fatalf("error = %v", err)
	}
}

func TestMeasureCountsPerKindAndReportsTheRawTimes(t *testing.T) {
	result, err := Measure(request(`[{"percent":50,"kind":"message","size":1},{"percent":50,"kind":"message","size":100}]`, ""))
	if err != nil {
		t.Fatal(err)
	}
	v := result.Verify
	if v["sent_message"] == 0 || v["received_message"] != v["sent_message"] ||
		v["sent_exit_signal"] != 0 || v["received_exit_signal"] != 0 || v["receiver_alive"] != 1 {
		t.Fatalf("verify = %v", v)
	}
	m := result.Measured
	if m["send_ns"].(int64) < 10e6 || m["receive_ns"].(int64) < m["send_ns"].(int64) || m["cpu_ns"].(int64) <= 0 ||
		m["peak_rss_bytes"].(int64) <= 0 {
		t.Errorf("measured %v", m)
	}
}

func TestSharePayloadIsAnOption(t *testing.T) {
	req := request(`[{"percent":100,"kind":"message","size":1}]`, "")
	req.Options = protocol.Options{"share_payload": true}
	if _, opt, err := parse(req); err != nil || !opt.SharePayload || opt.ChannelCapacity != channelCapacity {
		t.Fatalf("options %+v, %v", opt, err)
	}
}

func TestMemoryLimitIsAResourceError(t *testing.T) {
	// 8 MB per signal, 100 senders
	_, err := Measure(request(`[{"percent":100,"kind":"message","size":1000000}]`, `"senders":100,"memory_limit_mb":64`))
	perr, ok := err.(*protocol.Error)
	if !ok || perr.Kind != protocol.Resource || !strings.Contains(perr.Message, "memory_limit_mb = 64") {
		t.Fatalf("error = %v; want a resource error naming memory_limit_mb", err)
	}
}

// BenchmarkSharePayload compares a copy per send with one shared payload:
// run with -benchtime 1x.
func BenchmarkSharePayload(b *testing.B) {
	for _, size := range []int64{1, 100, 1000} {
		for _, shared := range []bool{false, true} {
			b.Run(fmt.Sprintf("size=%d/shared=%v", size, shared), func(b *testing.B) {
				p := Params{Senders: 2, Duration: 200 * time.Millisecond,
					Mix: messageMix(Share{100, Message, size})}
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
						Mix: messageMix(Share{100, Message, size})}
					out := Run(p, Options{ChannelCapacity: capacity})
					b.ReportMetric(float64(out.Sent.Total())/out.SendTime.Seconds(), "sent/s")
					b.ReportMetric(float64(out.Sent.Total())/out.ReceiveTime.Seconds(), "received/s")
				})
			}
		}
	}
}
