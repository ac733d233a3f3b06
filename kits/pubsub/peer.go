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
	undelivered := make([]int64, len(states))
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
		watches := newBacklogWatches(receivers)
		// The peer stops 5 s before the worker gives up on it (drainLimit),
		// so its served line, with everything counted, arrives in time.
		awaitReceivers(states, watches, total, time.Duration(p.DrainMs)*time.Millisecond, drainLimit(p)-5*time.Second, stdinClosed)
		select {
		case <-stdinClosed:
		default:
			undelivered = countUndelivered(states, watches, total)
		}
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
		served.Receivers[i] = st.report(dropped[i], undelivered[i])
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
