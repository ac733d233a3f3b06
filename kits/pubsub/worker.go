package pubsub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"msgbench/kits/go/measure"
	"msgbench/kits/go/protocol"
)

// connectWithin bounds the sources' connections.
const connectWithin = 30 * time.Second

// workerConfig is what the worker needs besides its stdin and stdout.
type workerConfig struct {
	name, runtimeVersion string
	sys                  System
	serviceURL           string
	startPeer            peerStarter
}

// work is the sources' process: request, hello, then a result or an error.
func work(in io.Reader, out io.Writer, cfg workerConfig) {
	w := protocol.NewWriter(out)
	line, readErr := bufio.NewReaderSize(in, 64<<10).ReadBytes('\n')
	line = bytes.TrimSpace(line)
	req, err := parseRequest(line)
	variant := req.Variant
	if variant == "" {
		variant = "unknown" // the hello line needs one, even for a bad request
	}
	_ = w.Hello(cfg.name, cfg.runtimeVersion, variant)
	if len(line) == 0 && readErr != nil {
		err = protocol.Errorf(protocol.Internal, "no request on stdin (%v)", readErr)
	}
	if err == nil {
		if cerr := cfg.sys.Check(req.Options, req.Params); cerr != nil {
			err = classify(cerr, protocol.Internal)
		}
	}
	if err == nil {
		var r protocol.Result
		r, err = run(req, line, cfg)
		if err == nil {
			_ = w.Result(r)
			return
		}
	}
	_ = w.Error(classify(err, protocol.Internal))
}

// run does one measurement; the peer is stopped on every path out.
func run(req request, line []byte, cfg workerConfig) (protocol.Result, error) {
	p := req.Params
	receivers, err := cfg.startPeer(line)
	if err != nil {
		return protocol.Result{}, err
	}
	defer receivers.Stop()
	var listening listeningLine
	if l, err := receivers.Next("listening", listeningWithin); err != nil {
		return protocol.Result{}, err
	} else if err := l.Decode(&listening); err != nil {
		return protocol.Result{}, err
	}
	env := Env{ServiceURL: cfg.serviceURL, Endpoints: listening.Endpoints}

	ctx, cancel := context.WithTimeout(context.Background(), connectWithin)
	defer cancel()
	srcs := make([]Source, 0, p.Sources)
	defer func() {
		for _, s := range srcs {
			if err := s.Close(); err != nil {
				fmt.Fprintf(os.Stderr, "pubsub kit: closing a source: %v\n", err)
			}
		}
	}()
	for i := 0; i < p.Sources; i++ {
		s, err := cfg.sys.Connect(ctx, env, req.Options, p, i)
		if err != nil {
			return protocol.Result{}, cfg.resource(receivers, fmt.Errorf("source %d: connect: %w", i, err))
		}
		srcs = append(srcs, s)
	}

	cpuStart := measure.CPUTime()
	pub, err := publishAll(srcs, p)
	sourceCPU := measure.CPUTime() - cpuStart
	if err != nil {
		return protocol.Result{}, cfg.resource(receivers, err)
	}
	published, err := json.Marshal(publishedLine{Type: "published", Counts: pub.counts})
	if err != nil {
		return protocol.Result{}, err
	}
	if err := receivers.Send(published); err != nil {
		return protocol.Result{}, cfg.resource(receivers, fmt.Errorf("cannot tell the receivers what was published: %w", err))
	}
	var served servedLine
	if l, err := receivers.Next("served", drainLimit(p)); err != nil {
		return protocol.Result{}, err
	} else if err := l.Decode(&served); err != nil {
		return protocol.Result{}, err
	}
	if len(served.Receivers) != p.Receivers {
		return protocol.Result{}, protocol.Errorf(protocol.Internal, "the receivers reported %d receivers for %d",
			len(served.Receivers), p.Receivers)
	}
	rss, err := measure.PeakRSSBytes()
	if err != nil {
		return protocol.Result{}, protocol.Errorf(protocol.Internal, "peak RSS: %v", err)
	}
	r := measured{params: p, pub: pub, served: served, sourceCPU: sourceCPU, peakRSS: rss}.result()
	v := r.Verify
	fmt.Fprintf(os.Stderr, "pubsub kit: published %d, received %d, undelivered at drain %d (still queued in the broker), "+
		"lost %d, dropped %d, out_of_order %d, duplicates %d, corrupt %d\n",
		v["published"], v["received"], v["undelivered"], v["lost"], v["dropped"], v["out_of_order"], v["duplicates"], v["corrupt"])
	return r, nil
}

// resource explains a failure of the sources: the peer's own error line if
// it has one (a dead receiver says more than a reset connection), else a
// resource error that names the broker.
func (cfg workerConfig) resource(receivers peerHandle, err error) error {
	if perr := receivers.Explanation(explainWithin); perr != nil {
		return perr
	}
	e := classify(err, protocol.Resource)
	if cfg.serviceURL != "" && !strings.Contains(e.Message, cfg.serviceURL) {
		e = protocol.Errorf(e.Kind, "%s (service %s)", e.Message, cfg.serviceURL)
	}
	return e
}
