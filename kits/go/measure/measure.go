// Package measure reads the clocks and the process accounting the Go workers
// report: monotonic wall time, CPU time of the whole process, peak RSS,
// available memory.
package measure

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Mark is one reading of both clocks.
type Mark struct {
	wall time.Time // carries Go's monotonic clock reading
	cpu  time.Duration
}

// Now reads both clocks.
func Now() Mark {
	return Mark{cpu: CPUTime(), wall: time.Now()}
}

// WallSince is the monotonic wall time from m to later.
func (m Mark) WallSince(later Mark) time.Duration { return later.wall.Sub(m.wall) }

// CPUSince is the process CPU time (user + system) spent from m to later.
func (m Mark) CPUSince(later Mark) time.Duration { return later.cpu - m.cpu }

// CPUTime is the user + system time of the whole process (all threads).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		// RUSAGE_SELF with a valid pointer cannot fail on Linux.
		panic(fmt.Sprintf("getrusage: %v", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PeakRSSBytes is the process's peak resident set size, VmHWM in
// /proc/self/status.
func PeakRSSBytes() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseVmHWM(f)
}

func parseVmHWM(status io.Reader) (int64, error) { return parseKB(status, "VmHWM:") }

// RSSBytes is the process's resident set size now, VmRSS in
// /proc/self/status.
func RSSBytes() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseKB(f, "VmRSS:")
}

// parseKB reads the "<key> <n> kB" line of a /proc file.
func parseKB(file io.Reader, key string) (int64, error) {
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		if kb, ok := strings.CutPrefix(scanner.Text(), key); ok {
			fields := strings.Fields(kb) // "1234 kB"
			if len(fields) != 2 || fields[1] != "kB" {
				return 0, fmt.Errorf("unexpected %s line %q", strings.TrimSuffix(key, ":"), scanner.Text())
			}
			n, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("unexpected %s line %q: %v", strings.TrimSuffix(key, ":"), scanner.Text(), err)
			}
			return n * 1024, nil
		}
	}
	if err := scanner.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s line", strings.TrimSuffix(key, ":"))
}

// AvailableBytes is the memory the kernel can give without swapping,
// MemAvailable in /proc/meminfo.
func AvailableBytes() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseKB(f, "MemAvailable:")
}
