package pubsubkit

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
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

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// measured is everything the result is computed from.
type measured struct {
	params    Params
	pub       publishing
	served    peerLine
	sourceCPU time.Duration
	peakRSS   int64
	lossless  bool
}

// result computes the metrics and verify counts the spec names
// (spec/workloads/pubsub.json), from counts the processes made.
func (m measured) result() (map[string]float64, map[string]int64) {
	var published int64
	for _, c := range m.pub.counts {
		published += c
	}
	var received, outOfOrder, duplicates, corrupt, dropped int64
	var rateSum float64
	for _, r := range m.served.Receivers {
		received += r.Received
		outOfOrder += r.OutOfOrder
		duplicates += r.Duplicates
		corrupt += r.Corrupt
		dropped += r.Dropped
		// One message has no span; a receiver with fewer than two adds 0.
		if r.Received >= 2 && r.LastNs > r.FirstNs {
			rateSum += float64(r.Received) / (float64(r.LastNs-r.FirstNs) / 1e9)
		}
	}
	receivers := int64(len(m.served.Receivers))
	expected := published * receivers
	lost := expected - received
	msgsPerS := 0.0
	if receivers > 0 {
		msgsPerS = rateSum / float64(receivers)
	}
	lossRatio := 0.0
	if expected > 0 {
		lossRatio = float64(max(lost, 0)) / float64(expected)
	}
	pubSeconds := float64(m.pub.endNs-m.pub.startNs) / 1e9
	metrics := map[string]float64{
		"msgs_per_s":         msgsPerS,
		"payload_bits_per_s": msgsPerS * float64(m.params.PayloadBytes) * 8,
		"publish_msgs_per_s": float64(published) / max(pubSeconds, 1e-9),
		"loss_ratio":         lossRatio,
		"source_cpu_ms":      millis(m.sourceCPU),
		"receiver_cpu_ms":    m.served.CPUMs,
		"peak_rss_bytes":     float64(m.peakRSS),
	}
	if m.params.Rate > 0 {
		l := m.served.LatencyUs
		if l == nil {
			l = &LatencyReport{}
		}
		metrics["latency_p50_us"] = l.P50
		metrics["latency_p99_us"] = l.P99
		metrics["latency_p999_us"] = l.P999
		metrics["latency_max_us"] = l.Max
	}
	lossless := int64(0)
	if m.lossless {
		lossless = 1
	}
	verify := map[string]int64{
		"published":    published,
		"received":     received,
		"lost":         lost,
		"receivers":    receivers,
		"out_of_order": outOfOrder,
		"duplicates":   duplicates,
		"corrupt":      corrupt,
		"lossless":     lossless,
		"dropped":      dropped,
	}
	return metrics, verify
}
