package pubsub

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"msgbench/kits/go/protocol"
)

// cpuTime is the user + system time of the whole process (all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic("getrusage: " + err.Error()) // cannot fail with a valid pointer
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSSBytes is VmHWM from /proc/self/status.
func peakRSSBytes() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if rest, ok := strings.CutPrefix(scanner.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest)
			if len(fields) != 2 || fields[1] != "kB" {
				return 0, fmt.Errorf("unexpected VmHWM line %q", scanner.Text())
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("unexpected VmHWM line %q: %v", scanner.Text(), err)
			}
			return kb * 1024, nil
		}
	}
	if err := scanner.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no VmHWM line in /proc/self/status")
}

// measured is everything the result is made of.
type measured struct {
	params    Params
	pub       publishing
	served    servedLine
	sourceCPU time.Duration
	peakRSS   int64
}

// result gives the raw facts and the counts (spec/workloads/pubsub.json's
// measured and verify); the harness derives the rates, the loss ratio and the
// latency percentiles from them.
func (m measured) result() protocol.Result {
	var published int64
	for _, c := range m.pub.counts {
		published += c
	}
	n := len(m.served.Receivers)
	got, first, last := make([]int64, n), make([]int64, n), make([]int64, n)
	var received, outOfOrder, duplicates, corrupt, dropped int64
	for i, r := range m.served.Receivers {
		got[i], first[i], last[i] = r.Received, r.FirstNs, r.LastNs
		received += r.Received
		outOfOrder += r.OutOfOrder
		duplicates += r.Duplicates
		corrupt += r.Corrupt
		dropped += r.Dropped
	}
	out := protocol.Result{
		Measured: map[string]any{
			"publish_ns":        m.pub.endNs - m.pub.startNs,
			"source_cpu_ns":     m.sourceCPU.Nanoseconds(),
			"receiver_cpu_ns":   m.served.CPUNs,
			"peak_rss_bytes":    m.peakRSS,
			"receiver_received": got,
			"receiver_first_ns": first,
			"receiver_last_ns":  last,
		},
		Verify: map[string]int64{
			"published": published,
			"received":  received,
			// What did not arrive, from the published counts: received +
			// lost == published x receivers, with the receivers' own counts.
			"lost":         published*int64(n) - received,
			"receivers":    int64(n),
			"out_of_order": outOfOrder,
			"duplicates":   duplicates,
			"corrupt":      corrupt,
			"dropped":      dropped,
		},
	}
	if m.params.Rate > 0 {
		out.Measured["latency_max_ns"] = m.served.LatencyMaxNs
		out.Histograms = map[string][][2]int64{"latency_ns": m.served.LatencyNs}
		if out.Histograms["latency_ns"] == nil {
			out.Histograms["latency_ns"] = [][2]int64{}
		}
	}
	return out
}
