package pubsub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"msgbench/kits/go/measure"
	"msgbench/kits/go/protocol"
)

// The receivers' process (the worker's peer, started with --serve): it reads
// the worker's request line, subscribes the receivers, says listening, waits
// for the published counts, drains, and says served.

const (
	// subscribeWithin bounds the receivers' subscriptions (the worker waits
	// listeningWithin for them).
	subscribeWithin = 25 * time.Second
	// monitorEvery is how often the drain monitor looks at the receivers'
	// counters: it decides only when to stop, never what is counted.
	monitorEvery = 2 * time.Millisecond
	// orphanExit is how long the peer may take to wind down once its stdin
	// has closed (the worker is gone or gave up) before it just exits.
	orphanExit = 5 * time.Second
)

// serveConfig is what the peer needs besides its stdin and stdout.
type serveConfig struct {
	sys System
	env Env
	// orphaned is called when stdin closes before the work is done (Main:
	// arms a hard exit, so a wedged client cannot keep the process alive).
	orphaned func()
}

// serve runs the peer on in (the worker's lines) and out (the peer's lines).
func serve(in io.Reader, out io.Writer, cfg serveConfig) {
	w := protocol.NewWriter(out)
	if err := serveRun(in, w, cfg); err != nil {
		_ = w.Error(classify(err, protocol.Internal))
	}
}

func serveRun(in io.Reader, w *protocol.Writer, cfg serveConfig) error {
	lines := bufio.NewReaderSize(in, 64<<10)
	first, err := lines.ReadBytes('\n')
	if len(bytes.TrimSpace(first)) == 0 {
		return protocol.Errorf(protocol.Internal, "stdin closed before the request line (%v)", err)
	}
	req, err := parseRequest(first)
	if err != nil {
		return err
	}
	p := req.Params
	if err := cfg.sys.Check(req.Options, p); err != nil {
		return classify(err, protocol.Internal)
	}

	states := make([]*receiverState, p.Receivers)
	receivers := make([]Receiver, 0, p.Receivers)
	closeAll := func() {
		for _, r := range receivers {
			if err := r.Close(); err != nil {
				fmt.Fprintf(os.Stderr, "pubsub kit, receivers: closing a receiver: %v\n", err)
			}
		}
		receivers = nil
	}
	defer closeAll()
	ctx, cancel := context.WithTimeout(context.Background(), subscribeWithin)
	defer cancel()
	var endpoints []string
	for i := range states {
		states[i] = newReceiverState(p)
		r, err := cfg.sys.Subscribe(ctx, cfg.env, req.Options, p, i, states[i].deliver)
		if err != nil {
			return classify(fmt.Errorf("receiver %d: subscribe: %w", i, err), protocol.Resource)
		}
		receivers = append(receivers, r)
		if ep := r.Endpoint(); ep != "" {
			endpoints = append(endpoints, ep)
		}
	}
	if len(endpoints) != 0 && len(endpoints) != p.Receivers {
		return protocol.Errorf(protocol.Internal, "%d of %d receivers have an endpoint", len(endpoints), p.Receivers)
	}
	cpuStart := measure.CPUTime()
	if err := w.Line(listeningLine{Type: "listening", Port: 0, Endpoints: endpoints}); err != nil {
		return err
	}

	published := make(chan []int64, 1)
	stdinClosed := make(chan struct{})
	go readWorker(lines, published, stdinClosed)
	var counts []int64
	select {
	case counts = <-published:
	case <-stdinClosed:
	}
	if counts != nil {
		if len(counts) != p.Sources {
			return protocol.Errorf(protocol.Internal, "the published line has %d counts for %d sources", len(counts), p.Sources)
		}
		var total int64
		for _, c := range counts {
			total += c
		}
		awaitReceivers(states, total, p, stdinClosed)
	}
	select {
	case <-stdinClosed:
		if cfg.orphaned != nil {
			cfg.orphaned()
		}
	default:
	}

	// Dropped is read before Close: some clients forget it with the
	// subscription.
	served := servedLine{Type: "served", Receivers: make([]ReceiverReport, len(states))}
	dropped := make([]int64, len(receivers))
	for i, r := range receivers {
		dropped[i] = r.Dropped()
	}
	closeAll() // deliver has stopped once every Close has returned
	for i, st := range states {
		served.Receivers[i] = st.report(dropped[i])
		served.Messages += served.Receivers[i].Received
		served.Bytes += st.bytes
	}
	if latency := mergedLatency(states); latency != nil {
		served.LatencyNs, served.LatencyMaxNs = latency.sparse(), latency.max
	}
	served.CPUNs = (measure.CPUTime() - cpuStart).Nanoseconds()
	return w.Line(served)
}

// readWorker reads the worker's lines after the request: the published
// counts, then nothing until stdin closes.
func readWorker(lines *bufio.Reader, published chan<- []int64, closed chan<- struct{}) {
	defer close(closed)
	for {
		text, err := lines.ReadBytes('\n')
		if len(bytes.TrimSpace(text)) > 0 {
			var l publishedLine
			if json.Unmarshal(text, &l) == nil && l.Type == "published" {
				select {
				case published <- l.Counts:
				default: // a second published line is ignored
				}
			} else {
				fmt.Fprintf(os.Stderr, "pubsub kit, receivers: ignoring the line %.200q\n", text)
			}
		}
		if err != nil {
			return
		}
	}
}

// awaitReceivers waits until each receiver has total messages, or has had
// nothing for drain_ms since the published line (or its last message), or
// stdin closes, or the overall limit passes. What is missing then is loss.
func awaitReceivers(states []*receiverState, total int64, p Params, stdinClosed <-chan struct{}) {
	drain := int64(p.DrainMs) * 1e6
	start := monoNow()
	limit := start + int64(drainLimit(p)-5*time.Second)
	tick := time.NewTicker(monitorEvery)
	defer tick.Stop()
	for {
		now := monoNow()
		waiting := 0
		for _, st := range states {
			if st.received.Load() >= total {
				continue
			}
			if now-max(st.lastNs.Load(), start) < drain {
				waiting++
			}
		}
		if waiting == 0 {
			return
		}
		if now >= limit {
			// Still receiving: what is missing is not lost by the system but
			// undelivered within the time limit; say so beside the count.
			fmt.Fprintf(os.Stderr, "pubsub kit, receivers: %d receiver(s) still receiving at the time limit "+
				"(%.1f s after the published line); the rest counts as lost\n", waiting, float64(now-start)/1e9)
			return
		}
		select {
		case <-stdinClosed:
			return
		case <-tick.C:
		}
	}
}

// drainLimit is how long the worker waits for served after its published
// line: 25 s plus twice drain_ms plus twice the publishing time, because a
// receiver still working through a backlog (a broker's queue filled at several
// times the rate it delivers) is not idle: RabbitMQ at 16 B took 15 s to
// deliver 3 s of publishing here. The peer stops 5 s earlier, so its served
// line, with the loss counted, arrives before the worker gives up. Setup (at
// most 25 s), publishing and this stay within the harness's time limit
// (60 + duration_s*3 + drain_ms/1000*2 s).
func drainLimit(p Params) time.Duration {
	return 25*time.Second + 2*time.Duration(p.DrainMs)*time.Millisecond +
		time.Duration(2*p.DurationS*float64(time.Second))
}
